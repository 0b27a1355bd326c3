import Foundation
import GRDB
import Logging
import ReplicaModel

/// The local SQLite store: the app's source of truth for users, channels, memberships, messages
/// and reactions, plus the outbox, checkpoints and conflict log.
///
/// Open one store per file and share it; every method is safe to call from any task.
///
/// ```swift
/// let store = try ChatStore<DefaultChatCustom>.open(at: "chat.sqlite")
/// try await store.load(users: users)
/// for try await messages in store.observe(store.queries.messages(inChannel: "general")) { ... }
/// ```
///
/// ## Topics
///
/// ### Opening
///
/// - ``open(at:options:)``
/// - ``inMemory(options:)``
/// - ``path``
///
/// ### Migrating and backing up
///
/// - ``migrationPlan(forStoreAt:options:)``
/// - ``migrate(dryRun:backupTo:)``
/// - ``backup(to:)``
/// - ``defaultBackupPath()``
///
/// ### Reading
///
/// - ``queries``
/// - ``fetch(_:)``
/// - ``fetchNow(_:)``
/// - ``observe(_:)``
/// - ``oldestTimetoken(channel:)``
/// - ``status()``
/// - ``countedTables``
///
/// ### Loading
///
/// - ``load(users:batchSize:onBatch:)``
/// - ``load(channels:batchSize:onBatch:)``
/// - ``load(members:forceWrite:batchSize:onBatch:)``
/// - ``load(messages:processMessageActions:batchSize:onBatch:)``
/// - ``load(messageActions:batchSize:onBatch:)``
///
/// ### Patching and removing
///
/// - ``patch(user:)``
/// - ``patch(channel:)``
/// - ``patch(member:)``
/// - ``setPresence(channelId:userId:isPresent:state:)``
/// - ``removeUser(id:)``
/// - ``removeChannel(id:)``
/// - ``removeMember(channelId:userId:)``
/// - ``removeMessage(id:)``
/// - ``removeMessageAction(channelId:messageTimetoken:messageId:type:value:userId:)``
///
/// ### Sync state
///
/// - ``saveCheckpoint(_:)``
/// - ``tryAcquireDrainLease()``
/// - ``drainLeaseHolder()``
/// - ``drainLeasePath``
///
/// ### Errors
///
/// - ``StoreError/isStorageFailure(_:)``
///
/// ### Model types
///
/// - ``User``
/// - ``Channel``
/// - ``Member``
/// - ``Message``
public final class ChatStore<Custom: ChatCustomData>: Sendable {
    /// A user with this store's custom type.
    public typealias User = ChatUser<Custom.User>
    /// A channel with this store's custom type.
    public typealias Channel = ChatChannel<Custom.Channel>
    /// A membership with this store's custom types.
    public typealias Member = ChatMember<Custom>
    /// A message with this store's custom type.
    public typealias Message = ChatMessage<Custom.Message>

    /// The GRDB connection (a `DatabasePool` on disk, a `DatabaseQueue` in memory). Not public:
    /// apps read through ``queries`` and ``observe(_:)`` and write through the outbox or the
    /// documented load APIs, so no write can go around the outbox's rules.
    package let writer: any DatabaseWriter
    /// The file path, or nil for an in-memory store.
    public let path: String?
    /// The queries a chat UI needs; pass them to ``fetch(_:)`` or ``observe(_:)``.
    public let queries = ChatQueries<Custom>()
    /// Where file bytes live: the files being sent and the download cache (`<path>.files/`).
    public let attachments: AttachmentArea
    /// The WAL kept small for the writes that ask (``transaction(keepingWALSmall:_:)``).
    let walBudget: WALBudget

    let logger: Logger
    let runner: MigrationRunner
    /// Whether the store was opened read-only (``StoreOptions/readOnly``): nothing may write to it.
    package let isReadOnly: Bool

    /// The clock local times are stamped with when the caller gives none (a draft's
    /// `updatedAt`): ``StoreOptions/clock``.
    public let clock: any ReplicaClock
    /// How much history the store keeps: ``StoreOptions/retention``, enforced after each sync
    /// (``enforceRetention(_:userId:protecting:)``).
    public let retention: RetentionPolicy?
    /// Builds the search index after commits (nil for a read-only store).
    let searchIndexer: SearchIndexer?

    private init(writer: any DatabaseWriter, path: String?, options: StoreOptions) throws {
        self.writer = writer
        self.path = path
        self.attachments = AttachmentArea.forStore(at: path)
        self.walBudget = WALBudget(path: path, logger: options.logger, busyTimeout: options.busyTimeout)
        self.clock = options.clock
        self.retention = options.retention
        isReadOnly = options.readOnly
        self.logger = options.logger
        self.runner = MigrationRunner(migrations: try options.migrations ?? Migration.bundled())
        searchIndexer = options.readOnly ? nil : SearchIndexer(writer: writer, walBudget: walBudget, delay: options.searchIndexDelay, logger: options.logger)
    }

    /// A store in memory takes its attachment area along (a temporary folder nothing else names).
    deinit {
        if path == nil { attachments.removeAll() }
    }

    /// Opens (creating if needed) the store at `path`, a WAL-mode `DatabasePool`.
    ///
    /// With ``StoreOptions/MigrationMode/automatic`` pending migrations are applied (after a backup
    /// when ``StoreOptions/backupBeforeMigrating`` is set). A changed, unknown or skipped migration
    /// throws a ``StoreError`` before anything is written.
    public static func open(at path: String, options: StoreOptions = StoreOptions()) throws -> ChatStore {
        try StoreError.refuseIrregularFile(at: path)
        let uncreated = try StoreError.isUncreatedStore(at: path)
        if uncreated {
            if options.readOnly { throw StoreError.emptyStoreFile(path: path) }
            options.logger.notice("the store file is empty (never created): creating the store in it", metadata: ["path": "\(path)"])
        }
        // Refuse a changed, unknown or skipped migration through a read-only connection first:
        // opening a DatabasePool writes to the file (GRDB makes the WAL non-empty), and a refused
        // store must be left exactly as it was.
        let plan = try migrationPlan(forStoreAt: path, options: options)
        if options.readOnly {
            guard FileManager.default.fileExists(atPath: path) else { throw StoreError.storeNotFound(path: path) }
            if plan.applied.isEmpty { throw StoreError.noSchema(at: path) }
        }
        if options.migration == .requireCurrent || (options.readOnly && options.migration != .manual), !plan.pending.isEmpty {
            throw StoreError.migrationsPending(plan.pending)
        }
        if options.readOnly {
            let queue: DatabaseQueue
            do {
                queue = try readOnlyQueue(path, options: options)
            } catch let error as DatabaseError {
                throw StoreError.database(message: "cannot open \(path) read-only: \(error.message ?? "\(error)")")
            }
            return try ChatStore(writer: queue, path: path, options: options)
        }
        let folder = (path as NSString).deletingLastPathComponent
        var isFolder: ObjCBool = false
        if !folder.isEmpty, !FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) || !isFolder.boolValue {
            throw StoreError.folderNotFound(folder: folder, path: path)
        }
        let pool: DatabasePool
        do {
            pool = try DatabasePool(path: path, configuration: options.configuration())
        } catch let error as DatabaseError {
            throw StoreError.database(message: "cannot open \(path): \(error.message ?? "\(error)")")
        }
        let store = try ChatStore(writer: pool, path: path, options: options)
        try store.prepare(options: options)
        return store
    }

    /// Closes every connection to the file, giving up every SQLite lock this process holds on the
    /// store, its `-wal` and its `-shm` (an open WAL connection keeps a read lock on `-shm` even
    /// when idle). Reads and writes afterwards throw. `Replica.suspend()` calls it, so that an iOS
    /// app suspended with its store in an App Group container holds no lock (0xdead10cc). A store
    /// in memory stays open: it has no file to lock, and closing it would lose it.
    package func close() throws {
        guard path != nil else { return }
        searchIndexer?.close()
        do {
            // The readers go first, so that the writer is the last connection to close: only the
            // last one checkpoints and removes the -wal, and a pool's `close()` closes its writer
            // before its readers (GRDB issue 739), which would leave the -wal behind.
            (writer as? DatabasePool)?.releaseMemory()
            try writer.close()
        } catch let error as DatabaseError {
            throw StoreError.database(message: "cannot close \(path ?? "-"): \(error.message ?? "\(error)")")
        }
    }

    /// A store that lives in memory only (a `DatabaseQueue`), for tests and previews.
    public static func inMemory(options: StoreOptions = StoreOptions()) throws -> ChatStore {
        let queue = try DatabaseQueue(configuration: options.configuration())
        let store = try ChatStore(writer: queue, path: nil, options: options)
        try store.prepare(options: options)
        return store
    }

    /// What `migrate` would do to the store at `path`, read without changing anything (the file
    /// is opened read-only; a missing file is reported as needing every migration).
    public static func migrationPlan(forStoreAt path: String, options: StoreOptions = StoreOptions()) throws
        -> MigrationReport
    {
        try StoreError.refuseIrregularFile(at: path)
        let runner = MigrationRunner(migrations: try options.migrations ?? Migration.bundled())
        guard FileManager.default.fileExists(atPath: path), !(try StoreError.isUncreatedStore(at: path)) else {
            return MigrationReport(
                applied: [], pending: runner.migrations.map(\.name), performed: [], dryRun: true, backupPath: nil)
        }
        let queue = try readOnlyQueue(path, options: options)
        defer { try? queue.close() }
        let (applied, pending) = try queue.read { try runner.inspect($0) }
        return MigrationReport(
            applied: applied, pending: pending.map(\.name), performed: [], dryRun: true, backupPath: nil)
    }

    /// A read-only connection that leaves the store's folder exactly as it was: `immutable=1`
    /// makes SQLite create no -wal or -shm file (the WAL, if any, was checkpointed on close).
    static func readOnlyQueue(_ path: String, options: StoreOptions) throws -> DatabaseQueue {
        var configuration = options.configuration()
        configuration.readonly = true
        let walExists = FileManager.default.fileExists(atPath: path + "-wal")
        let encoded = path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path
        // A live WAL (another process has the store open) must be read, so only then open normally.
        return try DatabaseQueue(path: walExists ? path : "file:\(encoded)?immutable=1", configuration: configuration)
    }

    private func prepare(options: StoreOptions) throws {
        if let searchIndexer {
            writer.add(transactionObserver: searchIndexer.observer)
        }
        if !options.readOnly, options.writerCacheKiB > 0 {
            let kibibytes = options.writerCacheKiB
            try writer.writeWithoutTransaction { try $0.execute(sql: "PRAGMA cache_size = -\(kibibytes)") }
        }
        if options.durability == .full {
            // GRDB sets synchronous=NORMAL when it enables WAL, after prepareDatabase runs; set FULL afterwards.
            try writer.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = FULL") }
        }
        switch options.migration {
        case .automatic:
            // `migrate` inspects under the writer and returns at once when nothing is pending.
            try maintenance.migrate(dryRun: false, backupTo: options.backupBeforeMigrating ? maintenance.defaultBackupPath() : nil)
        case .manual:
            // Validation already ran (read-only, before the pool opened; a new in-memory store has nothing to check).
            break
        case .requireCurrent:
            let (_, pending) = try writer.read { try runner.inspect($0) }
            if !pending.isEmpty { throw StoreError.migrationsPending(pending.map(\.name)) }
        }
        // Whatever an earlier run (or a tool) left unindexed, and a store the migration emptied the index of.
        searchIndexer?.scheduleIfWaiting()
    }

    /// Runs a query once.
    ///
    /// A search (``ChatQueries/search(_:)``) first lets the index catch up with the last writes,
    /// so that it finds what was just written.
    public func fetch<Value: Sendable>(_ query: StoreQuery<Value>) async throws -> Value {
        if query.readsSearchIndex { try await indexPending() }
        return try await writer.read { try query.fetch($0) }
    }

    /// Runs a query once, synchronously (for command-line tools and tests).
    public func fetchNow<Value: Sendable>(_ query: StoreQuery<Value>) throws -> Value {
        if query.readsSearchIndex { try searchIndexer?.indexPendingNow() }
        return try writer.read { try query.fetch($0) }
    }

    /// The query's current value, then a new value after each committed change that alters it.
    public func observe<Value: Sendable & Equatable>(_ query: StoreQuery<Value>) -> StoreObservation<Value> {
        StoreObservation(query: query, writer: writer)
    }
}

/// How a store is opened.
public struct StoreOptions: Sendable {
    /// When migrations run.
    public enum MigrationMode: Sendable {
        /// Apply pending migrations while opening.
        case automatic
        /// Only validate; the caller runs `ChatStore.migrate(dryRun:backupTo:)`.
        case manual
        /// Refuse to open a store with pending migrations.
        case requireCurrent
    }

    /// How hard commits are pushed to disk.
    public enum Durability: Sendable {
        /// WAL with `synchronous=NORMAL`: survives an app crash; the last commits may be lost on power loss.
        case normal
        /// `synchronous=FULL`: every commit is on disk before it returns (about 3x slower per commit).
        case full
    }

    /// The clock the store stamps local times with when a caller gives none (a draft's
    /// `updatedAt`); default the system clock. A `Replica` sets its own clock here, so that a test's
    /// virtual clock reaches the store too.
    public var clock: any ReplicaClock = SystemClock()
    /// When migrations run; default ``MigrationMode/automatic``.
    public var migration: MigrationMode = .automatic
    /// Back the store up (`VACUUM INTO`) before applying migrations; default false.
    public var backupBeforeMigrating = false
    /// Commit durability; default ``Durability/normal``.
    public var durability: Durability = .normal
    /// The SQLite page cache of the writing connection, in KiB; default 16,384 (16 MB, taken only
    /// as pages are used). A bulk write (an import, a catch-up committing several pages) touches
    /// more pages than SQLite's default 2 MB holds, and SQLite then writes them to the WAL twice:
    /// once when the cache spills mid-transaction, once at commit. Measured in docs/performance.md
    /// (`send --count 100000`: 5.5 s with 2 MB, 4.8 s with 16 MB). 0 keeps SQLite's default.
    public var writerCacheKiB = 16_384
    /// Where the store logs (never message text or keys above debug level).
    public var logger = Logger(label: "pnreplicate.store")
    /// The migrations to use instead of the bundled ones (tests).
    public var migrations: [Migration]?
    /// Open read-only: nothing is migrated or recovered and every write fails; the file stays
    /// byte-identical (dry runs). The store must exist and have the store's schema; it must be
    /// current too, unless ``migration`` is ``MigrationMode/manual`` (to report what is pending).
    public var readOnly = false
    /// How long a write waits for another connection's or process's write lock before it fails
    /// with ``StoreError/busy(message:)`` (seconds); default 10.
    public var busyTimeout: TimeInterval = 10
    /// How much message history the store keeps (a rule per channel, a size budget: `docs/store.md`,
    /// "Storage budget"); enforced after each sync. Default nil: everything is kept.
    public var retention: RetentionPolicy?
    /// How long the search index waits after the store's last write before it indexes what
    /// waits (seconds, real time; default 0.25), so that a burst of writes (a catch-up, a bulk
    /// send, a drain, a busy live channel) is not slowed by indexing between its commits; it is
    /// never more than 5 seconds behind a write. A search read once does not wait: it indexes
    /// first (`docs/search.md`, "How the index is kept"). 0 indexes right after each commit.
    public var searchIndexDelay: TimeInterval = 0.25

    /// Default options.
    public init() {}

    func configuration() -> Configuration {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(busyTimeout)
        configuration.label = "pnreplicate"
        configuration.prepareDatabase { db in
            // Space goes back to the file system (`docs/store.md`, "Storage budget"): a new store
            // is incremental from its first page (the pragma takes before WAL mode writes one); an
            // older one keeps its mode until the budget's one VACUUM switches it.
            if !db.configuration.readonly { try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL") }
        }
        return configuration
    }
}

// MARK: Transactions

extension ChatStore {
    /// Runs `body` in one write transaction: everything it does through the ``StoreTransaction``
    /// commits together, or nothing does when it throws. Errors are passed on as thrown.
    ///
    /// - Parameter keepingWALSmall: checkpoint the WAL right after the commit once it has grown
    ///   past a quarter of the free space (at least 128 KiB; ``WALBudget``; `docs/store.md`, "Disk
    ///   space"): the outbox's commits while it drains ask for it, so that a drain needs little
    ///   free space.
    package func transaction<T: Sendable>(
        keepingWALSmall: Bool = false, _ body: @escaping @Sendable (StoreTransaction<Custom>) throws -> T
    ) async throws -> T {
        try await walBudget.write(writer, keepSmall: keepingWALSmall && !isReadOnly) { db in
            try body(StoreTransaction(db))
        }
    }

    /// ``transaction(_:)`` with every error mapped to a ``StoreError``.
    package func storeTransaction<T: Sendable>(
        _ body: @escaping @Sendable (StoreTransaction<Custom>) throws -> T
    ) async throws(StoreError) -> T {
        try await write { db in try body(StoreTransaction(db)) }
    }

    /// ``transaction(_:)``, blocking the calling thread (for synchronous callers; never from a
    /// database access).
    package func transactionNow<T>(_ body: (StoreTransaction<Custom>) throws -> T) throws -> T {
        try writer.write { db in try body(StoreTransaction(db)) }
    }

    /// ``reading(_:)``, blocking the calling thread.
    package func readingNow<T>(_ body: (StoreTransaction<Custom>) throws -> T) throws -> T {
        try writer.read { db in try body(StoreTransaction(db)) }
    }

    /// Runs `body` on a read-only snapshot of the store.
    package func reading<T: Sendable>(_ body: @escaping @Sendable (StoreTransaction<Custom>) throws -> T) async throws -> T {
        try await writer.read { db in try body(StoreTransaction(db)) }
    }
}

// MARK: Status

extension ChatStore {
    /// The tables ``status()`` counts.
    public static var countedTables: [String] {
        ["users", "channels", "members", "messages", "message_actions", "outbox", "sync_checkpoints",
         "conflict_log"]
    }

}

// MARK: A channel's stored timetokens

extension ChatStore {
    /// The stored messages of a channel between two timetokens (both inclusive), for reconciling
    /// their reactions: the window's bounds, or nil when the channel has no sent message.
    package func timetokenWindow(channel: String) async throws(StoreError) -> ClosedRange<Timetoken>? {
        try await read { db in
            guard let row = try Row.fetchOne(
                db, sql: "SELECT min(timetoken), max(timetoken) FROM messages WHERE channel_id = ? AND timetoken IS NOT NULL",
                arguments: [channel]),
                let low = StoreCoding.timetoken(row[0]), let high = StoreCoding.timetoken(row[1])
            else { return nil }
            return low...high
        }
    }

    /// Where "load older" continues in a channel: the oldest timetoken from which its stored
    /// history is complete (after the storage budget evicted older messages: `history_bounds`),
    /// else its oldest stored timetoken; nil when it has none.
    public func oldestTimetoken(channel: String) async throws(StoreError) -> Timetoken? {
        let bound = try await read { db in
            try Int64.fetchOne(db, sql: "SELECT complete_from FROM history_bounds WHERE channel_id = ?", arguments: [channel])
        }
        if let bound { return Timetoken(rawValue: UInt64(max(0, bound))) }
        return try await timetokenWindow(channel: channel)?.lowerBound
    }

    /// After a scroll-back page of `channel` (`loadOlder`): its history is complete from the
    /// page's oldest timetoken, or from the start when the page was the server's last
    /// (`reachedStart`). Does nothing for a channel that never lost history to the budget.
    package func lowerHistoryBound(channel: String, to oldest: Timetoken?, reachedStart: Bool) async throws(StoreError) {
        try await write { db in
            if reachedStart {
                try db.execute(sql: "DELETE FROM history_bounds WHERE channel_id = ?", arguments: [channel])
            } else if let oldest, let value = Int64(exactly: oldest.rawValue) {
                try db.execute(
                    sql: "UPDATE history_bounds SET complete_from = min(complete_from, ?) WHERE channel_id = ?", arguments: [value, channel])
            }
        }
    }
}

// MARK: Checkpoints written on their own

extension ChatStore {
    /// Writes a checkpoint on its own (object cursors; history checkpoints move with their pages).
    package func saveCheckpoint(_ checkpoint: SyncCheckpoint) async throws(StoreError) {
        try await write { db in try checkpoint.write(db) }
    }
}
