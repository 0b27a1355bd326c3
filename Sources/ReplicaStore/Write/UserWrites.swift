import Foundation
import GRDB
import ReplicaModel

extension ChatStore {
    static func userArguments(_ user: User, _ coding: StoreCoding) throws -> StatementArguments {
        try Validation.validateStoredIdentifier(user.id, field: "user.id")
        return [
            user.id, user.name, user.type, user.status, user.externalId, user.profileUrl, user.email,
            try coding.json(user.custom), user.updated?.description, user.updated?.nanoseconds, user.eTag,
        ]
    }

    /// With `force` the row is written even when it is not newer (local optimistic edits and reverts).
    static func upsert(user: User, force: Bool = false, in db: Database, coding: StoreCoding) throws -> UpsertOutcome {
        try db.upsert(
            try db.cachedStatement(sql: force ? UserSQL.forceUpsert : UserSQL.upsert), try userArguments(user, coding))
    }

    /// Makes sure a row exists for a user known only by id (memberships, messages), without
    /// replacing a fuller stored version.
    static func ensure(user: User, in db: Database, coding: StoreCoding) throws {
        if user.eTag == nil, user.updated == nil {
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO users (id, type) VALUES (?, ?)")
                .execute(arguments: [user.id, user.type])
        } else {
            _ = try upsert(user: user, in: db, coding: coding)
        }
    }

    /// Inserts or updates users, newer `updated` wins, equal eTag is a no-op, older is ignored.
    @discardableResult
    public func load(
        users: [User], batchSize: Int = 256, onBatch: (@Sendable (LoadBatchResult) -> Void)? = nil
    ) async throws -> LoadReport {
        try await loadInBatches(users, batchSize: batchSize, onBatch: onBatch) { db, coding, user, batch in
            batch.result.record(try Self.upsert(user: user, in: db, coding: coding))
        }
    }

    /// Applies a real-time user changeset to the stored user.
    @discardableResult
    public func patch(user changeset: UserChangeset<Custom.User>) async throws(StoreError) -> PatchResult {
        try await write { db in
            let coding = StoreCoding()
            guard let stored = try ChatQueries<Custom>.user(id: changeset.id, db: db, coding: coding) else {
                return .notFound
            }
            guard let patched = changeset.apply(to: stored) else { return .ignored }
            return try Self.upsert(user: patched, in: db, coding: coding) == .unchanged ? .ignored : .applied
        }
    }

    /// Removes a user and, through the schema's cascade, their memberships.
    @discardableResult
    public func removeUser(id: String) async throws(StoreError) -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM users WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }
}

/// The statements of these writes.
enum UserSQL {
    static let upsert = upsertSQL(force: false)
    static let forceUpsert = upsertSQL(force: true)

    static func upsertSQL(force: Bool) -> String {
        """
        INSERT INTO users (id, name, type, status, external_id, profile_url, email, custom, updated, updated_ns, etag)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(id) DO UPDATE SET
            name = excluded.name, type = excluded.type, status = excluded.status,
            external_id = excluded.external_id, profile_url = excluded.profile_url, email = excluded.email,
            custom = excluded.custom, updated = excluded.updated, updated_ns = excluded.updated_ns,
            etag = excluded.etag
        \(force ? "" : "WHERE " + StoreSQL.versionRule(table: "users"))
        """
    }
}

/// SQL shared by the object tables.
enum StoreSQL {
    /// The newer-wins rule in SQL, the same as `VersionedObject.decision(replacing:)`: equal eTag →
    /// unchanged; an older (or missing) `updated` never replaces a newer one.
    static func versionRule(table: String) -> String {
        """
        (excluded.etag IS NULL OR \(table).etag IS NOT excluded.etag)
            AND (\(table).updated_ns IS NULL
                 OR (excluded.updated_ns IS NOT NULL AND excluded.updated_ns >= \(table).updated_ns))
        """
    }
}
