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
    /// The size of the store's pages, and the part of it in use (the rest is free pages a
    /// vacuum gives back), in bytes: the database file without its WAL and files area.
    public var storage = Storage()

    /// What the store's pages take, and what the storage budget did (`docs/store.md`, "Storage budget").
    public struct Storage: Sendable, Hashable, Codable {
        /// Bytes of the database's pages (page count x page size).
        public var databaseBytes = 0
        /// Bytes of the pages in use (without the free list).
        public var usedBytes = 0
        /// The retention policy last enforced on the store, or nil when none ever was.
        public var retention: RetentionPolicy?
        /// Messages evicted so far, and the channels they came from (each complete only from a
        /// timetoken on: scroll-back and sync fetch the rest again).
        public var evictedMessages = 0
        public var evictedChannels = 0

        /// Nothing measured yet.
        public init() {}
    }
}
