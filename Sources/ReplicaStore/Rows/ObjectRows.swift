import Foundation
import GRDB
import ReplicaModel

// The App Context rows: users, channels and memberships, each written under the version rule
// (`VersionDecision.sqlApplies`) by bulk loads, real-time patches and the replicator.

// MARK: Users and channels

extension ChatStore {
    /// Applies a real-time change set to the stored object (``patch(user:)``, ``patch(channel:)``).
    private func patch<Entity: StoredEntity>(_ changeset: ObjectChangeset<Entity>) async throws(StoreError) -> PatchResult {
        try await write { db in
            let coding = StoreCoding()
            let rows = Entity.rows
            let select = "SELECT \(rows.selectList("t")) FROM \(rows.table) t WHERE t.id = ?"
            guard let row = try Row.fetchOne(db, sql: select, arguments: [changeset.id]) else { return .notFound }
            let stored = try rows.read(row, at: 0, coding: coding)
            guard let patched = changeset.apply(to: stored) else { return .ignored }
            return try RowUpserts<Custom>.upsert(patched, in: db, coding: coding) == .unchanged ? .ignored : .applied
        }
    }

    /// Deletes a user's or channel's row (``removeUser(id:)``, ``removeChannel(id:)``).
    private func remove<Entity: StoredEntity>(_: Entity.Type, id: String) async throws(StoreError) -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM \(Entity.rows.table) WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    /// Writes users or channels in batches under the version rule.
    private func load<Entity: StoredEntity>(
        _ objects: [Entity], batchSize: Int, onBatch: (@Sendable (LoadBatchResult) -> Void)?
    ) async throws -> LoadReport {
        try await loadInBatches(objects, batchSize: batchSize, onBatch: onBatch) { db, coding, object, batch in
            batch.result.record(try RowUpserts<Custom>.upsert(object, in: db, coding: coding))
        }
    }

    /// Inserts or updates users, newer `updated` wins, equal eTag is a no-op, older is ignored.
    @discardableResult
    public func load(
        users: [User], batchSize: Int = 256, onBatch: (@Sendable (LoadBatchResult) -> Void)? = nil
    ) async throws -> LoadReport {
        try await load(users, batchSize: batchSize, onBatch: onBatch)
    }

    /// Inserts or updates channels, as ``load(users:batchSize:onBatch:)``.
    @discardableResult
    public func load(
        channels: [Channel], batchSize: Int = 256, onBatch: (@Sendable (LoadBatchResult) -> Void)? = nil
    ) async throws -> LoadReport {
        try await load(channels, batchSize: batchSize, onBatch: onBatch)
    }

    /// Applies a real-time user changeset to the stored user.
    @discardableResult
    public func patch(user changeset: UserChangeset<Custom.User>) async throws(StoreError) -> PatchResult {
        try await patch(changeset)
    }

    /// Applies a real-time channel changeset to the stored channel.
    @discardableResult
    public func patch(channel changeset: ChannelChangeset<Custom.Channel>) async throws(StoreError) -> PatchResult {
        try await patch(changeset)
    }

    /// Removes a user and, through the schema's cascade, their memberships.
    @discardableResult
    public func removeUser(id: String) async throws(StoreError) -> Bool { try await remove(User.self, id: id) }

    /// Removes a channel and, through the schema's cascade, its memberships. Messages stay.
    @discardableResult
    public func removeChannel(id: String) async throws(StoreError) -> Bool { try await remove(Channel.self, id: id) }
}

// MARK: Memberships

extension ChatStore {
    /// Inserts or updates memberships. Their channel and user are stored too: full objects by the
    /// newer-wins rule, id-only ones only when nothing is stored yet.
    ///
    /// - Parameter forceWrite: write each membership even when it is not newer than the stored one
    ///   (the seed's `forceWrite`, e.g. for presence changes that carry no new `updated`).
    @discardableResult
    public func load(
        members: [Member], forceWrite: Bool = false, batchSize: Int = 256,
        onBatch: (@Sendable (LoadBatchResult) -> Void)? = nil
    ) async throws -> LoadReport {
        try await loadInBatches(members, batchSize: batchSize, onBatch: onBatch) { db, coding, member, batch in
            batch.result.record(try RowUpserts<Custom>.upsert(member: member, force: forceWrite, in: db, coding: coding))
        }
    }

    /// Applies a real-time membership changeset to the stored membership.
    @discardableResult
    public func patch(member changeset: MemberChangeset<Custom>) async throws(StoreError) -> PatchResult {
        try await write { db in
            let coding = StoreCoding()
            guard
                let stored = try EntityReads<Custom>.member(
                    channelId: changeset.channelId, userId: changeset.userId, db: db, coding: coding)
            else { return .notFound }
            guard let patched = changeset.apply(to: stored) else { return .ignored }
            let outcome = try RowUpserts<Custom>.upsert(member: patched, force: false, in: db, coding: coding)
            return outcome == .unchanged ? .ignored : .applied
        }
    }

    /// Sets presence for a membership that is stored (its state only while present: leaving clears
    /// it, as a presence event does); returns false when there is none.
    @discardableResult
    public func setPresence(
        channelId: String, userId: String, isPresent: Bool, state: JSONValue? = nil
    ) async throws(StoreError) -> Bool {
        try await storeTransaction { tx in
            guard try tx.member(channelId: channelId, userId: userId) != nil else { return false }
            try tx.setPresence(channelId: channelId, userId: userId, isPresent: isPresent, state: state)
            return true
        }
    }

    /// Removes one membership.
    @discardableResult
    public func removeMember(channelId: String, userId: String) async throws(StoreError) -> Bool {
        try await write { db in
            try db.execute(
                sql: "DELETE FROM members WHERE channel_id = ? AND user_id = ?", arguments: [channelId, userId])
            return db.changesCount > 0
        }
    }
}

/// SQL of membership writes: the pair, the fields of ``ChatMember``'s table, the version, and
/// the local presence columns (kept when a write carries none).
enum MemberSQL {
    /// The field columns, in field-table order.
    static let fieldColumns = ChatMember<DefaultChatCustom>.fields.map(\.column)

    static func upsertMemberSQL(force: Bool) -> String {
        let versioned = fieldColumns + ["updated", "updated_ns", "etag"] + MetadataColumns.written
        let columns = ["channel_id", "user_id"] + versioned + ["is_present", "presence_state"]
        return """
            INSERT INTO members (\(columns.joined(separator: ", ")))
            VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))
            ON CONFLICT(channel_id, user_id) DO UPDATE SET
                \(versioned.map { MetadataColumns.update($0, table: "members") }.joined(separator: ", ")),
                is_present = coalesce(excluded.is_present, members.is_present),
                presence_state = coalesce(excluded.presence_state, members.presence_state)
            \(force ? "" : "WHERE " + VersionDecision.sqlApplies(table: "members"))
            """
    }
    static let upsert = upsertMemberSQL(force: false)
    static let forceUpsert = upsertMemberSQL(force: true)
}

// MARK: The object backend a store is bound to

extension ChatStore {
    /// The object backend the store's users, channels and memberships come from (`app-context`,
    /// `datasync`), or nil for a store no replica has bound yet.
    public func objectBackend() throws -> String? {
        do {
            return try writer.read { db in
                try String.fetchOne(db, sql: "SELECT value FROM replica_settings WHERE key = 'objects.backend'")
            }
        } catch {
            throw StoreError.wrapping(error)
        }
    }

    /// Binds the store to the object backend `name` on its first use, and checks it on every
    /// later one: throws ``StoreError/objectBackendMismatch(stored:configured:)`` when the store
    /// was filled under another backend (`docs/datasync.md`, "Binding a store to a backend").
    /// A replica calls it once when it opens the store, before anything is pulled or sent.
    ///
    /// ```swift
    /// try store.bindObjectBackend("datasync")   // a store filled from App Context throws here
    /// ```
    public func bindObjectBackend(_ name: String) throws {
        // A read first: a store bound already (every open but the first) takes no write lock.
        let stored: String?
        if let bound = try objectBackend() {
            stored = bound
        } else {
            do {
                stored = try writer.write { db in
                    if let value = try String.fetchOne(db, sql: "SELECT value FROM replica_settings WHERE key = 'objects.backend'") {
                        return value
                    }
                    try db.execute(sql: "INSERT INTO replica_settings (key, value) VALUES ('objects.backend', ?)", arguments: [name])
                    return nil
                }
            } catch {
                throw StoreError.wrapping(error)
            }
        }
        if let stored, stored != name { throw StoreError.objectBackendMismatch(stored: stored, configured: name) }
    }
}
