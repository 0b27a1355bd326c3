import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

// Sending: a new message (text, files, many at once, a draft) stored as pending with its publish
// op in one transaction; the drain publishes it.

extension MessageWrites {
    /// Stores many pending messages and queues their publishes in **one transaction**: all of them
    /// or, when any is refused, none (the error is that message's, as ``send(text:to:contentType:content:custom:meta:)``
    /// would throw it). Use it for imports and bulk sends: one commit instead of one per message.
    /// They are published in the given order within each channel, like single sends.
    ///
    /// ```swift
    /// let receipts = try await outbox.messages.send(many: lines.map { OutgoingMessage(text: $0, to: "import") })
    /// ```
    ///
    /// Memory and the transaction grow with the batch: cut very large imports into batches of a few
    /// thousand (`pnreplicate send --count` commits every 2,500).
    public func send(many messages: [OutgoingMessage<Custom.Message>]) async throws -> [OutboxReceipt<Message>] {
        try await send(prepared: prepare(many: messages))
    }

    /// The first half of ``send(many:)``: builds and checks the messages and their ops without
    /// the store (the same refusals, before anything is written). A bulk sender prepares the next
    /// batch while ``send(prepared:)`` writes this one (`pnreplicate send --count`).
    package func prepare(many messages: [OutgoingMessage<Custom.Message>]) throws -> PreparedSends<Custom> {
        let now = clock.now, createdAt = ISOTimestamp(date: now), userId = userId
        let sends = try messages.map { outgoing in
            var message = try Message(
                id: RandomIdentifier.uuidV7(at: now), text: outgoing.text, contentType: outgoing.contentType,
                content: outgoing.content, custom: outgoing.custom, createdAt: createdAt, userId: userId,
                channelId: outgoing.channel)
            message.customMessageType = outgoing.customMessageType
            return try OpEnqueue<Custom>.prepareSend(opId: Outbox<Custom>.newOpId(), message: message, meta: outgoing.meta, files: nil)
        }
        return try PreparedSends(now: now, sends: sends)
    }

    /// The second half of ``send(many:)``: stores the prepared messages and queues their
    /// publishes in one transaction, all or none.
    package func send(prepared: PreparedSends<Custom>) async throws -> [OutboxReceipt<Message>] {
        try await commit { ops in try ops.enqueue.send(many: prepared) }
        return prepared.sends.map { OutboxReceipt(value: $0.pending, opId: $0.opId, disposition: .enqueued) }
    }

    /// Sends a message draft, as the Chat SDK's `MessageDraft.send` does, through the outbox.
    ///
    /// One transaction queues the message (the draft rendered as `[text](pn-user://id)` links,
    /// published as `{"type":"text","text":…,"files":[]}` beside pnreplicate's own fields, with the
    /// draft's quote in `meta.quotedMessage`), queues one mention event per mentioned user (each
    /// published to the channel named after the user, once the message has its timetoken), and
    /// deletes the stored draft of `key`: a crash leaves either the draft or the queued message,
    /// never both and never neither.
    ///
    /// A draft with a thread root (`key.threadRoot`) is sent to the thread's channel
    /// (``ReplicaModel/ChatSDKFormat/threadChannel(of:root:)``); the first reply the store knows
    /// of also adds the Chat SDK's `threadRootId` action to the root message.
    ///
    /// ```swift
    /// let key = DraftKey(channelId: "general")
    /// let receipt = try await outbox.messages.send(draft: key)  // the draft stored under `key`
    /// ```
    ///
    /// - Parameters:
    ///   - key: where the draft belongs; its stored draft is sent and deleted.
    ///   - meta: the app's publish meta; must be a JSON object when given.
    /// - Throws: ``OutboxError/emptyDraft(_:)`` when there is no text to send,
    ///   ``OutboxError/threadRootNotFound(channel:timetoken:)`` for a reply to a message the store
    ///   does not hold, and the errors of ``send(text:to:contentType:content:custom:meta:)``.
    ///   Nothing is queued and the stored draft is kept.
    public func send(draft key: DraftKey, custom: Custom.Message? = nil, meta: JSONValue? = nil) async throws
        -> DraftSendReceipt<Message>
    {
        try await sendDraft(nil, key: key, custom: custom, meta: meta)
    }

    /// Sends `draft` (the one the UI holds) as ``send(draft:custom:meta:)`` sends a stored one,
    /// and deletes the stored draft of `key` in the same transaction.
    ///
    /// ```swift
    /// var draft = MessageDraft()
    /// try draft.insertText(offset: 0, text: "Hi Alice")
    /// try draft.addMention(offset: 3, length: 5, target: .user("alice"))
    /// _ = try await outbox.messages.send(draft: draft, in: DraftKey(channelId: "general"))
    /// ```
    public func send(draft: MessageDraft, in key: DraftKey, custom: Custom.Message? = nil, meta: JSONValue? = nil)
        async throws -> DraftSendReceipt<Message>
    {
        try await sendDraft(draft, key: key, custom: custom, meta: meta)
    }

    private func sendDraft(_ draft: MessageDraft?, key: DraftKey, custom: Custom.Message?, meta: JSONValue?) async throws
        -> DraftSendReceipt<Message>
    {
        let opId = Outbox<Custom>.newOpId(), messageId = RandomIdentifier.uuidV4(), now = clock.now, userId = userId
        return try await commit {
            try $0.enqueue.draftSend(
                draft, key: key, opId: opId, messageId: messageId, userId: userId, custom: custom, meta: meta,
                opIds: Outbox<Custom>.newOpId, now: now)
        }
    }

    /// Stores a pending message and queues its publish. The message's `id` travels in the payload
    /// and the op id in `meta.pnr_op`.
    ///
    /// - Parameters:
    ///   - meta: publish metadata; must be a JSON object when given.
    ///   - customMessageType: PubNub's `custom_message_type` (3-50 characters of `A-Z a-z 0-9 - _`,
    ///     ``ReplicaModel/ModelValidationError/invalidCustomMessageType(_:)`` otherwise), stored with
    ///     the message and sent with its publish.
    public func send(
        text: String, to channel: String, contentType: String? = nil, content: JSONValue? = nil,
        custom: Custom.Message? = nil, meta: JSONValue? = nil, customMessageType: String? = nil
    ) async throws -> OutboxReceipt<Message> {
        let now = clock.now
        var message = try Message(
            id: RandomIdentifier.uuidV7(at: now), text: text, contentType: contentType, content: content, custom: custom,
            createdAt: ISOTimestamp(date: now), userId: userId, channelId: channel)
        message.customMessageType = customMessageType
        let opId = Outbox<Custom>.newOpId(), outgoing = message
        return try await commit { try $0.enqueue.send(opId: opId, message: outgoing, meta: meta, now: now) }
    }
}

extension MessageWrites {
    /// Stores a pending message with `files` and queues its send, as one op.
    ///
    /// - Parameters:
    ///   - shape: ``ReplicaStore/FileShape/fileMessage`` (one file; the core SDKs' file message,
    ///     the default) or ``ReplicaStore/FileShape/chatText`` (the Chat SDK's: a text message
    ///     listing the files).
    /// - Throws: ``OutboxError/invalidFile(_:)`` for an unreadable, empty or too large file (5 MiB
    ///   once encrypted: ``PubNubWire/FileLimits/maxUploadBytes``), before anything is stored.
    public func send(
        files: [OutgoingFile], text: String = "", to channel: String, shape: FileShape = .fileMessage,
        meta: JSONValue? = nil, customMessageType: String? = nil
    ) async throws -> OutboxReceipt<Message> {
        guard !files.isEmpty else { throw OutboxError.invalidFile("no file to send") }
        if shape == .fileMessage, files.count != 1 { throw OutboxError.invalidFile("a file message carries one file; use the chatText shape for \(files.count)") }
        guard files.count <= ChatFile.maxFilesPerMessage else { throw OutboxError.invalidFile("at most \(ChatFile.maxFilesPerMessage) files per message") }
        try Validation.validateStoredIdentifier(channel, field: "channel")
        let opId = Outbox<Custom>.newOpId(), now = clock.now
        var rows: [FileUploadRow] = []
        var written: [String] = []
        do {
            for (position, file) in files.enumerated() {
                let bytes = try checkedBytes(of: file)
                let localName = "\(opId)-\(position)"
                try store.attachments.write(bytes, as: localName, in: .outgoing)
                written.append(localName)
                rows.append(FileUploadRow(
                    opId: opId, position: position, channelId: channel, name: file.name, mimeType: file.mimeType,
                    size: bytes.count, localName: localName))
            }
            var message = try Message(
                id: RandomIdentifier.uuidV4(), text: text, contentType: shape == .chatText ? ChatSDKFormat.textContentType : nil,
                createdAt: ISOTimestamp(date: now), userId: userId, channelId: channel)
            message.customMessageType = customMessageType
            message.files = rows.map { $0.chatFile(url: nil) }
            let outgoing = message, fileRows = rows
            return try await commit {
                try $0.enqueue.send(opId: opId, message: outgoing, meta: meta, files: (shape, fileRows), now: now)
            }
        } catch {
            // Nothing was queued: the copies go (a kill here leaves them to the area's sweep).
            for name in written { store.attachments.remove(name, in: .outgoing) }
            throw error
        }
    }

    /// Attaches a file to the draft of `key`: its bytes are copied into the attachment area now,
    /// and sending the draft (``send(draft:meta:)``) uploads them in the Chat SDK's shape.
    /// Throws ``OutboxError/invalidFile(_:)`` as ``send(files:text:to:shape:meta:customMessageType:)`` does.
    @discardableResult
    public func attach(_ file: OutgoingFile, toDraft key: DraftKey) async throws -> MessageDraft {
        let bytes = try checkedBytes(of: file)
        let localName = "draft-\(RandomIdentifier.uuidV4())"
        try store.attachments.write(bytes, as: localName, in: .outgoing)
        let attached = DraftFile(name: file.name, mimeType: file.mimeType, size: bytes.count, localName: localName)
        do {
            return try await store.drafts.edit(key) { draft in
                guard draft.files.count < ChatFile.maxFilesPerMessage else {
                    throw OutboxError.invalidFile("at most \(ChatFile.maxFilesPerMessage) files per message")
                }
                draft.files.append(attached)
            }
        } catch {
            store.attachments.remove(localName, in: .outgoing)
            throw error
        }
    }

    /// Removes the files named `name` from the draft of `key` (all of them when nil); their copies
    /// leave the attachment area at the next sweep.
    @discardableResult
    public func detach(fileNamed name: String? = nil, fromDraft key: DraftKey) async throws -> MessageDraft {
        try await store.drafts.edit(key) { draft in draft.files.removeAll { name == nil || $0.name == name } }
    }

    /// The bytes of `file`, checked: a good name, readable, within the upload limit once encrypted,
    /// not empty when it will be encrypted.
    private func checkedBytes(of file: OutgoingFile) throws -> Data {
        do {
            try Validation.validateFileName(file.name, own: true)
        } catch {
            throw OutboxError.invalidFile("\(error)")
        }
        let bytes = try Self.readBytes(of: file)
        let uploaded = outbox.client.files.uploadedSize(ofPlaintext: bytes.count)
        guard uploaded <= FileLimits.maxUploadBytes else {
            throw OutboxError.invalidFile("\(file.name) is \(bytes.count) bytes (\(uploaded) uploaded); the limit is \(FileLimits.maxUploadBytes)")
        }
        guard !bytes.isEmpty || outbox.client.crypto == nil else { throw OutboxError.invalidFile("\(file.name) is empty (an empty file cannot be encrypted)") }
        return bytes
    }

    private static func readBytes(of file: OutgoingFile) throws -> Data {
        switch file.source {
        case .data(let data):
            return data
        case .file(let url):
            if let kind = StoreError.irregularKind(at: url.path) {
                throw OutboxError.invalidFile("\(url.path) is a \(kind), not a regular file: only a regular file's bytes can be sent")
            }
            let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? nil
            guard let size else { throw OutboxError.invalidFile("cannot read \(url.path)") }
            guard size <= FileLimits.maxUploadBytes else {
                throw OutboxError.invalidFile("\(url.lastPathComponent) is \(size) bytes; the limit is \(FileLimits.maxUploadBytes)")
            }
            do {
                return try Data(contentsOf: url)
            } catch {
                throw OutboxError.invalidFile("cannot read \(url.path): \(error.localizedDescription)")
            }
        }
    }
}
