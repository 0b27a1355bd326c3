import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

/// The writes of messages: sending one (text, files, many at once, a draft), then its edits,
/// deletion and restore, reactions, pin, and withdrawing one not yet sent. Each is one
/// transaction (the local change and its op) through the outbox, needing no network.
///
/// ```swift
/// let receipt = try await outbox.messages.send(text: "Hello", to: "general")
/// try await outbox.messages.edit(message: receipt.value!.id, text: "Hello!")
/// ```
public struct MessageWrites<Custom: ChatCustomData>: OutboxWriter {
    /// A message of the store's types.
    public typealias Message = ChatMessage<Custom.Message>

    /// The outbox the ops are queued in.
    public let outbox: Outbox<Custom>

    /// Edits a message's text, as the Chat SDK's `editText`: any message, not only the user's own.
    ///
    /// A message whose publish certainly has not gone out yet is rewritten in place (receipt:
    /// `merged(into:)` its publish op). Otherwise an `edited` message action carrying the whole
    /// new text is queued; an earlier unsent edit of the same message takes the new text instead,
    /// so three edits made offline send one action. Queries show the newest edit
    /// (``ReplicaModel/ChatMessage/shownText``); an edit in the outbox counts as the newest.
    ///
    /// ```swift
    /// try await outbox.messages.edit(message: id, text: "Fixed typo")
    /// ```
    @discardableResult
    public func edit(message messageId: String, text: String) async throws -> OutboxReceipt<ChatMessageAction> {
        let opId = Outbox<Custom>.newOpId(), now = clock.now, userId = userId
        return try await commit { try $0.enqueue.edit(opId: opId, messageId: messageId, text: text, userId: userId, now: now) }
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
        let opId = Outbox<Custom>.newOpId(), now = clock.now, userId = userId
        return try await commit {
            hard
                ? try $0.enqueue.hardDelete(opId: opId, messageId: messageId, preserveFiles: preserveFiles, now: now)
                : try $0.enqueue.softDelete(opId: opId, messageId: messageId, userId: userId, now: now)
        }
    }

    /// Restores a soft-deleted message, as the Chat SDK's `restore`: removes the user's `deleted`
    /// action (or withdraws it while unsent).
    ///
    /// - Throws: ``OutboxError/deletedByOthers(messageId:users:)`` when another user deleted it
    ///   too: PubNub lets a user remove only their own actions, so nothing is queued.
    @discardableResult
    public func restoreMessage(id messageId: String) async throws -> OutboxReceipt<ChatMessageAction> {
        let opId = Outbox<Custom>.newOpId(), now = clock.now, userId = userId
        return try await commit { try $0.enqueue.restore(opId: opId, messageId: messageId, userId: userId, now: now) }
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
        let opId = Outbox<Custom>.newOpId(), now = clock.now
        return try await commit { tx in
            let channelId = try channel ?? tx.enqueue.messageRef(messageId).channel
            return try tx.enqueue.pin(opId: opId, channelId: channelId, messageId: messageId, now: now)
        }
    }

    /// Unpins whatever is pinned in `channel` (both keys removed from its custom data);
    /// `unchanged` when nothing is.
    @discardableResult
    public func unpinMessage(in channel: String) async throws -> OutboxReceipt<ChatChannel<Custom.Channel>> {
        let opId = Outbox<Custom>.newOpId(), now = clock.now
        return try await commit { try $0.enqueue.pin(opId: opId, channelId: channel, messageId: nil, now: now) }
    }

    /// Withdraws a message that has not been sent, with the reactions waiting on it.
    ///
    /// Throws ``OutboxError/mayHaveBeenApplied(opId:state:)`` while its publish is in flight or
    /// ambiguous, and ``OutboxError/messageNotPending(_:)`` once it was sent.
    @discardableResult
    public func discardMessage(id: String) async throws -> [String] {
        let target = OutboxKeys.message(id)
        guard let op = try await store.reading({ tx in try tx.outbox.ops(target: target).first { $0.kind == .send } }) else {
            if try await store.fetch(store.queries.message(id: id)) == nil { throw OutboxError.messageNotFound(id) }
            throw OutboxError.messageNotPending(id)
        }
        return try await outbox.discard(opId: op.id)
    }

    /// Adds the current user's reaction to a message (also one still pending).
    public func addReaction(_ value: String, type: String = ChatSDKFormat.reactionType, toMessage messageId: String) async throws
        -> OutboxReceipt<ChatMessageAction>
    {
        let opId = Outbox<Custom>.newOpId(), now = clock.now, userId = userId
        return try await commit {
            try $0.enqueue.addReaction(opId: opId, messageId: messageId, type: type, value: value, userId: userId, now: now)
        }
    }

    /// Removes the current user's reaction; an unsent add of the same reaction is cancelled instead.
    public func removeReaction(_ value: String, type: String = ChatSDKFormat.reactionType, fromMessage messageId: String) async throws
        -> OutboxReceipt<ChatMessageAction>
    {
        let opId = Outbox<Custom>.newOpId(), now = clock.now, userId = userId
        return try await commit {
            try $0.enqueue.removeReaction(opId: opId, messageId: messageId, type: type, value: value, userId: userId, now: now)
        }
    }
}
