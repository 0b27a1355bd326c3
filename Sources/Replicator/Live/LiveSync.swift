import Foundation
import Logging
import PubNubWire
import ReplicaModel
import ReplicaStore

/// Keeps a store live: subscribes to the channels of interest, applies every event PubNub pushes
/// through the reconciler's apply path, and fills every possible gap from history before it
/// calls a channel live. One per store.
///
/// ```swift
/// let live = LiveSync(reconciler: reconciler)
/// let task = Task { try await live.run() }          // until cancelled
/// for await state in live.states() { print(state) } // connecting, catching up, live, offline: ...
/// ```
///
/// PubNub delivers live events at most once: a connection's buffer holds 100 events for 20
/// minutes and drops the oldest silently. So the store never trusts the stream alone: it keeps,
/// per channel, a live checkpoint (``ReplicaStore/SyncCheckpoint/live(_:)``) up to which it holds
/// everything, moves it only in the transaction that applied the events before it, and fills
/// from history (``GapReason``) whenever the stream may have lost something. See `docs/live.md`.
///
/// ## Topics
///
/// ### Creating a live sync
///
/// - ``init(reconciler:options:clock:random:logger:)``
/// - ``LiveSyncOptions``
///
/// ### Running
///
/// - ``run()``
/// - ``state``
/// - ``states()``
/// - ``activity()``
/// - ``statistics``
/// - ``LiveState``
/// - ``LiveActivity``
/// - ``GapReason``
/// - ``GapFillReport``
public actor LiveSync<Custom: ChatCustomData> {
    /// The reconciler whose apply path and pulls this uses.
    public nonisolated let reconciler: Reconciler<Custom>
    /// The options.
    public nonisolated let options: LiveSyncOptions
    let clock: any ReplicaClock
    var random: any RandomNumberGenerator & Sendable
    let logger: Logger
    let hub = ActivityHub()
    /// Who is typing, fed by the signals this live sync receives; ``TypingIndicators/startTyping(in:)``
    /// and ``TypingIndicators/stopTyping(in:)`` send the current user's.
    public nonisolated let typing: TypingIndicators

    /// The current state.
    public private(set) var state: LiveState = .connecting
    /// The counters.
    public internal(set) var statistics = LiveSyncStatistics()
    /// The subscribe connections, each a share of the channels under the request-line limit
    /// with its own cursor and long poll (``LiveSyncOptions/subscribeBytes``, `docs/live.md`).
    var subscription: SubscribeLoops
    /// The channels followed now (every loop's).
    private(set) var subscribed: [String] = []
    /// Channels to fill from history before they are live, with why.
    var needsFill: [String: GapReason] = [:]
    /// Whether App Context objects must be pulled again (an object fetch failed).
    var needsObjects = false
    var consecutiveFailures = 0
    /// Long-poll answers in a row whose cursor moved back or leapt ahead (reset by a normal answer).
    var consecutiveResets = 0
    /// Whether a handshake ever succeeded in this process (the first one is `first-connect`).
    var connectedOnce = false
    /// After a failed fill, one long poll runs before the fill is tried again, so that a fill
    /// that keeps failing (a channel the keys may not read, say) never stops the stream.
    var pollBeforeNextFill = false
    /// Fills failed in a row (their backoff keeps growing even while polls succeed in between).
    var fillFailures = 0
    /// The channels of interest as last read, and when (see `followedChannels()`).
    var messageChannels: Set<String> = []
    var messageChannelsAt: Date?
    /// Channels the token did not allow reading, left out of subscribe until it changes (its generation).
    var deniedChannels: (names: Set<String>, generation: UInt64) = ([], 0)
    /// The channels whose presence is followed (subscribed as `<channel>-pnpres`).
    var presenceChannels: [String] = []
    /// The followed channels the channel groups cover (``LiveSyncOptions/channelGroups``): the
    /// user's memberships, as last read.
    var coveredChannels: Set<String> = []
    /// Presence channels whose occupants must be read again (here-now) before presence events
    /// alone can be trusted: after a (re)connect, a gap, or an `interval` that asked for it.
    var needsHereNow: Set<String> = []
    /// After a failed here-now, one long poll runs before it is tried again.
    var pollBeforeNextHereNow = false

    /// A live sync over `reconciler`'s store and client.
    public init(
        reconciler: Reconciler<Custom>, options: LiveSyncOptions = LiveSyncOptions(), clock: any ReplicaClock = SystemClock(),
        random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(),
        logger: Logger = Logger(label: "pnreplicate.live")
    ) {
        self.reconciler = reconciler
        self.options = options
        self.clock = clock
        self.random = random
        self.logger = logger
        self.subscription = SubscribeLoops(budget: options.subscribeBytes)
        let store = reconciler.store
        self.typing = TypingIndicators(
            client: reconciler.client, timeout: options.typingTimeout, clock: clock,
            channelType: { id in try? await store.fetch(store.queries.channel(id: id))?.type },
            logger: Logger(label: logger.label + ".typing"))
    }

    /// The states from now on, starting with the current one. Each call makes a new sequence;
    /// a slow reader sees the newest states (up to 16 are kept).
    public nonisolated func states() -> AsyncStream<LiveState> {
        let (stream, continuation) = AsyncStream<LiveState>.makeStream(bufferingPolicy: .bufferingNewest(16))
        hub.addStates(continuation)
        Task { await self.seed(continuation) }
        return stream
    }

    private func seed(_ continuation: AsyncStream<LiveState>.Continuation) { continuation.yield(state) }

    /// Everything from now on: states, events, gap fills. Each call makes a new sequence, which
    /// keeps every element until read: read it (or drop it) promptly.
    public nonisolated func activity() -> AsyncStream<LiveActivity> {
        let (stream, continuation) = AsyncStream<LiveActivity>.makeStream()
        hub.addActivity(continuation)
        return stream
    }

    /// Subscribes and applies events until the task is cancelled; then the state is
    /// ``LiveState/stopped`` and the sequences of ``states()`` and ``activity()`` finish.
    /// Network failures never end it (they are retried with backoff and reported as
    /// ``LiveState/offline(reason:)``); a failing store does (the error is thrown).
    ///
    /// With ``LiveSyncOptions/presence`` it also sends heartbeats at the configured interval
    /// while connected (sleeping on the injected clock), and `leave` when stopped.
    public func run() async throws {
        defer {
            dropPolls()
            set(.stopped)
            hub.finish()
        }
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                if let interval = options.presence?.effectiveHeartbeatInterval {
                    group.addTask { try await self.heartbeats(every: interval) }
                }
                group.addTask { try await self.loop() }
                defer { group.cancelAll() }
                try await group.next()
            }
        } catch {
            // Cancelled: whatever the cancellation interrupted (a store write reports it as a
            // store error) ends the run quietly.
            guard error is CancellationError || Task.isCancelled else { throw error }
        }
        // Ended before the leave (it would make the user present again) and before `stopped`.
        await endPolls()
        await leaveOnStop()
    }

    private func loop() async throws {
        while !Task.isCancelled {
            if try await stepWaitingOutBusyStore() == .idle {
                try await clock.sleep(until: clock.now.addingTimeInterval(options.idleInterval))
            }
        }
        throw CancellationError()
    }

    /// One heartbeat for the subscribed channels (one per subscribe loop: its URL is as long),
    /// when connected and following presence. A failure is counted and logged, never retried:
    /// the next heartbeat or poll renews presence.
    package func sendHeartbeat() async {
        guard let presence = options.presence else { return }
        for loop in subscription.loops where loop.cursor != nil && !(loop.named.isEmpty && loop.groups.isEmpty) {
            do {
                try await reconciler.client.presence.heartbeat(
                    channels: loop.named, channelGroups: loop.groups, timeout: presence.timeout, state: presenceState(loop.named))
                statistics.heartbeats += 1
            } catch {
                statistics.failedHeartbeats += 1
                logger.debug("heartbeat failed", metadata: ["error": "\(Self.reason(error))"])
            }
        }
    }

    /// The channel names `loop` subscribes: its channels and its presence channels.
    func subscribedNames(_ loop: SubscribeLoop) -> [String] {
        loop.named + loop.presence.map { $0 + "-pnpres" }
    }

    /// The channels whose events `loop`'s answers may carry: its channels (named, or covered by
    /// its groups) and its presence channels.
    func acceptedNames(_ loop: SubscribeLoop) -> Set<String> {
        Set(loop.channels + loop.presence.map { $0 + "-pnpres" })
    }

    /// A subscribe request for `loop`'s channels, groups and presence channels from `cursor`.
    func subscribeRequest(_ loop: SubscribeLoop, cursor: SubscribeCursor?) -> SubscribeRequest {
        var request = SubscribeRequest(channels: subscribedNames(loop), cursor: cursor)
        request.channelGroups = loop.groups
        request.timeout = options.pollTimeout
        request.heartbeat = options.presence?.timeout
        request.state = presenceState(loop.named).map { JSONValue.object($0) }
        request.filterExpression = options.filterExpression
        return request
    }

    /// Whether the stream is live with nothing left to fill or to read again.
    package var isCaughtUp: Bool { state == .live && isReadyToPoll }

    /// Whether the next ``step()`` is a long poll: the stream has a cursor, no channel waits for a
    /// gap fill and no here-now read is due. Drive ``step()`` until this is true to finish the
    /// catch-up before timing or interleaving polls.
    public var isReadyToPoll: Bool {
        needsFill.isEmpty && !needsObjects && !subscription.loops.isEmpty && subscription.loops.allSatisfy { $0.cursor != nil } && needsHereNow.isEmpty
    }

    /// How many subscribe connections follow the channels now (one per ``LiveSyncOptions/subscribeBytes``
    /// of channel names).
    package var subscribeLoops: Int { subscription.loops.count }

    /// What one ``step()`` did.
    public enum Step: Equatable, Sendable {
        /// Nothing to follow.
        case idle
        /// A handshake, a fill or an answer.
        case progressed
        /// A request failed; the backoff was slept.
        case failed
    }

    /// ``step()``, where a store busy past its timeout (another process holds the write lock) is
    /// a wait, not the end of the run: the events that could not be stored are filled from
    /// history once the store is free, after the backoff.
    package func stepWaitingOutBusyStore() async throws -> Step {
        do {
            return try await step()
        } catch where StoreError.isBusy(error) {
            logger.warning("the store is busy (another process holds its write lock); waiting", metadata: [
                "error": "\(Self.reason(error))",
            ])
            return try await failed(error)
        }
    }

    /// One unit of work of ``run()``, driven by hand: a handshake, a gap fill, a here-now read, or
    /// one long poll and the events it brings (stored before it returns).
    ///
    /// ``run()`` is this in a loop with the states, the backoff and cancellation around it; call
    /// `step()` yourself only to control when each request goes out: a test that interleaves
    /// devices deterministically, or a benchmark that times the live path alone. A long poll
    /// holds until an event arrives or ``LiveSyncOptions/pollTimeout`` passes. Never call it
    /// while ``run()`` is running on the same instance.
    ///
    /// ```swift
    /// let live = LiveSync(reconciler: reconciler)
    /// while await !live.isReadyToPoll { try await live.step() }  // handshake and catch-up
    /// try await live.step()                                       // one long poll
    /// ```
    /// - Returns: ``Step/idle`` when there is nothing to follow, ``Step/failed`` when a request
    ///   failed (after its backoff), otherwise ``Step/progressed``.
    /// - Throws: What ``run()`` would stop on: a store error, or cancellation.
    @discardableResult
    public func step() async throws -> Step {
        let (channels, messageChannels, presence, memberships) = try await followedChannels()
        let added = Set(channels).subtracting(subscribed)
        // The channel groups cover the memberships; a channel that comes under them or leaves
        // them changes stream, so it is filled like a new one.
        let covered = options.channelGroups.isEmpty ? Set<String>() : memberships.intersection(channels)
        let moved = covered.symmetricDifference(coveredChannels).intersection(subscribed)
        if !subscribed.isEmpty || subscription.loops.contains(where: { $0.cursor != nil }) {
            for channel in added.union(moved) where needsFill[channel] == nil { needsFill[channel] = .newChannel }
            needsHereNow.formUnion(Set(presence).subtracting(presenceChannels))
        }
        for channel in Set(subscribed).subtracting(channels) { needsFill[channel] = nil }
        needsHereNow.formIntersection(presence)
        subscribed = channels
        presenceChannels = presence
        coveredChannels = covered
        subscription.place(channels: channels, presence: presence, groups: options.channelGroups, covered: covered.sorted())
        guard !channels.isEmpty else { return .idle }

        let unconnected = subscription.loops.indices.filter { subscription.loops[$0].cursor == nil }
        if !unconnected.isEmpty { return try await handshake(unconnected) }
        // Every loop's cursor: the fill makes the channels complete up to the newest of them
        // (each loop's stream goes on from its own, older or not: the fill and the streams overlap).
        let newest = subscription.loops.compactMap(\.cursor?.timetoken).max() ?? 0
        if (!needsFill.isEmpty || needsObjects) && !pollBeforeNextFill {
            return try await fill(through: newest, messageChannels: Set(messageChannels))
        }
        if needsFill.isEmpty && !needsObjects { set(.live) }
        if !needsHereNow.isEmpty && !pollBeforeNextHereNow { return try await refreshPresence() }
        pollBeforeNextHereNow = false
        return try await pollLoops()
    }

    /// The handshakes (`tt=0`) of the loops at `indices`, sent together, then one `/time`: each
    /// loop's channels are filled before they are live.
    private func handshake(_ indices: [Int]) async throws -> Step {
        set(.connecting)
        do {
            let client = reconciler.client
            let requests = indices.map { subscribeRequest(subscription.loops[$0], cursor: nil) }
            let cursors = try await withThrowingTaskGroup(of: (Int, SubscribeCursor).self) { group in
                for (position, request) in requests.enumerated() {
                    group.addTask { (position, try await client.subscribe(request).cursor) }
                }
                var cursors = [SubscribeCursor?](repeating: nil, count: requests.count)
                for try await (position, cursor) in group { cursors[position] = cursor }
                return cursors.compactMap { $0 }
            }
            // One /time per reconnect: what the cursors and the checkpoints are measured against.
            await reconciler.verifyServerTime()
            // A handshake cursor ahead of the verified time (or a day ahead of this device's
            // clock, when none is verified) is a broken answer, not the present.
            for cursor in cursors where !reconciler.isPlausible(cursor: cursor.timetoken) {
                throw WireError.decoding(operation: "handshake", status: 200, message: "a cursor in the future: \(cursor)")
            }
            for (index, cursor) in zip(indices, cursors) { subscription.loops[index].cursor = cursor }
        } catch {
            return try await failed(error, loops: indices)
        }
        let reason: GapReason = connectedOnce ? .cursorReset : .firstConnect
        connectedOnce = true
        for index in indices {
            for channel in subscription.loops[index].channels where needsFill[channel] == nil { needsFill[channel] = reason }
            needsHereNow.formUnion(subscription.loops[index].presence)
        }
        // A subscribe answer: one fill may follow it. The failure count stays: only a long
        // poll that answered normally proves the stream works again.
        pollBeforeNextFill = false
        return .progressed
    }

    /// Fills the channels in ``needsFill`` from history (and the App Context objects), then marks
    /// them complete up to `through`.
    private func fill(through: Timetoken, messageChannels: Set<String>) async throws -> Step {
        let filling = needsFill
        // The Chat SDK's hidden channels live sync follows (moderation events, the mute list) are
        // filled like the others, and named to nobody.
        let shown = filling.filter { !ChatModeration.isHidden(channel: $0.key) }
        set(.catchingUp(channels: shown.keys.sorted()))
        var report = GapFillReport(channels: shown, through: through, recoveredMessages: 0, reactionChanges: 0, objects: true)
        do {
            let history = Set(filling.keys).intersection(messageChannels).sorted()
            let tally = ProgressTally(channels: filling.count, hub: hub)
            let filled = try await reconciler.live.fillGap(channels: history, through: through, progress: tally.add)
            report.recoveredMessages = filled.inserted
            report.reactionChanges = filled.reactionChanges
            let now = clock.now
            // The cursor is not trusted alone (TrustedTime): the live checkpoints move at most
            // to the newest trusted time, and stay where they are while nothing is trusted.
            let applied = reconciler.trustedCheckpoint(for: through)
            let lagging = Set(filling.keys).subtracting(filled.listed)
            try await reconciler.store.storeTransaction { tx in
                // Cold channels: their reactions and members were not listed over the gap.
                try ListingLag.mark(lagging, gapEnd: through, tx: tx, now: now)
                guard let applied else { return }
                for channel in filling.keys {
                    let scope = SyncCheckpoint.live(channel)
                    if let stored = try tx.checkpoint(scope)?.applied, stored >= applied { continue }
                    try tx.write(SyncCheckpoint(scope: scope, applied: applied, updatedAt: now))
                }
            }
        } catch {
            pollBeforeNextFill = true
            fillFailures += 1
            return try await failed(error)
        }
        // While subscribe keeps failing (or lying), at most one fill per subscribe answer: the
        // failures and their backoff decide the pace, never a fill after each of them. (A stream
        // that works fills a channel it just started to follow at once.)
        if consecutiveFailures > 0 || consecutiveResets > 0 { pollBeforeNextFill = true }
        for (channel, reason) in filling {
            if needsFill[channel] == reason { needsFill[channel] = nil }
            statistics.fills[reason, default: 0] += 1
        }
        // Whoever timed out or joined during the gap: presence events are not in history.
        needsHereNow.formUnion(Set(filling.keys).intersection(presenceChannels))
        needsObjects = false
        fillFailures = 0
        messageChannelsAt = nil
        statistics.recoveredMessages += report.recoveredMessages
        if report.recoveredMessages > 0 {
            logger.debug("gap filled from history", metadata: ["messages": "\(report.recoveredMessages)", "channels": "\(filling.count)"])
        }
        hub.send(.gapFilled(report))
        return .progressed
    }

    /// A failed request: the channels of the loops it concerns (`loops`; nil: every loop, for a
    /// fill or a here-now) are filled again before the next poll (events may have been lost
    /// meanwhile), the state says why, and the backoff is slept.
    func failed(_ error: any Error, loops concerned: [Int]? = nil) async throws -> Step {
        if error is CancellationError || Task.isCancelled { throw CancellationError() }
        if Self.stopsRun(error) { throw error }
        if let denial = Reconciler<Custom>.accessDenial(in: error), let step = try await accessDenied(denial) { return step }
        statistics.failures += 1
        consecutiveFailures += 1
        let indices = (concerned ?? Array(subscription.loops.indices)).filter { subscription.loops.indices.contains($0) }
        // Read before a 414 makes the loops again.
        let affected = concerned == nil ? Set(subscribed) : Set(indices.flatMap { subscription.loops[$0].channels })
        var minimum: TimeInterval = 0
        if let wire = error as? WireError {
            minimum = wire.retryability.minimumWait ?? 0
            // An answer that cannot be read, or a refused cursor: start again from a handshake.
            if case .decoding = wire { for index in indices { subscription.loops[index].cursor = nil } }
            if case .service(let service) = wire, service.status == 400 { for index in indices { subscription.loops[index].cursor = nil } }
            // Only a subscribe's own 414 says its loops are too long (a fill's is the fill's).
            if case .service(let service) = wire, service.status == 414, concerned != nil { shrinkLoops(indices) }
        }
        for channel in subscribed where needsFill[channel] == nil && affected.contains(channel) { needsFill[channel] = .reconnect }
        let reason = Self.reason(error)
        set(.offline(reason: reason))
        logger.debug("live sync request failed", metadata: ["error": "\(reason)", "attempt": "\(consecutiveFailures)"])
        try await clock.sleep(until: clock.now.addingTimeInterval(backoff(minimum: minimum)))
        return .failed
    }

    /// A 414: the server found a subscribe's request line too long all the same (a long token,
    /// presence state, a filter). The budget halves, every loop is made again from it (a new
    /// handshake each), and the channels are filled before they are live.
    private func shrinkLoops(_ indices: [Int]) {
        let (longest, budget) = subscription.shrink(indices)
        logger.warning("a subscribe was refused as too long (414); following the channels with more, shorter requests", metadata: [
            "bytes": "\(longest)", "budget": "\(budget)",
        ])
    }

    /// The wait after a failure: exponential in the failures in a row (subscribe's or fills',
    /// whichever is longer; only a normal long-poll answer resets the first), or in `attempt`
    /// when given, with jitter, at least `minimum` (a 429's `Retry-After`).
    func backoff(minimum: TimeInterval, attempt: Int? = nil) -> TimeInterval {
        let attempt = attempt ?? max(consecutiveFailures, fillFailures)
        return options.retry.wait(afterAttempt: attempt, atLeast: minimum, using: &random)
    }

    /// A one-line reason: the error's own description (wire errors never carry keys).
    static func reason(_ error: any Error) -> String {
        String(String(describing: error).prefix(300))
    }

    /// Whether an error ends ``run()``: the store failed.
    static func stopsRun(_ error: any Error) -> Bool { StoreError.isStorageFailure(error) }

    func set(_ new: LiveState) {
        guard new != state else { return }
        state = new
        hub.send(.state(new))
    }
}
