import Foundation
import ReplicaModel
import ReplicaStore

// Each enqueue is one write transaction: the optimistic local change and its outbox row commit
// together or not at all. Coalescing only touches the latest op on the same target, and only
// while that op certainly has not reached PubNub (`OutboxEntry.isCertainlyUnsent`).
extension OpEnqueue {
    typealias Message = ChatMessage<Custom.Message>
    typealias User = ChatUser<Custom.User>
    typealias Channel = ChatChannel<Custom.Channel>
    typealias Member = ChatMember<Custom>

    /// Stores a new pending message and its publish op; with `files`, the op uploads the files of
    /// these rows (already copied into the attachment area) and publishes them in that shape.
    func send(
        opId: String, message: Message, meta: JSONValue?, files: (shape: FileShape, rows: [FileUploadRow])? = nil, now: Date
    ) throws -> OutboxReceipt<Message> {
        try send(Self.prepareSend(opId: opId, message: message, meta: meta, files: files), now: now)
    }

    /// Everything of a send that needs no store: the publish body and meta, their checks, the
    /// op's row with its payload encoded. Pure, so a batch (``MessageWrites/send(many:)``)
    /// prepares its sends before its transaction, which then only writes rows.
    ///
    /// `pushKeys` are the Chat SDK's push fields for a text message; they come from the store
    /// (``OpTransaction/pushKeys(text:sender:channel:)``), so ``send(_:now:)`` prepares again
    /// in the rare case where they are not empty.
    static func prepareSend(
        opId: String, message: Message, meta: JSONValue?, files: (shape: FileShape, rows: [FileUploadRow])?,
        pushKeys: [String: JSONValue] = [:]
    ) throws -> PreparedSend<Custom> {
        var publishMeta = try appMeta(meta)
        publishMeta["pnr_op"] = .string(opId)
        let payload = try MessagePayload(
            id: message.id, text: message.text, contentType: message.contentType, content: message.content,
            custom: message.custom, createdAt: message.createdAt)
        var body = try payload.jsonValue()
        let isChatText = message.contentType == ChatSDKFormat.textContentType
        if isChatText, case .object(let fields) = body {
            // Readable by the Chat SDK too: its `type`, `text` and `files` beside pnreplicate's
            // fields, and its push keys when the app sends pushes.
            // Files already on PubNub (a forward's: the original's) are listed as they are; the
            // files this send uploads are listed once uploaded (`OutboxRequests`).
            body = ChatSDKFormat.textBody(fields, text: message.text, files: files == nil ? message.files.filter { $0.id != nil } : [])
            if !pushKeys.isEmpty, case .object(var withPush) = body {
                withPush.merge(pushKeys) { _, push in push }
                body = .object(withPush)
            }
        }
        let publishMetaValue = JSONValue.object(publishMeta)
        try Validation.validatePublishSize(message: body, channel: message.channelId, meta: publishMetaValue)
        if let type = message.customMessageType { try Validation.validateCustomMessageType(type) }
        var pending = message
        pending.timetoken = nil
        pending.delivery = .pending
        var row = NewOutboxRow(
            .send(MessageSend(
                channel: pending.channelId, messageId: pending.id, message: body, meta: publishMetaValue,
                customMessageType: pending.customMessageType, files: files?.shape)),
            opId: opId)
        row.encodePayload()
        return PreparedSend(opId: opId, meta: meta, files: files, pending: pending, row: row, asksPushKeys: isChatText && pushKeys.isEmpty)
    }

    /// Stores prepared sends in order, as ``send(_:now:)`` stores each, from the rows made with
    /// them (``PreparedSends``), in multi-row inserts (``MessageWrites/send(prepared:)``). The
    /// receipts are the caller's to make: nothing here a commit need wait for.
    func send(many batch: PreparedSends<Custom>) throws {
        var opRows = batch.opRows
        for (index, send) in batch.sends.enumerated() where send.asksPushKeys {
            let redone = try withPushKeys(send)
            if redone !== send { try opRows.replace(at: index, with: redone.row, id: redone.opId) }
        }
        try tx.insert(newMessages: batch.messageRows)
        try transaction.insert(sends: batch.sends, rows: opRows)
        for send in batch.sends { if let files = send.files { try tx.files.insertFileUploads(files.rows) } }
    }

    /// `prepared`, prepared again with the store's push keys when it asks for them and they are
    /// not empty (a Chat SDK text message while the app sends pushes).
    private func withPushKeys(_ prepared: PreparedSend<Custom>) throws -> PreparedSend<Custom> {
        guard prepared.asksPushKeys else { return prepared }
        let message = prepared.pending
        let keys = try transaction.pushKeys(text: message.text, sender: message.userId, channel: message.channelId)
        guard !keys.isEmpty else { return prepared }
        // The pending message differs from the one given only in its timetoken and delivery,
        // which the body does not carry.
        return try Self.prepareSend(opId: prepared.opId, message: message, meta: prepared.meta, files: prepared.files, pushKeys: keys)
    }

    /// Stores a prepared send (``prepareSend(opId:message:meta:files:pushKeys:)``): the pending
    /// message and its publish op.
    func send(_ prepared: PreparedSend<Custom>, now: Date) throws -> OutboxReceipt<Message> {
        let prepared = try withPushKeys(prepared)
        try tx.insert(newMessage: prepared.pending)   // refused when its id is stored
        try transaction.insert(prepared.row, id: prepared.opId, now: now)
        if let files = prepared.files { try tx.files.insertFileUploads(files.rows) }
        return OutboxReceipt(value: prepared.pending, opId: prepared.opId, disposition: .enqueued)
    }

    /// The app's publish meta as an object (none: empty); anything but an object is refused.
    static func appMeta(_ meta: JSONValue?) throws(OutboxError) -> [String: JSONValue] {
        switch meta {
        case .none, .null?: [:]
        case .object(let object)?: object
        case .some: throw .metaNotAnObject
        }
    }

    /// Sends a draft (`draft`, or the one stored under `key` when nil): the message in the Chat
    /// SDK's text format, one mention event per mentioned user waiting for its timetoken, the
    /// `threadRootId` action on a thread's root when needed, and the stored draft deleted, all in
    /// this transaction.
    func draftSend(
        _ given: MessageDraft?, key: DraftKey, opId: String, messageId: String, userId: String, custom: Custom.Message?,
        meta: JSONValue?, opIds: () -> String, now: Date
    ) throws -> DraftSendReceipt<Message> {
        guard let draft = try given ?? tx.draft(key), !draft.isEmpty || !draft.files.isEmpty else {
            throw OutboxError.emptyDraft(key)
        }
        var channel = key.channelId, parentChannel: String?, root: (id: String, timetoken: Timetoken)?
        if let threadRoot = key.threadRoot {
            guard let rootId = try tx.messages.messageId(channel: key.channelId, timetoken: threadRoot, other: "") else {
                throw OutboxError.threadRootNotFound(channel: key.channelId, timetoken: threadRoot)
            }
            channel = ChatSDKFormat.threadChannel(of: key.channelId, root: threadRoot)
            // A thread channel this device would create is held to the id limit (one the server
            // gave may exceed it: `Validation.validateStoredIdentifier`).
            try Validation.validateIdentifier(channel, field: "threadChannel")
            parentChannel = key.channelId
            root = (rootId, threadRoot)
        }
        var publishMeta = try Self.appMeta(meta)
        if let quote = draft.quotedMessage { publishMeta[ChatSDKFormat.quotedMessageKey] = quote.meta }
        var message = try Message(
            id: messageId, text: draft.render(), contentType: ChatSDKFormat.textContentType, content: nil, custom: custom,
            createdAt: ISOTimestamp(date: now), userId: userId, channelId: channel)
        // The draft's files (already in the attachment area) go in the Chat SDK's shape.
        let rows = draft.files.enumerated().map { position, file in
            FileUploadRow(
                opId: opId, position: position, channelId: channel, name: file.name, mimeType: file.mimeType, size: file.size,
                localName: file.localName)
        }
        message.files = rows.map { $0.chatFile(url: nil) }
        let sent = try send(
            opId: opId, message: message, meta: publishMeta.isEmpty ? nil : .object(publishMeta),
            files: rows.isEmpty ? nil : (.chatText, rows), now: now)
        var mentionOps: [String] = []
        var seen: Set<String> = []
        for case .user(let user) in draft.mentions.map(\.target) where seen.insert(user).inserted {
            let id = opIds()
            var notice = MentionNotice(
                user: user, channel: channel, messageId: messageId, messageTimetoken: nil, parentChannel: parentChannel)
            let keys = try transaction.pushKeys(text: message.text, sender: userId, channel: channel)
            if !keys.isEmpty { notice.push = .object(keys) }
            try transaction.insert(
                NewOutboxRow(.mention(notice), opId: id, dependsOn: opId),
                id: id, now: now)
            mentionOps.append(id)
        }
        var rootOp: String?
        if let root, try !tx.messageActions.hasAction(channel: key.channelId, messageTimetoken: root.timetoken, type: ChatSDKFormat.threadRootType) {
            // The Chat SDK's first reply creates the thread channel's metadata, then the action.
            try createChannel(
                opId: opIds(), id: channel,
                fields: ["description": .string(ChatConversations.threadDescription(channel: key.channelId, root: root.timetoken))],
                now: now)
            rootOp = try addReaction(
                opId: opIds(), messageId: root.id, type: ChatSDKFormat.threadRootType, value: channel, userId: userId, now: now
            ).opId
        }
        try tx.deleteDraft(key)
        return DraftSendReceipt(message: sent, mentionOpIds: mentionOps, threadRootOpId: rootOp)
    }

    /// Adds `userId`'s reaction locally and queues it; on a pending message it waits for the publish.
    func addReaction(
        opId: String, messageId: String, type: String, value: String, userId: String, now: Date
    ) throws -> OutboxReceipt<ChatMessageAction> {
        let message = try messageRef(messageId)
        let target = OutboxKeys.reaction(messageId, type, value)
        let action = try ChatMessageAction(
            type: type, value: value, userId: userId, channelId: message.channel, messageTimetoken: message.timetoken,
            messageId: messageId)
        if let latest = try tx.outbox.latestOp(target: target), latest.isCertainlyUnsent, latest.kind == .removeReaction {
            // Remove then add, neither sent: drop the removal and bring the stored action back.
            try transaction.cancel(latest)
            return OutboxReceipt(value: action, opId: nil, disposition: .cancelled([latest.id]))
        }
        if try tx.messageActions.action(messageId: messageId, type: type, value: value, userId: userId) != nil {
            return OutboxReceipt(value: action, opId: nil, disposition: .unchanged)
        }
        return try insertAction(action, messageId: messageId, message: message, target: target, opId: opId, now: now)
    }

    /// Stores the user's new action locally and queues its add, waiting for the message's
    /// publish while the message is pending (reactions, edits, deletes).
    func insertAction(
        _ action: ChatMessageAction, messageId: String, message: (channel: String, timetoken: Timetoken?, sendOp: String?),
        target: String, opId: String, now: Date
    ) throws -> OutboxReceipt<ChatMessageAction> {
        try tx.upsert(action: action)
        let reaction = ReactionTarget(
            channel: message.channel, messageId: messageId, messageTimetoken: message.timetoken, type: action.type,
            value: action.value)
        try transaction.insert(
            NewOutboxRow(.addReaction(reaction), opId: opId, dependsOn: message.timetoken == nil ? message.sendOp : nil),
            id: opId, now: now)
        return OutboxReceipt(value: action, opId: opId, disposition: .enqueued)
    }

    /// Removes `userId`'s reaction locally and queues the removal (or cancels an unsent add).
    func removeReaction(
        opId: String, messageId: String, type: String, value: String, userId: String, now: Date
    ) throws -> OutboxReceipt<ChatMessageAction> {
        let message = try messageRef(messageId)
        let target = OutboxKeys.reaction(messageId, type, value)
        if let latest = try tx.outbox.latestOp(target: target), latest.isCertainlyUnsent, latest.kind == .addReaction {
            try transaction.cancel(latest)
            try tx.messageActions.deleteAction(messageId: messageId, type: type, value: value, userId: userId)
            return OutboxReceipt(value: nil, opId: nil, disposition: .cancelled([latest.id]))
        }
        guard let stored = try tx.messageActions.action(messageId: messageId, type: type, value: value, userId: userId)
        else { return OutboxReceipt(value: nil, opId: nil, disposition: .unchanged) }
        try tx.messageActions.deleteAction(messageId: messageId, type: type, value: value, userId: userId)
        let reaction = ReactionTarget(
            channel: message.channel, messageId: messageId, messageTimetoken: message.timetoken, type: type, value: value)
        try transaction.insert(
            NewOutboxRow(.removeReaction(reaction, actionTimetoken: stored.actionTimetoken), opId: opId,
                         baseSnapshot: try tx.snapshot(stored),
                         dependsOn: message.timetoken == nil ? message.sendOp : nil),
            id: opId, now: now)
        return OutboxReceipt(value: nil, opId: opId, disposition: .enqueued)
    }

    /// Sets a membership locally (creating it if needed) and queues the PATCH.
    func setMembership(
        opId: String, channelId: String, userId: String, fields: [String: JSONValue], now: Date
    ) throws -> OutboxReceipt<Member> {
        if fields.isEmpty { throw OutboxError.emptyEdit("membership \(channelId)/\(userId)") }
        let stored = try tx.member(channelId: channelId, userId: userId)
        let local = try (stored ?? Member(channelId: channelId, userId: userId)).applying(fields)
        try tx.upsert(member: local, force: true)
        let op = NewOutboxRow(
            .setMembership(channel: channelId, user: userId, fields: fields), opId: opId, baseETag: stored?.eTag,
            baseUpdated: stored?.updated?.description, baseSnapshot: try tx.snapshot(stored))
        let (id, disposition) = try transaction.insertOrMerge(op, id: opId, now: now)
        return OutboxReceipt(value: local, opId: id, disposition: disposition)
    }

    /// Removes a membership locally and queues the removal (or cancels an unsent set of one never synced).
    func removeMembership(opId: String, channelId: String, userId: String, now: Date) throws
        -> OutboxReceipt<Member>
    {
        let stored = try tx.member(channelId: channelId, userId: userId)
        try tx.deleteMember(channelId: channelId, userId: userId)
        let op = NewOutboxRow(
            .removeMembership(channel: channelId, user: userId), opId: opId, baseETag: stored?.eTag,
            baseUpdated: stored?.updated?.description, baseSnapshot: try tx.snapshot(stored))
        let (id, disposition) = try transaction.insertOrReplace(op, id: opId, now: now)
        return OutboxReceipt(value: nil, opId: id, disposition: disposition)
    }

    /// Edits a user locally (creating it if needed) and queues the PATCH with the stored eTag as `If-Match`.
    func setUser(opId: String, id: String, fields: [String: JSONValue], now: Date) throws -> OutboxReceipt<User> {
        try set(
            id: id, fields: fields, stored: try tx.user(id: id), write: { try tx.upsert(user: $0, force: true) },
            operation: .setUser(id: id, fields: fields), kind: "user", opId: opId, now: now)
    }

    /// Removes a user locally (with its memberships) and queues the DELETE.
    func removeUser(opId: String, id: String, now: Date) throws -> OutboxReceipt<User> {
        let stored = try tx.user(id: id)
        try tx.deleteUser(id: id)
        let receipt = try edit(.removeUser(id: id), stored: stored, opId: opId, now: now)
        return OutboxReceipt(value: nil, opId: receipt.0, disposition: receipt.1)
    }

    /// Edits a channel locally (creating it if needed) and queues the PATCH with the stored eTag as `If-Match`.
    func setChannel(opId: String, id: String, fields: [String: JSONValue], now: Date) throws
        -> OutboxReceipt<Channel>
    {
        try set(
            id: id, fields: fields, stored: try tx.channel(id: id), write: { try tx.upsert(channel: $0, force: true) },
            operation: .setChannel(id: id, fields: fields), kind: "channel", opId: opId,
            now: now)
    }

    /// Applies a user's or channel's edit to the stored object (or a new one), writes it, and
    /// files the PATCH with the stored version as its base.
    private func set<Object: ReplicatedEntity & VersionedObject & Encodable>(
        id: String, fields: [String: JSONValue], stored: Object?, write: (Object) throws -> Void,
        operation: OutboxOperation, kind: String, opId: String, now: Date
    ) throws -> OutboxReceipt<Object> {
        if fields.isEmpty { throw OutboxError.emptyEdit("\(kind) \(id)") }
        let local = try (stored ?? Object.placeholder(id: id)).applying(fields)
        try write(local)
        let receipt = try edit(operation, stored: stored, opId: opId, now: now)
        return OutboxReceipt(value: local, opId: receipt.0, disposition: receipt.1)
    }

    /// Removes a channel locally (with its memberships) and queues the DELETE.
    func removeChannel(opId: String, id: String, now: Date) throws -> OutboxReceipt<Channel> {
        let stored = try tx.channel(id: id)
        try tx.deleteChannel(id: id)
        let receipt = try edit(.removeChannel(id: id), stored: stored, opId: opId, now: now)
        return OutboxReceipt(value: nil, opId: receipt.0, disposition: receipt.1)
    }

    /// Files a user or channel op with the stored version as its base (eTag, `updated`, snapshot).
    private func edit<Object: VersionedObject & Encodable>(
        _ operation: OutboxOperation, stored: Object?, opId: String, now: Date
    ) throws -> (String?, OutboxDisposition) {
        let op = NewOutboxRow(
            operation, opId: opId, baseETag: stored?.eTag,
            baseUpdated: stored?.updated?.description, baseSnapshot: try tx.snapshot(stored))
        return operation.kind.traits.isRemoval ? try transaction.insertOrReplace(op, id: opId, now: now) : try transaction.insertOrMerge(op, id: opId, now: now)
    }

    /// The channel, timetoken and unsent publish op of a stored message.
    func messageRef(_ id: String) throws -> (channel: String, timetoken: Timetoken?, sendOp: String?) {
        guard let location = try tx.messages.messageLocation(id: id) else { throw OutboxError.messageNotFound(id) }
        let sendOp = try tx.outbox.ops(target: OutboxKeys.message(id)).first { $0.kind == .send }?.id
        if location.timetoken == nil, sendOp == nil {
            throw StoreError.invalidInput("message \(id) was never sent and has no publish op")
        }
        return (location.channel, location.timetoken, sendOp)
    }
}

/// A send with everything that needs no store done (``OpEnqueue/prepareSend(opId:message:meta:files:pushKeys:)``):
/// what ``OpEnqueue/send(_:now:)`` writes.
///
/// A class: a batch hands thousands of them from the preparing task to the transaction, and a
/// copy of the value (a message and an op payload) cost more than writing its rows.
package final class PreparedSend<Custom: ChatCustomData>: Sendable {
    let opId: String
    /// The app's publish meta, as given.
    let meta: JSONValue?
    let files: (shape: FileShape, rows: [FileUploadRow])?
    /// The message as stored: pending, no timetoken.
    let pending: ChatMessage<Custom.Message>
    /// The publish op's row, its payload encoded.
    let row: NewOutboxRow
    /// Whether the store's push settings may add fields to the body (a Chat SDK text message).
    let asksPushKeys: Bool

    init(
        opId: String, meta: JSONValue?, files: (shape: FileShape, rows: [FileUploadRow])?,
        pending: ChatMessage<Custom.Message>, row: NewOutboxRow, asksPushKeys: Bool
    ) {
        self.opId = opId
        self.meta = meta
        self.files = files
        self.pending = pending
        self.row = row
        self.asksPushKeys = asksPushKeys
    }
}

/// Sends prepared together (``MessageWrites/prepare(many:)``), written in one transaction by
/// ``MessageWrites/send(prepared:)``: their message and op rows are made too, so that the
/// transaction only gives them their order and writes them.
package struct PreparedSends<Custom: ChatCustomData>: Sendable {
    /// When they were prepared: their messages' creation time and their ops'.
    let now: Date
    let sends: [PreparedSend<Custom>]
    /// The pending messages' rows (none for a message the store never keeps).
    let messageRows: NewMessageRows<Custom>
    /// The publish ops' rows, in the order of ``sends``.
    let opRows: NewOpRows

    init(now: Date, sends: [PreparedSend<Custom>]) throws {
        self.now = now
        self.sends = sends
        messageRows = try NewMessageRows(sends.map(\.pending))
        opRows = try NewOpRows(sends.map { ($0.row, $0.opId) }, now: now)
    }
}
