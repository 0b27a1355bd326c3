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
    /// The bytes downloaded are not the size the message gives the file: not the file the message
    /// names (another file under its id, a truncated download, ciphertext read without the key).
    /// Nothing was cached.
    case sizeMismatch(name: String, expected: Int, downloaded: Int)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .notUploadedYet(let name): "\(name) is still being uploaded by this device"
        case .storage(let message): "the file cache failed: \(message)"
        case .sizeMismatch(let name, let expected, let downloaded):
            "\(name): the message gives \(expected) bytes, \(downloaded) were downloaded (not cached)"
        }
    }
}

/// Files downloaded on demand into a bounded local cache (`docs/files.md`, "The cache").
///
/// A file is downloaded the first time it is asked for, decrypted when the client has a cipher
/// key, written into the store's attachment area (`cache/`) and recorded in the `file_cache`
/// table; later reads are served from there, never downloaded again while cached. An entry is
/// keyed by the channel, the file's id and name, and the crypto configuration that produced its
/// bytes (``PubNubWire/CryptoModule/decryptionFingerprint``): a read without the cipher key never
/// leaves ciphertext that a read with it would be served, and the other way round. Files this
/// device sent are cached as their plaintext when their send completes, for any configuration.
/// When the message gives the file's size, bytes of another size are refused
/// (``FileCacheError/sizeMismatch(name:expected:downloaded:)``) and not cached. When the cache
/// holds more than ``maximumBytes``, the least recently used files are evicted. Concurrent reads
/// of one file share one download.
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

    /// The crypto configuration this cache's client reads files with (part of every entry's key).
    private nonisolated var crypto: String { client.crypto?.decryptionFingerprint ?? CachedFile.noCrypto }

    /// The bytes of `file` of a message of `channel`: from the cache, else downloaded (and cached).
    ///
    /// - Throws: ``FileCacheError/notUploadedYet(name:)`` for a file this device has not uploaded
    ///   yet, ``FileCacheError/sizeMismatch(name:expected:downloaded:)`` when the bytes are not the
    ///   size the message gives, `WireError` for an invalid id or name, a refusal or a failed download.
    public func data(of file: ChatFile, channel: String) async throws -> Data {
        guard let id = file.id else { throw FileCacheError.notUploadedYet(name: file.name) }
        if let cached = try await cachedData(channel: channel, id: id, name: file.name) { return cached }
        let key = [channel, id, file.name].joined(separator: "\u{1F}")
        if let running = downloads[key] { return try await running.value }
        let task = Task { try await self.download(id: id, name: file.name, channel: channel, expectedSize: file.size) }
        downloads[key] = task
        defer { downloads[key] = nil }
        return try await task.value
    }

    /// Whether `file` of `channel` is in the cache now, for this cache's crypto configuration.
    public func isCached(_ file: ChatFile, channel: String) async throws -> Bool {
        guard let id = file.id else { return false }
        return try await store.reading { try $0.files.cachedFile(channel: channel, id: id, name: file.name, crypto: self.crypto) } != nil
    }

    /// Deletes the file `id` named `name` from `channel`'s storage on PubNub (its messages stay in
    /// history; the server's grants decide), and every cached copy of it.
    public func deleteFile(id: String, name: String, channel: String) async throws {
        try await client.files.deleteFile(channel: channel, id: id, name: name)
        let removed = try await store.transaction { try $0.files.removeCachedFile(channel: channel, id: id) }
        for localName in removed {
            store.attachments.remove(localName, in: .cache)
            store.attachments.remove(localName, in: .outgoing)
        }
    }

    private func cachedData(channel: String, id: String, name: String) async throws -> Data? {
        let now = clock.now, crypto = crypto
        guard let entry = try await store.reading({ try $0.files.cachedFile(channel: channel, id: id, name: name, crypto: crypto) })
        else { return nil }
        // A hit is a read; its use is written at most once a minute per file (eviction needs the
        // order of uses, not their exact times), so reading from the cache costs no commit.
        if entry.lastUsed.map({ now.timeIntervalSince($0) >= Self.touchInterval }) ?? true {
            try await store.transaction { try $0.files.touchCachedFile(entry, now: now) }
        }
        // A sent file's bytes may still be in `outgoing` (a kill before they moved).
        do {
            return try store.attachments.read(entry.localName, in: .cache) ?? store.attachments.read(entry.localName, in: .outgoing)
        } catch {
            throw FileCacheError.storage("\(error)")
        }
    }

    private func download(id: String, name: String, channel: String, expectedSize: Int?) async throws -> Data {
        let downloaded = try await client.files.download(channel: channel, id: id, name: name)
        downloadCount += 1
        let data = downloaded.bytes
        // The sender's `size` is its plaintext's (pnreplicate), or what it uploaded (an SDK that
        // counts the ciphertext): either matches the file; anything else is another file.
        if let expectedSize, data.count != expectedSize, client.crypto == nil || downloaded.storedSize != expectedSize {
            throw FileCacheError.sizeMismatch(name: name, expected: expectedSize, downloaded: data.count)
        }
        let localName = "\(UUID().uuidString)"
        do {
            try store.attachments.write(data, as: localName, in: .cache)
        } catch {
            throw FileCacheError.storage("\(error)")
        }
        let now = clock.now, cap = maximumBytes
        let entry = CachedFile(fileId: id, name: name, channelId: channel, crypto: crypto, size: data.count, localName: localName)
        let evicted = try await store.transaction { tx -> [String] in
            try tx.files.addCachedFile(entry, now: now)
            return try tx.files.evictCachedFiles(toAtMost: cap)
        }
        for name in evicted {
            store.attachments.remove(name, in: .cache)
            store.attachments.remove(name, in: .outgoing)
        }
        return data
    }
}
