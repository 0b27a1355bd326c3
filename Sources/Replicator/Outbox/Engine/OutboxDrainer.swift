import Foundation
import ReplicaModel
import ReplicaStore

/// What a drain did and what it left.
public struct DrainReport: Sendable, Hashable, Codable {
    /// Ops that reached PubNub (including ones a probe found already applied).
    public var completed = 0
    /// Requests handed to the transport for ops (probes not counted).
    public var attempts = 0
    /// Probes of ambiguous ops.
    public var probes = 0
    /// Ops still pending, ambiguous or in flight.
    public var remaining = 0
    /// Dead letters in the outbox.
    public var deadLetters = 0
    /// Conflicted ops in the outbox.
    public var conflicts = 0
    /// Whether the drain stopped at its deadline with ops still waiting.
    public var stoppedAtDeadline = false
    /// Uploaded files no message references that could not be deleted from PubNub yet (an upload
    /// redone, a send discarded); the next drain tries again (`docs/files.md`).
    public var orphanedFiles = 0
    /// Ops waiting for a new Access Manager token (every op left when the token expired or was
    /// refused; otherwise those the token did not allow): they go when one arrives (`docs/access.md`).
    public var waitingForToken = 0
    /// The largest the store's WAL file was after any of this drain's commits, in bytes: the drain
    /// checkpoints it as it goes, so that it needs little free space (`docs/store.md`, "Disk space").
    /// 0 for a store in memory.
    public var peakWALBytes = 0

    /// An empty report.
    public init() {}
}

/// Why an op is not being sent right now.
public enum OutboxWait: Sendable, Hashable {
    /// It goes now.
    case ready
    /// Backing off (or Retry-After) until then.
    case backoff(until: Date)
    /// It waits for the op it depends on (a reaction waiting for its message's publish).
    case parent(opId: String, state: OutboxState)
    /// Another drain is sending it (or crashed while doing so: the next outbox made on the store, or the next drain, makes it ambiguous).
    case inflight
    /// A dead letter: waits for the app.
    case dead
    /// A conflict: waits for the app.
    case conflict
    /// Waits for a new Access Manager token (refused or not granted under the current one).
    case token

    static func of(head: LaneHead, now: Date) -> OutboxWait {
        let entry = head.entry
        switch entry.state {
        case .inflight: return .inflight
        case .dead: return .dead
        case .conflict: return .conflict
        case .pending, .ambiguous: break
        }
        if entry.waitsForToken { return .token }
        if let parent = head.parentId, let state = head.parentState { return .parent(opId: parent, state: state) }
        if let next = entry.nextAttemptAt, next > now { return .backoff(until: next) }
        return .ready
    }
}

/// The first unfinished op of a lane, with the state of the op it waits on (if any).
struct LaneHead: Sendable {
    /// The op.
    var entry: OutboxEntry
    /// The state of the op it waits for while that op is still in the outbox.
    var parentState: OutboxState?
    /// The op it waits for: ``ReplicaStore/OutboxEntry/dependsOn``, or for a relationship's
    /// create the create of either end still in the outbox (``AppRecordEnds``).
    var parentId: String?

    init(entry: OutboxEntry, parentState: OutboxState?, parentId: String? = nil) {
        self.entry = entry
        self.parentState = parentState
        self.parentId = parentId ?? entry.dependsOn
    }

    /// Reads the head's parent state in `tx`.
    static func of<C: ChatCustomData>(_ entry: OutboxEntry, in tx: StoreTransaction<C>) throws -> LaneHead {
        if let create = try AppRecordEnds.unsentCreate(waitedOnBy: entry, in: tx) {
            return LaneHead(entry: entry, parentState: create.state, parentId: create.id)
        }
        return LaneHead(entry: entry, parentState: try entry.dependsOn.flatMap { try tx.outbox.opState(id: $0) })
    }
}

/// What the drainer keeps between its steps, on the outbox's actor (``Outbox/drainState``).
struct DrainState {
    /// The running drain (a second ``Outbox/drain(until:)`` joins it).
    var current: Task<DrainReport, any Error>?
    /// Whether a drain runs: its commits keep the store's WAL small (`docs/store.md`, "Disk space").
    var isDraining = false
    /// The running drain's report so far.
    var report = DrainReport()
    /// The running drain's deadline: a completion marks the lane's next op in flight only before it.
    var deadline: Date?
    /// Lanes found ready and not yet taken by a worker.
    var laneQueue: [String] = []
    /// Lanes a worker is sending.
    var runningLanes: Set<String> = []
    /// The first store write that failed during the current drain; the drain stops on it.
    var storeFailure: (any Error)?
    /// Counts ``Outbox/signalWork()`` calls: a drain that read the lane heads before new work was
    /// committed (a new op, a retry, the network back) sees it moved and reads them again instead
    /// of sleeping on what it read.
    var workEpoch = 0
    /// The Access Manager token generation of the last drain's release of token waits (nil: none yet).
    var tokenGenerationSeen: UInt64?
    /// Whether the attachment area was swept of files no row names (once per outbox).
    var sweptAttachments = false
}

/// The drainer: replays the outbox's lanes until nothing more can be sent (``Outbox/drain(until:)``
/// and ``Outbox/run()`` are its way in). It holds the drain lease, waits out backoffs on the
/// injected clock, runs up to ``OutboxOptions/maxConcurrentLanes`` lanes at once and hands each
/// lane's head to one attempt (``OutboxAttempt``).
///
/// Its methods run on the outbox's actor (an `isolated` parameter): the drain's state
/// (``Outbox/drainState``) is the actor's, read and changed without a hop and with the same
/// interleaving as any method of the actor.
struct OutboxDrainer<Custom: ChatCustomData>: Sendable {}

extension Outbox {
    /// The drainer (``OutboxDrainer``).
    nonisolated var drainer: OutboxDrainer<Custom> { OutboxDrainer() }
}

extension OutboxDrainer {
    /// The head (first pending, ambiguous or in-flight op) of every lane.
    func laneHeads(on outbox: isolated Outbox<Custom>) async throws -> [LaneHead] {
        try await outbox.store.reading { tx in try tx.outbox.laneHeads(states: OutboxState.live).map { try LaneHead.of($0, in: tx) } }
    }

    /// The head of one lane, or nil when it has nothing left to send.
    func laneHead(_ lane: String, on outbox: isolated Outbox<Custom>) async throws -> LaneHead? {
        try await outbox.store.reading { tx in
            try tx.outbox.laneHead(lane: lane, states: OutboxState.live).map { try LaneHead.of($0, in: tx) }
        }
    }

    /// One drain, whose commits keep the store's WAL small (a phone with little free space can
    /// drain a long queue: `docs/store.md`, "Disk space").
    func drainNow(until deadline: Date?, on outbox: isolated Outbox<Custom>) async throws -> DrainReport {
        outbox.drainState.isDraining = true
        _ = outbox.store.maintenance.takeWALPeak()
        defer { outbox.drainState.isDraining = false }
        var report = try await drainLanes(until: deadline, on: outbox)
        await outbox.store.maintenance.truncateWALIfLarge()
        report.peakWALBytes = outbox.store.maintenance.takeWALPeak()
        return report
    }

    private func drainLanes(until deadline: Date?, on outbox: isolated Outbox<Custom>) async throws -> DrainReport {
        outbox.drainState.report = DrainReport()
        outbox.drainState.deadline = deadline
        outbox.drainState.storeFailure = nil
        let lease = try await acquireLease(until: deadline, on: outbox)
        defer { lease.release() }
        // Holding the lease, an op still in flight was left by a process that died mid-request.
        if try await outbox.store.reading({ try !$0.outbox.ops(states: [.inflight]).isEmpty }) {
            let now = outbox.clock.now
            let recovered = try await outbox.commit { try $0.recoverAbandoned(now: now) }
            outbox.logger.info("in-flight outbox ops from an earlier run are now ambiguous", metadata: ["count": "\(recovered)"])
        }
        do {
            try await releaseTokenWaits(on: outbox)
        } catch where StoreError.isStorageFailure(error) {
            throw OutboxError.storeFailed("\(error)")
        }
        while true {
            try Task.checkCancellation()
            if let failure = outbox.drainState.storeFailure { throw OutboxError.storeFailed("\(failure)") }
            // Every request waits for a token (expired, refused, none yet): nothing goes until one
            // arrives, and every op says so.
            if let need = outbox.client.access.waitingFor {
                let reason = "waiting for a token (\(need == .missing ? "none yet" : "the token \(need.rawValue)"))"
                await outbox.attempts.parkForToken(fingerprint: outbox.client.access.tokenFingerprint, reason: reason, on: outbox)
                break
            }
            let epoch = outbox.drainState.workEpoch
            let heads = try await laneHeads(on: outbox)
            let now = outbox.clock.now
            var ready: [String] = []
            var wake: Date?
            for head in heads {
                switch OutboxWait.of(head: head, now: now) {
                case .ready: ready.append(head.entry.lane)
                case .backoff(let until): wake = min(wake ?? until, until)
                default: continue
                }
            }
            if ready.isEmpty {
                guard let wake else { break }
                if let deadline, wake > deadline {
                    outbox.drainState.report.stoppedAtDeadline = true
                    break
                }
                if outbox.drainState.workEpoch != epoch { continue }
                try await outbox.clock.sleep(until: wake)
                continue
            }
            if let deadline, now > deadline {
                outbox.drainState.report.stoppedAtDeadline = true
                break
            }
            await runLanes(ready, deadline: deadline, on: outbox)
        }
        if outbox.drainState.storeFailure == nil, !Task.isCancelled { await outbox.attempts.cleanUpFiles(on: outbox) }
        let counts = try await outbox.store.fetch(outbox.store.queries.outbox()).reduce(into: [OutboxState: Int]()) { $0[$1.state, default: 0] += 1 }
        var report = outbox.drainState.report
        report.deadLetters = counts[.dead] ?? 0
        report.conflicts = counts[.conflict] ?? 0
        report.remaining = (counts[.pending] ?? 0) + (counts[.ambiguous] ?? 0) + (counts[.inflight] ?? 0)
        if outbox.client.access.waitingFor != nil {
            report.waitingForToken = report.remaining
        } else {
            report.waitingForToken = try await outbox.store.reading { try $0.outbox.ops(states: [.pending, .ambiguous]) }.filter(\.waitsForToken).count
        }
        return report
    }

    /// Takes the store's drain lease (see `DrainLease`), waiting for another process to give it
    /// up until `deadline` (forever without one).
    private func acquireLease(until deadline: Date?, on outbox: isolated Outbox<Custom>) async throws -> DrainLease {
        var logged = false
        while true {
            do {
                if let lease = try outbox.store.maintenance.tryAcquireDrainLease() { return lease }
            } catch where StoreError.isStorageFailure(error) {
                throw OutboxError.storeFailed("\(error)")
            }
            let now = outbox.clock.now
            if let deadline, now >= deadline {
                throw OutboxError.drainLeaseHeld(path: outbox.store.maintenance.drainLeasePath ?? "-", holder: outbox.store.maintenance.drainLeaseHolder())
            }
            if !logged {
                outbox.logger.warning("another process is sending this store's outbox; waiting", metadata: [
                    "pid": "\(outbox.store.maintenance.drainLeaseHolder().map(String.init) ?? "?")",
                ])
                logged = true
            }
            let poll = now.addingTimeInterval(Self.leasePollInterval)
            try await outbox.clock.sleep(until: deadline.map { min($0, poll) } ?? poll)
        }
    }

    /// How often a drain waiting for the lease looks again.
    static var leasePollInterval: TimeInterval { 0.1 }

    /// Makes the ops that wait for a token due when a token arrived since the last drain (or, in a
    /// new process, whatever token the app configured: it arrived after their refusal).
    func releaseTokenWaits(on outbox: isolated Outbox<Custom>) async throws {
        let generation = outbox.client.access.generation
        guard outbox.drainState.tokenGenerationSeen != generation else { return }
        guard try await outbox.store.reading({ try $0.outbox.ops(states: [.pending, .ambiguous]).contains(where: \.waitsForToken) }) else {
            outbox.drainState.tokenGenerationSeen = generation
            return
        }
        let now = outbox.clock.now
        let moved = try await outbox.commit { try $0.tokenArrived(now: now) }
        outbox.drainState.tokenGenerationSeen = generation
        if moved > 0 { outbox.logger.info("a new token: ops that waited for one go again", metadata: ["count": "\(moved)"]) }
    }

    /// Sends lanes in parallel (at most ``OutboxOptions/maxConcurrentLanes``); a worker that
    /// finishes its lane picks up another that has become ready meanwhile.
    func runLanes(_ lanes: [String], deadline: Date?, on outbox: isolated Outbox<Custom>) async {
        outbox.drainState.laneQueue = lanes
        outbox.drainState.runningLanes = []
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<max(1, min(outbox.options.maxConcurrentLanes, lanes.count)) {
                group.addTask {
                    while let lane = await self.takeLane(deadline: deadline, on: outbox) {
                        await self.runLane(lane, deadline: deadline, on: outbox)
                        await self.releaseLane(lane, on: outbox)
                    }
                }
            }
        }
    }

    /// The next ready lane, or nil when none is ready, the deadline has passed or the store failed
    /// (a lane taken then would return at once, and be taken again).
    private func takeLane(deadline: Date?, on outbox: isolated Outbox<Custom>) async -> String? {
        guard outbox.drainState.storeFailure == nil, outbox.client.access.waitingFor == nil, deadline.map({ outbox.clock.now <= $0 }) ?? true else { return nil }
        if outbox.drainState.laneQueue.isEmpty, let heads = try? await laneHeads(on: outbox) {
            let now = outbox.clock.now
            outbox.drainState.laneQueue = heads.filter { OutboxWait.of(head: $0, now: now) == .ready && !outbox.drainState.runningLanes.contains($0.entry.lane) }
                .map(\.entry.lane)
        }
        guard !outbox.drainState.laneQueue.isEmpty else { return nil }
        let lane = outbox.drainState.laneQueue.removeFirst()
        outbox.drainState.runningLanes.insert(lane)
        return lane
    }

    private func releaseLane(_ lane: String, on outbox: isolated Outbox<Custom>) { outbox.drainState.runningLanes.remove(lane) }

    /// Sends one lane's ops in order until it is empty, blocked, or its next attempt is past the deadline.
    ///
    /// An op that can go as it is is marked in flight by the previous op's completion (one commit
    /// per op: `OutboxAttempt.complete`) and sent at once, without reading the lane again; a run
    /// of plain publishes goes through the pipeline, each commit beside the next request
    /// (`OutboxAttempt.pipeline`).
    private func runLane(_ lane: String, deadline: Date?, on outbox: isolated Outbox<Custom>) async {
        var marked: MarkedOp?
        while !Task.isCancelled, outbox.drainState.storeFailure == nil {
            if marked == nil, outbox.client.access.waitingFor != nil { return }
            if let current = marked {
                marked = OutboxAttempt<Custom>.canGoAhead(current.head)
                    ? await outbox.attempts.pipeline(current, lane: lane, on: outbox)
                    : await outbox.attempts.attempt(current, lane: lane, on: outbox)
                continue
            }
            // Past the deadline no new attempt starts: a slow server must not stretch the drain.
            if let deadline, outbox.clock.now > deadline { return }
            let head: LaneHead?
            let epoch = outbox.drainState.workEpoch
            do {
                head = try await laneHead(lane, on: outbox)
            } catch {
                if !(error is CancellationError) { outbox.storeFailed(error) }
                return
            }
            guard let head else { return }
            switch OutboxWait.of(head: head, now: outbox.clock.now) {
            case .ready:
                marked = await outbox.attempts.attempt(head.entry, lane: lane, on: outbox)
            case .backoff(let until):
                if let deadline, until > deadline { return }
                if outbox.drainState.workEpoch != epoch { continue }
                do { try await outbox.clock.sleep(until: until) } catch { return }
            default:
                return
            }
        }
    }
}

extension Outbox {
    /// Replays ops until nothing more can be sent: the outbox is empty or holds only dead
    /// letters, conflicts and ops waiting on them. Waits out backoffs with the injected clock;
    /// with a `deadline`, returns instead when the next attempt would be later.
    ///
    /// Ops that cannot be sent because the device is offline are retried without limit, so
    /// without a deadline a drain that stays offline does not return (cancel its task to stop it).
    ///
    /// A drain started while another is running joins it and returns its report.
    public func drain(until deadline: Date? = nil) async throws -> DrainReport {
        if let current = drainState.current { return try await current.value }
        let task = Task { try await self.drainer.drainNow(until: deadline, on: self) }
        drainState.current = task
        defer { drainState.current = nil }
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// Drains, then waits for new ops (or retries, or a new Access Manager token) and drains again,
    /// until the task is cancelled.
    public func run() async throws {
        let signals = workSignals()
        // Subscribed before the first drain, so that a token arriving during it is not missed.
        let accessEvents = client.access.events()
        let tokens = Task { [weak self] in
            for await event in accessEvents {
                if case .tokenChanged = event { await self?.signalWork() }
            }
        }
        defer { tokens.cancel() }
        while true {
            _ = try await drain()
            var iterator = signals.makeAsyncIterator()
            guard await iterator.next() != nil else { return }
            try Task.checkCancellation()
        }
    }
}
