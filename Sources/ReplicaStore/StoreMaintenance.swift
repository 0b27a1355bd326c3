import Foundation
import GRDB
import ReplicaModel

/// The store as a file on disk: its migrations and backups, its WAL's size, what it holds (a
/// status report) and the lock file that lets one process at a time send its outbox
/// (`store.maintenance`).
///
/// An app rarely needs it: ``ChatStore/open(at:options:)`` migrates by default, and the replica
/// keeps the WAL small while it drains. A CLI, a settings screen or a support report uses it:
///
/// ```swift
/// let report = try store.maintenance.migrate(dryRun: true)   // what would run
/// let status = try await store.maintenance.status()          // rows per table, file sizes
/// ```
public struct StoreMaintenance<Custom: ChatCustomData>: Sendable {
    /// The store this maintains.
    public let store: ChatStore<Custom>
}

extension ChatStore {
    /// Migrations, backups, the WAL, the status report and the drain lease (``StoreMaintenance``).
    public var maintenance: StoreMaintenance<Custom> { StoreMaintenance(store: self) }
}

extension StoreMaintenance {
    /// Applies pending migrations, or with `dryRun` only reports them and changes nothing.
    ///
    /// - Parameter backupTo: when pending migrations exist and this is set, the store is first
    ///   copied there with `VACUUM INTO`; a failed backup stops the migration.
    @discardableResult
    public func migrate(dryRun: Bool = false, backupTo backupPath: String? = nil) throws -> MigrationReport {
        let (applied, pending) = try store.writer.read { try store.runner.inspect($0) }
        var report = MigrationReport(
            applied: applied, pending: pending.map(\.name), performed: [], dryRun: dryRun, backupPath: nil)
        guard !dryRun, !pending.isEmpty else { return report }
        if let backupPath {
            try backup(to: backupPath)
            report.backupPath = backupPath
        }
        report.performed = try store.runner.apply(pending, to: store.writer, logger: store.logger)
        // A migration may leave messages to index (the one that made the index does: all of them).
        store.searchIndexer?.scheduleIfWaiting()
        return report
    }

    /// Copies the whole store to `path` with `VACUUM INTO` (a consistent snapshot).
    public func backup(to path: String) throws {
        if FileManager.default.fileExists(atPath: path) {
            throw StoreError.backupFailed(path: path, message: "a file already exists there")
        }
        do {
            try store.writer.writeWithoutTransaction { try $0.execute(sql: "VACUUM INTO ?", arguments: [path]) }
        } catch let error as DatabaseError {
            throw StoreError.backupFailed(path: path, message: error.message ?? "\(error)")
        }
        store.logger.debug("backed up store", metadata: ["path": "\(path)"])
    }

    /// `<store path>.backup-<UTC time>`, the backup path used when none is given.
    public func defaultBackupPath() -> String? {
        guard let path = store.path else { return nil }
        let stamp = ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "")
        return StoreFiles.backup(of: path, stamp: stamp)
    }

    /// Checkpoints and truncates a WAL past its limit (the end of a drain: ``WALBudget``).
    package func truncateWALIfLarge() async {
        guard !store.isReadOnly else { return }
        await store.walBudget.truncateIfLarge(store.writer)
    }

    /// The largest the WAL was after a write that kept it small since the last call (a drain's
    /// `peakWALBytes`); starts over.
    package func takeWALPeak() -> Int { store.walBudget.takePeak() }

    /// The WAL file's size now, in bytes (0 for a store in memory or without a WAL file).
    package var walBytes: Int { store.walBudget.walBytes }

    /// Replaces how the free space on the store's volume is read (a test's low disk: ``WALBudget``).
    package func setFreeSpace(_ provider: @escaping @Sendable () -> Int?) { store.walBudget.setFreeSpace(provider) }

    /// Row counts, schema version and pending outbox count.
    public func status() async throws -> StoreStatus {
        let runner = store.runner
        let outboxCounts = store.queries.outboxCounts()
        return try await store.writer.read { db in
            let (applied, pending) = try runner.inspect(db)
            var counts: [String: Int] = [:]
            for table in ChatStore<Custom>.countedTables where try db.tableExists(table) {
                // Table names come from the fixed list above, never from input.
                counts[table] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0
            }
            let states = try db.tableExists("outbox") ? try outboxCounts.fetch(db) : [:]
            var storage = StoreStatus.Storage()
            let pageSize = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
            storage.databaseBytes = (try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0) * pageSize
            storage.usedBytes = try Eviction.usedBytes(db)
            if try db.tableExists("history_bounds") {
                let row = try Row.fetchOne(db, sql: "SELECT coalesce(sum(evicted), 0), count(*) FROM history_bounds WHERE evicted > 0")
                storage.evictedMessages = row?[0] ?? 0
                storage.evictedChannels = row?[1] ?? 0
            }
            if try db.tableExists("replica_settings"),
                let json = try String.fetchOne(db, sql: "SELECT value FROM replica_settings WHERE key = '\(Eviction.policySetting)'")
            {
                storage.retention = try? JSONDecoder().decode(RetentionPolicy.self, from: Data(json.utf8))
            }
            var status = StoreStatus(
                rowCounts: counts, schemaVersion: applied.last?.name, appliedMigrations: applied.map(\.name),
                pendingMigrations: pending.map(\.name), pendingOutbox: (counts["outbox"] ?? 0) - (states[.dead] ?? 0) - (states[.conflict] ?? 0),
                deadLetters: states[.dead] ?? 0, conflicts: states[.conflict] ?? 0)
            status.storage = storage
            return status
        }
    }
}

extension StoreMaintenance {
    /// The lease's lock file, `<store>.lock`, or nil for an in-memory store.
    public var drainLeasePath: String? { store.path.map(StoreFiles.lock(of:)) }

    /// Takes the drain lease if no other holder has it, without waiting; nil when another process
    /// (or another ``DrainLease`` in this one) holds it.
    ///
    /// The holder is then the only process sending this store's outbox: an op still `inflight`
    /// was left by an earlier holder that died mid-request (the outbox recovers it).
    ///
    /// - Throws: ``StoreError/database(message:)`` when the lock file cannot be created or locked
    ///   for another reason than being held (a read-only folder, say).
    public func tryAcquireDrainLease() throws -> DrainLease? {
        try DrainLease.acquire(lockPath: drainLeasePath)
    }

    /// The process id written by the lease's current (or last) holder, if the file names one.
    public func drainLeaseHolder() -> Int32? {
        drainLeasePath.flatMap(DrainLease.holder(lockPath:))
    }

    /// Who holds the drain lease now, looked at without taking it (``DrainLeaseState``).
    package func drainLeaseState() throws -> DrainLeaseState {
        try DrainLease.state(lockPath: drainLeasePath)
    }

    /// SQLite's `PRAGMA quick_check`: the problems it finds (at most 20), none for a sound store.
    package func quickCheck() async throws -> [String] {
        try await store.writer.read { db in
            try String.fetchAll(db, sql: "PRAGMA quick_check(20)").filter { $0 != "ok" }
        }
    }
}
