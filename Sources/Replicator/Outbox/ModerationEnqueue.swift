import Foundation
import ReplicaModel
import ReplicaStore

// What the Chat SDK's moderation forbids the current user to queue (`docs/chat.md`,
// "Moderation"). Checked by `insert` (OutboxCoalescing.swift) for every op, in the transaction
// that would queue it, so an op refused here leaves nothing behind.
extension OpTransaction {
    /// Throws when the op may not be queued:
    /// - ``OutboxError/hiddenChannel(_:)``: it writes to a channel the Chat SDK hides (a report
    ///   names the reported message's ordinary channel, and goes);
    /// - ``OutboxError/restricted(_:)``: the acting user is banned from the op's channel (every
    ///   write but leaving it and reporting a message), or muted there and the op is a send.
    func checkRestrictions(_ operation: OutboxOperation) throws {
        guard let channel = operation.channel else { return }
        if ChatModeration.isHidden(channel: channel) { throw OutboxError.hiddenChannel(channel) }
        guard let user = actingUser, let restriction = try tx.restriction(user: user, channel: channel) else { return }
        switch operation {
        case .removeMembership(_, let member) where member == user: return
        case .report: return
        case .send where restriction.mute: throw OutboxError.restricted(restriction)
        default: if restriction.ban { throw OutboxError.restricted(restriction) }
        }
    }
}

// The Chat SDK's moderation writes a user makes: reporting a message, muting and unmuting users.
extension OpTransaction {
    /// Queues the report of a stored message (it must have its timetoken: the report names it),
    /// published to its channel's moderation channel as the Chat SDK's `Message.report` does.
    /// Each report is its own op; a report is never coalesced with another.
    func enqueueReport(opId: String, messageId: String, reason: String, now: Date) throws -> OutboxReceipt<JSONValue> {
        guard !reason.isEmpty else { throw ModelValidationError.missingValue(field: "reason") }
        guard let message = try tx.message(id: messageId) else { throw OutboxError.messageNotFound(messageId) }
        guard let timetoken = message.timetoken else { throw OutboxError.messageNotSent(messageId) }
        let body = ChatModeration.reportBody(
            text: message.shownText, reason: reason, messageTimetoken: timetoken, channel: message.channelId, author: message.userId)
        try Validation.validatePublishSize(
            message: body, channel: ChatModeration.moderationChannel(for: message.channelId), meta: ["pnr_op": .string(opId)])
        try insert(
            NewOutboxRow(
                .report(channel: message.channelId, messageId: messageId, body: body),
                lane: OutboxKeys.reportLane(message.channelId), target: OutboxKeys.report(messageId, opId: opId)),
            id: opId, now: now)
        return OutboxReceipt(value: body, opId: opId, disposition: .enqueued)
    }

    /// Changes `owner`'s mute list as the app sees it and queues the whole new list (the Chat
    /// SDK writes the whole `PN_PRV.<owner>.mute1` object). An unsent write of the list takes the
    /// new one instead, so mutes and unmutes made offline send one write. When it is sent, the
    /// list is merged with the server's (``Outbox/mergedMuteList(_:)``).
    func enqueueMuteList(opId: String, owner: String, mute: [String], unmute: [String], now: Date) throws
        -> OutboxReceipt<[String]>
    {
        for user in mute + unmute {
            try Validation.validateStoredIdentifier(user, field: "user.id")
            if ChatModeration.isHidden(user: user) { throw OutboxError.hiddenUser(user) }
        }
        var muted = Set(try tx.shownMutes(owner: owner))
        muted.formUnion(mute)
        muted.subtract(unmute)
        let list = muted.sorted()
        guard Set(try tx.shownMutes(owner: owner)) != muted else {
            return OutboxReceipt(value: list, opId: nil, disposition: .unchanged)
        }
        let target = OutboxKeys.muteList(owner)
        // The base is the list as the user saw it before this change: when the write goes, the
        // server's list of that moment takes what the user added and loses what they removed, so
        // a mute made on another device meanwhile is kept (an unsent write keeps its first base).
        let base = try tx.snapshot(try tx.shownMutes(owner: owner))
        let (id, disposition) = try insertOrReplaceWhole(
            NewOutboxRow(.setMuteList(owner: owner, muted: list), lane: target, target: target, baseSnapshot: base), id: opId, now: now)
        try tx.setShownMutes(owner: owner, list)
        return OutboxReceipt(value: list, opId: id, disposition: disposition)
    }
}
