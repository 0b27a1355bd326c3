import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

// Files through the façade (docs/files.md): a send with files is one outbox op (stored at once,
// uploaded and published when the network allows, exactly once); reading a file goes through the
// store's bounded cache.
extension Replica {
    /// Stores a message with `files` and queues its send: see `Outbox.send(files:text:to:shape:meta:customMessageType:)`.
    ///
    /// ```swift
    /// try await replica.send(files: [OutgoingFile(url: photoURL)], text: "the view", to: "general")
    /// ```
    public func send(
        files: [OutgoingFile], text: String = "", to channel: String, shape: FileShape = .fileMessage, meta: JSONValue? = nil
    ) async throws -> OutboxReceipt<ChatMessage<Custom.Message>> {
        try await write { try await $0.send(files: files, text: text, to: channel, shape: shape, meta: meta) }
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

    /// The cache of the open store.
    func openFileCache() async throws -> FileCache<Custom> {
        let parts = try await openParts()
        if let fileCache, fileCache.store === parts.store { return fileCache }
        let cache = FileCache(store: parts.store, client: client, maximumBytes: configuration.fileCacheBytes, clock: clock)
        fileCache = cache
        return cache
    }
}
