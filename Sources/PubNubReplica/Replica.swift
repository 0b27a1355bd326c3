import Foundation
import Logging
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

/// The one object an app configures: it owns the local store, the PubNub client, the outbox, the
/// reconciler and live sync, and keeps the store in step with PubNub. What the Chat Components'
/// `ChatProvider` is to a PubNub app, `Replica` is to a pnreplicate app.
///
/// ```swift
/// let replica = try Replica<DefaultChatCustom>(configuration)   // opens (and migrates) the store
/// await replica.start()                                          // sends what waits, goes live
/// _ = try await replica.send(text: "hello", to: "general")       // in the store at once, sent when it can be
/// for try await messages in replica.observe(replica.queries.messages(inChannel: "general")) {
///     render(messages)
/// }
/// ```
///
/// Every write lands in the store first, in one transaction with its op, and is sent in order
/// when the network allows: offline writes are never lost, and never applied twice. The store is
/// the app's source of truth: views read it through ``fetch(_:)`` and ``observe(_:)``, and
/// ``statuses()`` (or a ``ReplicaStatusModel``) says where replication stands.
///
/// ## Life cycle
///
/// - ``start()`` runs the outbox and live sync until ``stop()``. Before it, writes are stored
///   and wait.
/// - ``suspend()`` is for an app going to the background: sends in flight get
///   ``ReplicaConfiguration/suspendBudget`` to finish, then everything stops and the store is
///   closed, so that the process holds no lock on the store's files (an iOS app suspended while
///   holding one in an App Group container is killed: 0xdead10cc). ``resume()`` reopens it and
///   carries on where it stood. See `docs/ios.md`.
/// - ``networkIsBack()`` is for the system's "network is reachable again": every backoff ends
///   at once, and waiting ops go now.
public actor Replica<Custom: ChatCustomData> {
    /// The configuration the replica was made with.
    public nonisolated let configuration: ReplicaConfiguration
    /// The queries a chat UI needs (messages of a channel, members, unread counts, the outbox,
    /// conflicts...), to pass to ``fetch(_:)`` and ``observe(_:)``.
    public nonisolated let queries = ChatQueries<Custom>()
    /// The user of this device.
    public nonisolated var userId: String { client.configuration.userId }

    /// The PubNub client (its transport and crypto are the configuration's).
    nonisolated let client: PubNubClient
    /// The configuration's clock, whose sleeps ``networkIsBack()`` can end.
    nonisolated let clock: WakeableClock
    private let inMemoryStore: ChatStore<Custom>?
    /// The parts working on the open store; nil while suspended.
    private(set) var parts: Parts?
    private var running = false
    /// The live sync's run, the outbox's run, and the task that follows live sync's state.
    private var liveTask: Task<Void, Never>?
    private var outboxTask: Task<Void, Never>?
    private var stateWatcher: Task<Void, Never>?
    /// Settles each op that meets a conflict with the configured policy, while started.
    private var conflictTask: Task<Void, Never>?
    /// Counts the outbox after each of its events, from the store's opening to its closing:
    /// writes made before ``start()`` count too.
    private var counter: Task<Void, Never>?
    /// Follows the client's token (and asks the token provider, when there is one) while started.
    var accessTask: Task<Void, Never>?
    var current = ReplicaStatus()
    private var statusSubscribers: [UUID: AsyncStream<ReplicaStatus>.Continuation] = [:]
    private var storeSubscribers: [UUID: AsyncStream<ChatStore<Custom>?>.Continuation] = [:]
    /// How many times each channel is marked hot (``markHot(_:)``); kept across ``resume()``.
    var hotMarks: [String: Int] = [:]
    /// The file cache of the open store (made on first use, dropped by ``suspend()``).
    var fileCache: FileCache<Custom>?
    /// Whether ``start()`` was called and ``stop()`` was not.
    var isStarted: Bool { running }
    /// The expiring objects already logged (``refreshExpiry()``): each once per `expiresAt`.
    var expiryLogged = Set<ExpiringObject>()

    /// The store and the engines on it, made together and replaced together on ``resume()``.
    package struct Parts: Sendable {
        package let store: ChatStore<Custom>
        package let outbox: Outbox<Custom>
        package let reconciler: Reconciler<Custom>
        package let live: LiveSync<Custom>
    }

    /// Opens (creating and migrating) the store and makes the client, the outbox, the reconciler
    /// and live sync. Nothing is sent or received until ``start()``.
    ///
    /// Throws ``ReplicaError/emptyCipherKey``, `WireError.invalidConfiguration` for keys or a user
    /// id PubNub would refuse, or the `StoreError` of a store that cannot be opened or migrated.
    /// An outbox made here recovers what a killed process left in flight (probed before resent).
    public init(_ configuration: ReplicaConfiguration) throws {
        self.configuration = configuration
        let (wire, crypto) = try configuration.wire()
        clock = WakeableClock(configuration.clock)
        var wireLogger = Logger(label: configuration.logLabel + ".wire")
        wireLogger.logLevel = configuration.storeOptions.logger.logLevel
        client = PubNubClient(
            configuration: wire, transport: configuration.transport ?? URLSessionTransport(), crypto: crypto,
            access: try configuration.accessControl(clock: configuration.clock), logger: wireLogger)
        inMemoryStore = configuration.store == .inMemory ? try ChatStore.inMemory(options: configuration.clockedStoreOptions) : nil
        let parts = try Self.makeParts(configuration, store: inMemoryStore, client: client, clock: clock)
        self.parts = parts
        current.count(try parts.store.fetchNow(OutboxTally.query(queries)))
        current.hasSynced = !(try parts.store.fetchNow(queries.checkpoints())).isEmpty
        current.expiring = try Self.expiring(in: parts.store, configuration)
    }

    /// Starts counting the outbox of `parts`, once per opened store (an actor's init cannot start
    /// isolated work: the first call that needs the counts does).
    private func count(_ parts: Parts) async {
        guard counter == nil else { return }
        // Only the newest event is kept while a count runs: a burst (a batch of sends, a drain)
        // costs one or two counts, not one count and one buffered event per op.
        let events = await parts.outbox.events(bufferingPolicy: .bufferingNewest(1))
        // The task holds neither the store nor the outbox: a replica released without `stop()`
        // (a command line tool's, at exit) closes its store at once, which checkpoints the WAL
        // and removes it, instead of leaving it for the next open to read (84 MB after
        // `send --count 100000`, and 140 ms more before its next `--dry-run` printed a line).
        counter = Task { [weak self] in
            for await _ in events { await self?.recount() }
        }
    }

    /// Reads the outbox's counts into ``status`` (the counter's work).
    private func recount() async {
        guard let store = parts?.store, let tally = try? await store.fetch(OutboxTally.query(queries)) else { return }
        update { $0.count(tally) }
    }

    /// Opens the configuration's store (or takes `inMemory`) and wires the outbox, the reconciler
    /// and live sync on it and on `client`: the one place they are wired, for a replica and for
    /// the test kit's `SimulatedDevice`.
    package static func makeParts(
        _ configuration: ReplicaConfiguration, store inMemory: ChatStore<Custom>?, client: PubNubClient, clock: any ReplicaClock
    ) throws -> Parts {
        let store: ChatStore<Custom>
        switch configuration.store {
        case .file(let path): store = try ChatStore.open(at: path, options: configuration.clockedStoreOptions)
        case .inMemory: store = try inMemory ?? ChatStore.inMemory(options: configuration.clockedStoreOptions)
        }
        func logger(_ part: String) -> Logger {
            var logger = Logger(label: configuration.logLabel + "." + part)
            logger.logLevel = configuration.storeOptions.logger.logLevel
            return logger
        }
        let outbox = Outbox(
            store: store, client: client, objects: configuration.backend(client), options: configuration.outbox, clock: clock,
            random: configuration.random(0x5EED), logger: logger("outbox"))
        // A store keeps the object backend it was filled from (a reader only reads: it binds nothing).
        if !configuration.storeOptions.readOnly { try store.bindObjectBackend(outbox.objects.name) }
        let reconciler = Reconciler(
            store: store, client: client, outbox: outbox, options: configuration.reconciler, clock: clock,
            random: configuration.random(0xEC0), logger: logger("reconciler"))
        let live = LiveSync(
            reconciler: reconciler, options: configuration.live, clock: clock, random: configuration.random(0x11FE),
            logger: logger("live"))
        return Parts(store: store, outbox: outbox, reconciler: reconciler, live: live)
    }

    /// A replica released without ``stop()`` stops its work (without the presence leave and
    /// without waiting): nothing keeps running for an object nobody holds.
    deinit {
        for task in [liveTask, outboxTask, counter, stateWatcher, accessTask, conflictTask] { task?.cancel() }
    }

    // MARK: Life cycle

    /// Starts sending the outbox and following PubNub live (catching up from history first).
    /// Returns at once; ``statuses()`` tells the rest. Calling it again does nothing. While
    /// suspended, the replica starts on ``resume()``.
    public func start() async {
        running = true
        guard let parts, liveTask == nil else { return }
        await count(parts)
        launch(parts)
    }

    /// Stops sending and receiving (a presence `leave` is sent when configured) and waits until
    /// both have stopped. Writes still land in the store and wait for the next ``start()``.
    public func stop() async {
        running = false
        await halt()
        if parts != nil { update { ($0.connection, $0.catchUp) = (.stopped, nil) } }
    }

    /// Gets ready for the app to be suspended: stops live sync, lets sends in flight finish
    /// within ``ReplicaConfiguration/suspendBudget`` (a send still unanswered then is abandoned:
    /// it is probed on resume, never sent twice), stops the outbox and closes the store. Then this
    /// process holds no lock on the store, its `-wal`, `-shm` or `.lock` file.
    ///
    /// Reads and writes throw ``ReplicaError/suspended`` until ``resume()``; ``observe(_:)``
    /// sequences pause and go on after it.
    public func suspend() async {
        guard let parts else { return }
        await Self.end(liveTask)
        liveTask = nil
        await finishSends(parts.outbox, within: configuration.suspendBudget)
        await halt()
        await Self.end(counter)
        counter = nil
        self.parts = nil
        // The cache of the closed store goes too (it holds no file open: each read and write
        // opens, writes or reads, and closes); resume() makes one for the reopened store.
        fileCache = nil
        announceStore(nil)
        do {
            try parts.store.close()
        } catch {
            update { $0.lastError = "\(error)" }
        }
        update { ($0.connection, $0.catchUp) = (.suspended, nil) }
    }

    /// Reopens the store after ``suspend()`` and, if the replica was started, starts again
    /// (catching up on what happened meanwhile). Throws the `StoreError` of a store that cannot
    /// be reopened; the replica stays suspended then.
    public func resume() async throws {
        guard parts == nil else { return }
        let parts = try Self.makeParts(configuration, store: inMemoryStore, client: client, clock: clock)
        parts.reconciler.restoreHotMarks(hotMarks)
        self.parts = parts
        announceStore(parts.store)
        let tally = try await parts.store.fetch(OutboxTally.query(queries))
        update {
            $0.count(tally)
            $0.connection = .stopped
        }
        await count(parts)
        if running { launch(parts) }
    }

    /// The network is reachable again (on iOS: an `NWPathMonitor` update to `.satisfied`): every
    /// op waiting out a backoff goes now, and live sync retries at once instead of after its
    /// backoff. Cheap to call when nothing waits.
    public func networkIsBack() async {
        guard let parts else { return }
        do {
            try await parts.outbox.retryWaitingNow()
        } catch {
            update { $0.lastError = "\(error)" }
        }
        clock.wake()
    }

    private func launch(_ parts: Parts) {
        let outbox = parts.outbox, live = parts.live
        // Subscribed before the runs start, so that no state or event is missed.
        let activity = live.activity()
        stateWatcher = Task { [weak self] in
            for await item in activity {
                switch item {
                case .state(let state):
                    await self?.liveStateChanged(state)
                    // Back online: settle what could not be settled offline.
                    if case .live = state {
                        await self?.settleConflicts()
                        await self?.refreshExpiry()
                    }
                case .catchUpProgress(let progress): await self?.caughtUp(progress)
                case .gapFilled: await self?.refreshExpiry()
                case .event, .presenceRefreshed: continue
                }
            }
        }
        outboxTask = runTask("outbox") { try await outbox.run() }
        conflictTask = Task { [weak self] in
            // Subscribed first, so that a conflict met while the waiting ones settle is heard.
            let events = await outbox.events()
            await self?.settleConflicts()
            for await event in events {
                if case .conflict = event { await self?.settleConflicts() }
            }
        }
        liveTask = runTask("live sync") { try await live.run() }
        launchAccess()
    }

    /// A task running one part until it is cancelled; a failure that ends it early (a store that
    /// cannot be written) shows in the status's ``ReplicaStatus/lastError``.
    private func runTask(_ part: String, _ run: @escaping @Sendable () async throws -> Void) -> Task<Void, Never> {
        Task { [weak self] in
            do {
                try await run()
            } catch where !(error is CancellationError) {
                await self?.update { $0.lastError = "\(part): \(error)" }
            } catch {}
        }
    }

    /// Stops live sync, then the outbox, then the state watcher, waiting for each to end.
    private func halt() async {
        let stopping = [liveTask, outboxTask, stateWatcher, accessTask, conflictTask]
        conflictTask = nil
        liveTask = nil
        outboxTask = nil
        stateWatcher = nil
        accessTask = nil
        for task in stopping { await Self.end(task) }
    }

    private static func end(_ task: Task<Void, Never>?) async {
        task?.cancel()
        await task?.value
    }

    /// Waits until no op is in flight, or `budget` seconds of the clock have passed.
    private func finishSends(_ outbox: Outbox<Custom>, within budget: TimeInterval) async {
        guard let inflight = try? await outbox.store.reading({ try $0.outbox.ops(states: [.inflight]) }), !inflight.isEmpty
        else { return }
        let clock = clock.base, deadline = clock.now.addingTimeInterval(budget)
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for entry in inflight { _ = await outbox.completion(of: entry.id) }
                return true
            }
            group.addTask {
                try? await clock.sleep(until: deadline)
                return false
            }
            _ = await group.next()
            group.cancelAll()
        }
    }

    /// Settles every op in conflict with the configured policies (`ReconcilerOptions.conflicts`),
    /// as a sync pass does: a settled op goes back to the queue over the server's version, or is
    /// dropped for it; `.manual` leaves it, with an open entry, for ``resolveConflict(id:take:)``.
    /// A settlement that cannot reach the server (offline) is tried again when live sync is back.
    private func settleConflicts() async {
        guard let parts, let counts = try? await parts.store.fetch(queries.outboxCounts()), (counts[.conflict] ?? 0) > 0
        else { return }
        do {
            let report = try await parts.reconciler.resolveConflicts()
            if let error = report.errors.first { update { $0.lastError = "conflicts: \(error)" } }
        } catch is CancellationError {
        } catch {
            update { $0.lastError = "conflicts: \(error)" }
        }
    }

    private func caughtUp(_ progress: CatchUpProgress) {
        guard parts != nil else { return }
        update { if case .catchingUp = $0.connection { $0.catchUp = progress } }
    }

    private func liveStateChanged(_ state: LiveState) {
        guard parts != nil else { return }
        update {
            $0.catchUp = nil
            switch state {
            case .connecting: $0.connection = .connecting
            case .catchingUp(let channels): $0.connection = .catchingUp(channels: channels)
            case .live:
                $0.connection = .live
                $0.hasSynced = true
                $0.lastSyncedAt = clock.now
            case .offline(let reason): $0.connection = .offline(reason: reason)
            case .stopped: break  // stop() and suspend() say what the replica is then
            }
        }
    }

    // MARK: Status

    /// Where replication stands now.
    public var status: ReplicaStatus {
        var status = current
        if status.connection == .live { status.lastSyncedAt = clock.now }
        return status
    }

    /// The status now, then each change, until the consumer stops iterating. Each call makes a new
    /// sequence; a slow reader sees the newest values (up to 16 are kept).
    public nonisolated func statuses() -> AsyncStream<ReplicaStatus> {
        let (stream, continuation) = AsyncStream<ReplicaStatus>.makeStream(bufferingPolicy: .bufferingNewest(16))
        let id = UUID()
        Task { await self.subscribe(id, continuation) }
        continuation.onTermination = { _ in Task { await self.unsubscribe(id) } }
        return stream
    }

    private func subscribe(_ id: UUID, _ continuation: AsyncStream<ReplicaStatus>.Continuation) {
        statusSubscribers[id] = continuation
        continuation.yield(current)
    }

    private func unsubscribe(_ id: UUID) { statusSubscribers[id] = nil }

    func update(_ change: (inout ReplicaStatus) -> Void) {
        var next = current
        change(&next)
        guard next != current else { return }
        current = next
        for continuation in statusSubscribers.values { continuation.yield(next) }
    }

    // MARK: Reading

    /// Reads a query once.
    ///
    /// ```swift
    /// let members = try await replica.fetch(replica.queries.members(ofChannel: "general"))
    /// ```
    public func fetch<Value: Sendable>(_ query: StoreQuery<Value>) async throws -> Value {
        try await openStore().fetch(query)
    }

    /// The query's value now, then after each commit that changes it: from this device's writes,
    /// pulls and live events alike. Across ``suspend()`` and ``resume()`` the sequence pauses and
    /// goes on with the reopened store; it ends when the consumer stops iterating, and throws
    /// only an error of the query itself.
    public nonisolated func observe<Value: Sendable & Equatable>(_ query: StoreQuery<Value>) -> AsyncThrowingStream<Value, any Error> {
        let (stream, continuation) = AsyncThrowingStream<Value, any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let last = LastValue<Value>()
        let task = Task {
            var inner: Task<Void, Never>?
            // One observation per open store: a new store (resume) or none (suspend) ends the
            // current one before the next starts.
            for await store in self.stores() {
                await Self.end(inner)
                inner = nil
                guard let store else { continue }
                inner = Task {
                    do {
                        for try await value in store.observe(query) where last.replace(with: value) {
                            continuation.yield(value)
                        }
                    } catch {
                        // A store closed under it by suspend() is not the query's failure.
                        guard !Task.isCancelled, await self.parts?.store === store else { return }
                        continuation.finish(throwing: error)
                    }
                }
            }
            await Self.end(inner)
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// The open store now (nil while suspended), then each change.
    private nonisolated func stores() -> AsyncStream<ChatStore<Custom>?> {
        let (stream, continuation) = AsyncStream<ChatStore<Custom>?>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        Task { await self.subscribeStores(id, continuation) }
        continuation.onTermination = { _ in Task { await self.unsubscribeStores(id) } }
        return stream
    }

    private func subscribeStores(_ id: UUID, _ continuation: AsyncStream<ChatStore<Custom>?>.Continuation) {
        storeSubscribers[id] = continuation
        continuation.yield(parts?.store)
    }

    private func unsubscribeStores(_ id: UUID) { storeSubscribers[id] = nil }

    private func announceStore(_ store: ChatStore<Custom>?) {
        for continuation in storeSubscribers.values { continuation.yield(store) }
    }

    func openStore() throws -> ChatStore<Custom> {
        guard let parts else { throw ReplicaError.suspended }
        return parts.store
    }

    /// The open store and the engines on it, without counting the outbox: for the calls that run
    /// or read one part (``listen()``, ``plannedSends(pageSize:)``) and this package's tests.
    /// Throws ``ReplicaError/suspended`` while suspended.
    package func currentParts() throws -> Parts {
        guard let parts else { throw ReplicaError.suspended }
        return parts
    }

    func openParts() async throws -> Parts {
        guard let parts else { throw ReplicaError.suspended }
        await count(parts)
        return parts
    }
}

/// The last value an observation yielded, shared by its successive store observations.
private final class LastValue<Value: Equatable & Sendable>: @unchecked Sendable {
    // NSLock guards `value`.
    private let lock = NSLock()
    private var value: Value?

    /// Stores `new` and returns true when it differs from the last value.
    func replace(with new: Value) -> Bool {
        lock.withLock {
            guard value != new else { return false }
            value = new
            return true
        }
    }
}
