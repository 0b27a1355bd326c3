import Foundation
import Logging
import PubNubWire
import ReplicaModel
import ReplicaStore

/// Why a file could not be read.
public enum FileCacheError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file has no server id yet: this device is still uploading it (its bytes are in the
    /// attachment area until the send completes).
    case notUploadedYet(name: String)
    /// The cache could not write or read its folder.
    case storage(String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .notUploadedYet(let name): "\(name) is still being uploaded by this device"
        case .storage(let message): "the file cache failed: \(message)"
        }
    }
}

/// Files downloaded on demand into a bounded local cache (`docs/files.md`, "The cache").
///
/// A file is downloaded the first time it is asked for, decrypted when the client has a cipher
/// key, written into the store's attachment area (`cache/`) and recorded in the `file_cache`
/// table; later reads are served from there, never downloaded again while cached. Files this
/// device sent are cached when their send completes. When the cache holds more than
/// ``maximumBytes``, the least recently used files are evicted. Concurrent reads of one file
/// share one download.
///
/// ```swift
/// let cache = FileCache(store: store, client: client)
/// let bytes = try await cache.data(of: message.files[0], channel: message.channelId)
/// ```
public actor FileCache<Custom: ChatCustomData> {
    /// The store whose attachment area and `file_cache` table hold the cache.
    public nonisolated let store: ChatStore<Custom>
    /// The client that downloads.
    public nonisolated let client: PubNubClient
    /// The cap: at most this many bytes stay cached (default 100 MiB).
    public nonisolated let maximumBytes: Int
    private let clock: any ReplicaClock
    private var downloads: [String: Task<Data, any Error>] = [:]
    /// How many downloads this cache made (the rest were served from disk).
    public private(set) var downloadCount = 0

    /// A cache over `store`'s attachment area, downloading through `client`.
    public init(store: ChatStore<Custom>, client: PubNubClient, maximumBytes: Int = 100 << 20, clock: any ReplicaClock = SystemClock()) {
        self.store = store
        self.client = client
        self.maximumBytes = max(0, maximumBytes)
        self.clock = clock
    }

    /// How often a hit records its use, at most (seconds).
    static var touchInterval: TimeInterval { 60 }

    /// The bytes of `file` of a message of `channel`: from the cache, else downloaded (and cached).
    public func data(of file: ChatFile, channel: String) async throws -> Data {
        guard let id = file.id else { throw FileCacheError.notUploadedYet(name: file.name) }
        if let cached = try await cachedData(id: id, name: file.name) { return cached }
        let key = id + "/" + file.name
        if let running = downloads[key] { return try await running.value }
        let task = Task { try await self.download(id: id, name: file.name, channel: channel) }
        downloads[key] = task
        defer { downloads[key] = nil }
        return try await task.value
    }

    /// Whether `file` is in the cache now.
    public func isCached(_ file: ChatFile) async throws -> Bool {
        guard let id = file.id else { return false }
        return try await cachedData(id: id, name: file.name) != nil
    }

    private func cachedData(id: String, name: String) async throws -> Data? {
        let now = clock.now
        guard let entry = try await store.reading({ try $0.cachedFile(id: id, name: name) }) else { return nil }
        // A hit is a read; its use is written at most once a minute per file (eviction needs the
        // order of uses, not their exact times), so reading from the cache costs no commit.
        if entry.lastUsed.map({ now.timeIntervalSince($0) >= Self.touchInterval }) ?? true {
            try await store.transaction { try $0.touchCachedFile(id: id, name: name, now: now) }
        }
        // A sent file's bytes may still be in `outgoing` (a kill before they moved).
        do {
            return try store.attachments.read(entry.localName, in: .cache) ?? store.attachments.read(entry.localName, in: .outgoing)
        } catch {
            throw FileCacheError.storage("\(error)")
        }
    }

    private func download(id: String, name: String, channel: String) async throws -> Data {
        let data = try await client.files.downloadFile(channel: channel, id: id, name: name)
        downloadCount += 1
        let localName = "\(UUID().uuidString)"
        do {
            try store.attachments.write(data, as: localName, in: .cache)
        } catch {
            throw FileCacheError.storage("\(error)")
        }
        let now = clock.now, cap = maximumBytes
        let evicted = try await store.transaction { tx -> [String] in
            try tx.addCachedFile(CachedFile(fileId: id, name: name, channelId: channel, size: data.count, localName: localName), now: now)
            return try tx.evictCachedFiles(toAtMost: cap)
        }
        for name in evicted {
            store.attachments.remove(name, in: .cache)
            store.attachments.remove(name, in: .outgoing)
        }
        return data
    }
}
