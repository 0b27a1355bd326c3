import Foundation
import ReplicaModel
import ReplicaStore

// The PubNub Chat SDK's message semantics as outbox writes: edits, soft deletes and restores
// are message actions (`docs/chat.md`; `pubnub/kmp-chat`'s `BaseMessage.kt`), queued like
// reactions, with their own coalescing.
extension OpEnqueue {
    /// Edits a message's text: the user's own message, or any when the store's
    /// ``ReplicaStore/EditAuthority`` lets this user (``OutboxError/notAllowedToChange(messageId:author:)``).
    ///
    /// - A message whose publish certainly has not gone out yet gets its publish rewritten: no
    ///   action is needed, and the message goes out with the new text.
    /// - Otherwise an `edited` action with the whole new text is queued. An earlier edit of this
    ///   user on the message that certainly has not been sent is replaced, so three offline edits
    ///   send one action.
    func edit(opId: String, messageId: String, text: String, userId: String, now: Date) throws
        -> OutboxReceipt<ChatMessageAction>
    {
        try Validation.validateMessageText(text, field: "text")
        let message = try messageRef(messageId)
        try requireEditPermission(messageId: messageId, userId: userId)
        if let sendOp = message.sendOp, let send = try tx.outbox.op(id: sendOp), send.isCertainlyUnsent,
           let queued = send.operation.send, case .object(var body) = queued.message
        {
            let (channel, meta) = (queued.channel, queued.meta)
            body["text"] = .string(text)   // pnreplicate's and the Chat SDK's text share the key
            try Validation.validatePublishSize(message: .object(body), channel: channel, meta: meta)
            try transaction.foldEdit(into: send, body: body, now: now)
            try tx.messages.setPendingText(messageId: messageId, text: text)
            return OutboxReceipt(value: nil, opId: sendOp, disposition: .merged(into: sendOp))
        }
        let type = ChatSDKFormat.editedType
        let action = try ChatMessageAction(
            type: type, value: text, userId: userId, channelId: message.channel, messageTimetoken: message.timetoken,
            messageId: messageId)
        let target = OutboxKeys.edit(messageId)
        let sameText = try tx.messageActions.action(messageId: messageId, type: type, value: text, userId: userId)
        if let latest = try tx.outbox.latestOp(target: target), latest.isCertainlyUnsent,
           case .addReaction(var reaction) = latest.operation
        {
            if sameText?.actionTimetoken != nil {
                // Back to a text this user's edit on the server already holds: PubNub keeps one
                // (user, type, value) per message, so the unsent edit is withdrawn.
                try transaction.cancel(latest)
                try tx.messageActions.deleteUnsentActions(messageId: messageId, type: type, value: reaction.value)
                return OutboxReceipt(value: sameText, opId: nil, disposition: .cancelled([latest.id]))
            }
            // The unsent edit takes the new text: one action for all the edits made meanwhile.
            try tx.messageActions.deleteUnsentActions(messageId: messageId, type: type, value: reaction.value)
            try tx.upsert(action: action)
            reaction.value = text
            try transaction.mergeEdit(into: latest, reaction: reaction, editId: opId, now: now)
            return OutboxReceipt(value: action, opId: latest.id, disposition: .merged(into: latest.id))
        }
        if let stored = sameText, stored.actionTimetoken != nil {
            // PubNub holds one (user, type, value) per message: the same text again adds nothing.
            return OutboxReceipt(value: stored, opId: nil, disposition: .unchanged)
        }
        return try insertAction(action, messageId: messageId, message: message, target: target, opId: opId, now: now)
    }

    /// Soft-deletes a message: the Chat SDK's `deleted` action. A message whose publish certainly
    /// has not gone out, or was refused for good (dead), is withdrawn instead (with what waits on
    /// it): nothing reaches PubNub.
    func softDelete(opId: String, messageId: String, userId: String, now: Date) throws
        -> OutboxReceipt<ChatMessageAction>
    {
        let message = try messageRef(messageId)
        try requireEditPermission(messageId: messageId, userId: userId)
        if let sendOp = message.sendOp, let send = try tx.outbox.op(id: sendOp), send.isWithdrawable {
            let removed = try transaction.discard(sendOp)
            return OutboxReceipt(value: nil, opId: nil, disposition: .cancelled(removed))
        }
        return try addReaction(
            opId: opId, messageId: messageId, type: ChatSDKFormat.deletedType, value: ChatSDKFormat.deletedValue,
            userId: userId, now: now)
    }

    /// Restores a soft-deleted message: removes the current user's `deleted` action. PubNub lets
    /// a user remove only their own actions ("wrong uuid specified"), so a message another user
    /// deleted cannot be restored here: ``OutboxError/deletedByOthers(messageId:users:)``, and
    /// nothing is queued. Unchanged when the message is not deleted.
    func restore(opId: String, messageId: String, userId: String, now: Date) throws -> OutboxReceipt<ChatMessageAction> {
        _ = try messageRef(messageId)
        let deletions = try tx.messageActions.actions(messageId: messageId, type: ChatSDKFormat.deletedType, value: ChatSDKFormat.deletedValue)
        // Only deletions that count (EditAuthority) hide the message; the others need no restore.
        let others = try deletions.map(\.userId).filter {
            try $0 != userId && tx.messages.editPermission(messageId: messageId, user: $0)?.allowed == true
        }
        if !others.isEmpty { throw OutboxError.deletedByOthers(messageId: messageId, users: others) }
        return try removeReaction(
            opId: opId, messageId: messageId, type: ChatSDKFormat.deletedType, value: ChatSDKFormat.deletedValue,
            userId: userId, now: now)
    }
}

extension OpEnqueue {
    /// Throws unless `userId` may change what message `messageId` shows (``ReplicaStore/EditAuthority``).
    func requireEditPermission(messageId: String, userId: String) throws {
        guard let permission = try tx.messages.editPermission(messageId: messageId, user: userId) else {
            throw OutboxError.messageNotFound(messageId)
        }
        if !permission.allowed { throw OutboxError.notAllowedToChange(messageId: messageId, author: permission.author) }
    }
}

// Read positions, as the Chat SDK keeps them: `lastReadMessageTimetoken` (a string) in the
// membership's custom data, then a receipt signal (`docs/chat.md`; `pubnub/kmp-chat`'s `MembershipImpl.kt`).
extension OpEnqueue {
    /// Marks `channelId` read up to `timetoken` for `userId`: the read position merged into the
    /// membership's custom data (other keys kept) and queued as a membership set (merged with an
    /// unsent one, so only the newest position is sent), then the receipt signal, which waits for
    /// that write and is skipped on `public` channels (the Chat SDK's default). A position at or
    /// before the stored one changes nothing (read positions only move forward) unless `force`; a
    /// position later than ``ReplicaModel/ReadPosition/ceiling(now:)`` is refused, and a stored one
    /// that late counts as none.
    func markRead(
        opId: String, channelId: String, userId: String, timetoken: Timetoken, force: Bool = false, receiptOpId: String, now: Date
    )
        throws -> OutboxReceipt<Member>
    {
        guard let stored = try tx.member(channelId: channelId, userId: userId) else {
            throw OutboxError.notAMember(channel: channelId, user: userId)
        }
        guard ReadPosition.isPlausible(timetoken, now: now) else {
            throw OutboxError.implausibleReadPosition(timetoken, ceiling: ReadPosition.ceiling(now: now))
        }
        var custom = try Self.customData(of: stored)
        // `force` moves the position back on purpose (a repair).
        if !force, !ReadPosition.moves(in: .object(custom), to: timetoken, now: now) {
            return OutboxReceipt(value: stored, opId: nil, disposition: .unchanged)
        }
        if !force, try batchNames(channelId, userId: userId) {
            // The channel waits in an unsent mark all read: its position is raised there (no new
            // op; the one id asked for is the receipt's, when no unsent receipt takes it).
            try transaction.checkRestrictions(.setMembership(channel: channelId, user: userId, fields: [:]))
            let receipts = try batchReadPositions([(stored, timetoken)], user: userId, opIds: { receiptOpId }, now: now)
            return receipts[channelId] ?? OutboxReceipt(value: stored, opId: nil, disposition: .unchanged)
        }
        custom = ReadPosition.setting(timetoken, in: custom)
        let written = try setMembership(
            opId: opId, channelId: channelId, userId: userId, fields: ["custom": .object(custom)], now: now)
        guard try tx.channel(id: channelId)?.type != "public", let membershipOp = written.opId else { return written }
        try transaction.queueReceipt(channelId: channelId, timetoken: timetoken, after: membershipOp, opId: receiptOpId, now: now)
        return written
    }

    /// A membership's custom data as JSON fields (none when there is no membership or no data).
    static func customData(of member: Member?) throws -> [String: JSONValue] {
        try member?.customFields() ?? [:]
    }
}

// Joining a channel, as the Chat SDK's `join` does it: the user's membership with a status, and a
// read position at the time of joining, so the channel's history before the join is not unread.
extension OpEnqueue {
    /// Joins `channelId` for `userId`: the membership set (created if needed) with `edit`'s
    /// fields, its status ``ReplicaModel/ChatSDKFormat/joinedStatus`` when `edit` gives none, and
    /// its custom data (the edit's, else the stored one) carrying a read position at `now` unless
    /// it holds a later plausible one. One membership set is queued, as any membership edit.
    func join(
        opId: String, channelId: String, userId: String, fields edit: [String: JSONValue], now: Date
    ) throws -> OutboxReceipt<Member> {
        let stored = try tx.member(channelId: channelId, userId: userId)
        var fields = edit
        if fields["status"] == nil { fields["status"] = .string(ChatSDKFormat.joinedStatus) }
        var custom = try fields["custom"]?.objectValue ?? Self.customData(of: stored)
        // A later position (another device read further) is kept.
        let joinedAt = try Timetoken(date: now)
        if ReadPosition.moves(in: .object(custom), to: joinedAt, now: now) {
            custom = ReadPosition.setting(joinedAt, in: custom)
        }
        fields["custom"] = .object(custom)
        return try setMembership(opId: opId, channelId: channelId, userId: userId, fields: fields, now: now)
    }
}

// Pins, as the Chat SDK keeps them: two keys of the channel's custom data, written with the
// channel's eTag so a concurrent change is a conflict for the configured policy (§5.4).
extension OpEnqueue {
    /// Pins `messageId` in `channelId` (unpins when nil): the channel's custom data with
    /// `pinnedMessageTimetoken` (a string) and `pinnedMessageChannelID` set (or both removed),
    /// other keys kept, queued as a channel set on the stored eTag.
    func pin(opId: String, channelId: String, messageId: String?, now: Date) throws -> OutboxReceipt<Channel> {
        guard let stored = try tx.channel(id: channelId) else { throw OutboxError.channelNotFound(channelId) }
        var custom = try stored.custom.map { try JSONValue(encoding: $0).objectValue ?? [:] } ?? [:]
        if let messageId {
            let message = try messageRef(messageId)
            guard let timetoken = message.timetoken else { throw OutboxError.messageNotSent(messageId) }
            custom[ChatSDKFormat.pinnedTimetokenKey] = .string(String(timetoken.rawValue))
            custom[ChatSDKFormat.pinnedChannelKey] = .string(message.channel)
        } else {
            guard custom[ChatSDKFormat.pinnedTimetokenKey] != nil || custom[ChatSDKFormat.pinnedChannelKey] != nil else {
                return OutboxReceipt(value: stored, opId: nil, disposition: .unchanged)
            }
            custom[ChatSDKFormat.pinnedTimetokenKey] = nil
            custom[ChatSDKFormat.pinnedChannelKey] = nil
        }
        return try setChannel(opId: opId, id: channelId, fields: ["custom": .object(custom)], now: now)
    }
}

// Hard deletes: the message leaves PubNub's history and the store (§5.3).
extension OpEnqueue {
    /// Deletes a message for good: the local row and its actions go in this transaction, and a
    /// history delete of its timetoken is queued (with the row as its snapshot, so a discard
    /// brings it back). Pulls skip the message while the op is queued. A message whose publish
    /// certainly has not gone out is withdrawn instead; one whose publish may be on its way
    /// cannot be deleted yet (``OutboxError/mayHaveBeenApplied(opId:state:)``). Once the history
    /// delete is done, the message's files follow unless `preserveFiles` (`FileOwnership`).
    func hardDelete(opId: String, messageId: String, preserveFiles: Bool, now: Date) throws -> OutboxReceipt<ChatMessageAction> {
        let message = try messageRef(messageId)
        if let sendOp = message.sendOp, let send = try tx.outbox.op(id: sendOp) {
            guard send.isWithdrawable else { throw OutboxError.mayHaveBeenApplied(opId: sendOp, state: send.state) }
            return OutboxReceipt(value: nil, opId: nil, disposition: .cancelled(try transaction.discard(sendOp)))
        }
        guard let timetoken = message.timetoken else { throw OutboxError.messageNotSent(messageId) }
        try transaction.withdrawUnsent(
            inLanes: [OutboxKeys.reactionLane(messageId), OutboxKeys.mentionLane(messageId)], stamping: timetoken)
        let stored = try tx.messages.message(id: messageId)
        try tx.messages.deleteMessage(id: messageId)
        try transaction.insert(
            NewOutboxRow(.hardDelete(channel: message.channel, messageId: messageId, messageTimetoken: timetoken, preserveFiles: preserveFiles),
                         opId: opId, baseSnapshot: try tx.snapshot(stored)),
            id: opId, now: now)
        return OutboxReceipt(value: nil, opId: opId, disposition: .enqueued)
    }
}

extension OutboxEntry {
    /// Whether deleting the message of this publish withdraws the publish instead: it certainly
    /// has not gone out, or it waits for the app (dead or in conflict), as `discard` allows.
    var isWithdrawable: Bool { isCertainlyUnsent || state == .dead || state == .conflict }
}
