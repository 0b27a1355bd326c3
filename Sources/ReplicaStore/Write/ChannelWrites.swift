import Foundation
import GRDB
import ReplicaModel

extension ChatStore {
    /// With `force` the row is written even when it is not newer (local optimistic edits and reverts).
    static func upsert(channel: Channel, force: Bool = false, in db: Database, coding: StoreCoding) throws
        -> UpsertOutcome
    {
        try Validation.validateStoredIdentifier(channel.id, field: "channel.id")
        let arguments: StatementArguments = [
            channel.id, channel.name, channel.type, channel.status, channel.details, channel.avatarURLString,
            try coding.json(channel.custom), channel.updated?.description, channel.updated?.nanoseconds,
            channel.eTag,
        ]
        return try db.upsert(try db.cachedStatement(sql: force ? ChannelSQL.forceUpsert : ChannelSQL.upsert), arguments)
    }

    /// Makes sure a row exists for a channel known only by id, without replacing a fuller one.
    static func ensure(channel: Channel, in db: Database, coding: StoreCoding) throws {
        if channel.eTag == nil, channel.updated == nil {
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO channels (id, type) VALUES (?, ?)")
                .execute(arguments: [channel.id, channel.type])
        } else {
            _ = try upsert(channel: channel, in: db, coding: coding)
        }
    }

    /// Inserts or updates channels, newer `updated` wins, equal eTag is a no-op, older is ignored.
    @discardableResult
    public func load(
        channels: [Channel], batchSize: Int = 256, onBatch: (@Sendable (LoadBatchResult) -> Void)? = nil
    ) async throws -> LoadReport {
        try await loadInBatches(channels, batchSize: batchSize, onBatch: onBatch) { db, coding, channel, batch in
            batch.result.record(try Self.upsert(channel: channel, in: db, coding: coding))
        }
    }

    /// Applies a real-time channel changeset to the stored channel.
    @discardableResult
    public func patch(channel changeset: ChannelChangeset<Custom.Channel>) async throws(StoreError) -> PatchResult {
        try await write { db in
            let coding = StoreCoding()
            guard let stored = try ChatQueries<Custom>.channel(id: changeset.id, db: db, coding: coding) else {
                return .notFound
            }
            guard let patched = changeset.apply(to: stored) else { return .ignored }
            return try Self.upsert(channel: patched, in: db, coding: coding) == .unchanged ? .ignored : .applied
        }
    }

    /// Removes a channel and, through the schema's cascade, its memberships. Messages stay.
    @discardableResult
    public func removeChannel(id: String) async throws(StoreError) -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM channels WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }
}

/// The statements of these writes.
enum ChannelSQL {
    static let upsert = upsertSQL(force: false)
    static let forceUpsert = upsertSQL(force: true)

    static func upsertSQL(force: Bool) -> String {
        """
        INSERT INTO channels (id, name, type, status, description, avatar_url, custom, updated, updated_ns, etag)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(id) DO UPDATE SET
            name = excluded.name, type = excluded.type, status = excluded.status,
            description = excluded.description, avatar_url = excluded.avatar_url, custom = excluded.custom,
            updated = excluded.updated, updated_ns = excluded.updated_ns, etag = excluded.etag
        \(force ? "" : "WHERE " + StoreSQL.versionRule(table: "channels"))
        """
    }
}
