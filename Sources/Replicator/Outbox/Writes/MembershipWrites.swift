import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

/// The writes of memberships: joining, setting and removing one, and read positions (one channel's,
/// or all at once). Each is one transaction through the outbox, needing no network.
///
/// ```swift
/// try await outbox.memberships.markRead(channel: "general", upTo: newest.timetoken!)
/// ```
public struct MembershipWrites<Custom: ChatCustomData>: OutboxWriter {
    /// The outbox the ops are queued in.
    public let outbox: Outbox<Custom>

    /// Marks a channel read up to `timetoken`, as the Chat SDK's `setLastReadMessageTimetoken`:
    /// the membership's custom data gets `lastReadMessageTimetoken` (a string; other keys are
    /// kept), sent as a membership set (unsent ones merge: only the newest position goes), then
    /// the Chat SDK's receipt signal, except on `public` channels. Read positions only move
    /// forward: an older or equal one is `unchanged`.
    ///
    /// ```swift
    /// try await outbox.memberships.markRead(channel: "general", upTo: newest.timetoken!)
    /// let badge = try await store.fetch(store.queries.unreadCount(inChannel: "general", for: outbox.userId))
    /// ```
    ///
    /// A stored position later than the present plus 10 minutes (``ReplicaModel/ReadPosition``:
    /// another user wrote it, or a typo) counts as none, so this call replaces it.
    ///
    /// - Parameter force: move the position even backwards (to repair one set too far).
    /// - Throws: ``OutboxError/notAMember(channel:user:)`` when the store has no membership of the
    ///   user in the channel (the position lives there); ``OutboxError/implausibleReadPosition(_:ceiling:)``
    ///   for a position in the future.
    @discardableResult
    public func markRead(channel: String, upTo timetoken: Timetoken, force: Bool = false) async throws
        -> OutboxReceipt<ChatMember<Custom>>
    {
        let opId = Outbox<Custom>.newOpId(), receiptOpId = Outbox<Custom>.newOpId(), now = clock.now, userId = userId
        return try await commit {
            try $0.enqueue.markRead(
                opId: opId, channelId: channel, userId: userId, timetoken: timetoken, force: force, receiptOpId: receiptOpId,
                now: now)
        }
    }

    /// Marks every channel the user is a member of read up to its newest stored message, as the
    /// Chat SDK's `markAllMessagesAsRead`: one op writes the positions of up to 100 channels in
    /// one membership PATCH (PubNub's limit; more channels, more ops), then each channel that
    /// moved gets its receipt signal (not on `public` channels). Channels already read queue nothing.
    ///
    /// Offline it coalesces: a second `markAllRead()` (or a ``markRead(channel:upTo:force:)``
    /// of a channel it names) before the op is sent raises the positions in it. Until it is sent,
    /// each membership shows its new position over whatever a pull brings. A channel with an
    /// unsent edit of its own membership takes its position in that edit instead, and an edit
    /// made later waits for the batch, so the two never race. A channel the user may not write
    /// (banned) is left as it is.
    ///
    /// When it is sent, the server's memberships of its channels are read first (one request):
    /// each gets its custom data as the server holds it with the new position; a position the
    /// server already has (or passed) is not written, and a membership removed elsewhere is not
    /// made again (`docs/conversations.md`, "Mark all read").
    ///
    /// ```swift
    /// let moved = try await outbox.memberships.markAllRead()   // one op for up to 100 channels
    /// print(moved.keys.sorted())                    // the channels whose position moved
    /// ```
    ///
    /// - Returns: the receipts of the channels whose position moved, by channel (the batch's op
    ///   id, or the membership op a channel's position went into).
    @discardableResult
    public func markAllRead() async throws -> [String: OutboxReceipt<ChatMember<Custom>>] {
        let now = clock.now, userId = userId
        return try await commit { try $0.enqueue.markAllRead(userId: userId, opIds: Outbox<Custom>.newOpId, now: now) }
    }

    /// Sets a membership (of the current user unless `user` is given). An edit of the current
    /// user's membership that sets no field is a ``join(channel:edit:)``; for another user it is
    /// refused (``OutboxError/emptyEdit(_:)``).
    public func setMembership(channel: String, user: String? = nil, edit: MemberEdit<Custom>) async throws
        -> OutboxReceipt<ChatMember<Custom>>
    {
        let member = user ?? userId, fields = try edit.fields()
        if fields.isEmpty, member == userId { return try await join(channel: channel, edit: edit) }
        let opId = Outbox<Custom>.newOpId(), now = clock.now
        return try await commit {
            try $0.enqueue.setMembership(opId: opId, channelId: channel, userId: member, fields: fields, now: now)
        }
    }

    /// Joins a channel as the Chat SDK's `join` does: the current user's membership, with status
    /// `joined` (``ReplicaModel/ChatSDKFormat/joinedStatus``) unless `edit` gives one, and a read
    /// position at the time of joining in its custom data (kept when a later one is stored), so
    /// the history before the join does not count as unread. Joining again keeps the membership's
    /// other custom keys; an invitation (status `pending`) becomes a membership.
    ///
    /// Works offline: the membership is in the store (and in `unreadCounts`) at once, and the
    /// set waits in the outbox. The read position is the device's time of the join (the Chat SDK
    /// asks the server's `time()`; offline there is none).
    ///
    /// ```swift
    /// try await outbox.memberships.join(channel: "general")
    /// let unread = try await store.fetch(store.queries.unreadCounts(for: outbox.userId))  // lists general, 0 unread
    /// ```
    @discardableResult
    public func join(channel: String, edit: MemberEdit<Custom> = MemberEdit()) async throws -> OutboxReceipt<ChatMember<Custom>> {
        let opId = Outbox<Custom>.newOpId(), now = clock.now, userId = userId, fields = try edit.fields()
        return try await commit { try $0.enqueue.join(opId: opId, channelId: channel, userId: userId, fields: fields, now: now) }
    }

    /// Removes a membership (of the current user unless `user` is given).
    public func removeMembership(channel: String, user: String? = nil) async throws -> OutboxReceipt<ChatMember<Custom>> {
        let opId = Outbox<Custom>.newOpId(), now = clock.now, userId = user ?? userId
        return try await commit { try $0.enqueue.removeMembership(opId: opId, channelId: channel, userId: userId, now: now) }
    }
}
