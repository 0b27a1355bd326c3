import Foundation
import ReplicaModel
import ReplicaStore

// What the Chat SDK's moderation forbids the current user to queue (`docs/chat.md`,
// "Moderation"). Checked for every op where it joins the queue (`insert`, and each coalescing
// path in OutboxCoalescing.swift that changes an unsent op instead), in the transaction that
// would queue it, so an op refused here leaves nothing behind.
extension OpTransaction {
    /// Throws when the op may not be queued:
    /// - ``OutboxError/hiddenChannel(_:)``: it writes to a channel the Chat SDK hides (a report
    ///   names the reported message's ordinary channel, and goes);
    /// - ``OutboxError/hiddenUser(_:)``: it writes a private object as a user or a membership's user;
    /// - ``OutboxError/restricted(_:)``: the acting user is banned from the op's channel (every
    ///   write but leaving it and reporting a message), or muted there and the op publishes a
    ///   message or changes one's text. A thread's channel has its parent channel's restriction.
    func checkRestrictions(_ operation: OutboxOperation) throws {
        switch operation {
        case .setUser(let id, _), .removeUser(let id), .setMembership(_, let id, _), .removeMembership(_, let id):
            if ChatModeration.isHidden(user: id) { throw OutboxError.hiddenUser(id) }
        case .send, .addReaction, .removeReaction, .setChannel, .removeChannel, .mention, .receipt, .hardDelete, .report,
             .setMuteList, .invite, .push, .readPositions, .setAppRecord, .removeAppRecord:
            // An app record names no chat channel or user: no moderation restriction applies.
            break
        }
        guard let channel = operation.channel else { return }
        if ChatModeration.isHidden(channel: channel) { throw OutboxError.hiddenChannel(channel) }
        guard let user = actingUser,
              let restriction = try tx.moderation.restriction(user: user, channel: channel)
                ?? ChatSDKFormat.threadParent(ofChannel: channel).flatMap({ try tx.moderation.restriction(user: user, channel: $0) })
        else { return }
        let refused: Bool
        switch operation {
        case .removeMembership(_, let member) where member == user: refused = false
        case .report: refused = false
        case .send: refused = restriction.mute || restriction.ban
        case .addReaction(let target): refused = restriction.ban || (restriction.mute && target.type == ChatSDKFormat.editedType)
        case .removeReaction, .setMembership, .removeMembership, .setUser, .removeUser, .setChannel, .removeChannel, .mention,
             .receipt, .hardDelete, .setMuteList, .invite, .push, .readPositions, .setAppRecord, .removeAppRecord:
            refused = restriction.ban
        }
        if refused { throw OutboxError.restricted(restriction) }
    }
}

// The Chat SDK's moderation writes a user makes: reporting a message, muting and unmuting users.
extension OpEnqueue {
    /// Queues the report of a stored message (it must have its timetoken: the report names it),
    /// published to its channel's moderation channel as the Chat SDK's `Message.report` does.
    /// Each report is its own op; a report is never coalesced with another.
    func report(opId: String, messageId: String, reason: String, now: Date) throws -> OutboxReceipt<JSONValue> {
        guard !reason.isEmpty else { throw ModelValidationError.missingValue(field: "reason") }
        guard let message = try tx.messages.message(id: messageId) else { throw OutboxError.messageNotFound(messageId) }
        guard let timetoken = message.timetoken else { throw OutboxError.messageNotSent(messageId) }
        let body = ChatModeration.reportBody(
            text: message.shownText, reason: reason, messageTimetoken: timetoken, channel: message.channelId, author: message.userId)
        try Validation.validatePublishSize(
            message: body, channel: ChatModeration.moderationChannel(for: message.channelId), meta: ["pnr_op": .string(opId)])
        try transaction.insert(
            NewOutboxRow(.report(channel: message.channelId, messageId: messageId, body: body), opId: opId),
            id: opId, now: now)
        return OutboxReceipt(value: body, opId: opId, disposition: .enqueued)
    }

    /// Changes `owner`'s mute list as the app sees it and queues the write of the whole list (the
    /// Chat SDK writes the whole `PN_PRV.<owner>.mute1` object). The op carries the list as it
    /// now shows and, as its base, the change (``ReplicaModel/MuteListChange``): when the write goes,
    /// the change is applied to the server's list of that moment, so another device's mutes are
    /// kept. An unsent write of the list takes this change too, so mutes and unmutes made offline
    /// send one write.
    func muteList(opId: String, owner: String, mute: [String], unmute: [String], now: Date) throws
        -> OutboxReceipt<[String]>
    {
        try Validation.validateIdentifier(ChatModeration.muteListId(of: owner), field: "mute list id")
        for user in mute + unmute {
            try Validation.validateStoredIdentifier(user, field: "user.id")
            if ChatModeration.isHidden(user: user) { throw OutboxError.hiddenUser(user) }
        }
        let shown = Set(try tx.moderation.shownMutes(owner: owner))
        // Only what changes what the user sees: muting a muted user changes nothing.
        var change = MuteListChange(muted: Set(mute).subtracting(shown), unmuted: Set(unmute).intersection(shown))
        let list = change.applied(to: shown)
        guard !change.isEmpty else { return OutboxReceipt(value: list, opId: nil, disposition: .unchanged) }
        let target = OutboxKeys.muteList(owner)
        if let latest = try tx.outbox.latestOp(target: target), latest.isCertainlyUnsent, latest.kind == .setMuteList,
           let earlier = try tx.decodeSnapshot(MuteListChange.self, of: latest)
        {
            change = earlier.then(change)
        }
        let (id, disposition) = try transaction.insertOrReplaceWhole(
            NewOutboxRow(.setMuteList(owner: owner, muted: list), opId: opId, baseSnapshot: try tx.snapshot(change)),
            id: opId, now: now)
        try tx.moderation.setShownMutes(owner: owner, list)
        return OutboxReceipt(value: list, opId: id, disposition: disposition)
    }
}
