import Foundation
import GRDB
import Logging

/// The store's WAL kept small while the outbox drains (`docs/store.md`, "Disk space").
///
/// While it is on (``ChatStore/keepWALSmall(_:)``), every write transaction that leaves the WAL
/// over ``checkpointBytes`` is followed, before the writer takes any other write, by a checkpoint
/// that copies the WAL into the database and truncates it (`PRAGMA wal_checkpoint(TRUNCATE)`,
/// waiting for readers up to the busy timeout): the WAL then stays under that size plus one
/// commit. Without it SQLite checkpoints only at 1,000 pages (4 MiB) and never shrinks the file,
/// so a phone with little free space could not drain a long queue. A checkpoint that cannot
/// finish (a reader held an old snapshot past the timeout) only leaves the WAL larger.
package final class WALBudget: @unchecked Sendable {
    /// The WAL's size past which a write made while the budget is on checkpoints and truncates it.
    package static var walCheckpointBytes: Int { 128 * 1024 }

    private let path: String?
    private let logger: Logger
    private let lock = NSLock()
    private var holders = 0

    init(path: String?, logger: Logger) {
        self.path = path
        self.logger = logger
    }

    /// The WAL file's size now, in bytes (0 for a store in memory or without a WAL file).
    package var walBytes: Int {
        guard let path else { return 0 }
        var info = stat()
        return stat(path + "-wal", &info) == 0 ? Int(info.st_size) : 0
    }

    /// Whether anyone keeps the WAL small now.
    private var isOn: Bool { lock.withLock { holders > 0 } }

    /// One more holder (`true`) or one fewer; when the last one leaves, a WAL over
    /// ``walCheckpointBytes`` is truncated.
    func keepSmall(_ on: Bool, writer: any DatabaseWriter) async {
        let stillOn = lock.withLock {
            holders = max(0, holders + (on ? 1 : -1))
            return holders > 0
        }
        // Only a WAL the budget would have checkpointed is truncated: most drains write little,
        // and a checkpoint costs an fsync of the database.
        guard !stillOn, path != nil, walBytes > Self.walCheckpointBytes else { return }
        do {
            _ = try await writer.writeWithoutTransaction { try $0.checkpoint(.truncate) }
        } catch {
            logger.debug("the WAL checkpoint did not finish; the next one tries again", metadata: ["error": "\(error)"])
        }
    }

    /// Runs a write transaction, then (while the budget is on) the WAL's checkpoint, in one access
    /// to the writer: no other write slips in between.
    func write<T: Sendable>(_ writer: any DatabaseWriter, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        guard isOn, path != nil else { return try await writer.write(body) }
        let limit = Self.walCheckpointBytes
        return try await writer.writeWithoutTransaction { db in
            nonisolated(unsafe) var result: T?
            try db.inTransaction {
                result = try body(db)
                return .commit
            }
            if self.walBytes > limit {
                do {
                    _ = try db.checkpoint(.truncate)
                } catch {
                    self.logger.debug("the WAL checkpoint did not finish; the next write tries again", metadata: ["error": "\(error)"])
                }
            }
            return result!
        }
    }
}
