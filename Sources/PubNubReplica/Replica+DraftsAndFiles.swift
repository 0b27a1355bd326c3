import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

// Drafts and files through the façade (docs/drafts.md, docs/files.md): a draft lives in the store
// (each edit one transaction, so nothing typed is only in memory); a send with files is one outbox
// op (stored at once, uploaded and published when the network allows, exactly once); reading a
// file goes through the store's bounded cache.
extension Replica {
    // MARK: Drafts

    /// Edits the stored draft of `key` (a channel, or a thread of it) in one transaction and
    /// returns it: call it for each user edit, so that a crash or a kill loses nothing typed. An
    /// error thrown by `edit` (a refused mention, say) leaves the stored draft as it was.
    ///
    /// ```swift
    /// let key = DraftKey(channelId: "general")
    /// try await replica.editDraft(key) { try $0.insertText(offset: 0, text: "Hi ") }
    /// for try await draft in replica.observe(replica.queries.draft(key)) { show(draft) }
    /// ```
    @discardableResult
    public func editDraft(_ key: DraftKey, _ edit: @escaping @Sendable (inout MessageDraft) throws -> Void) async throws -> MessageDraft {
        try await openStore().drafts.edit(key, edit)
    }

    /// Replaces the stored draft of `key` with `draft` (an empty draft deletes it).
    public func saveDraft(_ draft: MessageDraft, for key: DraftKey) async throws {
        try await openStore().drafts.save(draft, for: key)
    }

    /// Deletes the stored draft of `key` (its attached files stay until the draft is sent or
    /// they are detached); returns whether there was one.
    @discardableResult
    public func removeDraft(_ key: DraftKey) async throws -> Bool {
        try await openStore().drafts.remove(key)
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
        try await write { try await $0.messages.send(draft: key, custom: custom, meta: meta) }
    }

    /// Sends `draft` (the one the UI holds) as ``send(draft:custom:meta:)`` sends a stored one,
    /// and deletes the stored draft of `key` in the same transaction.
    public func send(draft: MessageDraft, in key: DraftKey, custom: Custom.Message? = nil, meta: JSONValue? = nil) async throws
        -> DraftSendReceipt<ChatMessage<Custom.Message>>
    {
        try await write { try await $0.messages.send(draft: draft, in: key, custom: custom, meta: meta) }
    }

    /// Attaches a file to the draft of `key`: its bytes are copied into the store's files area at
    /// once (the original can go), and uploaded when the draft is sent.
    ///
    /// ```swift
    /// try await replica.attach(OutgoingFile(url: photoURL), toDraft: key)
    /// ```
    @discardableResult
    public func attach(_ file: OutgoingFile, toDraft key: DraftKey) async throws -> MessageDraft {
        try await write { try await $0.messages.attach(file, toDraft: key) }
    }

    /// Detaches the file named `name` (every file when nil) from the draft of `key`.
    @discardableResult
    public func detach(fileNamed name: String? = nil, fromDraft key: DraftKey) async throws -> MessageDraft {
        try await write { try await $0.messages.detach(fileNamed: name, fromDraft: key) }
    }

    // MARK: Files

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
        try await write {
            try await $0.messages.send(files: files, text: text, to: channel, shape: shape, meta: meta, customMessageType: customMessageType)
        }
    }

    /// The bytes of a message's file: from the store's cache, or downloaded once (decrypted when a
    /// cipher key is set) and cached (``ReplicaConfiguration/fileCacheBytes`` caps the cache).
    public func data(of file: ChatFile, channel: String) async throws -> Data {
        try await openFileCache().data(of: file, channel: channel)
    }

    /// One page of the files stored on `channel` on PubNub (on demand: no sync lists files).
    public func listFiles(channel: String, limit: Int = FileLimits.maxListLimit, next: String? = nil) async throws -> FileListPage {
        try await client.files.listFiles(channel: channel, limit: limit, next: next)
    }

    /// Deletes the file `id` named `name` from `channel`'s storage on PubNub, and every cached copy
    /// of it. The messages naming it stay in history (a hard delete of a message deletes its own
    /// files: ``deleteMessage(id:hard:preserveFiles:)``); Access Manager's grants decide. Not
    /// queued: it needs the network now, and throws `WireError` when PubNub refuses or cannot be reached.
    public func deleteFile(id: String, name: String, channel: String) async throws {
        try await openFileCache().deleteFile(id: id, name: name, channel: channel)
    }

    /// The cache of the open store.
    func openFileCache() async throws -> FileCache<Custom> {
        let parts = try await openParts()
        if let fileCache, fileCache.store === parts.store { return fileCache }
        let cache = FileCache(store: parts.store, client: client, maximumBytes: configuration.fileCacheBytes, clock: clock)
        fileCache = cache
        return cache
    }
}
