import Foundation
import GRDB

/// A summary of what a store holds, for `pnreplicate status`.
public struct StoreStatus: Sendable, Hashable, Codable {
    /// Row count of each table, by table name.
    public var rowCounts: [String: Int]
    /// The newest applied migration, or nil for an empty store.
    public var schemaVersion: String?
    /// Every applied migration, oldest first.
    public var appliedMigrations: [String]
    /// Migrations this build would still apply.
    public var pendingMigrations: [String]
    /// Outbox operations still to be replayed (pending, in flight or ambiguous).
    public var pendingOutbox: Int
    /// Outbox operations refused for good, waiting for the app to retry or discard them.
    public var deadLetters: Int
    /// Outbox edits that hit a stale eTag, waiting for the app.
    public var conflicts: Int
}

extension ChatStore {
    /// The tables ``status()`` counts.
    public static var countedTables: [String] {
        ["users", "channels", "members", "messages", "message_actions", "outbox", "sync_checkpoints",
         "conflict_log"]
    }

    /// Row counts, schema version and pending outbox count.
    public func status() async throws -> StoreStatus {
        let runner = self.runner
        let outboxCounts = queries.outboxCounts()
        return try await writer.read { db in
            let (applied, pending) = try runner.inspect(db)
            var counts: [String: Int] = [:]
            for table in Self.countedTables where try db.tableExists(table) {
                // Table names come from the fixed list above, never from input.
                counts[table] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0
            }
            let states = try db.tableExists("outbox") ? try outboxCounts.fetch(db) : [:]
            return StoreStatus(
                rowCounts: counts, schemaVersion: applied.last?.name, appliedMigrations: applied.map(\.name),
                pendingMigrations: pending.map(\.name), pendingOutbox: (counts["outbox"] ?? 0) - (states[.dead] ?? 0) - (states[.conflict] ?? 0),
                deadLetters: states[.dead] ?? 0, conflicts: states[.conflict] ?? 0)
        }
    }
}
