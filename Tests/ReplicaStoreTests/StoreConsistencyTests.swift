import Foundation
import Testing
import ReplicaModel
@testable import ReplicaStore

@Suite("Related rows stay consistent; bad input and bad migrations are refused")
struct StoreConsistencyTests {
    @Test("a pending reaction whose server copy arrived first does not break the batch that sends its message")
    func rekeyCollision() async throws {
        let store = try Fixture.store()
        try await store.load(messages: [try Fixture.message("m")])
        try await store.load(messageActions: [
            try ChatMessageAction(type: "reaction", value: "👍", userId: "me", channelId: "general", messageId: "m")
        ])
        // The server's copy (from another page) lands before the message itself is updated.
        try await store.load(messageActions: [
            try ChatMessageAction(type: "reaction", value: "👍", userId: "me", channelId: "general", messageTimetoken: 500,
                                  actionTimetoken: 510)
        ])
        let report = try await store.load(messages: [try Fixture.message("m", timetoken: 500)])
        #expect(report.succeeded && report.updated == 1)
        let actions = try await store.fetch(store.queries.actions(ofMessage: "m"))
        #expect(actions.count == 1 && actions[0].actionTimetoken == 510)
    }

    @Test("removing a message also removes actions stored only by its timetoken")
    func removeMessageRemovesActions() async throws {
        let store = try Fixture.store()
        try await store.load(messages: [try Fixture.message("m", timetoken: 100), try Fixture.message("n", timetoken: 200)])
        try await store.load(messageActions: [
            try ChatMessageAction(type: "r", value: "a", userId: "u", channelId: "general", messageTimetoken: 100),
            try ChatMessageAction(type: "r", value: "b", userId: "u", channelId: "general", messageTimetoken: 200),
        ])
        #expect(try await store.removeMessage(id: "m"))
        let left = try store.fetchNow(StoreQuery { try Int.fetchOne($0, sql: "SELECT count(*) FROM message_actions") ?? -1 })
        #expect(left == 1)
    }

    @Test("a batch size of zero is a typed error, not a crash")
    func zeroBatchSize() async throws {
        let store = try Fixture.store()
        await #expect(throws: StoreError.invalidInput("batchSize must be positive, got 0")) {
            try await store.load(users: [try Fixture.user("a")], batchSize: 0)
        }
    }

    @Test("requireCurrent refuses a missing store without creating it")
    func requireCurrentCreatesNothing() throws {
        let path = Fixture.temporaryPath()
        var options = StoreOptions()
        options.migration = .requireCurrent
        #expect(throws: StoreError.self) { try Store.open(at: path, options: options) }
        #expect(FileManager.default.fileExists(atPath: path) == false)
    }

    @Test("two migrations with one number, or out of order, are refused")
    func duplicateMigrations() throws {
        var options = StoreOptions()
        options.migrations = try Migration.bundled() + [
            try Migration(name: "9002_a", sql: "SELECT 1;"), try Migration(name: "9002_b", sql: "SELECT 1;"),
        ]
        #expect(throws: StoreError.self) { try Store.inMemory(options: options) }
        #expect(throws: StoreError.invalidMigrationName("+001_x")) { try Migration(name: "+001_x", sql: "") }
    }

    /// SwiftPM caches the evaluated manifest: a migration file added without touching Package.swift
    /// can be left out of the bundle. This test fails loudly then (`swift package purge-cache`, or
    /// touch Package.swift, fixes it).
    @Test("every SQL file in Migrations/ is bundled, with identical text")
    func bundleMatchesSourceFolder() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Migrations")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".sql") }.sorted()
        let bundled = try Migration.bundled()
        #expect(bundled.map { $0.name + ".sql" } == files)
        for migration in bundled {
            let source = try String(contentsOf: folder.appendingPathComponent(migration.name + ".sql"), encoding: .utf8)
            #expect(source == migration.sql)
        }
    }
}
