import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

/// Messages: sending, reacting, editing, deleting, pinning, forwarding and threads.
///
/// Every call stores its change at once, in one transaction with its op, and the op is sent when the network allows (`docs/outbox.md`).
///
/// ```swift
/// let receipt = try await replica.messages.send(text: "hello", to: "general")
/// try await replica.messages.addReaction("👍", toMessage: receipt.value.id)
/// ```
///
/// Reached through ``Replica/messages``: a value made per access, holding only the replica.
public struct ReplicaMessages<Custom: ChatCustomData>: Sendable {
    /// The replica these calls go through.
    let replica: Replica<Custom>

    /// Stores a message (pending) and queues its publish: see `Outbox.send(text:to:...)`.
    public func send(
        text: String, to channel: String, contentType: String? = nil, content: JSONValue? = nil,
        custom: Custom.Message? = nil, meta: JSONValue? = nil, customMessageType: String? = nil
    ) async throws -> OutboxReceipt<ChatMessage<Custom.Message>> {
        try await replica.write {
            try await $0.messages.send(
                text: text, to: channel, contentType: contentType, content: content, custom: custom, meta: meta,
                customMessageType: customMessageType)
        }
    }

    /// Stores many messages and queues their publishes in one transaction: all of them or none
    /// (an import, a share sheet's batch). Each is sent as ``send(text:to:contentType:content:custom:meta:customMessageType:)`` sends one.
    ///
    /// ```swift
    /// let receipts = try await replica.send(many: lines.map { OutgoingMessage(text: $0, to: "general") })
    /// ```
    public func send(many messages: [OutgoingMessage<Custom.Message>]) async throws -> [OutboxReceipt<ChatMessage<Custom.Message>>] {
        try await replica.write { try await $0.messages.send(many: messages) }
    }

    /// ``send(many:)`` in two steps, for a bulk sender that prepares the next batch (on another
    /// core) while this one is written: `pnreplicate send --count`.
    package func prepare(many messages: [OutgoingMessage<Custom.Message>]) async throws -> PreparedSends<Custom> {
        try await replica.openParts().outbox.messages.prepare(many: messages)
    }

    /// Writes a batch ``prepare(many:)`` made, in one transaction: all of it or none.
    package func send(prepared: PreparedSends<Custom>) async throws -> [OutboxReceipt<ChatMessage<Custom.Message>>] {
        try await replica.write { try await $0.messages.send(prepared: prepared) }
    }

    /// Sends the stored draft of `key` (its text, mentions, links, quote and files) and deletes it,
    /// in one transaction: the draft is never lost and never sent twice.
    ///
    /// ```swift
    /// let receipt = try await replica.send(draft: DraftKey(channelId: "general"))
    /// ```
    public func send(draft key: DraftKey, custom: Custom.Message? = nil, meta: JSONValue? = nil) async throws
        -> DraftSendReceipt<ChatMessage<Custom.Message>>
    {
        try await replica.write { try await $0.messages.send(draft: key, custom: custom, meta: meta) }
    }

    /// Sends `draft` (the one the UI holds) as ``send(draft:custom:meta:)`` sends a stored one,
    /// and deletes the stored draft of `key` in the same transaction.
    public func send(draft: MessageDraft, in key: DraftKey, custom: Custom.Message? = nil, meta: JSONValue? = nil) async throws
        -> DraftSendReceipt<ChatMessage<Custom.Message>>
    {
        try await replica.write { try await $0.messages.send(draft: draft, in: key, custom: custom, meta: meta) }
    }

    /// Stores a message with `files` and queues its send: the files are copied into the store's
    /// files area at once, uploaded when the network allows, and the message published after them,
    /// exactly once. `shape` is a PubNub file message (one file) or the Chat SDK's text message
    /// with files (up to 10).
    ///
    /// ```swift
    /// try await replica.send(files: [OutgoingFile(url: photoURL)], text: "the view", to: "general")
    /// ```
    public func send(
        files: [OutgoingFile], text: String = "", to channel: String, shape: FileShape = .fileMessage, meta: JSONValue? = nil,
        customMessageType: String? = nil
    ) async throws -> OutboxReceipt<ChatMessage<Custom.Message>> {
        try await replica.write {
            try await $0.messages.send(files: files, text: text, to: channel, shape: shape, meta: meta, customMessageType: customMessageType)
        }
    }

    /// Adds this user's reaction to a message (the Chat SDK's `reaction` action; `type` is the
    /// action's type), also to a message still pending: the reaction waits for its publish.
    public func addReaction(_ value: String, type: String = ChatSDKFormat.reactionType, toMessage messageId: String) async throws
        -> OutboxReceipt<ChatMessageAction>
    {
        try await replica.write { try await $0.messages.addReaction(value, type: type, toMessage: messageId) }
    }

    /// Removes this user's reaction from a message; an unsent add of the same reaction is
    /// cancelled instead (nothing goes to PubNub).
    public func removeReaction(_ value: String, type: String = ChatSDKFormat.reactionType, fromMessage messageId: String) async throws
        -> OutboxReceipt<ChatMessageAction>
    {
        try await replica.write { try await $0.messages.removeReaction(value, type: type, fromMessage: messageId) }
    }

    /// Edits the text of a message (the Chat SDK's `edited` action; only the author's edits show
    /// unless moderators are configured: `docs/chat.md`). Unsent edits of one message fold into one.
    public func edit(message messageId: String, text: String) async throws -> OutboxReceipt<ChatMessageAction> {
        try await replica.write { try await $0.messages.edit(message: messageId, text: text) }
    }

    /// Deletes a message: soft (the Chat SDK's `deleted` action, restorable) unless `hard`. A hard
    /// delete also deletes the message's own files from PubNub unless `preserveFiles`, as the Chat
    /// SDK's `delete(soft:preserveFiles:)` (`docs/files.md`, "Whose files a hard delete deletes").
    ///
    /// ```swift
    /// try await replica.deleteMessage(id: message.id, hard: true)                       // and its files
    /// try await replica.deleteMessage(id: message.id, hard: true, preserveFiles: true)  // files stay
    /// ```
    public func delete(id messageId: String, hard: Bool = false, preserveFiles: Bool = false) async throws
        -> OutboxReceipt<ChatMessageAction>
    {
        try await replica.write { try await $0.messages.deleteMessage(id: messageId, hard: hard, preserveFiles: preserveFiles) }
    }

    /// Restores a message this user soft-deleted, as the Chat SDK's `restore` (its `deleted`
    /// action is removed, or withdrawn while unsent).
    ///
    /// Throws `OutboxError.deletedByOthers` when another user deleted it too: PubNub lets a user
    /// remove only their own actions, so nothing is queued.
    public func restore(id messageId: String) async throws -> OutboxReceipt<ChatMessageAction> {
        try await replica.write { try await $0.messages.restoreMessage(id: messageId) }
    }

    /// Withdraws a message that has not been sent, with the reactions waiting on it; returns
    /// every op id removed.
    ///
    /// Throws `OutboxError.mayHaveBeenApplied` while its publish is in flight or its outcome is
    /// unknown, and `OutboxError.messageNotPending` once it was sent (delete it instead).
    @discardableResult
    public func discard(id messageId: String) async throws -> [String] {
        try await replica.write { try await $0.messages.discardMessage(id: messageId) }
    }

    /// Pins a sent message in `channel` (by default the message's own), as the Chat SDK's
    /// `pinMessage`: the channel's custom data gets `pinnedMessageTimetoken` and
    /// `pinnedMessageChannelID` (other keys kept), sent with the stored eTag, so that a
    /// concurrent change of the channel is a conflict settled by the configured policy.
    ///
    /// ```swift
    /// try await replica.pinMessage(id: message.id)
    /// let pinned = try await replica.fetch(replica.queries.pinnedMessage(inChannel: "general"))
    /// ```
    ///
    /// Throws `OutboxError.channelNotFound` when the channel is not in the store and
    /// `OutboxError.messageNotSent` for a message without a timetoken yet.
    public func pin(id messageId: String, in channel: String? = nil) async throws -> OutboxReceipt<ChatChannel<Custom.Channel>> {
        try await replica.write { try await $0.messages.pinMessage(id: messageId, in: channel) }
    }

    /// Unpins whatever is pinned in `channel`; `unchanged` when nothing is.
    public func unpin(in channel: String) async throws -> OutboxReceipt<ChatChannel<Custom.Channel>> {
        try await replica.write { try await $0.messages.unpinMessage(in: channel) }
    }

    /// Forwards a sent message to `channel` (`forwardMessage`).
    @discardableResult
    public func forward(message messageId: String, to channel: String) async throws -> OutboxReceipt<ChatMessage<Custom.Message>> {
        try await replica.write { try await $0.conversations.forward(message: messageId, to: channel) }
    }

    /// Removes the thread of a message (`removeThreadChannel`); `soft` keeps its channel marked `deleted`.
    @discardableResult
    public func removeThread(ofMessage messageId: String, soft: Bool = false) async throws -> [String] {
        try await replica.write { try await $0.conversations.removeThread(ofMessage: messageId, soft: soft) }
    }

    /// Restores a removed thread (`restoreThreadChannel`).
    @discardableResult
    public func restoreThread(ofMessage messageId: String) async throws -> [String] {
        try await replica.write { try await $0.conversations.restoreThread(ofMessage: messageId) }
    }
}

extension Replica {
    /// Messages: sending, reacting, editing, deleting, pinning, forwarding and threads.
    public nonisolated var messages: ReplicaMessages<Custom> { ReplicaMessages(replica: self) }
}
