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

    @Test("version-7 ids: Foundation reads them back, they carry the time, and they increase within a millisecond and when the clock goes back")
    func uuidV7() throws {
        // Later than any wall clock: ids other tests make meanwhile (the counter is the process's)
        // only count it up.
        let date = Date(timeIntervalSince1970: 4_102_444_800.123)
        var previous = ""
        for index in 0..<10_000 {
            // The same millisecond 5,000 times (the counter, then the next millisecond borrowed),
            // then a clock one second back.
            let id = RandomIdentifier.uuidV7(at: index < 5_000 ? date : date.addingTimeInterval(-1))
            let uuid = try #require(UUID(uuidString: id), "\(id)")
            #expect(uuid.uuidString.lowercased() == id)
            let bytes = Array(withUnsafeBytes(of: uuid.uuid) { Array($0) })
            #expect(bytes[6] >> 4 == 7 && bytes[8] >> 6 == 0b10, "\(id): version 7, RFC 4122 variant")
            let milliseconds = bytes[0..<6].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            #expect(milliseconds >= 4_102_444_800_123 && milliseconds <= 4_102_444_800_133, "\(id)")
            #expect(id > previous, "\(id) after \(previous)")
            previous = id
        }
    }
}
