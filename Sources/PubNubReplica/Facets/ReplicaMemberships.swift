import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

/// Memberships: joining and leaving channels, a membership's fields, and read positions.
///
/// ```swift
/// try await replica.memberships.join(channel: "general")
/// try await replica.memberships.markRead(channel: "general", upTo: newest.timetoken!)
/// ```
///
/// Reached through ``Replica/memberships``: a value made per access, holding only the replica.
public struct ReplicaMemberships<Custom: ChatCustomData>: Sendable {
    /// The replica these calls go through.
    let replica: Replica<Custom>

    /// Creates or edits a membership (this user's unless `user` is given). An edit of this user's
    /// membership that sets no field is a ``join(channel:edit:)``.
    public func set(channel: String, user: String? = nil, edit: MemberEdit<Custom>) async throws
        -> OutboxReceipt<ChatMember<Custom>>
    {
        try await replica.write { try await $0.memberships.setMembership(channel: channel, user: user, edit: edit) }
    }

    /// Removes a membership (this user's unless `user` is given): leaving a channel.
    @discardableResult
    public func remove(channel: String, user: String? = nil) async throws -> OutboxReceipt<ChatMember<Custom>> {
        try await replica.write { try await $0.memberships.removeMembership(channel: channel, user: user) }
    }

    /// Joins a channel as the Chat SDK's `join`: the user's membership (status `joined` unless
    /// `edit` gives one) with a read position at the time of joining, so that earlier history is
    /// not unread. Works offline: the channel is in `unreadCounts` at once.
    ///
    /// ```swift
    /// try await replica.join(channel: "general")
    /// ```
    @discardableResult
    public func join(channel: String, edit: MemberEdit<Custom> = MemberEdit()) async throws -> OutboxReceipt<ChatMember<Custom>> {
        try await replica.write { try await $0.memberships.join(channel: channel, edit: edit) }
    }

    /// Moves this user's read position in a channel forward, as the Chat SDK's
    /// `setLastReadMessageTimetoken` (unread counts follow; the receipt signal is sent except on
    /// `public` channels). An older or equal position is `unchanged` unless `force`, which moves
    /// it even backwards (to repair one set too far).
    ///
    /// Throws `OutboxError.notAMember` when the user has no membership of the channel in the store.
    public func markRead(channel: String, upTo timetoken: Timetoken, force: Bool = false) async throws
        -> OutboxReceipt<ChatMember<Custom>>
    {
        try await replica.write { try await $0.memberships.markRead(channel: channel, upTo: timetoken, force: force) }
    }

    /// Marks every channel of the current user read up to its newest stored message
    /// (`markAllMessagesAsRead`); see `Outbox.markAllRead()` for how it is sent.
    @discardableResult
    public func markAllRead() async throws -> [String: OutboxReceipt<ChatMember<Custom>>] {
        try await replica.write { try await $0.memberships.markAllRead() }
    }
}

extension Replica {
    /// Memberships: joining and leaving channels, a membership's fields, and read positions.
    public nonisolated var memberships: ReplicaMemberships<Custom> { ReplicaMemberships(replica: self) }
}
