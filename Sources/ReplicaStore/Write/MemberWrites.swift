import Foundation
import GRDB
import ReplicaModel

extension ChatStore {
    static func upsert(member: Member, force: Bool, in db: Database, coding: StoreCoding) throws -> UpsertOutcome {
        try ensure(channel: member.channel, in: db, coding: coding)
        try ensure(user: member.user, in: db, coding: coding)
        let arguments: StatementArguments = [
            member.channelId, member.userId, member.status, member.type, try coding.json(member.custom),
            member.updated?.description, member.updated?.nanoseconds, member.eTag, member.isPresent,
            try coding.json(member.presenceState),
        ]
        return try db.upsert(try db.cachedStatement(sql: force ? MemberSQL.forceUpsert : MemberSQL.upsert), arguments)
    }

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
            batch.result.record(try Self.upsert(member: member, force: forceWrite, in: db, coding: coding))
        }
    }

    /// Applies a real-time membership changeset to the stored membership.
    @discardableResult
    public func patch(member changeset: MemberChangeset<Custom.Member>) async throws(StoreError) -> PatchResult {
        try await write { db in
            let coding = StoreCoding()
            guard
                let stored = try ChatQueries<Custom>.member(
                    channelId: changeset.channelId, userId: changeset.userId, db: db, coding: coding)
            else { return .notFound }
            guard let patched = changeset.apply(to: stored) else { return .ignored }
            let outcome = try Self.upsert(member: patched, force: false, in: db, coding: coding)
            return outcome == .unchanged ? .ignored : .applied
        }
    }

    /// Sets presence for a membership that is stored; returns false when there is none.
    @discardableResult
    public func setPresence(
        channelId: String, userId: String, isPresent: Bool, state: JSONValue? = nil
    ) async throws(StoreError) -> Bool {
        try await write { db in
            let coding = StoreCoding()
            try db.execute(
                sql: "UPDATE members SET is_present = ?, presence_state = ? WHERE channel_id = ? AND user_id = ?",
                arguments: [isPresent, try coding.json(state), channelId, userId])
            return db.changesCount > 0
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

/// SQL of membership writes.
enum MemberSQL {
    static func upsertMemberSQL(force: Bool) -> String {
        """
        INSERT INTO members (channel_id, user_id, status, type, custom, updated, updated_ns, etag, is_present,
                             presence_state)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(channel_id, user_id) DO UPDATE SET
            status = excluded.status, type = excluded.type, custom = excluded.custom,
            updated = excluded.updated, updated_ns = excluded.updated_ns, etag = excluded.etag,
            is_present = coalesce(excluded.is_present, members.is_present),
            presence_state = coalesce(excluded.presence_state, members.presence_state)
        \(force ? "" : "WHERE " + StoreSQL.versionRule(table: "members"))
        """
    }
    static let upsert = upsertMemberSQL(force: false)
    static let forceUpsert = upsertMemberSQL(force: true)
}
