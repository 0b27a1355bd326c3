import Foundation
import ReplicaModel
import Testing

@Suite("message ids the store can keep")
struct MessageIdTests {
    @Test("a payload id with U+0000 is refused (SQLite text reads back cut at the NUL), as is an empty one")
    func nulRefused() throws {
        let createdAt = try ISOTimestamp(parsing: "2026-01-01T00:00:00Z")
        #expect(throws: ModelValidationError.forbiddenCharacter(field: "message.id", character: "U+0")) {
            _ = try MessagePayload<FlatCustom>(id: "\u{0}abc", text: "hi", createdAt: createdAt)
        }
        #expect(throws: ModelValidationError.emptyIdentifier(field: "message.id")) {
            _ = try MessagePayload<FlatCustom>(id: "", text: "hi", createdAt: createdAt)
        }
        // A hostile history entry with such an id is not a chat payload: the reconciler keeps it raw.
        #expect(MessagePayload<FlatCustom>(json: ["id": "a\u{0}", "text": "hi", "createdAt": "2026-01-01T00:00:00Z"]) == nil)
        #expect(try MessagePayload<FlatCustom>(id: "ok-1", text: "hi", createdAt: createdAt).id == "ok-1")
    }
}

@Suite("Random identifiers")
struct RandomIdentifierTests {
    @Test("10,000 ids: lowercase version-4 UUIDs that Foundation reads back, all different")
    func uuidV4() throws {
        var seen = Set<String>()
        for _ in 0..<10_000 {
            let id = RandomIdentifier.uuidV4()
            let uuid = try #require(UUID(uuidString: id), "\(id)")
            #expect(uuid.uuidString.lowercased() == id)
            let bytes = Array(withUnsafeBytes(of: uuid.uuid) { Array($0) })
            #expect(bytes[6] >> 4 == 4 && bytes[8] >> 6 == 0b10, "\(id): version 4, RFC 4122 variant")
            seen.insert(id)
        }
        #expect(seen.count == 10_000)
    }
}
