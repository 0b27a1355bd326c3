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
/// _ = try await replica.messages.send(text: "hello", to: "general")       // in the store at once, sent when it can be
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
    /// Whether ``start()`` was called and ``stop()`` was not.
    private(set) var isStarted = false
    /// The work running in the background (``start()`` to ``stop()``, and the outbox counter).
    var tasks = ReplicaTasks<Custom>()
    /// The status and the open store, with their subscribers.
    nonisolated let hub: ReplicaStatusHub<Custom>
    /// How many times each channel is marked hot (``ReplicaLive/markHot(_:)``); kept across ``resume()``.
    var hotMarks: [String: Int] = [:]
    /// The file cache of the open store (made on first use, dropped by ``suspend()``).
    var fileCache: FileCache<Custom>?
    /// Whether ``signOut(discardingUnsent:keepingPushRegistrations:)`` removed the store: every call throws ``ReplicaError/signedOut``.
    var signedOut = false
    /// The expiry warning: the status's expiring objects, each logged once (``ReplicaExpiryWatch``).
    nonisolated let expiryWatch: ReplicaExpiryWatch

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
            access: try configuration.accessControl(clock: configuration.clock), journal: RequestJournal(clock: configuration.clock),
            metrics: configuration.metrics, logger: wireLogger)
        inMemoryStore = configuration.store == .inMemory ? try ChatStore.inMemory(options: configuration.clockedStoreOptions) : nil
        let parts = try Self.makeParts(configuration, store: inMemoryStore, client: client, clock: clock)
        self.parts = parts
        var status = ReplicaStatus()
        status.count(try parts.store.fetchNow(OutboxTally.query(queries)))
        status.hasSynced = !(try parts.store.fetchNow(queries.checkpoints())).isEmpty
        status.expiring = try ReplicaExpiryWatch.expiring(in: parts.store, configuration)
        expiryWatch = ReplicaExpiryWatch(configuration)
        hub = ReplicaStatusHub(status: status, store: parts.store, clock: configuration.clock)
    }

    /// Opens the configuration's store (or takes `inMemory`) and wires the outbox, the reconciler
    /// and live sync on it and on `client`: the one place they are wired, for a replica and for
    /// the test kit's `SimulatedDevice`.
    package static func makeParts(
        _ configuration: ReplicaConfiguration, store inMemory: ChatStore<Custom>?, client: PubNubClient, clock: any ReplicaClock
    ) throws -> Parts {
        // A declaration DataSync would refuse stops here, before any file is created or opened.
        try configuration.reconciler.appData.validate()
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
        // The app's own classes, checked and bound before anything pulls (docs/app-data.md).
        if !configuration.storeOptions.readOnly { try reconciler.bindAppData() }
        let live = LiveSync(
            reconciler: reconciler, options: configuration.live, clock: clock, random: configuration.random(0x11FE),
            logger: logger("live"))
        return Parts(store: store, outbox: outbox, reconciler: reconciler, live: live)
    }

    /// A replica released without ``stop()`` stops its work (without the presence leave and
    /// without waiting): nothing keeps running for an object nobody holds.
    deinit {
        tasks.cancelAll()
    }

    // MARK: Life cycle

    /// Starts sending the outbox and following PubNub live (catching up from history first).
    /// Returns at once; ``statuses()`` tells the rest. Calling it again does nothing. While
    /// suspended, the replica starts on ``resume()``.
    public func start() async {
        isStarted = true
        guard let parts, !tasks.areRunning else { return }
        await ReplicaTasks.count(parts, on: self)
        ReplicaTasks.launch(parts, on: self)
    }

    /// Stops sending and receiving (a presence `leave` is sent when configured) and waits until
    /// both have stopped. Writes still land in the store and wait for the next ``start()``.
    public func stop() async {
        isStarted = false
        await ReplicaTasks.halt(on: self)
        if parts != nil { hub.update { ($0.connection, $0.catchUp) = (.stopped, nil) } }
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
        await ReplicaTasks<Custom>.end(tasks.live)
        tasks.live = nil
        await ReplicaTasks.finishSends(parts.outbox, within: configuration.suspendBudget, clock: clock.base)
        await closeStore()
    }

    /// Stops every task and closes the store now, waiting for the accesses under way (the search
    /// indexer's batch among them): what ``suspend()`` ends with, and what a command line tool
    /// calls before it exits, so that the store's last connection closes (taking the `-wal` with
    /// it) in this process rather than whenever the last reference goes.
    package func closeStore() async {
        guard let parts else { return }
        await ReplicaTasks<Custom>.end(tasks.live)
        tasks.live = nil
        await ReplicaTasks.halt(on: self)
        await ReplicaTasks<Custom>.end(tasks.counter)
        tasks.counter = nil
        self.parts = nil
        // The cache of the closed store goes too (it holds no file open: each read and write
        // opens, writes or reads, and closes); resume() makes one for the reopened store.
        fileCache = nil
        hub.announce(nil)
        do {
            try parts.store.close()
        } catch {
            hub.update { $0.lastError = "\(error)" }
        }
        hub.update { ($0.connection, $0.catchUp) = (.suspended, nil) }
    }

    /// Ends the replica for good once ``signOut(discardingUnsent:keepingPushRegistrations:)`` removed its store: the outbox counter stops,
    /// observations end, and every call throws ``ReplicaError/signedOut``.
    func retire() async {
        signedOut = true
        parts = nil
        fileCache = nil
        await ReplicaTasks<Custom>.end(tasks.counter)
        tasks.counter = nil
        hub.removeStore()
        hub.update { ($0.connection, $0.catchUp) = (.stopped, nil) }
    }

    /// Reopens the store after ``suspend()`` and, if the replica was started, starts again
    /// (catching up on what happened meanwhile). Throws the `StoreError` of a store that cannot
    /// be reopened; the replica stays suspended then.
    public func resume() async throws {
        guard parts == nil else { return }
        if signedOut { throw ReplicaError.signedOut }
        let parts = try Self.makeParts(configuration, store: inMemoryStore, client: client, clock: clock)
        parts.reconciler.restoreHotMarks(hotMarks)
        self.parts = parts
        hub.announce(parts.store)
        let tally = try await parts.store.fetch(OutboxTally.query(queries))
        hub.update {
            $0.count(tally)
            $0.connection = .stopped
        }
        await ReplicaTasks.count(parts, on: self)
        if isStarted { ReplicaTasks.launch(parts, on: self) }
    }

    /// The network is reachable again (on iOS: an `NWPathMonitor` update to `.satisfied`): every
    /// op waiting out a backoff goes now, and live sync retries at once instead of after its
    /// backoff. Cheap to call when nothing waits.
    public func networkIsBack() async {
        guard let parts else { return }
        do {
            try await parts.outbox.retryWaitingNow()
        } catch {
            hub.update { $0.lastError = "\(error)" }
        }
        clock.wake()
    }

    // MARK: Status

    /// Where replication stands now.
    public var status: ReplicaStatus {
        var status = hub.status
        if status.connection == .live { status.lastSyncedAt = clock.now }
        return status
    }

    /// The status now, then each change, until the consumer stops iterating. Each call makes a new
    /// sequence; a slow reader sees the newest values (up to 16 are kept).
    public nonisolated func statuses() -> AsyncStream<ReplicaStatus> { hub.statuses() }

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
            for await store in self.hub.stores() {
                await ReplicaTasks<Custom>.end(inner)
                inner = nil
                guard let store else { continue }
                inner = Task {
                    do {
                        for try await value in store.observe(query) where last.replace(with: value) {
                            continuation.yield(value)
                        }
                    } catch {
                        // A store closed under it by suspend() is not the query's failure.
                        guard !Task.isCancelled, self.hub.store === store else { return }
                        continuation.finish(throwing: error)
                    }
                }
            }
            await ReplicaTasks<Custom>.end(inner)
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// ``observe(_:)`` that keeps `channel` hot while the sequence is iterated: marked when
    /// observation starts, unmarked when the consumer stops. An id no channel can have ends the
    /// sequence with the `ModelValidationError` ``ReplicaLive/markHot(_:)`` throws.
    ///
    /// ```swift
    /// for try await messages in replica.observe(replica.queries.messages(inChannel: "general"), keepingHot: "general") {
    ///     show(messages)
    /// }
    /// ```
    public nonisolated func observe<Value: Sendable & Equatable>(
        _ query: StoreQuery<Value>, keepingHot channel: String
    ) -> AsyncThrowingStream<Value, any Error> {
        let (stream, continuation) = AsyncThrowingStream<Value, any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        // Marked and unmarked by the same task, in that order, however early the consumer stops.
        let task = Task {
            do {
                try await self.live.markHot(channel)
            } catch {
                return continuation.finish(throwing: error)
            }
            do {
                for try await value in self.observe(query) { continuation.yield(value) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
            await self.live.unmarkHot(channel)
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    func openStore() throws -> ChatStore<Custom> {
        guard let parts else { throw closedError }
        return parts.store
    }

    /// The open store and the engines on it, without counting the outbox: for the calls that run
    /// or read one part (``ReplicaLive/listen()``, ``ReplicaOutbox/planned(pageSize:)``) and this package's tests.
    /// Throws ``ReplicaError/suspended`` while suspended.
    package func currentParts() throws -> Parts {
        guard let parts else { throw closedError }
        return parts
    }

    /// Why there are no parts: suspended, or signed out.
    var closedError: ReplicaError { signedOut ? .signedOut : .suspended }

    func openParts() async throws -> Parts {
        guard let parts else { throw closedError }
        await ReplicaTasks.count(parts, on: self)
        return parts
    }

    /// Runs a write on the outbox, then counts the outbox, so that ``status`` shows the write
    /// when the call returns.
    func write<T: Sendable>(_ body: @Sendable (Outbox<Custom>) async throws -> T) async throws -> T {
        try await recounting { try await body($0.outbox) }
    }

    /// Runs `body` with the open parts, then counts the outbox (``write(_:)``, and the calls that
    /// settle or send ops), so that ``status`` shows what it did when the call returns.
    func recounting<T: Sendable>(_ body: @Sendable (Parts) async throws -> T) async throws -> T {
        let parts = try await openParts()
        let value = try await body(parts)
        if let tally = try? await parts.store.fetch(OutboxTally.query(queries)) { hub.update { $0.count(tally) } }
        return value
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
