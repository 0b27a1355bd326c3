import ReplicaModel
import Testing

@testable import Replicator

@Suite("Three-way merge of JSON payloads")
struct MergeJSONTests {
    static let base: [String: JSONValue] = [
        "question": .string("Lunch?"), "closed": .bool(false), "options": .array([.string("a")]),
        "meta": .object(["votes": .int(1), "owner": .string("alice")]),
    ]

    @Test("edits of different members, at any depth, are all kept")
    func disjointEdits() {
        var local = Self.base
        local["closed"] = .bool(true)
        local["meta"] = .object(["votes": .int(2), "owner": .string("alice")])
        var remote = Self.base
        remote["options"] = .array([.string("a"), .string("b")])
        remote["meta"] = .object(["votes": .int(1), "owner": .string("bob")])
        remote["question"] = nil
        let merged = ThreeWayMerge.mergeJSON(base: Self.base, local: local, remote: remote, preferLocal: false)
        #expect(merged == [
            "closed": .bool(true), "options": .array([.string("a"), .string("b")]),
            "meta": .object(["votes": .int(2), "owner": .string("bob")]),
        ])
    }

    @Test("the same member changed on both sides: equal edits agree, different ones go to the preferred side",
          arguments: [true, false])
    func bothChanged(preferLocal: Bool) {
        var local = Self.base, remote = Self.base
        local["options"] = .array([.string("x")])
        remote["options"] = .array([.string("y")])
        local["closed"] = .bool(true)
        remote["closed"] = .bool(true)
        // Removed on one side, edited on the other: a change against a change.
        local["question"] = nil
        remote["question"] = .string("Dinner?")
        let merged = ThreeWayMerge.mergeJSON(base: Self.base, local: local, remote: remote, preferLocal: preferLocal)
        #expect(merged["options"] == .array([.string(preferLocal ? "x" : "y")]))
        #expect(merged["closed"] == .bool(true))
        #expect(merged["question"] == (preferLocal ? nil : .string("Dinner?")))
        #expect(merged["meta"] == Self.base["meta"])
    }

    @Test("objects added on both sides with no base merge member by member; an unchanged side takes the other")
    func noBase() {
        let local: [String: JSONValue] = ["new": .object(["a": .int(1), "same": .int(0)])]
        let remote: [String: JSONValue] = ["new": .object(["b": .int(2), "same": .int(0)])]
        #expect(ThreeWayMerge.mergeJSON(base: [:], local: local, remote: remote, preferLocal: true)
            == ["new": .object(["a": .int(1), "b": .int(2), "same": .int(0)])])
        #expect(ThreeWayMerge.mergeJSON(base: Self.base, local: Self.base, remote: local, preferLocal: true) == local)
        #expect(ThreeWayMerge.mergeJSON(base: Self.base, local: local, remote: Self.base, preferLocal: false) == local)
    }
}
