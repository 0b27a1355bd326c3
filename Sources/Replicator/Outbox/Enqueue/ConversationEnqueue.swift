import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

// The Chat SDK's conversations as outbox ops (`docs/conversations.md`; `pubnub/kmp-chat`,
// `ChatImpl.create…Conversation`, `BaseChannel.invite`, `ChatImpl.forwardMessage`): each is one
// transaction of ordinary ops, made offline, shown in the store at once.
extension OpEnqueue {
    /// Queues a channel's metadata write that creates it only where none exists: the Chat SDK
    /// reads the channel first and keeps one that exists (`createDirectConversation`'s
    /// `getChannel`, a thread's first reply). Nothing is queued when the store holds the channel
    /// already. The op carries ``OutboxKeys/createOnlyBase``: before its PATCH the server's channel
    /// is read, and an existing one finishes it without a request.
    @discardableResult
    func createChannel(opId: String, id: String, fields: [String: JSONValue], now: Date) throws -> OutboxReceipt<Channel> {
        if let stored = try tx.channel(id: id) { return OutboxReceipt(value: stored, opId: nil, disposition: .unchanged) }
        let local = try Channel.placeholder(id: id).applying(fields)
        try tx.upsert(channel: local, force: true)
        try transaction.insert(
            NewOutboxRow(.setChannel(id: id, fields: fields), opId: opId, baseETag: OutboxKeys.createOnlyBase),
            id: opId, now: now)
        return OutboxReceipt(value: local, opId: opId, disposition: .enqueued)
    }

    /// Creates a conversation as the Chat SDK does: its channel (type and name; only where none
    /// exists), the host's membership (a join: status and read position, as ``join(opId:channelId:userId:fields:now:)``
    /// writes it), and an invitation of each of `invitees`.
    func conversation(
        type: String, channelId: String, name: String?, invitees: [String], host: String, opIds: () -> String, now: Date
    ) throws -> ConversationReceipt<Custom> {
        try Validation.validateIdentifier(channelId, field: "channel")
        for user in invitees { try Validation.validateIdentifier(user, field: "user") }
        let channel = try createChannel(
            opId: opIds(), id: channelId, fields: ["name": .string(name ?? channelId), "type": .string(type)], now: now)
        // The host's membership, made only where the server has none: the Chat SDK's write names
        // no status and no custom data, so an existing membership (an invitation from the other
        // side, a read position) stays as it is.
        let joinedAt = try Timetoken(date: now)
        let membership = try createMembership(
            opId: opIds(), channelId: channelId, userId: host,
            fields: [
                "status": .string(ChatSDKFormat.joinedStatus),
                "custom": .object(ReadPosition.setting(joinedAt, in: [:])),
            ],
            after: channel.opId, now: now)
        var invitations: [OutboxReceipt<Member>] = []
        var seen: Set<String> = [host]
        for user in invitees where seen.insert(user).inserted {
            invitations.append(try invite(channelId: channelId, user: user, after: channel.opId, opIds: opIds, now: now))
        }
        var opIds = [channel.opId, membership.opId].compactMap { $0 }
        opIds += invitations.flatMap { $0.opId.map { [$0] } ?? [] }
        return ConversationReceipt(
            channelId: channelId, channel: channel.value, membership: membership.value, invitations: invitations.compactMap(\.value),
            opIds: opIds)
    }

    /// Invites `user` to `channelId` as the Chat SDK's `invite` does: nothing when the store holds
    /// a membership of theirs already (it is returned); otherwise their membership with status
    /// `pending` and a read position at `now` (the Chat SDK writes the server's `time()`), made only
    /// where the server has none (an existing one is kept), then the `invite` event on their
    /// channel, sent after the membership (same lane) and only when it is still pending.
    func invite(channelId: String, user: String, after channelOp: String? = nil, opIds: () -> String, now: Date) throws
        -> OutboxReceipt<Member>
    {
        try Validation.validateIdentifier(user, field: "user")
        let fields: [String: JSONValue] = [
            "status": .string(ChatSDKFormat.pendingStatus),
            "custom": .object(ReadPosition.setting(try Timetoken(date: now), in: [:])),
        ]
        let membership = try createMembership(opId: opIds(), channelId: channelId, userId: user, fields: fields, after: channelOp, now: now)
        // A membership the store holds already: no invitation, as the Chat SDK's `invite` returns it.
        guard membership.opId != nil else { return membership }
        let channelType = try tx.channel(id: channelId)?.type
        let notice = InviteNotice(user: user, channel: channelId, channelType: channelType ?? ChatConversations.unknownType)
        let inviteOp = opIds()
        try transaction.insert(NewOutboxRow(.invite(notice), opId: inviteOp, dependsOn: channelOp), id: inviteOp, now: now)
        return membership
    }

    /// A membership made only where the server has none (create-only, ``OutboxKeys/createOnlyBase``):
    /// nothing when the store holds one; otherwise `fields` stored and queued, after `channelOp`
    /// (the conversation's channel) when given, so that no one learns of a channel before it exists.
    func createMembership(
        opId: String, channelId: String, userId: String, fields: [String: JSONValue], after channelOp: String?, now: Date
    ) throws -> OutboxReceipt<Member> {
        if let stored = try tx.member(channelId: channelId, userId: userId) {
            return OutboxReceipt(value: stored, opId: nil, disposition: .unchanged)
        }
        let local = try Member(channelId: channelId, userId: userId).applying(fields)
        try tx.upsert(member: local, force: true)
        try transaction.insert(
            NewOutboxRow(
                .setMembership(channel: channelId, user: userId, fields: fields), opId: opId,
                baseETag: OutboxKeys.createOnlyBase, dependsOn: channelOp),
            id: opId, now: now)
        return OutboxReceipt(value: local, opId: opId, disposition: .enqueued)
    }

    /// Forwards a stored, sent message to `channelId` as the Chat SDK's `forwardMessage`: a new
    /// message (its own id) with the original's content and meta, plus `originalPublisher` and
    /// `originalChannelId` in meta. The same channel is refused. A text message's files go along
    /// as the original lists them (they stay where they were uploaded), as the Chat SDK's do.
    func forward(opId: String, messageId: String, to channelId: String, newId: String, userId: String, now: Date) throws
        -> OutboxReceipt<Message>
    {
        try Validation.validateIdentifier(channelId, field: "channel")
        guard let original = try tx.messages.message(id: messageId) else { throw OutboxError.messageNotFound(messageId) }
        guard original.timetoken != nil else { throw OutboxError.messageNotSent(messageId) }
        guard original.channelId != channelId else { throw OutboxError.forwardToSameChannel(channelId) }
        var message = original
        message.id = newId
        message.channelId = channelId
        message.userId = userId
        message.timetoken = nil
        message.delivery = .pending
        message.messageActions = []
        message.editedText = nil
        message.isDeleted = false
        message.createdAt = ISOTimestamp(date: now)
        var meta = ChatConversations.forwardMeta(original: original.meta, publisher: original.userId, channel: original.channelId)
        // pnreplicate's own op marker of the original publish is not the new message's.
        if case .object(var object) = meta {
            object["pnr_op"] = nil
            meta = .object(object)
        }
        message.meta = nil
        return try send(opId: opId, message: message, meta: meta, files: nil, now: now)
    }
}

/// What creating a conversation queued: the channel (as the store shows it), the host's
/// membership, the invitees' pending memberships, and the ops (none for what the store held).
public struct ConversationReceipt<Custom: ChatCustomData>: Sendable {
    /// The conversation's channel id (for a direct conversation, the id both users compute).
    public var channelId: String
    /// The channel as stored.
    public var channel: ChatChannel<Custom.Channel>?
    /// The current user's membership.
    public var membership: ChatMember<Custom>?
    /// Each invitee's membership (pending, or the one the store held).
    public var invitations: [ChatMember<Custom>]
    /// The ops queued, in order (empty when the store held everything already).
    public var opIds: [String]
}

// Mobile push registration (`docs/conversations.md`, "Push"): offline like any write.
extension OpEnqueue {
    /// Queues a device's push registration change, in the device's lane (changes of one device
    /// go in order). Channels are checked as ids this device writes; the store records the device (``ChatQueries/pushDevices()``) for signing out.
    func push(opId: String, _ registration: PushRegistration, now: Date) throws -> OutboxReceipt<PushRegistration> {
        _ = try OutboxRequests.device(registration)
        switch registration.change {
        case .add(let channels), .remove(let channels):
            guard !channels.isEmpty else { throw OutboxError.emptyEdit("the push registration of a device (no channel)") }
            for channel in channels { try Validation.validateIdentifier(channel, field: "channel") }
        case .removeDevice:
            break
        }
        try transaction.insert(NewOutboxRow(.push(registration), opId: opId), id: opId, now: now)
        // Signing out removes every device this store registered (docs/ios.md, "Signing out").
        try tx.record(push: registration, now: now)
        return OutboxReceipt(value: registration, opId: opId, disposition: .enqueued)
    }
}

// Removing and restoring a thread, as the Chat SDK's `removeThreadChannel` and
// `restoreThreadChannel` (`ChatImpl.kt`).
extension OpEnqueue {
    /// Removes the thread of `messageId`: its `threadRootId` action and its thread channel,
    /// deleted (`soft`: marked with status `deleted`). The replies stay in the thread channel's
    /// history. PubNub removes an action only for the user who added it ("Not deleting message
    /// action: wrong uuid specified"), so a thread another user started is refused here
    /// (``OutboxError/notAllowedToChange(messageId:author:)``) rather than queued to fail.
    func removeThread(messageId: String, soft: Bool, userId: String, opIds: () -> String, now: Date) throws -> [String] {
        let message = try messageRef(messageId)
        guard let timetoken = message.timetoken else { throw OutboxError.messageNotSent(messageId) }
        let thread = ChatSDKFormat.threadChannel(of: message.channel, root: timetoken)
        let actions = try tx.messageActions.actions(messageId: messageId, type: ChatSDKFormat.threadRootType, value: thread)
        guard let action = actions.first(where: { $0.userId == userId }) ?? actions.first else {
            throw OutboxError.noThread(messageId)
        }
        guard action.userId == userId else { throw OutboxError.notAllowedToChange(messageId: messageId, author: action.userId) }
        var ops: [String] = []
        let removal = try removeReaction(
            opId: opIds(), messageId: messageId, type: ChatSDKFormat.threadRootType, value: thread, userId: action.userId, now: now)
        ops += [removal.opId].compactMap { $0 }
        if try tx.channel(id: thread) != nil || !soft {
            let channel = soft
                ? try setChannel(opId: opIds(), id: thread, fields: ["status": .string(ChatSDKFormat.deletedValue)], now: now)
                : try removeChannel(opId: opIds(), id: thread, now: now)
            ops += [channel.opId].compactMap { $0 }
        }
        return ops
    }

    /// Restores the thread of `messageId`: the thread channel's `deleted` status cleared (when
    /// the store holds it so marked) and the `threadRootId` action added again. Nothing when the
    /// store holds no thread channel (a hard removal deleted it), as in the Chat SDK.
    func restoreThread(messageId: String, userId: String, opIds: () -> String, now: Date) throws -> [String] {
        let message = try messageRef(messageId)
        guard let timetoken = message.timetoken else { throw OutboxError.messageNotSent(messageId) }
        let thread = ChatSDKFormat.threadChannel(of: message.channel, root: timetoken)
        // As the Chat SDK: nothing to restore without the thread channel (a hard removal deleted it).
        guard let channel = try tx.channel(id: thread) else { return [] }
        var ops: [String] = []
        if channel.status == ChatSDKFormat.deletedValue {
            ops += [try setChannel(opId: opIds(), id: thread, fields: ["status": .null], now: now).opId].compactMap { $0 }
        }
        if try tx.messageActions.actions(messageId: messageId, type: ChatSDKFormat.threadRootType, value: thread).isEmpty {
            let added = try addReaction(
                opId: opIds(), messageId: messageId, type: ChatSDKFormat.threadRootType, value: thread, userId: userId, now: now)
            ops += [added.opId].compactMap { $0 }
        }
        return ops
    }
}
