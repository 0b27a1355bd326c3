import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

/// Files: reading a message's file through the store's cache, and the files PubNub stores for a channel.
///
/// Sending files is ``ReplicaMessages/send(files:text:to:shape:meta:customMessageType:)`` (`docs/files.md`).
///
/// ```swift
/// let bytes = try await replica.files.data(of: file, channel: "general")
/// ```
///
/// Reached through ``Replica/files``: a value made per access, holding only the replica.
public struct ReplicaFiles<Custom: ChatCustomData>: Sendable {
    /// The replica these calls go through.
    let replica: Replica<Custom>

    /// The bytes of a message's file: from the store's cache, or downloaded once (decrypted when a
    /// cipher key is set) and cached (``ReplicaConfiguration/fileCacheBytes`` caps the cache).
    public func data(of file: ChatFile, channel: String) async throws -> Data {
        try await Self.cache(of: replica).data(of: file, channel: channel)
    }

    /// One page of the files stored on `channel` on PubNub (on demand: no sync lists files).
    public func list(channel: String, limit: Int = FileLimits.maxListLimit, next: String? = nil) async throws -> FileListPage {
        try await replica.client.files.listFiles(channel: channel, limit: limit, next: next)
    }

    /// Deletes the file `id` named `name` from `channel`'s storage on PubNub, and every cached copy
    /// of it. The messages naming it stay in history (a hard delete of a message deletes its own
    /// files: ``ReplicaMessages/delete(id:hard:preserveFiles:)``); Access Manager's grants decide. Not
    /// queued: it needs the network now, and throws `WireError` when PubNub refuses or cannot be reached.
    public func delete(id: String, name: String, channel: String) async throws {
        try await Self.cache(of: replica).deleteFile(id: id, name: name, channel: channel)
    }

    /// The cache of the replica's open store (made on first use; ``Replica/suspend()`` drops it).
    static func cache(of replica: isolated Replica<Custom>) async throws -> FileCache<Custom> {
        let parts = try await replica.openParts()
        if let cache = replica.fileCache, cache.store === parts.store { return cache }
        let cache = FileCache(
            store: parts.store, client: replica.client, maximumBytes: replica.configuration.fileCacheBytes, clock: replica.clock)
        replica.fileCache = cache
        return cache
    }
}

extension Replica {
    /// Files: reading a message's file through the store's cache, and the files PubNub stores for a channel.
    public nonisolated var files: ReplicaFiles<Custom> { ReplicaFiles(replica: self) }
}
