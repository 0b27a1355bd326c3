import Foundation
import Logging
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

// Writing through the façade: each write goes to the outbox of the running replica (opened on
// demand), so it is stored at once and sent when the network allows.
extension Replica {
    /// Stores a message (pending) and queues its publish: see `Outbox.send(text:to:...)`.
    public func send(
        text: String, to channel: String, contentType: String? = nil, content: JSONValue? = nil,
        custom: Custom.Message? = nil, meta: JSONValue? = nil, customMessageType: String? = nil
    ) async throws -> OutboxReceipt<ChatMessage<Custom.Message>> {
        try await write {
            try await $0.send(
                text: text, to: channel, contentType: contentType, content: content, custom: custom, meta: meta,
                customMessageType: customMessageType)
        }
    }

    /// Adds this user's reaction to a message (the Chat SDK's `reaction` action).
    public func addReaction(_ value: String, toMessage messageId: String) async throws -> OutboxReceipt<ChatMessageAction> {
        try await write { try await $0.addReaction(value, toMessage: messageId) }
    }

    /// Removes this user's reaction from a message.
    public func removeReaction(_ value: String, fromMessage messageId: String) async throws -> OutboxReceipt<ChatMessageAction> {
        try await write { try await $0.removeReaction(value, fromMessage: messageId) }
    }

    /// Edits the text of a message (the Chat SDK's `edited` action; only the author's edits show
    /// unless moderators are configured: `docs/chat.md`).
    public func edit(message messageId: String, text: String) async throws -> OutboxReceipt<ChatMessageAction> {
        try await write { try await $0.edit(message: messageId, text: text) }
    }

    /// Deletes a message: soft (the Chat SDK's `deleted` action, restorable) unless `hard`. A hard
    /// delete also deletes the message's own files from PubNub unless `preserveFiles`, as the Chat
    /// SDK's `delete(soft:preserveFiles:)` (`docs/files.md`, "Whose files a hard delete deletes").
    ///
    /// ```swift
    /// try await replica.deleteMessage(id: message.id, hard: true)                       // and its files
    /// try await replica.deleteMessage(id: message.id, hard: true, preserveFiles: true)  // files stay
    /// ```
    public func deleteMessage(id messageId: String, hard: Bool = false, preserveFiles: Bool = false) async throws
        -> OutboxReceipt<ChatMessageAction>
    {
        try await write { try await $0.deleteMessage(id: messageId, hard: hard, preserveFiles: preserveFiles) }
    }

    /// Moves this user's read position in a channel forward (unread counts follow).
    public func markRead(channel: String, upTo timetoken: Timetoken) async throws -> OutboxReceipt<ChatMember<Custom>> {
        try await write { try await $0.markRead(channel: channel, upTo: timetoken) }
    }

    /// Creates or edits a membership (this user's unless `user` is given).
    public func setMembership(channel: String, user: String? = nil, edit: MemberEdit<Custom>) async throws
        -> OutboxReceipt<ChatMember<Custom>>
    {
        try await write { try await $0.setMembership(channel: channel, user: user, edit: edit) }
    }

    /// Joins a channel: the user's membership (status `joined` unless `edit` gives one) with a
    /// read position at the time of joining, so earlier history is not unread. See `Outbox.join(channel:edit:)`.
    ///
    /// ```swift
    /// try await replica.join(channel: "general")
    /// ```
    @discardableResult
    public func join(channel: String, edit: MemberEdit<Custom> = MemberEdit()) async throws -> OutboxReceipt<ChatMember<Custom>> {
        try await write { try await $0.join(channel: channel, edit: edit) }
    }

    /// Creates or edits a user (App Context).
    public func setUser(id: String, edit: UserEdit<Custom.User>) async throws -> OutboxReceipt<ChatUser<Custom.User>> {
        try await write { try await $0.setUser(id: id, edit: edit) }
    }

    /// Creates or edits a channel (App Context).
    public func setChannel(id: String, edit: ChannelEdit<Custom.Channel>) async throws -> OutboxReceipt<ChatChannel<Custom.Channel>> {
        try await write { try await $0.setChannel(id: id, edit: edit) }
    }

    /// Puts a dead letter or a conflicted op back in the queue.
    public func retry(opId: String) async throws {
        try await write { try await $0.retry(opId: opId) }
    }

    /// Withdraws an unsent op and reverts its local change; returns every op id removed.
    @discardableResult
    public func discard(opId: String) async throws -> [String] {
        try await write { try await $0.discard(opId: opId) }
    }

    /// Runs `body` with the outbox, for the writes without a shortcut here (drafts, pins, many
    /// sends in one transaction, restores...). Do not keep the outbox: ``suspend()`` replaces it.
    ///
    /// ```swift
    /// try await replica.withOutbox { try await $0.pinMessage(id: messageId) }
    /// ```
    public func withOutbox<T: Sendable>(_ body: @Sendable (Outbox<Custom>) async throws -> T) async throws -> T {
        try await write(body)
    }

    /// Runs a write on the outbox, then counts the outbox, so that ``status`` shows the write
    /// when the call returns.
    func write<T: Sendable>(_ body: @Sendable (Outbox<Custom>) async throws -> T) async throws -> T {
        let parts = try await openParts()
        let value = try await body(parts.outbox)
        if let counts = try? await parts.store.fetch(queries.outboxCounts()) { update { $0.count(counts) } }
        return value
    }

    /// Runs `body` with the store, for its bulk loads, draft edits and status. Do not keep the
    /// store: ``suspend()`` closes it.
    public func withStore<T: Sendable>(_ body: @Sendable (ChatStore<Custom>) async throws -> T) async throws -> T {
        try await body(openStore())
    }
}
