import Foundation
import ReplicaModel
import ReplicaStore
import Replicator

// What a replica does without being started, one call at a time: a sync pass, the dry run of the
// outbox, reading undecryptable messages again, reading PubNub's history directly; and the store
// file itself (opened only to read, migrated by hand, inspected). For a background task, a
// support tool or a command line, or an app that wants one pass now.

// MARK: One pass
extension Replica {
    /// Pushes, then pulls, once: sends the outbox until it is empty or `pushDeadline` passes,
    /// settles conflicts with the configured policies, then pulls users, channels and memberships,
    /// the new messages of every channel of interest, and the reactions and members of the hot
    /// ones (``ReplicaLive/markHot(_:)``). A part that fails is listed in `SyncReport.errors` and the others
    /// still run; a store that fails throws. What `pnreplicate sync` does; ``start()`` does the
    /// same continuously (live), so call this while the replica is not started.
    ///
    /// ```swift
    /// let deadline = Date.now.addingTimeInterval(25)              // a background task's budget
    /// let report = try await replica.sync(pushDeadline: deadline, deadline: deadline)
    /// if report.push.remaining > 0 { scheduleAnotherTask() }      // offline: ops still wait
    /// ```
    ///
    /// - Parameters:
    ///   - pushDeadline: when sending stops waiting for ops that cannot go yet; default one minute
    ///     from now on the configured clock (never later than `deadline`).
    ///   - deadline: no request starts and no backoff waits past it; parts left undone are reported.
    ///     Nil: no bound but each part's own.
    ///   - progress: called after each applied history page (a progress line).
    public func sync(
        pushDeadline: Date? = nil, deadline: Date? = nil, progress: (@Sendable (PullProgress) -> Void)? = nil
    ) async throws -> SyncReport {
        let report = try await recounting { parts in
            try await parts.reconciler.sync(pushDeadline: pushDeadline, deadline: deadline, progress: progress)
        }
        await ReplicaExpiryWatch.refresh(self)
        return report
    }

    /// Reads again, with the configured cipher key, the stored messages that could not be
    /// decrypted when they arrived (`ChatMessage.isUndecryptable`): after the app got the right
    /// key. Each one that decrypts now takes its place as a normal message.
    ///
    /// ```swift
    /// let report = try await replica.decryptPending()
    /// print("\(report.decrypted) decrypted, \(report.stillUndecryptable) still undecryptable")
    /// ```
    public func decryptPending() async throws -> DecryptPendingReport {
        try await openParts().reconciler.decryptPending()
    }

    /// Scroll-back: stores the page of `channel`'s history just older than what the store holds
    /// whole, and returns it (oldest first, at most `limit`, 1 to 100; empty at the start of the
    /// channel's history). After the storage budget evicted older messages (``StoreOptions/retention``),
    /// it starts below the point from which the channel is complete, so the evicted messages come
    /// back and no gap is skipped. Observed queries of the channel update as the page lands.
    ///
    /// ```swift
    /// let older = try await replica.loadOlder(channel: "general", limit: 50)
    /// if older.isEmpty { reachedTheBeginning = true }
    /// ```
    public func loadOlder(channel: String, limit: Int = 100) async throws -> [ChatMessage<Custom.Message>] {
        try await openParts().reconciler.loadOlder(channel: channel, limit: limit)
    }

    /// A page of `channel`'s history read from PubNub, not the store (nothing is stored), with
    /// the store's semantics (edits, deletions and reactions applied): for a screen that shows
    /// what the server holds, or a check of what the store lacks. As PubNub's fetch: `start`
    /// exclusive, `end` inclusive, oldest first, at most `limit` (1 to 100); `reverse` takes the
    /// oldest slice instead of the newest, and is ignored when both bounds are given.
    ///
    /// ```swift
    /// let page = try await replica.remoteHistory(channel: "general", limit: 25)
    /// ```
    public func remoteHistory(
        channel: String, start: Timetoken? = nil, end: Timetoken? = nil, reverse: Bool = false, limit: Int = 100
    ) async throws -> [ChatMessage<Custom.Message>] {
        try await openParts().reconciler.remoteHistory(channel: channel, start: start, end: end, reverse: reverse, limit: limit)
    }
}

// MARK: The store file

// A store file itself, through the façade: opening one only to read it, migrating it, and what
// it holds (row counts, schema, outbox). For settings screens, support tools and the command
// line; an app's replica migrates its store itself when it opens it (`StoreOptions.migration`).
extension Replica {
    /// Opens an existing store only to read it: nothing is created, migrated, locked, written or
    /// sent. ``fetch(_:)``, ``observe(_:)``, ``ReplicaOutbox/planned(pageSize:)`` and ``storeStatus()``
    /// work; a write throws the store's refusal; do not ``start()`` it. For a viewer of a store
    /// another process owns (the app's, from an extension or a support tool).
    ///
    /// ```swift
    /// let viewer = try Replica<DefaultChatCustom>(readingStoreAt: path, userId: "alice")
    /// let messages = try await viewer.fetch(viewer.queries.messages(inChannel: "general"))
    /// ```
    ///
    /// - Parameters:
    ///   - path: the store's file, written by a replica (or `pnreplicate`) before.
    ///   - userId: whose feeds the queries of the current user read (``ReplicaConversations/mentions``,
    ///     ``ReplicaConversations/invitations``, ``ReplicaModeration/restrictions``...).
    ///   - options: the store's options; it is opened read-only whatever `StoreOptions.readOnly`
    ///     says, and with the default migration mode, a store that still needs migrating is
    ///     refused (`StoreError`) rather than read under a schema it does not have.
    /// - Throws: the `StoreError` of a path where no store is (a missing or empty file, a
    ///   directory), of a file that is not a store, or of a store that needs migrating.
    public init(readingStoreAt path: String, userId: String = "reader", options: StoreOptions = StoreOptions()) throws {
        var configuration = ReplicaConfiguration(publishKey: "demo", subscribeKey: "demo", userId: userId, store: .file(path))
        configuration.storeOptions = options
        configuration.storeOptions.readOnly = true
        if options.migration == .automatic { configuration.storeOptions.migration = .requireCurrent }
        try self.init(configuration)
    }

    /// What ``migrateStore(at:options:backup:)`` would do to the store at `path`, read without
    /// changing anything: the migrations applied and pending (a missing file needs every one).
    ///
    /// ```swift
    /// let plan = try Replica<DefaultChatCustom>.migrationPlan(forStoreAt: path)
    /// if !plan.pending.isEmpty { askBeforeUpgrading(plan.pending) }
    /// ```
    public static func migrationPlan(forStoreAt path: String, options: StoreOptions = StoreOptions()) throws -> MigrationReport {
        try ChatStore<Custom>.migrationPlan(forStoreAt: path, options: options)
    }

    /// Applies the pending migrations of the store at `path` (creating the store when no file is
    /// there), after copying it to `<path>.backup-<UTC time>` when `backup` (`VACUUM INTO`), and
    /// closes it. For an app that migrates by hand (`StoreOptions.migration` `.manual`: asks the
    /// user first, or backs up first); a replica opened with the default options migrates its
    /// store itself.
    ///
    /// ```swift
    /// let report = try Replica<DefaultChatCustom>.migrateStore(at: path, backup: true)
    /// print(report.performed, report.backupPath ?? "no backup")
    /// ```
    public static func migrateStore(at path: String, options: StoreOptions = StoreOptions(), backup: Bool = false) throws
        -> MigrationReport
    {
        var options = options
        options.migration = .manual
        let store = try ChatStore<Custom>.open(at: path, options: options)
        defer { try? store.close() }
        return try store.maintenance.migrate(dryRun: false, backupTo: backup ? store.maintenance.defaultBackupPath() : nil)
    }

    /// What the store at `path` holds, read only (nothing is created, migrated or written): row
    /// counts per table (`StoreStatus.countedTables`), the schema version, the migrations
    /// applied and pending, and the outbox's counts. A store that needs migrating is read too.
    ///
    /// ```swift
    /// let status = try await Replica<DefaultChatCustom>.storeStatus(at: path)
    /// print(status.schemaVersion ?? "empty", status.pendingOutbox)
    /// ```
    ///
    /// - Throws: the `StoreError` of a path where no store is or of a file that is not a store.
    public static func storeStatus(at path: String, options: StoreOptions = StoreOptions()) async throws -> StoreStatus {
        var options = options
        options.readOnly = true
        options.migration = .manual
        let store = try ChatStore<Custom>.open(at: path, options: options)
        defer { try? store.close() }
        return try await store.maintenance.status()
    }

    /// What this replica's store holds: as ``storeStatus(at:options:)``, for the open store.
    public func storeStatus() async throws -> StoreStatus {
        try await openStore().maintenance.status()
    }

    /// Stores users, channels, members and messages as they are, bypassing the outbox (nothing
    /// is sent): seeding a store with sample data. Returns how many rows were inserted.
    package func load(
        users: [ChatUser<Custom.User>], channels: [ChatChannel<Custom.Channel>], members: [ChatMember<Custom>],
        messages: [ChatMessage<Custom.Message>]
    ) async throws -> Int {
        let store = try openStore()
        var inserted = try await store.load(users: users).inserted
        inserted += try await store.load(channels: channels).inserted
        inserted += try await store.load(members: members).inserted
        inserted += try await store.load(messages: messages).inserted
        return inserted
    }
}

extension StoreStatus {
    /// The tables whose rows `rowCounts` counts, in the order a status screen lists them.
    public static var countedTables: [String] { ChatStore<DefaultChatCustom>.countedTables }
}

extension ChatMessage {
    /// Whether this is a message that could not be decrypted when it arrived (a wrong or missing
    /// cipher key): its text is empty and its content the encrypted payload, until
    /// ``Replica/decryptPending()`` reads it again with the right key.
    public var isUndecryptable: Bool { contentType == Reconciler<DefaultChatCustom>.undecryptableContentType }
}

/// The outbox's plan, op by op (``ReplicaOutbox/planned(pageSize:)``): each page of ops is read and
/// planned when the previous one is used up.
public struct PlannedSends<Custom: ChatCustomData>: AsyncSequence, Sendable {
    /// One op's plan.
    public typealias Element = OutboxPlanEntry
    let entries: Outbox<Custom>.PlanEntries

    /// Reads the plan.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: Outbox<Custom>.PlanEntries.AsyncIterator

        /// The next op's plan, or nil after the last.
        public mutating func next() async throws -> OutboxPlanEntry? { try await base.next() }
    }

    /// Starts reading (nothing is read until the first ``AsyncIterator/next()``).
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: entries.makeAsyncIterator()) }
}

// DataSync's expiry as the app sees it (`docs/datasync.md`, "Expiry"): the objects this user
// follows that the server deletes soon, in the status and on demand. On App Context nothing
// expires, and both stay empty.
extension Replica {
    /// The objects this user follows (their user, their memberships and those memberships'
    /// channels) that the server deletes within ``DataSyncOptions/expiryWarning`` (3 days by
    /// default) from now, soonest first. Empty on App Context, where nothing expires.
    ///
    /// DataSync deletes every object its class's time to live after creation, and the built-in
    /// classes' 30 days cannot be changed (`docs/datasync.md` names the way out: a subclass with
    /// the app's TTL). The replica removes an object once its `expiresAt` has passed, as the
    /// server does; this is the warning before.
    ///
    /// ```swift
    /// for object in try await replica.expiryWarnings() where object.kind == .membership {
    ///     showRejoinHint(channel: object.id, on: object.expiresAt.date)
    /// }
    /// ```
    public func expiryWarnings() async throws -> [ExpiringObject] {
        guard let warning = configuration.expiryWarning else { return [] }
        return try await fetch(queries.expiringObjects(followedBy: configuration.userId, before: clock.now.addingTimeInterval(warning)))
    }
}
