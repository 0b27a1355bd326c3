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
        if let parent = entry.dependsOn, let state = head.parentState { return .parent(opId: parent, state: state) }
        if let next = entry.nextAttemptAt, next > now { return .backoff(until: next) }
        return .ready
    }
}

/// The first unfinished op of a lane, with the state of the op it waits on (if any).
struct LaneHead: Sendable {
    /// The op.
    var entry: OutboxEntry
    /// The state of ``ReplicaStore/OutboxEntry/dependsOn`` while that op is still in the outbox.
    var parentState: OutboxState?

    /// Reads the head's parent state in `tx`.
    static func of<C: ChatCustomData>(_ entry: OutboxEntry, in tx: StoreTransaction<C>) throws -> LaneHead {
        LaneHead(entry: entry, parentState: try entry.dependsOn.flatMap { try tx.outbox.opState(id: $0) })
    }
}

extension Outbox {
    /// The head (first pending, ambiguous or in-flight op) of every lane.
    func laneHeads() async throws -> [LaneHead] {
        try await store.reading { tx in try tx.outbox.laneHeads(states: OutboxState.live).map { try LaneHead.of($0, in: tx) } }
    }

    /// The head of one lane, or nil when it has nothing left to send.
    func laneHead(_ lane: String) async throws -> LaneHead? {
        try await store.reading { tx in
            try tx.outbox.laneHead(lane: lane, states: OutboxState.live).map { try LaneHead.of($0, in: tx) }
        }
    }

    /// Replays ops until nothing more can be sent: the outbox is empty or holds only dead
    /// letters, conflicts and ops waiting on them. Waits out backoffs with the injected clock;
    /// with a `deadline`, returns instead when the next attempt would be later.
    ///
    /// Ops that cannot be sent because the device is offline are retried without limit, so
    /// without a deadline a drain that stays offline does not return (cancel its task to stop it).
    ///
    /// A drain started while another is running joins it and returns its report.
    public func drain(until deadline: Date? = nil) async throws -> DrainReport {
        if let current = currentDrain { return try await current.value }
        let task = Task { try await self.drainNow(until: deadline) }
        currentDrain = task
        defer { currentDrain = nil }
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// One drain, whose commits keep the store's WAL small (a phone with little free space can
    /// drain a long queue: `docs/store.md`, "Disk space").
    private func drainNow(until deadline: Date?) async throws -> DrainReport {
        isDraining = true
        _ = store.maintenance.takeWALPeak()
        defer { isDraining = false }
        var report = try await drainLanes(until: deadline)
        await store.maintenance.truncateWALIfLarge()
        report.peakWALBytes = store.maintenance.takeWALPeak()
        return report
    }

    private func drainLanes(until deadline: Date?) async throws -> DrainReport {
        drainReport = DrainReport()
        drainDeadline = deadline
        storeFailure = nil
        let lease = try await acquireLease(until: deadline)
        defer { lease.release() }
        // Holding the lease, an op still in flight was left by a process that died mid-request.
        if try await store.reading({ try !$0.outbox.ops(states: [.inflight]).isEmpty }) {
            let now = clock.now
            let recovered = try await commit { try $0.recoverAbandoned(now: now) }
            logger.info("in-flight outbox ops from an earlier run are now ambiguous", metadata: ["count": "\(recovered)"])
        }
        do {
            try await releaseTokenWaits()
        } catch where StoreError.isStorageFailure(error) {
            throw OutboxError.storeFailed("\(error)")
        }
        while true {
            try Task.checkCancellation()
            if let failure = storeFailure { throw OutboxError.storeFailed("\(failure)") }
            // Every request waits for a token (expired, refused, none yet): nothing goes until one
            // arrives, and every op says so.
            if let need = client.access.waitingFor {
                let reason = "waiting for a token (\(need == .missing ? "none yet" : "the token \(need.rawValue)"))"
                await parkForToken(fingerprint: client.access.tokenFingerprint, reason: reason)
                break
            }
            let epoch = workEpoch
            let heads = try await laneHeads()
            let now = clock.now
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
                    drainReport.stoppedAtDeadline = true
                    break
                }
                if workEpoch != epoch { continue }
                try await clock.sleep(until: wake)
                continue
            }
            if let deadline, now > deadline {
                drainReport.stoppedAtDeadline = true
                break
            }
            await runLanes(ready, deadline: deadline)
        }
        if storeFailure == nil, !Task.isCancelled { await cleanUpFiles() }
        let counts = try await store.fetch(store.queries.outbox()).reduce(into: [OutboxState: Int]()) { $0[$1.state, default: 0] += 1 }
        var report = drainReport
        report.deadLetters = counts[.dead] ?? 0
        report.conflicts = counts[.conflict] ?? 0
        report.remaining = (counts[.pending] ?? 0) + (counts[.ambiguous] ?? 0) + (counts[.inflight] ?? 0)
        if client.access.waitingFor != nil {
            report.waitingForToken = report.remaining
        } else {
            report.waitingForToken = try await store.reading { try $0.outbox.ops(states: [.pending, .ambiguous]) }.filter(\.waitsForToken).count
        }
        return report
    }

    /// Takes the store's drain lease (see `DrainLease`), waiting for another process to give it
    /// up until `deadline` (forever without one).
    private func acquireLease(until deadline: Date?) async throws -> DrainLease {
        var logged = false
        while true {
            do {
                if let lease = try store.maintenance.tryAcquireDrainLease() { return lease }
            } catch where StoreError.isStorageFailure(error) {
                throw OutboxError.storeFailed("\(error)")
            }
            let now = clock.now
            if let deadline, now >= deadline {
                throw OutboxError.drainLeaseHeld(path: store.maintenance.drainLeasePath ?? "-", holder: store.maintenance.drainLeaseHolder())
            }
            if !logged {
                logger.warning("another process is sending this store's outbox; waiting", metadata: [
                    "pid": "\(store.maintenance.drainLeaseHolder().map(String.init) ?? "?")",
                ])
                logged = true
            }
            let poll = now.addingTimeInterval(Self.leasePollInterval)
            try await clock.sleep(until: deadline.map { min($0, poll) } ?? poll)
        }
    }

    /// How often a drain waiting for the lease looks again.
    static var leasePollInterval: TimeInterval { 0.1 }

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

    /// Makes the ops that wait for a token due when a token arrived since the last drain (or, in a
    /// new process, whatever token the app configured: it arrived after their refusal).
    func releaseTokenWaits() async throws {
        let generation = client.access.generation
        guard tokenGenerationSeen != generation else { return }
        guard try await store.reading({ try $0.outbox.ops(states: [.pending, .ambiguous]).contains(where: \.waitsForToken) }) else {
            tokenGenerationSeen = generation
            return
        }
        let now = clock.now
        let moved = try await commit { try $0.tokenArrived(now: now) }
        tokenGenerationSeen = generation
        if moved > 0 { logger.info("a new token: ops that waited for one go again", metadata: ["count": "\(moved)"]) }
    }

    /// Sends lanes in parallel (at most ``OutboxOptions/maxConcurrentLanes``); a worker that
    /// finishes its lane picks up another that has become ready meanwhile.
    func runLanes(_ lanes: [String], deadline: Date?) async {
        laneQueue = lanes
        runningLanes = []
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<max(1, min(options.maxConcurrentLanes, lanes.count)) {
                group.addTask {
                    while let lane = await self.takeLane(deadline: deadline) {
                        await self.runLane(lane, deadline: deadline)
                        await self.releaseLane(lane)
                    }
                }
            }
        }
    }

    /// The next ready lane, or nil when none is ready, the deadline has passed or the store failed
    /// (a lane taken then would return at once, and be taken again).
    private func takeLane(deadline: Date?) async -> String? {
        guard storeFailure == nil, client.access.waitingFor == nil, deadline.map({ clock.now <= $0 }) ?? true else { return nil }
        if laneQueue.isEmpty, let heads = try? await laneHeads() {
            let now = clock.now
            laneQueue = heads.filter { OutboxWait.of(head: $0, now: now) == .ready && !runningLanes.contains($0.entry.lane) }
                .map(\.entry.lane)
        }
        guard !laneQueue.isEmpty else { return nil }
        let lane = laneQueue.removeFirst()
        runningLanes.insert(lane)
        return lane
    }

    private func releaseLane(_ lane: String) { runningLanes.remove(lane) }

    /// Sends one lane's ops in order until it is empty, blocked, or its next attempt is past the deadline.
    ///
    /// An op that can go as it is is marked in flight by the previous op's completion (one commit
    /// per op: ``Outbox/complete(_:_:next:)``) and sent at once, without reading the lane again.
    private func runLane(_ lane: String, deadline: Date?) async {
        var marked: MarkedOp?
        while !Task.isCancelled, storeFailure == nil {
            if marked == nil, client.access.waitingFor != nil { return }
            if let current = marked {
                marked = await attempt(current, lane: lane)
                continue
            }
            // Past the deadline no new attempt starts: a slow server must not stretch the drain.
            if let deadline, clock.now > deadline { return }
            let head: LaneHead?
            let epoch = workEpoch
            do {
                head = try await laneHead(lane)
            } catch {
                if !(error is CancellationError) { storeFailed(error) }
                return
            }
            guard let head else { return }
            switch OutboxWait.of(head: head, now: clock.now) {
            case .ready:
                marked = await attempt(head.entry, lane: lane)
            case .backoff(let until):
                if let deadline, until > deadline { return }
                if workEpoch != epoch { continue }
                do { try await clock.sleep(until: until) } catch { return }
            default:
                return
            }
        }
    }
}
