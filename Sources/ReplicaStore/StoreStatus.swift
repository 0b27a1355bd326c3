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
