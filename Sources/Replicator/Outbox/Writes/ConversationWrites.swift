import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

/// The Chat SDK's conversations (`docs/conversations.md`): direct, group and public channels with
/// their memberships and invitations, forwarding, and threads. Each call is one transaction of
/// ops, made offline and shown in the store at once.
public struct ConversationWrites<Custom: ChatCustomData>: OutboxWriter {
    /// The outbox the ops are queued in.
    public let outbox: Outbox<Custom>

    /// Opens the direct (one-to-one) conversation with `user`, as the Chat SDK's
    /// `createDirectConversation`: the channel `direct.<hash>` that both users compute
    /// (``ReplicaModel/ChatSDKFormat/directChannelId(_:_:)``), type `direct`, made only where
    /// none exists; the current user's membership; and `user`'s invitation (a pending
    /// membership, then the `invite` event on their channel). Calling it again queues nothing
    /// the store holds already.
    ///
    /// ```swift
    /// let chat = try await outbox.conversations.openDirectConversation(with: "bob")
    /// try await outbox.messages.send(OutgoingMessage(channel: chat.channelId, text: "Hi Bob"))
    /// ```
    ///
    /// - Parameter name: the channel's name (default: its id, as the Chat SDK names it).
    @discardableResult
    public func openDirectConversation(with user: String, name: String? = nil) async throws -> ConversationReceipt<Custom> {
        let me = userId, now = clock.now
        try Validation.validateIdentifier(user, field: "user")
        guard user != me else { throw OutboxError.conversationWithSelf(me) }
        let id = ChatSDKFormat.directChannelId(me, user)
        return try await commit {
            try $0.enqueue.conversation(
                type: ChatConversations.directType, channelId: id, name: name, invitees: [user], host: me, opIds: Outbox<Custom>.newOpId,
                now: now)
        }
    }

    /// Creates a group conversation (`createGroupConversation`): a channel of type `group` (id
    /// `channelId`, or a new UUID), the current user's membership, and an invitation of each of
    /// `users`.
    @discardableResult
    public func createGroupConversation(with users: [String], channelId: String? = nil, name: String? = nil) async throws
        -> ConversationReceipt<Custom>
    {
        let me = userId, now = clock.now, id = channelId ?? RandomIdentifier.uuidV4()
        return try await commit {
            try $0.enqueue.conversation(
                type: ChatConversations.groupType, channelId: id, name: name, invitees: users, host: me, opIds: Outbox<Custom>.newOpId, now: now)
        }
    }

    /// Creates a public conversation (`createPublicConversation`): a channel of type `public` (id
    /// `channelId`, or a new UUID) that anyone may join. Like the Chat SDK, no membership is made
    /// (``join(channel:edit:)`` makes one).
    @discardableResult
    public func createPublicConversation(channelId: String? = nil, name: String? = nil) async throws -> ConversationReceipt<Custom> {
        let now = clock.now, id = channelId ?? RandomIdentifier.uuidV4(), opId = Outbox<Custom>.newOpId()
        return try await commit { tx in
            try Validation.validateIdentifier(id, field: "channel")
            let channel = try tx.enqueue.createChannel(
                opId: opId, id: id, fields: ["name": .string(name ?? id), "type": .string(ChatConversations.publicType)], now: now)
            return ConversationReceipt(
                channelId: id, channel: channel.value, membership: nil, invitations: [], opIds: channel.opId.map { [$0] } ?? [])
        }
    }

    /// Invites `user` to `channel` (`Channel.invite`): their pending membership (made only where
    /// the server has none) and the `invite` event on their channel. `unchanged`, with their
    /// membership, when the store holds one already.
    @discardableResult
    public func invite(_ user: String, to channel: String) async throws -> OutboxReceipt<ChatMember<Custom>> {
        let now = clock.now
        return try await commit { tx in
            guard try tx.tx.channel(id: channel) != nil else { throw OutboxError.channelNotFound(channel) }
            return try tx.enqueue.invite(channelId: channel, user: user, opIds: Outbox<Custom>.newOpId, now: now)
        }
    }

    /// Accepts an invitation: joins `channel` (``MembershipWrites/join(channel:edit:)``), which replaces the
    /// `pending` status. The same as `join`; named for the invitee's screen.
    @discardableResult
    public func acceptInvitation(to channel: String) async throws -> OutboxReceipt<ChatMember<Custom>> {
        try await outbox.memberships.join(channel: channel)
    }

    /// Removes the thread of a message (`removeThreadChannel`): its `threadRootId` action and its
    /// thread channel, deleted, or with `soft` marked `deleted`. The replies stay on PubNub;
    /// ``restoreThread(ofMessage:)`` brings the thread back.
    ///
    /// - Returns: the ops queued.
    /// - Throws: ``OutboxError/noThread(_:)`` when the store holds no thread of the message;
    ///   ``OutboxError/notAllowedToChange(messageId:author:)`` for a thread another user started
    ///   (PubNub removes an action only for its author).
    @discardableResult
    public func removeThread(ofMessage messageId: String, soft: Bool = false) async throws -> [String] {
        let now = clock.now, userId = userId
        return try await commit {
            try $0.enqueue.removeThread(messageId: messageId, soft: soft, userId: userId, opIds: Outbox<Custom>.newOpId, now: now)
        }
    }

    /// Restores a removed thread (`restoreThreadChannel`): the thread channel's `deleted` status
    /// cleared and the `threadRootId` action added again. Nothing when both are in place.
    @discardableResult
    public func restoreThread(ofMessage messageId: String) async throws -> [String] {
        let now = clock.now, userId = userId
        return try await commit { try $0.enqueue.restoreThread(messageId: messageId, userId: userId, opIds: Outbox<Custom>.newOpId, now: now) }
    }

    /// Forwards a sent message to `channel` (`forwardMessage`): a new message with its own id,
    /// the original's content and meta, and `originalPublisher`/`originalChannelId` in meta.
    ///
    /// - Throws: ``OutboxError/forwardToSameChannel(_:)``, ``OutboxError/messageNotFound(_:)``,
    ///   ``OutboxError/messageNotSent(_:)``.
    @discardableResult
    public func forward(message messageId: String, to channel: String) async throws -> OutboxReceipt<ChatMessage<Custom.Message>> {
        let opId = Outbox<Custom>.newOpId(), newId = RandomIdentifier.uuidV4(), now = clock.now, userId = userId
        return try await commit {
            try $0.enqueue.forward(opId: opId, messageId: messageId, to: channel, newId: newId, userId: userId, now: now)
        }
    }
}
