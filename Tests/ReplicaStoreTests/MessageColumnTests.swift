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
