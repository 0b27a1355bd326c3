import Foundation
import GRDB
import Logging

/// The store's WAL kept within the free space while the outbox drains (`docs/store.md`, "Disk
/// space").
///
/// A write made with ``ChatStore/transaction(keepingWALSmall:_:)`` `true` (the outbox's commits
/// while it drains) is followed, in the same access to the writer (no other commit slips in
/// between), by a checkpoint when the WAL has grown past its limit: it copies the WAL into the
/// database and truncates it (`PRAGMA wal_checkpoint(TRUNCATE)`). The limit is a quarter of the
/// free space on the store's volume, at least ``minimumLimitBytes`` and at most
/// ``maximumLimitBytes`` (SQLite's own automatic checkpoint, 1,000 pages): the WAL then stays
/// under the limit plus one commit. A phone with plenty of space pays nothing (each checkpoint
/// costs fsyncs: at 128 KiB the drain would checkpoint every two or three sends and run at half
/// its speed); one with 256 KiB free drains a long queue within it. Without it SQLite
/// checkpoints only at 4 MiB and never shrinks the file.
///
/// The checkpoint waits for readers to leave the WAL at most ``checkpointWaitMilliseconds``
/// (not the store's busy timeout: it holds the writer meanwhile). One that cannot finish leaves
/// the WAL larger, and the next is tried only once the WAL has grown another
/// ``minimumLimitBytes``. Other writes (pulls, which commit pages of 100 messages) keep
/// SQLite's default.
package final class WALBudget: @unchecked Sendable {
    /// The smallest limit: a checkpoint at every commit would cost more than it saves.
    package static var minimumLimitBytes: Int { 128 * 1024 }
    /// The largest limit: SQLite's own automatic checkpoint (1,000 pages of 4 KiB).
    package static var maximumLimitBytes: Int { 4 * 1024 * 1024 }

    /// The limit for `freeBytes` of free space (unknown: the largest).
    package static func limit(freeBytes: Int?) -> Int {
        guard let freeBytes else { return maximumLimitBytes }
        return min(max(freeBytes / 4, minimumLimitBytes), maximumLimitBytes)
    }
    /// How long a checkpoint waits for readers to leave the WAL, in milliseconds.
    static var checkpointWaitMilliseconds: Int { 200 }

    private let path: String?
    private let logger: Logger
    private let busyTimeoutMilliseconds: Int
    private let lock = NSLock()
    /// The largest WAL seen after a write that keeps it small, since ``takePeak()``.
    private var peak = 0
    /// After a checkpoint that could not finish: the size the WAL must pass before the next try.
    private var retryAbove = 0
    /// The free space on the store's volume (tests replace it).
    private var freeSpace: @Sendable () -> Int?

    init(path: String?, logger: Logger, busyTimeout: TimeInterval) {
        self.path = path
        self.logger = logger
        busyTimeoutMilliseconds = Int((busyTimeout * 1000).rounded())
        let folder = path.map { ($0 as NSString).deletingLastPathComponent }.map { $0.isEmpty ? "." : $0 }
        freeSpace = { folder.flatMap(Self.freeBytes(onVolumeOf:)) }
    }

    /// Below this much free space the store writes what it must (messages, ops) and nothing it
    /// can build later: the search index waits (``SearchIndexer``).
    package static var shortOfSpaceBytes: Int { 64 << 20 }

    /// Whether the store's volume has less than ``shortOfSpaceBytes`` free (false in memory, or
    /// when the free space cannot be read).
    var isShortOfSpace: Bool {
        guard path != nil, let free = lock.withLock({ freeSpace })() else { return false }
        return free < Self.shortOfSpaceBytes
    }

    /// Replaces how the free space is read (a test's low disk).
    package func setFreeSpace(_ provider: @escaping @Sendable () -> Int?) {
        lock.withLock { freeSpace = provider }
    }

    /// The bytes an unprivileged process may still write on the volume of `path` (`statvfs`).
    static func freeBytes(onVolumeOf path: String) -> Int? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        let (bytes, overflow) = UInt64(info.f_bavail).multipliedReportingOverflow(by: UInt64(info.f_frsize))
        return overflow ? Int.max : Int(clamping: bytes)
    }

    /// The WAL file's size now, in bytes (0 for a store in memory or without a WAL file).
    package var walBytes: Int {
        guard let path else { return 0 }
        var info = stat()
        return stat(path + "-wal", &info) == 0 ? Int(info.st_size) : 0
    }

    /// The largest the WAL was after a write that keeps it small since the last call; starts over.
    func takePeak() -> Int {
        lock.withLock {
            defer { peak = 0 }
            return peak
        }
    }

    /// Runs a write transaction, then, when `keepSmall`, the WAL's checkpoint if it is due, in one
    /// access to the writer.
    func write<T: Sendable>(
        _ writer: any DatabaseWriter, keepSmall: Bool, _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        guard keepSmall, path != nil else { return try await writer.write(body) }
        return try await writer.writeWithoutTransaction { db in
            nonisolated(unsafe) var result: T?
            try db.inTransaction {
                result = try body(db)
                return .commit
            }
            self.checkpointIfLarge(db)
            return result!
        }
    }

    /// Checkpoints a WAL past its limit (the end of a drain).
    func truncateIfLarge(_ writer: any DatabaseWriter) async {
        guard path != nil, walBytes > Self.minimumLimitBytes else { return }
        try? await writer.writeWithoutTransaction { db in self.checkpointIfLarge(db) }
    }

    /// On the writer, outside a transaction: records the WAL's size, and checkpoints and
    /// truncates it when it is past its limit.
    private func checkpointIfLarge(_ db: Database) {
        let size = walBytes
        let (retry, free) = lock.withLock {
            peak = max(peak, size)
            return (retryAbove, freeSpace)
        }
        // Below the smallest limit nothing is due: the free space is not even read.
        guard size > max(Self.minimumLimitBytes, retry), size > Self.limit(freeBytes: free()) else { return }
        do {
            try db.execute(sql: "PRAGMA busy_timeout = \(Self.checkpointWaitMilliseconds)")
            defer { try? db.execute(sql: "PRAGMA busy_timeout = \(busyTimeoutMilliseconds)") }
            _ = try db.checkpoint(.truncate)
            lock.withLock { retryAbove = 0 }
        } catch {
            lock.withLock { retryAbove = size + Self.minimumLimitBytes }
            logger.debug("the WAL checkpoint did not finish; tried again once the WAL grows", metadata: ["error": "\(error)"])
        }
    }
}
