import Testing

@testable import ReplicaModel

@Suite("JSON objects diffed into changes and back")
struct JSONDiffTests {
    @Test("a nested member changes at its own path; a new subtree is one set at its top; arrays are replaced whole")
    func shapes() {
        let old: [String: JSONValue] = [
            "question": .string("Lunch?"),
            "options": .array([.string("pizza"), .string("soup")]),
            "meta": .object(["votes": .int(2), "owner": .string("alice")]),
            "gone": .bool(false),
        ]
        var new = old
        new["meta"] = .object(["votes": .int(3), "owner": .string("alice")])
        new["options"] = .array([.string("pizza"), .string("salad")])
        new["extra"] = .object(["a": .object(["b": .null])])
        new["gone"] = nil
        let changes = JSONDiff.changes(from: old, to: new)
        #expect(changes == [
            JSONChange(path: ["extra"], edit: .set(.object(["a": .object(["b": .null])]))),
            JSONChange(path: ["gone"], edit: .remove),
            JSONChange(path: ["meta", "votes"], edit: .set(.int(3))),
            JSONChange(path: ["options"], edit: .set(.array([.string("pizza"), .string("salad")]))),
        ])
        #expect(changes.map(\.description) == [#"set /extra = {"a":{"b":null}}"#, "remove /gone", "set /meta/votes = 3", #"set /options = ["pizza","salad"]"#])
        #expect(JSONDiff.apply(changes, to: old) == new)
        #expect(JSONDiff.changes(from: new, to: new).isEmpty)
    }

    @Test("a member that changes kind is replaced, an object becoming a scalar and back")
    func kindChanges() {
        let old: [String: JSONValue] = ["a": .object(["x": .int(1)]), "b": .int(1), "c": .int(1)]
        let new: [String: JSONValue] = ["a": .string("flat"), "b": .object(["y": .int(2)]), "c": .double(1)]
        let changes = JSONDiff.changes(from: old, to: new)
        #expect(changes == [
            JSONChange(path: ["a"], edit: .set(.string("flat"))),
            JSONChange(path: ["b"], edit: .set(.object(["y": .int(2)]))),
            JSONChange(path: ["c"], edit: .set(.double(1))),
        ])
        #expect(JSONDiff.apply(changes, to: old) == new)
    }

    @Test("apply makes missing parents and ignores the removal of what is not there")
    func applyIsTotal() {
        let applied = JSONDiff.apply([
            JSONChange(path: ["a", "b", "c"], edit: .set(.int(1))),
            JSONChange(path: ["x", "y"], edit: .remove),
            JSONChange(path: ["s", "t"], edit: .set(.bool(true))),
        ], to: ["s": .string("not an object")])
        #expect(applied == ["a": .object(["b": .object(["c": .int(1)])]), "s": .object(["t": .bool(true)])])
    }

    @Test("for random pairs of objects, applying the changes to the first gives the second, and each path is visited once",
          arguments: 1...40)
    func roundTrip(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let a = Self.object(depth: 3, using: &random)
        // The second object is an edit of the first half the time, so that deep paths are shared.
        let b = Bool.random(using: &random) ? Self.mutate(a, using: &random) : Self.object(depth: 3, using: &random)
        let changes = JSONDiff.changes(from: a, to: b)
        #expect(JSONDiff.apply(changes, to: a) == b, "seed \(seed): \(changes)")
        #expect(Set(changes.map(\.path)).count == changes.count, "seed \(seed)")
        #expect(JSONDiff.changes(from: a, to: a).isEmpty)
        // No change sits inside another's path: each set or remove is at the highest level that differs.
        for change in changes {
            #expect(!changes.contains { $0.path.count < change.path.count && Array(change.path.prefix($0.path.count)) == $0.path }, "seed \(seed)")
        }
    }

    static let keys = ["a", "b", "c", "d", "e"]

    static func object(depth: Int, using random: inout SplitMix64) -> [String: JSONValue] {
        var object: [String: JSONValue] = [:]
        for key in keys where Int.random(in: 0..<3, using: &random) > 0 {
            object[key] = value(depth: depth, using: &random)
        }
        return object
    }

    static func value(depth: Int, using random: inout SplitMix64) -> JSONValue {
        switch Int.random(in: 0..<(depth > 0 ? 7 : 5), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .int(Int64.random(in: -3...3, using: &random))
        case 3: return .string(["x", "y", "é"][Int.random(in: 0..<3, using: &random)])
        case 4: return .double(Double(Int.random(in: 0...2, using: &random)) / 2)
        case 5: return .array((0..<Int.random(in: 0...2, using: &random)).map { _ in value(depth: depth - 1, using: &random) })
        default: return .object(object(depth: depth - 1, using: &random))
        }
    }

    static func mutate(_ object: [String: JSONValue], using random: inout SplitMix64) -> [String: JSONValue] {
        var result = object
        for key in keys {
            switch Int.random(in: 0..<5, using: &random) {
            case 0: result[key] = nil
            case 1: result[key] = value(depth: 2, using: &random)
            case 2: if case .object(let inner)? = result[key] { result[key] = .object(mutate(inner, using: &random)) }
            default: continue
            }
        }
        return result
    }
}
