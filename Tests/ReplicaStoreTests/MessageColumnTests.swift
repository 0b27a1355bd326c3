import Foundation
import GRDB
import ReplicaModel
import Testing
@testable import ReplicaStore

@Suite("A message's row comes from its field table")
struct MessageColumnTests {
    @Test("every column of the messages table is a MessageColumn, and every MessageColumn is a column")
    func tableMatchesSchema() async throws {
        let store = try Fixture.store()
        let columns = try await store.write { db in try Set(Row.fetchAll(db, sql: "PRAGMA table_info(messages)").map { $0["name"] as String }) }
        #expect(columns == Set(MessageColumn.allCases.map(\.name)))
    }

    @Test("a new message is a plain insert: a stored id refuses it with a typed error and leaves the stored row alone")
    func insertNew() async throws {
        let store = try Fixture.store()
        let stored = try Fixture.message("m1", text: "first", timetoken: 17_000_000_000_000_000)
        try await store.load(messages: [stored])
        var second = try Fixture.message("m1", text: "second")
        second.delivery = .pending
        let pending = second
        await #expect(throws: StoreError.invalidInput("a message with id m1 is already stored")) {
            try await store.storeTransaction { tx in try tx.insert(newMessage: pending) }
        }
        #expect(try await store.fetch(store.queries.message(id: "m1")) == stored)
        let other = try Fixture.message("m2", text: "new")
        try await store.storeTransaction { tx in try tx.insert(newMessage: other) }
        #expect(try await store.fetch(store.queries.message(id: "m2"))?.text == "new")
    }

    @Test("new messages in multi-row inserts: 120 (three statements) keep their order and every field; a stored or repeated id is named and nothing is written")
    func insertNewMessages() async throws {
        let store = try Fixture.store()
        var batch: [ChatMessage<FlatCustom>] = []
        for index in 0..<120 {
            var message = try Fixture.message(String(format: "m%03d", index), text: "text \(index)")
            message.delivery = .pending
            message.meta = index % 7 == 0 ? .object(["n": .int(Int64(index))]) : nil
            message.customMessageType = index % 5 == 0 ? "kind-a" : nil
            batch.append(message)
        }
        let messages = batch
        try await store.storeTransaction { tx in try tx.insert(newMessages: messages) }
        let stored = try await store.fetch(store.queries.messages(inChannel: messages[0].channelId))
        // Pending messages come in local send order: the order of the batch.
        #expect(stored.map(\.id) == messages.map(\.id))
        #expect(stored == messages)
        let sequences = try await store.write { db in try Int64.fetchAll(db, sql: "SELECT local_seq FROM messages ORDER BY local_seq") }
        #expect(Set(sequences).count == 120)

        var late = try Fixture.message("late-1", text: "x")
        late.delivery = .pending
        let again = [late, messages[77]], repeated = [late, late]
        await #expect(throws: StoreError.invalidInput("a message with id m077 is already stored")) {
            try await store.storeTransaction { tx in try tx.insert(newMessages: again) }
        }
        await #expect(throws: StoreError.invalidInput("a message with id late-1 is already stored")) {
            try await store.storeTransaction { tx in try tx.insert(newMessages: repeated) }
        }
        #expect(try await store.fetch(store.queries.message(id: "late-1")) == nil)
    }

    @Test("rows made before their transaction get the local send order there, after the stored messages; an empty text is stored as '', not NULL")
    func rowsMadeBeforeTheTransaction() async throws {
        let store = try Fixture.store()
        @Sendable func pending(_ id: String, text: String) throws -> ChatMessage<FlatCustom> {
            var message = try Fixture.message(id, text: text)
            message.delivery = .pending
            return message
        }
        try await store.storeTransaction { tx in try tx.insert(newMessage: pending("first", text: "a")) }
        // 53 rows: a full statement of 50 and one of 3.
        let batch = try (0..<53).map { try pending(String(format: "b%02d", $0), text: $0 == 4 ? "" : "t\($0)") }
        let rows = try NewMessageRows<DefaultChatCustom>(batch)
        #expect(rows.count == 53)
        try await store.storeTransaction { tx in try tx.insert(newMessages: rows) }
        let order = try await store.write { db in try String.fetchAll(db, sql: "SELECT id FROM messages ORDER BY local_seq") }
        #expect(order == ["first"] + batch.map(\.id))
        let sequences = try await store.write { db in try Int64.fetchAll(db, sql: "SELECT local_seq FROM messages ORDER BY local_seq") }
        #expect(sequences == Array(1...54))
        let empty = try await store.write { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM messages WHERE text = '' AND id = 'b04'") }
        #expect(empty == 1)
        #expect(try await store.fetch(store.queries.message(id: "b52")) == batch[52])
    }

    @Test("values bound straight to SQLite keep their kind: an empty text is '' and an empty blob is a blob, never NULL")
    func bindEmptyValues() async throws {
        let store = try Fixture.store()
        let kinds = try await store.write { db in
            try db.execute(sql: "CREATE TABLE bound (a, b, c, d)")
            let statement = try db.cachedStatement(sql: "INSERT INTO bound VALUES (?, ?, ?, ?)")
            try db.bind(["".databaseValue, Data().databaseValue, "petit café".databaseValue, Data([1, 2]).databaseValue], to: statement)
            try statement.execute()
            let row = try #require(try Row.fetchOne(db, sql: "SELECT typeof(a), typeof(b), c, length(b), length(d) FROM bound"))
            return [row[0], row[1], row[2], String(row[3] as Int), String(row[4] as Int)] as [String]
        }
        #expect(kinds == ["text", "blob", "petit café", "0", "2"])
    }

    @Test("a row with the wrong number of values is a typed error, not a trap, and writes nothing")
    func wrongRowWidth() async throws {
        let store = try Fixture.store()
        // The store passes the database's error on as a typed `StoreError`.
        await #expect(throws: StoreError.self) {
            try await store.write { db in try MultiRowInsert.messages.insert(["only-one".databaseValue], in: db) }
        }
        let count = try await store.write { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM messages") }
        #expect(count == 0)
    }

    @Test("every stored field of a message comes back as it was written")
    func roundTrip() async throws {
        let store = try Fixture.store()
        var message = try Fixture.message("m1", text: "hello", timetoken: 17_000_000_000_000_000)
        message.contentType = "link"
        message.content = .object(["url": .string("https://example.com")])
        message.custom = FlatCustom(["mood": .string("fine")])
        message.meta = .object(["quote": .string("q")])
        message.customMessageType = "text-v2"
        message.files = [ChatFile(id: "f1", name: "a.png", size: 3, mimeType: "image/png")]
        try await store.load(messages: [message])
        let stored = try #require(try await store.fetch(store.queries.message(id: "m1")))
        #expect(stored == message)
    }

    @Test("a second version replaces the text, keeps what it lacks (timetoken, meta, type, files), never moves the message")
    func conflictRules() async throws {
        let store = try Fixture.store()
        var first = try Fixture.message("m1", channel: "a", text: "first", timetoken: 17_000_000_000_000_000)
        first.meta = .object(["k": .string("v")])
        first.customMessageType = "text-v2"
        first.files = [ChatFile(id: "f1", name: "a.png")]
        try await store.load(messages: [first])
        let second = try Fixture.message("m1", channel: "b", user: "mallory", text: "second")
        let report = try await store.load(messages: [second])
        #expect(report.updated == 1)
        let stored = try #require(try await store.fetch(store.queries.message(id: "m1")))
        #expect(stored.text == "second")
        #expect(stored.channelId == "a" && stored.userId == "alice")
        #expect(stored.timetoken == first.timetoken && stored.delivery == .sent)
        #expect(stored.meta == first.meta && stored.customMessageType == "text-v2" && stored.files == first.files)
        // The same version again changes nothing, so nothing is written.
        #expect(try await store.load(messages: [second]).unchanged == 1)
    }
}
