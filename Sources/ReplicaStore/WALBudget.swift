import Foundation
import GRDB
import Logging

/// The store's WAL kept small while the outbox drains (`docs/store.md`, "Disk space").
///
/// A write made with ``ChatStore/transaction(keepingWALSmall:_:)`` `true` (the outbox's commits
/// while it drains) is followed, in the same access to the writer (no other commit slips in
/// between), by a checkpoint when the WAL has grown past ``walCheckpointBytes``: it copies the
/// WAL into the database and truncates it (`PRAGMA wal_checkpoint(TRUNCATE)`). The WAL then stays
/// under that size plus one commit. Without it SQLite checkpoints only at 1,000 pages (4 MiB) and
/// never shrinks the file, so a phone with little free space could not drain a long queue.
///
/// The checkpoint waits for readers to leave the WAL at most ``checkpointWaitMilliseconds``
/// (not the store's busy timeout: it holds the writer meanwhile). One that cannot finish leaves
/// the WAL larger, and the next is tried only once the WAL has grown another
/// ``walCheckpointBytes``. Other writes (pulls, which commit pages of 100 messages) keep
/// SQLite's default.
package final class WALBudget: @unchecked Sendable {
    /// The WAL's size past which a write that keeps it small checkpoints and truncates it.
    package static var walCheckpointBytes: Int { 128 * 1024 }
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

    init(path: String?, logger: Logger, busyTimeout: TimeInterval) {
        self.path = path
        self.logger = logger
        busyTimeoutMilliseconds = Int((busyTimeout * 1000).rounded())
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

    /// Checkpoints a WAL past ``walCheckpointBytes`` (the end of a drain).
    func truncateIfLarge(_ writer: any DatabaseWriter) async {
        guard path != nil, walBytes > Self.walCheckpointBytes else { return }
        try? await writer.writeWithoutTransaction { db in self.checkpointIfLarge(db) }
    }

    /// On the writer, outside a transaction: records the WAL's size, and checkpoints and
    /// truncates it when it is past the threshold.
    private func checkpointIfLarge(_ db: Database) {
        let size = walBytes
        let threshold = lock.withLock {
            peak = max(peak, size)
            return max(Self.walCheckpointBytes, retryAbove)
        }
        guard size > threshold else { return }
        do {
            try db.execute(sql: "PRAGMA busy_timeout = \(Self.checkpointWaitMilliseconds)")
            defer { try? db.execute(sql: "PRAGMA busy_timeout = \(busyTimeoutMilliseconds)") }
            _ = try db.checkpoint(.truncate)
            lock.withLock { retryAbove = 0 }
        } catch {
            lock.withLock { retryAbove = size + Self.walCheckpointBytes }
            logger.debug("the WAL checkpoint did not finish; tried again once the WAL grows", metadata: ["error": "\(error)"])
        }
    }
}
