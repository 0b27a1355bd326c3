import Foundation
import Logging
import PubNubWire
import ReplicaModel
import ReplicaStore

// The writes beyond sending: a message's edits, deletion and restore, read positions, pins,
// reactions, memberships, users and channels. Each is one transaction (the local change and its
// op) through `commit`, needing no network.
extension Outbox {
    /// Edits a message's text, as the Chat SDK's `editText`: any message, not only the user's own.
    ///
    /// A message whose publish certainly has not gone out yet is rewritten in place (receipt:
    /// `merged(into:)` its publish op). Otherwise an `edited` message action carrying the whole
    /// new text is queued; an earlier unsent edit of the same message takes the new text instead,
    /// so three edits made offline send one action. Queries show the newest edit
    /// (``ReplicaModel/ChatMessage/shownText``); an edit in the outbox counts as the newest.
    ///
    /// ```swift
    /// try await outbox.edit(message: id, text: "Fixed typo")
    /// ```
    @discardableResult
    public func edit(message messageId: String, text: String) async throws -> OutboxReceipt<ChatMessageAction> {
        let opId = Self.newOpId(), now = clock.now, userId = userId
        return try await commit { try $0.enqueueEdit(opId: opId, messageId: messageId, text: text, userId: userId, now: now) }
    }

    /// Deletes a message. A message whose publish certainly has not gone out yet is withdrawn
    /// either way (receipt: `cancelled`).
    ///
    /// - Soft (default), as the Chat SDK's `delete(soft: true)`: a `deleted` message action.
    ///   Default queries stop listing it; ``restoreMessage(id:)`` brings it back.
    /// - Hard, as `delete(soft: false)`: the message and its actions leave the store in this
    ///   transaction, and `DELETE /v3/history/…` of its timetoken is queued. Pulls skip it while
    ///   that op waits. The keyset must allow deleting from history (else the op is a dead letter;
    ///   discarding it brings the message back). Throws ``OutboxError/mayHaveBeenApplied(opId:state:)``
    ///   while the message's own publish is on its way. Then its files are deleted from PubNub, as
    ///   the Chat SDK's `delete` does, unless `preserveFiles`; but only the files that are the
    ///   message's own: uploaded by this device for it, or first named by it as the server shows
    ///   (a forged copy of another user's file message, or a forward, does not delete the
    ///   original's files; what cannot be confirmed stays: `docs/files.md`, "Whose files a hard
    ///   delete deletes", with its known limit).
    @discardableResult
    public func deleteMessage(id messageId: String, hard: Bool = false, preserveFiles: Bool = false) async throws
        -> OutboxReceipt<ChatMessageAction>
    {
        let opId = Self.newOpId(), now = clock.now, userId = userId
        return try await commit {
            hard
                ? try $0.enqueueHardDelete(opId: opId, messageId: messageId, preserveFiles: preserveFiles, now: now)
                : try $0.enqueueSoftDelete(opId: opId, messageId: messageId, userId: userId, now: now)
        }
    }

    /// Restores a soft-deleted message, as the Chat SDK's `restore`: removes the user's `deleted`
    /// action (or withdraws it while unsent).
    ///
    /// - Throws: ``OutboxError/deletedByOthers(messageId:users:)`` when another user deleted it
    ///   too: PubNub lets a user remove only their own actions, so nothing is queued.
    @discardableResult
    public func restoreMessage(id messageId: String) async throws -> OutboxReceipt<ChatMessageAction> {
        let opId = Self.newOpId(), now = clock.now, userId = userId
        return try await commit { try $0.enqueueRestore(opId: opId, messageId: messageId, userId: userId, now: now) }
    }

    /// Marks a channel read up to `timetoken`, as the Chat SDK's `setLastReadMessageTimetoken`:
    /// the membership's custom data gets `lastReadMessageTimetoken` (a string; other keys are
    /// kept), sent as a membership set (unsent ones merge: only the newest position goes), then
    /// the Chat SDK's receipt signal, except on `public` channels. Read positions only move
    /// forward: an older or equal one is `unchanged`.
    ///
    /// ```swift
    /// try await outbox.markRead(channel: "general", upTo: newest.timetoken!)
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
        let opId = Self.newOpId(), receiptOpId = Self.newOpId(), now = clock.now, userId = userId
        return try await commit {
            try $0.enqueueMarkRead(
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
    /// let moved = try await outbox.markAllRead()   // one op for up to 100 channels
    /// print(moved.keys.sorted())                    // the channels whose position moved
    /// ```
    ///
    /// - Returns: the receipts of the channels whose position moved, by channel (the batch's op
    ///   id, or the membership op a channel's position went into).
    @discardableResult
    public func markAllRead() async throws -> [String: OutboxReceipt<ChatMember<Custom>>] {
        let now = clock.now, userId = userId
        return try await commit { try $0.enqueueMarkAllRead(userId: userId, opIds: Self.newOpId, now: now) }
    }

    /// Pins a sent message in `channel` (by default the message's own), as the Chat SDK's
    /// `pinMessage`: the channel's custom data gets `pinnedMessageTimetoken` (a string) and
    /// `pinnedMessageChannelID`, other keys kept, sent with the stored eTag (`If-Match`), so a
    /// concurrent change of the channel is a conflict settled by the configured policy.
    ///
    /// - Throws: ``OutboxError/channelNotFound(_:)`` when the channel is not in the store,
    ///   ``OutboxError/messageNotSent(_:)`` for a message without a timetoken.
    @discardableResult
    public func pinMessage(id messageId: String, in channel: String? = nil) async throws -> OutboxReceipt<ChatChannel<Custom.Channel>> {
        let opId = Self.newOpId(), now = clock.now
        return try await commit { tx in
            let channelId = try channel ?? tx.messageRef(messageId).channel
            return try tx.enqueuePin(opId: opId, channelId: channelId, messageId: messageId, now: now)
        }
    }

    /// Unpins whatever is pinned in `channel` (both keys removed from its custom data);
    /// `unchanged` when nothing is.
    @discardableResult
    public func unpinMessage(in channel: String) async throws -> OutboxReceipt<ChatChannel<Custom.Channel>> {
        let opId = Self.newOpId(), now = clock.now
        return try await commit { try $0.enqueuePin(opId: opId, channelId: channel, messageId: nil, now: now) }
    }

    /// Withdraws a message that has not been sent, with the reactions waiting on it.
    ///
    /// Throws ``OutboxError/mayHaveBeenApplied(opId:state:)`` while its publish is in flight or
    /// ambiguous, and ``OutboxError/messageNotPending(_:)`` once it was sent.
    @discardableResult
    public func discardMessage(id: String) async throws -> [String] {
        let target = OutboxKeys.message(id)
        guard let op = try await store.reading({ tx in try tx.ops(target: target).first { $0.kind == .send } }) else {
            if try await store.fetch(store.queries.message(id: id)) == nil { throw OutboxError.messageNotFound(id) }
            throw OutboxError.messageNotPending(id)
        }
        return try await discard(opId: op.id)
    }

    /// Adds the current user's reaction to a message (also one still pending).
    public func addReaction(_ value: String, type: String = ChatSDKFormat.reactionType, toMessage messageId: String) async throws
        -> OutboxReceipt<ChatMessageAction>
    {
        let opId = Self.newOpId(), now = clock.now, userId = userId
        return try await commit {
            try $0.enqueueAddReaction(opId: opId, messageId: messageId, type: type, value: value, userId: userId, now: now)
        }
    }

    /// Removes the current user's reaction; an unsent add of the same reaction is cancelled instead.
    public func removeReaction(_ value: String, type: String = ChatSDKFormat.reactionType, fromMessage messageId: String) async throws
        -> OutboxReceipt<ChatMessageAction>
    {
        let opId = Self.newOpId(), now = clock.now, userId = userId
        return try await commit {
            try $0.enqueueRemoveReaction(opId: opId, messageId: messageId, type: type, value: value, userId: userId, now: now)
        }
    }

    /// Sets a membership (of the current user unless `user` is given). An edit of the current
    /// user's membership that sets no field is a ``join(channel:edit:)``; for another user it is
    /// refused (``OutboxError/emptyEdit(_:)``).
    public func setMembership(channel: String, user: String? = nil, edit: MemberEdit<Custom>) async throws
        -> OutboxReceipt<ChatMember<Custom>>
    {
        let member = user ?? userId, fields = try edit.fields()
        if fields.isEmpty, member == userId { return try await join(channel: channel, edit: edit) }
        let opId = Self.newOpId(), now = clock.now
        return try await commit {
            try $0.enqueueSetMembership(opId: opId, channelId: channel, userId: member, fields: fields, now: now)
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
    /// try await outbox.join(channel: "general")
    /// let unread = try await store.fetch(store.queries.unreadCounts(for: outbox.userId))  // lists general, 0 unread
    /// ```
    @discardableResult
    public func join(channel: String, edit: MemberEdit<Custom> = MemberEdit()) async throws -> OutboxReceipt<ChatMember<Custom>> {
        let opId = Self.newOpId(), now = clock.now, userId = userId, fields = try edit.fields()
        return try await commit { try $0.enqueueJoin(opId: opId, channelId: channel, userId: userId, fields: fields, now: now) }
    }

    /// Removes a membership (of the current user unless `user` is given).
    public func removeMembership(channel: String, user: String? = nil) async throws -> OutboxReceipt<ChatMember<Custom>> {
        let opId = Self.newOpId(), now = clock.now, userId = user ?? userId
        return try await commit { try $0.enqueueRemoveMembership(opId: opId, channelId: channel, userId: userId, now: now) }
    }

    /// Edits a user's metadata; sent with the stored eTag as `If-Match`.
    public func setUser(id: String, edit: UserEdit<Custom.User>) async throws -> OutboxReceipt<ChatUser<Custom.User>> {
        let opId = Self.newOpId(), now = clock.now, fields = try edit.fields()
        return try await commit { try $0.enqueueSetUser(opId: opId, id: id, fields: fields, now: now) }
    }

    /// Deletes a user's metadata.
    public func removeUser(id: String) async throws -> OutboxReceipt<ChatUser<Custom.User>> {
        let opId = Self.newOpId(), now = clock.now
        return try await commit { try $0.enqueueRemoveUser(opId: opId, id: id, now: now) }
    }

    /// Edits a channel's metadata; sent with the stored eTag as `If-Match`.
    public func setChannel(id: String, edit: ChannelEdit<Custom.Channel>) async throws
        -> OutboxReceipt<ChatChannel<Custom.Channel>>
    {
        let opId = Self.newOpId(), now = clock.now, fields = try edit.fields()
        return try await commit { try $0.enqueueSetChannel(opId: opId, id: id, fields: fields, now: now) }
    }

    /// Deletes a channel's metadata.
    public func removeChannel(id: String) async throws -> OutboxReceipt<ChatChannel<Custom.Channel>> {
        let opId = Self.newOpId(), now = clock.now
        return try await commit { try $0.enqueueRemoveChannel(opId: opId, id: id, now: now) }
    }
}

// The Chat SDK's moderation writes (`docs/chat.md`, "Moderation").
extension Outbox {
    /// Reports a message to the channel's moderators, as the Chat SDK's `Message.report(reason)`:
    /// a `report` event published to `PUBNUB_INTERNAL_MODERATION_<channel>` with the message's
    /// text, timetoken, channel and author. Works offline; sent exactly once (a report that may
    /// have arrived is looked up in that channel's history before it is sent again).
    ///
    /// ```swift
    /// try await outbox.report(message: id, reason: "spam")
    /// ```
    /// - Throws: ``OutboxError/messageNotFound(_:)``, ``OutboxError/messageNotSent(_:)`` (the
    ///   report names the message by its timetoken), `missingValue` for an empty reason.
    @discardableResult
    public func report(message messageId: String, reason: String) async throws -> OutboxReceipt<JSONValue> {
        let opId = Self.newOpId(), now = clock.now
        return try await commit { try $0.enqueueReport(opId: opId, messageId: messageId, reason: reason, now: now) }
    }

    /// Mutes users for the current user, as the Chat SDK's `MutedUsersManager.muteUser` with
    /// `syncMutedUsers`: their messages leave the default message queries at once, and the whole
    /// mute list (`PN_PRV.<userId>.mute1`) is written when online, so the user's other devices
    /// (pnreplicate or the Chat SDK) hide them too. The receipt's value is the new list.
    ///
    /// ```swift
    /// try await outbox.mute(users: ["troll"])
    /// ```
    @discardableResult
    public func mute(users: [String]) async throws -> OutboxReceipt<[String]> {
        let opId = Self.newOpId(), now = clock.now, userId = userId
        return try await commit { try $0.enqueueMuteList(opId: opId, owner: userId, mute: users, unmute: [], now: now) }
    }

    /// Unmutes users, as ``mute(users:)`` mutes them: their messages show again at once.
    @discardableResult
    public func unmute(users: [String]) async throws -> OutboxReceipt<[String]> {
        let opId = Self.newOpId(), now = clock.now, userId = userId
        return try await commit { try $0.enqueueMuteList(opId: opId, owner: userId, mute: [], unmute: users, now: now) }
    }
}

// The Chat SDK's conversations (`docs/conversations.md`): each call is one transaction of ops,
// made offline and shown in the store at once.
extension Outbox {
    /// Opens the direct (one-to-one) conversation with `user`, as the Chat SDK's
    /// `createDirectConversation`: the channel `direct.<hash>` that both users compute
    /// (``ReplicaModel/ChatSDKFormat/directChannelId(_:_:)``), type `direct`, made only where
    /// none exists; the current user's membership; and `user`'s invitation (a pending
    /// membership, then the `invite` event on their channel). Calling it again queues nothing
    /// the store holds already.
    ///
    /// ```swift
    /// let chat = try await outbox.openDirectConversation(with: "bob")
    /// try await outbox.send(OutgoingMessage(channel: chat.channelId, text: "Hi Bob"))
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
            try $0.enqueueConversation(
                type: ChatConversations.directType, channelId: id, name: name, invitees: [user], host: me, opIds: Self.newOpId,
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
            try $0.enqueueConversation(
                type: ChatConversations.groupType, channelId: id, name: name, invitees: users, host: me, opIds: Self.newOpId, now: now)
        }
    }

    /// Creates a public conversation (`createPublicConversation`): a channel of type `public` (id
    /// `channelId`, or a new UUID) that anyone may join. Like the Chat SDK, no membership is made
    /// (``join(channel:edit:)`` makes one).
    @discardableResult
    public func createPublicConversation(channelId: String? = nil, name: String? = nil) async throws -> ConversationReceipt<Custom> {
        let now = clock.now, id = channelId ?? RandomIdentifier.uuidV4(), opId = Self.newOpId()
        return try await commit { tx in
            try Validation.validateIdentifier(id, field: "channel")
            let channel = try tx.enqueueCreateChannel(
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
            return try tx.enqueueInvite(channelId: channel, user: user, opIds: Self.newOpId, now: now)
        }
    }

    /// Accepts an invitation: joins `channel` (``join(channel:edit:)``), which replaces the
    /// `pending` status. The same as `join`; named for the invitee's screen.
    @discardableResult
    public func acceptInvitation(to channel: String) async throws -> OutboxReceipt<ChatMember<Custom>> {
        try await join(channel: channel)
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
            try $0.enqueueRemoveThread(messageId: messageId, soft: soft, userId: userId, opIds: Self.newOpId, now: now)
        }
    }

    /// Restores a removed thread (`restoreThreadChannel`): the thread channel's `deleted` status
    /// cleared and the `threadRootId` action added again. Nothing when both are in place.
    @discardableResult
    public func restoreThread(ofMessage messageId: String) async throws -> [String] {
        let now = clock.now, userId = userId
        return try await commit { try $0.enqueueRestoreThread(messageId: messageId, userId: userId, opIds: Self.newOpId, now: now) }
    }

    /// Forwards a sent message to `channel` (`forwardMessage`): a new message with its own id,
    /// the original's content and meta, and `originalPublisher`/`originalChannelId` in meta.
    ///
    /// - Throws: ``OutboxError/forwardToSameChannel(_:)``, ``OutboxError/messageNotFound(_:)``,
    ///   ``OutboxError/messageNotSent(_:)``.
    @discardableResult
    public func forward(message messageId: String, to channel: String) async throws -> OutboxReceipt<ChatMessage<Custom.Message>> {
        let opId = Self.newOpId(), newId = RandomIdentifier.uuidV4(), now = clock.now, userId = userId
        return try await commit {
            try $0.enqueueForward(opId: opId, messageId: messageId, to: channel, newId: newId, userId: userId, now: now)
        }
    }
}

// Mobile push registration, as the Chat SDK's `registerPushChannels` and
// `unregisterPushChannels` (`docs/conversations.md`, "Push").
extension Outbox {
    /// Registers `device` for the pushes of `channels` (offline like any write; sent in order
    /// with the device's other changes). Messages carry push keys when ``OutboxOptions/push`` is set.
    ///
    /// ```swift
    /// let device = try PushDevice.apns2(deviceToken: token, topic: "com.example.chat", environment: .production)
    /// try await outbox.registerPush(device, channels: ["general", chat.channelId])
    /// ```
    @discardableResult
    public func registerPush(_ device: PushDevice, channels: [String]) async throws -> OutboxReceipt<PushRegistration> {
        try await queuePush(device, change: .add(channels))
    }

    /// Stops the pushes of `channels` to `device`.
    @discardableResult
    public func unregisterPush(_ device: PushDevice, channels: [String]) async throws -> OutboxReceipt<PushRegistration> {
        try await queuePush(device, change: .remove(channels))
    }

    /// Removes `device` from every channel's pushes (the user signed out, the token changed).
    @discardableResult
    public func removePushDevice(_ device: PushDevice) async throws -> OutboxReceipt<PushRegistration> {
        try await queuePush(device, change: .removeDevice)
    }

    private func queuePush(_ device: PushDevice, change: PushRegistration.Change) async throws -> OutboxReceipt<PushRegistration> {
        let registration: PushRegistration
        switch device.type {
        case .fcm:
            registration = PushRegistration(token: device.token, service: "fcm", change: change)
        case .apns2(let topic, let environment):
            registration = PushRegistration(
                token: device.token, service: "apns2", topic: topic, environment: environment.rawValue, change: change)
        }
        let opId = Self.newOpId(), now = clock.now
        return try await commit { try $0.enqueuePush(opId: opId, registration, now: now) }
    }
}
