import Foundation
import ReplicaModel
import ReplicaStore

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

    mutating func record<C: ChatCustomData>(_ applied: LocalOverlay<C>.Applied) {
        switch applied.outcome {
        case .inserted: inserted += 1
        case .updated: updated += 1
        case .unchanged: unchanged += 1
        }
        if applied.overlaid { overlaid += 1 }
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

extension Reconciler {
    /// Stores pulled users (newer `updated` wins, same eTag is a no-op) in one transaction; a user
    /// with unsent edits in the outbox keeps showing them over the new server version.
    func applyPulled(users: [ChatUser<Custom.User>]) async throws(StoreError) -> ObjectSyncResult {
        try await store.storeTransaction { tx in
            var result = ObjectSyncResult()
            for user in users { result.record(try LocalOverlay(tx: tx).applyServer(user: user)) }
            return result
        }
    }

    /// Stores pulled channels, as ``applyPulled(users:)`` does users.
    func applyPulled(channels: [ChatChannel<Custom.Channel>]) async throws(StoreError) -> ObjectSyncResult {
        try await store.storeTransaction { tx in
            var result = ObjectSyncResult()
            for channel in channels { result.record(try LocalOverlay(tx: tx).applyServer(channel: channel)) }
            return result
        }
    }

    /// After a full listing: removes the stored users or channels that came from the server (they
    /// have an eTag) and are not in `keeping`, unless a local op is pending on them. Objects known
    /// only by id (stubs made for memberships and messages) are left alone.
    func removeMissing(table: ObjectTable, keeping ids: Set<String>) async throws(StoreError) -> Int {
        try await store.storeTransaction { tx in
            var removed = 0
            for id in try tx.serverObjectIds(table) where !ids.contains(id) {
                if try LocalOverlay(tx: tx).serverLacks(table, id: id) { removed += 1 }
            }
            return removed
        }
    }

    /// Makes the stored memberships of one side (a user's channels, or a channel's members) equal
    /// to a complete server listing, in one transaction; memberships with a pending local op keep
    /// the local version.
    func replaceMemberships(of side: MembershipSide, server: [ChatMember<Custom>]) async throws(StoreError)
        -> ObjectSyncResult
    {
        try await store.storeTransaction { tx in
            let overlay = LocalOverlay(tx: tx)
            var result = ObjectSyncResult()
            var seen = Set<[String]>()
            for member in server {
                seen.insert([member.channelId, member.userId])
                result.record(try overlay.applyServer(member: member))
            }
            for (channel, user) in try tx.memberships(of: side) where !seen.contains([channel, user]) {
                if try overlay.serverLacks(channelId: channel, userId: user) { result.removed += 1 }
            }
            return result
        }
    }
}
