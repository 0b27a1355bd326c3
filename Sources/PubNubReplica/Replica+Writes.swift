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
        try await write { try await $0.messages.send(many: messages) }
    }

    /// Adds this user's reaction to a message (the Chat SDK's `reaction` action; `type` is the
    /// action's type), also to a message still pending: the reaction waits for its publish.
    public func addReaction(_ value: String, type: String = ChatSDKFormat.reactionType, toMessage messageId: String) async throws
        -> OutboxReceipt<ChatMessageAction>
    {
        try await write { try await $0.messages.addReaction(value, type: type, toMessage: messageId) }
    }

    /// Removes this user's reaction from a message; an unsent add of the same reaction is
    /// cancelled instead (nothing goes to PubNub).
    public func removeReaction(_ value: String, type: String = ChatSDKFormat.reactionType, fromMessage messageId: String) async throws
        -> OutboxReceipt<ChatMessageAction>
    {
        try await write { try await $0.messages.removeReaction(value, type: type, fromMessage: messageId) }
    }

    /// Edits the text of a message (the Chat SDK's `edited` action; only the author's edits show
    /// unless moderators are configured: `docs/chat.md`). Unsent edits of one message fold into one.
    public func edit(message messageId: String, text: String) async throws -> OutboxReceipt<ChatMessageAction> {
        try await write { try await $0.messages.edit(message: messageId, text: text) }
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
        try await write { try await $0.messages.deleteMessage(id: messageId, hard: hard, preserveFiles: preserveFiles) }
    }

    /// Restores a message this user soft-deleted, as the Chat SDK's `restore` (its `deleted`
    /// action is removed, or withdrawn while unsent).
    ///
    /// Throws `OutboxError.deletedByOthers` when another user deleted it too: PubNub lets a user
    /// remove only their own actions, so nothing is queued.
    public func restoreMessage(id messageId: String) async throws -> OutboxReceipt<ChatMessageAction> {
        try await write { try await $0.messages.restoreMessage(id: messageId) }
    }

    /// Withdraws a message that has not been sent, with the reactions waiting on it; returns
    /// every op id removed.
    ///
    /// Throws `OutboxError.mayHaveBeenApplied` while its publish is in flight or its outcome is
    /// unknown, and `OutboxError.messageNotPending` once it was sent (delete it instead).
    @discardableResult
    public func discardMessage(id messageId: String) async throws -> [String] {
        try await write { try await $0.messages.discardMessage(id: messageId) }
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
    public func pinMessage(id messageId: String, in channel: String? = nil) async throws -> OutboxReceipt<ChatChannel<Custom.Channel>> {
        try await write { try await $0.messages.pinMessage(id: messageId, in: channel) }
    }

    /// Unpins whatever is pinned in `channel`; `unchanged` when nothing is.
    public func unpinMessage(in channel: String) async throws -> OutboxReceipt<ChatChannel<Custom.Channel>> {
        try await write { try await $0.messages.unpinMessage(in: channel) }
    }

    /// Moves this user's read position in a channel forward, as the Chat SDK's
    /// `setLastReadMessageTimetoken` (unread counts follow; the receipt signal is sent except on
    /// `public` channels). An older or equal position is `unchanged` unless `force`, which moves
    /// it even backwards (to repair one set too far).
    ///
    /// Throws `OutboxError.notAMember` when the user has no membership of the channel in the store.
    public func markRead(channel: String, upTo timetoken: Timetoken, force: Bool = false) async throws
        -> OutboxReceipt<ChatMember<Custom>>
    {
        try await write { try await $0.memberships.markRead(channel: channel, upTo: timetoken, force: force) }
    }

    // MARK: Users, channels, memberships

    /// Creates or edits a membership (this user's unless `user` is given). An edit of this user's
    /// membership that sets no field is a ``join(channel:edit:)``.
    public func setMembership(channel: String, user: String? = nil, edit: MemberEdit<Custom>) async throws
        -> OutboxReceipt<ChatMember<Custom>>
    {
        try await write { try await $0.memberships.setMembership(channel: channel, user: user, edit: edit) }
    }

    /// Joins a channel as the Chat SDK's `join`: the user's membership (status `joined` unless
    /// `edit` gives one) with a read position at the time of joining, so that earlier history is
    /// not unread. Works offline: the channel is in `unreadCounts` at once.
    ///
    /// ```swift
    /// try await replica.join(channel: "general")
    /// ```
    @discardableResult
    public func join(channel: String, edit: MemberEdit<Custom> = MemberEdit()) async throws -> OutboxReceipt<ChatMember<Custom>> {
        try await write { try await $0.memberships.join(channel: channel, edit: edit) }
    }

    /// Removes a membership (this user's unless `user` is given): leaving a channel.
    @discardableResult
    public func removeMembership(channel: String, user: String? = nil) async throws -> OutboxReceipt<ChatMember<Custom>> {
        try await write { try await $0.memberships.removeMembership(channel: channel, user: user) }
    }

    /// Creates or edits a user's metadata (sent with the stored eTag: a concurrent change is a
    /// conflict settled by the configured policy).
    public func setUser(id: String, edit: UserEdit<Custom.User>) async throws -> OutboxReceipt<ChatUser<Custom.User>> {
        try await write { try await $0.metadata.setUser(id: id, edit: edit) }
    }

    /// Deletes a user's metadata.
    @discardableResult
    public func removeUser(id: String) async throws -> OutboxReceipt<ChatUser<Custom.User>> {
        try await write { try await $0.metadata.removeUser(id: id) }
    }

    /// Creates or edits a channel's metadata (sent with the stored eTag, as ``setUser(id:edit:)``).
    public func setChannel(id: String, edit: ChannelEdit<Custom.Channel>) async throws -> OutboxReceipt<ChatChannel<Custom.Channel>> {
        try await write { try await $0.metadata.setChannel(id: id, edit: edit) }
    }

    /// Deletes a channel's metadata.
    @discardableResult
    public func removeChannel(id: String) async throws -> OutboxReceipt<ChatChannel<Custom.Channel>> {
        try await write { try await $0.metadata.removeChannel(id: id) }
    }

    // MARK: What waits

    /// Puts a dead letter or a conflicted op back in the queue (a conflict is retried over the
    /// server's current version: the app chose to keep its edit).
    public func retry(opId: String) async throws {
        try await write { try await $0.retry(opId: opId) }
    }

    /// Withdraws an unsent op and reverts its local change; returns every op id removed.
    @discardableResult
    public func discard(opId: String) async throws -> [String] {
        try await write { try await $0.discard(opId: opId) }
    }

    /// Resolves a conflict waiting for a person (an entry the `.manual` policy left open, or any
    /// whose op is still in conflict) by taking the local edit, the server's version or their
    /// merge. The server's version is fetched again first, so the decision is made against what
    /// it holds now; a local edit taken goes back to the queue, over that version.
    ///
    /// ```swift
    /// for conflict in try await replica.fetch(replica.queries.conflicts()) where conflict.isOpen {
    ///     try await replica.resolveConflict(id: conflict.id, take: .merged)
    /// }
    /// ```
    @discardableResult
    public func resolveConflict(id: Int64, take: ConflictTake) async throws -> ConflictRecord {
        try await recounting { try await $0.reconciler.resolve(conflictId: id, take: take) }
    }

    /// Waits for an op's final outcome (sent, failed, conflict or discarded), from the `opId` of
    /// a write's receipt. Returns at once for an op already dead, in conflict, or gone;
    /// cancelling the waiting task ends the wait with `.unknown` (the op goes on).
    ///
    /// ```swift
    /// let receipt = try await replica.send(text: "hi", to: "general")
    /// if case .failed(let failure) = try await replica.completion(of: receipt.opId!) { show(failure) }
    /// ```
    public func completion(of opId: String) async throws -> OutboxOutcome {
        let outbox = try await openParts().outbox
        return await outbox.completion(of: opId)
    }

    /// Every outbox event from now on (an op queued, attempted, sent, failed...), until the
    /// consumer stops iterating or ``suspend()`` closes the store.
    public func outboxEvents() async throws -> AsyncStream<OutboxEvent> {
        let outbox = try await openParts().outbox
        return await outbox.events()
    }

    /// Sends what waits now, once, and returns what happened: for a background task with a
    /// deadline (iOS `BGProcessingTask`, a CLI's one-shot send), when ``start()`` is not running.
    /// Returns when nothing more can be sent, or when the next attempt would be after `deadline`.
    /// Without a deadline, a device that stays offline keeps trying until the task is cancelled.
    ///
    /// ```swift
    /// let report = try await replica.sendPending(until: .now.addingTimeInterval(25))
    /// print(report.completed, report.remaining)
    /// ```
    @discardableResult
    public func sendPending(until deadline: Date? = nil) async throws -> DrainReport {
        try await recounting { try await $0.outbox.drain(until: deadline) }
    }

    /// Runs `body` with the outbox. Every write is a `Replica` call now: see `docs/api-changes.md`
    /// for what replaces each outbox method.
    @available(*, deprecated, message: "every write is a Replica call (pinMessage, restoreMessage, send(many:), drafts...): see docs/api-changes.md")
    public func withOutbox<T: Sendable>(_ body: @Sendable (Outbox<Custom>) async throws -> T) async throws -> T {
        try await write(body)
    }

    /// Runs a write on the outbox, then counts the outbox, so that ``status`` shows the write
    /// when the call returns.
    func write<T: Sendable>(_ body: @Sendable (Outbox<Custom>) async throws -> T) async throws -> T {
        try await recounting { try await body($0.outbox) }
    }

    /// Runs `body` with the open parts, then counts the outbox (``write(_:)``, and the calls that
    /// settle or send ops), so that ``status`` shows what it did when the call returns.
    func recounting<T: Sendable>(_ body: @Sendable (Parts) async throws -> T) async throws -> T {
        let parts = try await openParts()
        let value = try await body(parts)
        if let tally = try? await parts.store.fetch(OutboxTally.query(queries)) { update { $0.count(tally) } }
        return value
    }

    /// Runs `body` with the store. Drafts, reads and status are `Replica` calls now: see
    /// `docs/api-changes.md` for what replaces each store method.
    @available(*, deprecated, message: "drafts (editDraft, saveDraft, removeDraft), fetch and observe are Replica calls: see docs/api-changes.md")
    public func withStore<T: Sendable>(_ body: @Sendable (ChatStore<Custom>) async throws -> T) async throws -> T {
        try await body(openStore())
    }
}
