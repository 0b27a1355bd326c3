import Foundation
import GRDB
import ReplicaModel

/// What applying pulled App Context objects did.
public struct ObjectSyncResult: Sendable, Hashable {
    /// Objects stored for the first time.
    public var inserted = 0
    /// Stored objects replaced by a newer server version.
    public var updated = 0
    /// Objects already stored at that version (same eTag, or the stored one is newer).
    public var unchanged = 0
    /// Local objects removed because the server no longer has them.
    public var removed = 0
    /// Objects whose local unsent edits were laid back over the server's version.
    public var overlaid = 0

    /// An empty result.
    public init() {}

    mutating func record(_ outcome: UpsertOutcome) {
        switch outcome {
        case .inserted: inserted += 1
        case .updated: updated += 1
        case .unchanged: unchanged += 1
        }
    }

    /// Adds another result's counts to this one.
    public mutating func add(_ other: ObjectSyncResult) {
        inserted += other.inserted
        updated += other.updated
        unchanged += other.unchanged
        removed += other.removed
        overlaid += other.overlaid
    }
}

extension ChatStore {
    /// Stores pulled users (newer `updated` wins, same eTag is a no-op) in one transaction; a user
    /// with unsent edits in the outbox keeps showing them over the new server version.
    package func applyPulled(users: [User]) async throws(StoreError) -> ObjectSyncResult {
        try await applyPulled(users, target: { OutboxKeys.user($0.id) }) { try Self.upsert(user: $0, in: $1, coding: $2) }
    }

    /// Stores pulled channels, as ``applyPulled(users:)`` does users.
    package func applyPulled(channels: [Channel]) async throws(StoreError) -> ObjectSyncResult {
        try await applyPulled(channels, target: { OutboxKeys.channel($0.id) }) {
            try Self.upsert(channel: $0, in: $1, coding: $2)
        }
    }

    private func applyPulled<Object: Sendable>(
        _ objects: [Object], target: @escaping @Sendable (Object) -> String,
        upsert: @escaping @Sendable (Object, Database, StoreCoding) throws -> UpsertOutcome
    ) async throws(StoreError) -> ObjectSyncResult {
        try await write { db in
            let coding = StoreCoding()
            var result = ObjectSyncResult()
            for object in objects {
                let outcome = try upsert(object, db, coding)
                result.record(outcome)
                if try Self.overlayIfPending(target: target(object), outcome: outcome, db) { result.overlaid += 1 }
            }
            return result
        }
    }

    /// After a full listing: removes the stored users or channels that came from the server (they
    /// have an eTag) and are not in `keeping`, unless a local op is pending on them. Objects known
    /// only by id (stubs made for memberships and messages) are left alone.
    package func removeMissing(table: ObjectTable, keeping ids: Set<String>) async throws(StoreError) -> Int {
        try await write { db in
            var removed = 0
            let stored = try String.fetchAll(db, sql: "SELECT id FROM \(table.rawValue) WHERE etag IS NOT NULL")
            for id in stored where !ids.contains(id) {
                let target = table == .users ? OutboxKeys.user(id) : OutboxKeys.channel(id)
                if try Self.latestOp(target: target, db) != nil { continue }
                try db.execute(sql: "DELETE FROM \(table.rawValue) WHERE id = ?", arguments: [id])
                removed += 1
            }
            return removed
        }
    }

    /// Makes the stored memberships of one side (a user's channels, or a channel's members) equal
    /// to a complete server listing, in one transaction; memberships with a pending local op keep
    /// the local version.
    package func replaceMemberships(
        of side: MembershipSide, server: [Member]
    ) async throws(StoreError) -> ObjectSyncResult {
        try await write { db in
            let coding = StoreCoding()
            var result = ObjectSyncResult()
            var seen = Set<String>()
            for member in server {
                let target = OutboxKeys.member(member.channelId, member.userId)
                seen.insert(target)
                var incoming = member
                // A listing carries the other side's object only partly (or by id): keep a fuller stored one.
                if let stored = try ChatQueries<Custom>.member(
                    channelId: member.channelId, userId: member.userId, db: db, coding: coding)
                {
                    if incoming.channel.eTag == nil { incoming.channel = stored.channel }
                    if incoming.user.eTag == nil { incoming.user = stored.user }
                }
                let outcome = try Self.upsert(member: incoming, force: false, in: db, coding: coding)
                result.record(outcome)
                if try Self.overlayIfPending(target: target, outcome: outcome, db) { result.overlaid += 1 }
            }
            let (column, otherColumn, id) =
                switch side {
                case .user(let id): ("user_id", "channel_id", id)
                case .channel(let id): ("channel_id", "user_id", id)
                }
            for other in try String.fetchAll(
                db, sql: "SELECT \(otherColumn) FROM members WHERE \(column) = ?", arguments: [id])
            {
                let (channel, user) = column == "user_id" ? (other, id) : (id, other)
                let target = OutboxKeys.member(channel, user)
                if seen.contains(target) { continue }
                if try Self.latestOp(target: target, db) != nil { continue }
                try db.execute(
                    sql: "DELETE FROM members WHERE channel_id = ? AND user_id = ?", arguments: [channel, user])
                result.removed += 1
            }
            return result
        }
    }

    /// Lays the outbox's unsent changes of `target` back over the object just written.
    static func overlayIfPending(target: String, outcome: UpsertOutcome, _ db: Database) throws -> Bool {
        guard outcome != .unchanged, try latestOp(target: target, db) != nil else { return false }
        try overlayPendingOps(target: target, db)
        return true
    }
}

/// The object tables a full listing can prune.
public enum ObjectTable: String, Sendable {
    /// `users`.
    case users
    /// `channels`.
    case channels
}

/// Which memberships a listing covers.
public enum MembershipSide: Sendable, Hashable {
    /// The channels of a user (`GET /uuids/{id}/channels`).
    case user(String)
    /// The members of a channel (`GET /channels/{id}/uuids`).
    case channel(String)
}
