import Foundation
import Logging
import PubNubWire
import ReplicaModel
import ReplicaStore

/// Options of an `Outbox`.
public struct OutboxOptions: Sendable {
    /// How long an op waits after a failed attempt.
    public var retry = RetryPolicy()
    /// 5xx answers after which an op becomes a dead letter; default 8. Ops that could not be sent
    /// (offline) are retried without limit; only server failures count.
    public var maxServerFailures = 8
    /// How far before its first attempt a publish probe searches history, to allow for the
    /// device clock being ahead of PubNub's; default 10 minutes.
    public var probeLookback: TimeInterval = 600
    /// How many lanes are sent in parallel; default 8. Ops within a lane always go one at a time.
    public var maxConcurrentLanes = 8
    /// Mobile push, as the Chat SDK's `pushNotifications` configures it: with `sendPushes`, each
    /// message in the Chat SDK's text format and each mention event carries `pn_fcm` (and
    /// `pn_apns` with an APNs topic), titled with the sender's name and showing the text
    /// (`ReplicaModel.ChatPushPayload`). Default nil: no push keys. Not added when messages are
    /// encrypted (the keys would be encrypted with them, and no push service could read them).
    public var push: ChatPushConfiguration?

    /// Default options.
    public init() {}
}

/// The outbox: every local write the app makes offline or online, stored with the write itself
/// and replayed to PubNub in order, with backoff, never lost and never applied twice.
///
/// Each enqueue method is one SQLite transaction holding the optimistic local change and its op,
/// and needs no network. ``drain(until:)`` (or ``run()``) replays the ops. See `docs/outbox.md`.
///
/// ```swift
/// let outbox = Outbox(store: store, client: client)
/// let receipt = try await outbox.messages.send(text: "hi", to: "general")
/// Task { try await outbox.run() }
/// let outcome = await outbox.completion(of: receipt.opId!)
/// ```
///
/// ## Topics
///
/// ### Creating an outbox
///
/// - ``init(store:client:options:clock:random:logger:)``
/// - ``store``
/// - ``client``
/// - ``options``
/// - ``userId``
/// - ``Message``
///
/// ### Enqueue
///
/// - ``send(text:to:contentType:content:custom:meta:)``
/// - ``send(draft:custom:meta:)``
/// - ``send(draft:in:custom:meta:)``
/// - ``discardMessage(id:)``
/// - ``edit(message:text:)``
/// - ``deleteMessage(id:hard:preserveFiles:)``
/// - ``restoreMessage(id:)``
/// - ``markRead(channel:upTo:)``
/// - ``pinMessage(id:in:)``
/// - ``unpinMessage(in:)``
/// - ``addReaction(_:type:toMessage:)``
/// - ``removeReaction(_:type:fromMessage:)``
/// - ``setMembership(channel:user:edit:)``
/// - ``removeMembership(channel:user:)``
/// - ``setUser(id:edit:)``
/// - ``removeUser(id:)``
/// - ``setChannel(id:edit:)``
/// - ``removeChannel(id:)``
///
/// ### Failures
///
/// - ``retry(opId:)``
/// - ``discard(opId:)``
///
/// ### Replay
///
/// - ``drain(until:)``
/// - ``run()``
/// - ``plan()``
///
/// ### Observation
///
/// - ``events()``
/// - ``completion(of:)``
public actor Outbox<Custom: ChatCustomData> {
    /// A message with the store's custom type.
    public typealias Message = ChatMessage<Custom.Message>

    /// The store.
    public nonisolated let store: ChatStore<Custom>
    /// The wire client (its user id is the author of sends and reactions).
    public nonisolated let client: PubNubClient
    /// Where users, channels and memberships are written (App Context through ``client`` unless
    /// another backend was given); the reconciler and live sync read them through it too.
    public nonisolated let objects: any ObjectBackend
    /// The options.
    public nonisolated let options: OutboxOptions
    let clock: any ReplicaClock
    var random: any RandomNumberGenerator & Sendable
    let logger: Logger

    private var subscribers: [UUID: AsyncStream<OutboxEvent>.Continuation] = [:]
    /// Who waits in ``completion(of:)``, by op id, each under a token of its own (a cancelled
    /// waiter takes its continuation back by it).
    private var waiters: [String: [UUID: CheckedContinuation<OutboxOutcome, Never>]] = [:]
    private var outcomes: [String: OutboxOutcome] = [:]
    /// Commits whose transaction may have run but whose transitions are not announced yet
    /// (``commit(_:)``), and who waits for them all to be announced (``completion(of:)``).
    private var commitsInFlight = 0
    private var commitsSettled: [CheckedContinuation<Void, Never>] = []
    private var workSignal: AsyncStream<Void>.Continuation?
    /// What the drainer keeps between its steps (``DrainState``): the actor's, so that the drainer
    /// and the attempts, which run on it, read and change it without a hop.
    var drainState = DrainState()

    /// An outbox over `store`, sending through `client`; object writes go to `objects` (nil: App
    /// Context through `client`, ``AppContextBackend``).
    public init(
        store: ChatStore<Custom>, client: PubNubClient, objects: (any ObjectBackend)? = nil, options: OutboxOptions = OutboxOptions(),
        clock: any ReplicaClock = SystemClock(),
        random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(),
        logger: Logger = Logger(label: "pnreplicate.outbox")
    ) {
        self.store = store
        self.client = client
        self.objects = objects ?? AppContextBackend(client: client)
        self.options = options
        self.clock = clock
        self.random = random
        self.logger = logger
        recoverAbandonedOps()
    }

    /// A process that died mid-request left ops in flight: they may have arrived, so they become
    /// ambiguous (probed before any resend), as soon as an outbox is made on the store. Only when
    /// no live process is draining it (holds the lease), and never on a read-only store. A failure
    /// is logged: the next drain, which holds the lease, recovers them then.
    private nonisolated func recoverAbandonedOps() {
        guard !store.isReadOnly else { return }
        do {
            guard let lease = try store.maintenance.tryAcquireDrainLease() else { return }
            defer { lease.release() }
            guard try store.readingNow({ try !$0.outbox.ops(states: [.inflight]).isEmpty }) else { return }
            let now = clock.now
            let recovered = try store.transactionNow { try OpTransaction($0).recoverAbandoned(now: now) }
            logger.info("in-flight outbox ops from an earlier run are now ambiguous", metadata: ["count": "\(recovered)"])
        } catch {
            logger.warning("cannot recover the outbox's in-flight ops yet", metadata: ["error": "\(error)"])
        }
    }

    /// The writes of messages that exist: edits, deletion and restore, reactions, pins.
    public nonisolated var messages: MessageWrites<Custom> { MessageWrites(outbox: self) }
    /// The writes of memberships and read positions.
    public nonisolated var memberships: MembershipWrites<Custom> { MembershipWrites(outbox: self) }
    /// The writes of user and channel metadata.
    public nonisolated var metadata: MetadataWrites<Custom> { MetadataWrites(outbox: self) }
    /// The Chat SDK's conversations, invitations, forwarding and threads.
    public nonisolated var conversations: ConversationWrites<Custom> { ConversationWrites(outbox: self) }
    /// The Chat SDK's moderation writes: reports, mutes.
    public nonisolated var moderation: ModerationWrites<Custom> { ModerationWrites(outbox: self) }
    /// Mobile push registration.
    public nonisolated var push: PushWrites<Custom> { PushWrites(outbox: self) }
    /// The writes of records of the app's own DataSync classes (`docs/app-data.md`).
    public nonisolated var appRecords: AppRecordWrites<Custom> { AppRecordWrites(outbox: self) }

    /// The current user: the author of sends and reactions.
    public nonisolated var userId: String { client.configuration.userId }

    // MARK: Failures

    /// Puts a dead letter or conflicted op back in the queue. A conflicted edit is resent over the
    /// server's current version (the app chose to keep its edit); a publish that may have arrived
    /// is probed first.
    public func retry(opId: String) async throws {
        let now = clock.now
        try await commit { try $0.retry(opId, now: now) }
    }

    /// Tells the outbox that the network is back: ops waiting out a backoff become due now
    /// (their attempt counts stay). A running ``run()`` or ``drain(until:)`` sleeping on that
    /// backoff still sleeps unless its clock is woken too; `Replica.networkIsBack()` does both.
    /// Returns how many ops became due.
    @discardableResult
    public func retryWaitingNow() async throws -> Int {
        let now = clock.now
        return try await commit { try $0.retryWaitingNow(now: now) }
    }

    /// Withdraws an op that has not reached PubNub and reverts its local change (a send takes the
    /// reactions waiting on it along). Returns every op id removed.
    @discardableResult
    public func discard(opId: String) async throws -> [String] {
        try await commit { try $0.discard(opId) }
    }

    // MARK: Observation

    /// Every event from now on, until the consumer stops iterating.
    ///
    /// - Parameter bufferingPolicy: what is kept while the consumer is busy: every event (the
    ///   default), or `.bufferingNewest(1)` for a consumer that only needs to know that something
    ///   changed (a count of the outbox): a burst of events (a batch of 10,000 sends) then wakes it
    ///   once or twice instead of queueing 10,000 events it would handle one by one.
    public func events(
        bufferingPolicy: AsyncStream<OutboxEvent>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<OutboxEvent> {
        let (stream, continuation) = AsyncStream<OutboxEvent>.makeStream(bufferingPolicy: bufferingPolicy)
        let id = UUID()
        subscribers[id] = continuation
        // Weak: a subscriber that stops (the cancelled task of a released replica) must not keep
        // the outbox, and with it the store, open until the unsubscribing task has run.
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            Task { [weak self] in await self?.unsubscribe(id) }
        }
        return stream
    }

    /// Waits for an op's final outcome: sent, failed (dead letter), conflict or discarded.
    /// Returns at once for an op that is already dead or in conflict, or is not in the outbox.
    ///
    /// Cancelling the waiting task ends the wait at once with ``OutboxOutcome/unknown`` (the op
    /// itself goes on): a caller that gives up after a deadline is not held until the op ends.
    public func completion(of opId: String) async -> OutboxOutcome {
        while true {
            if let outcome = outcomes[opId] { return outcome }
            let entry: OutboxEntry?
            do {
                entry = try await store.fetch(store.queries.outboxEntry(id: opId))
            } catch {
                // A waiter that gave up (its task was cancelled) is no failure of the store.
                if !(error is CancellationError) { logger.error("cannot read the outbox", metadata: ["error": "\(error)"]) }
                return .unknown
            }
            if let outcome = outcomes[opId] { return outcome }
            if let entry { return await wait(for: entry) }
            // Gone from the table: a commit that finished it may not have announced its outcome
            // yet (the row goes in the transaction, the outcome after it). Only when no commit is
            // in flight is the op truly unknown.
            guard commitsInFlight > 0 else { return .unknown }
            await withCheckedContinuation { commitsSettled.append($0) }
        }
    }

    /// The outcome of an op that is still in the table: at once for a dead or conflicted one, else
    /// when it finishes.
    private func wait(for entry: OutboxEntry) async -> OutboxOutcome {
        let opId = entry.id
        switch entry.state {
        case .dead: return .failed(entry.lastFailure ?? OutboxFailure(errorClass: .other, message: "dead"))
        case .conflict: return .conflict(entry.lastFailure ?? OutboxFailure(errorClass: .conflict, message: "conflict"))
        case .pending, .inflight, .ambiguous:
            let token = UUID()
            return await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<OutboxOutcome, Never>) in
                    // Cancelled before this ran: the handler below found no waiter to resume.
                    guard !Task.isCancelled else { return continuation.resume(returning: .unknown) }
                    waiters[opId, default: [:]][token] = continuation
                    onCompletionWait?(opId)
                }
            } onCancel: {
                Task { await self.stopWaiting(for: opId, token: token) }
            }
        }
    }

    /// Ends one cancelled wait of ``completion(of:)`` with ``OutboxOutcome/unknown``.
    private func stopWaiting(for opId: String, token: UUID) {
        guard let continuation = waiters[opId]?.removeValue(forKey: token) else { return }
        if waiters[opId]?.isEmpty == true { waiters[opId] = nil }
        continuation.resume(returning: .unknown)
    }

    /// How many tasks wait in ``completion(of:)`` for `opId` (for tests).
    func completionWaiters(for opId: String) -> Int { waiters[opId]?.count ?? 0 }

    /// Called with the op id each time a task starts waiting in ``completion(of:)`` (for tests:
    /// to cancel a wait known to be parked, without polling).
    private var onCompletionWait: (@Sendable (String) -> Void)?

    /// Sets the hook called when a task starts waiting in ``completion(of:)`` (for tests).
    func setOnCompletionWait(_ hook: @escaping @Sendable (String) -> Void) { onCompletionWait = hook }

    // MARK: Internals

    /// A new op id: time-ordered (``ReplicaModel/RandomIdentifier/uuidV7(at:)``, by the wall
    /// clock: only the order matters, nothing reads the time back), so the op table's indexes
    /// on it grow at their end.
    static func newOpId() -> String { RandomIdentifier.uuidV7(at: Date()) }

    private func unsubscribe(_ id: UUID) { subscribers[id] = nil }

    /// Announces `event`: to every subscriber, to the metrics (``ReplicatorMetrics``), and as a
    /// debug log line naming its op (`op`), so that `grep OPID` over a verbose log tells each op's
    /// story from enqueue to settled (`docs/diagnostics.md`, "One op traced").
    func emit(_ event: OutboxEvent) {
        for continuation in subscribers.values { continuation.yield(event) }
        ReplicatorMetrics.record(event, to: client.metrics)
        if logger.logLevel <= .debug { logger.debug("op \(event.name)", metadata: event.logMetadata) }
    }

    func finish(_ opId: String, _ outcome: OutboxOutcome) {
        outcomes[opId] = outcome
        for waiter in (waiters.removeValue(forKey: opId) ?? [:]).values { waiter.resume(returning: outcome) }
    }

    /// Runs `body` in one store transaction with the op state machine (``OpTransaction``); once
    /// it has committed, announces every op transition it made, in order: one ``OutboxEvent``
    /// each, outcomes to whoever waits on them, and a wake-up for the running drain.
    ///
    /// Every change of op state goes through here (enqueues, attempts, the app's retry and
    /// discard, conflict settlement, publishes a pull proved), so no transition goes unannounced.
    @discardableResult
    func commit<T: Sendable>(_ body: @escaping @Sendable (OpTransaction<Custom>) throws -> T) async throws -> T {
        if let rehearsal = RehearsalLog.current { return try await rehearse(body, into: rehearsal) }
        commitsInFlight += 1
        defer {
            commitsInFlight -= 1
            if commitsInFlight == 0 {
                for waiter in commitsSettled { waiter.resume() }
                commitsSettled = []
            }
        }
        let userId = userId, push = client.crypto == nil ? options.push : nil, objects = objects
        let (value, changes) = try await store.transaction(keepingWALSmall: drainState.isDraining) { tx in
            let ops = OpTransaction(tx, actingUser: userId, push: push, objects: objects)
            let value = try body(ops)
            return (value, ops.changes)
        }
        for event in changes.events { emit(event) }
        for outcome in changes.outcomes { finish(outcome.opId, outcome.outcome) }
        if changes.wakesDrain { signalWork() }
        return value
    }

    /// Notes a failed store write: the current drain stops after its running attempts and throws
    /// ``OutboxError/storeFailed(_:)``.
    func storeFailed(_ error: any Error) {
        logger.error("the outbox cannot write to the store; sending stops", metadata: ["error": "\(error)"])
        if drainState.storeFailure == nil { drainState.storeFailure = error }
    }

    func signalWork() {
        drainState.workEpoch += 1
        workSignal?.yield()
    }

    func workSignals() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        workSignal = continuation
        return stream
    }
}
