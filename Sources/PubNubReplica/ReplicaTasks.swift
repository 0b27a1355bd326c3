import Foundation
import Logging
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

/// The work a replica runs in the background, and how it starts and stops it: the outbox's run,
/// live sync's run, the task that follows live sync's state into the status, the one that settles
/// conflicts, the one that follows the access token, and the outbox counter.
///
/// The actor holds the task handles (`replica.tasks`); the functions that launch and end them
/// take the replica as their isolation (`on replica: isolated Replica<Custom>`), so that they
/// read and change its state as its own methods would.
struct ReplicaTasks<Custom: ChatCustomData>: Sendable {
    /// Live sync's run, the outbox's run, and the task that follows live sync's state.
    var live: Task<Void, Never>?
    var outbox: Task<Void, Never>?
    var stateWatcher: Task<Void, Never>?
    /// Settles each op that meets a conflict with the configured policy, while started.
    var conflicts: Task<Void, Never>?
    /// Follows the client's token (and asks the token provider, when there is one) while started.
    var access: Task<Void, Never>?
    /// Counts the outbox after each of its events, from the store's opening to its closing:
    /// writes made before ``Replica/start()`` count too.
    var counter: Task<Void, Never>?
    /// Brings the store within its storage budget after live sync caught up or filled a gap
    /// (`docs/store.md`, "Storage budget"), one enforcement at a time; a run of a started replica.
    var budget: Task<Void, Never>?

    /// Whether the runs of a started replica are going.
    var areRunning: Bool { live != nil }

    /// Cancels every task without waiting (a replica released without ``Replica/stop()``).
    func cancelAll() {
        for task in [live, outbox, counter, budget, stateWatcher, access, conflicts] { task?.cancel() }
    }

    /// Takes the runs of a started replica (every task but the counter), leaving none.
    mutating func takeRuns() -> [Task<Void, Never>?] {
        defer { (live, outbox, stateWatcher, access, conflicts, budget) = (nil, nil, nil, nil, nil, nil) }
        return [live, outbox, stateWatcher, access, conflicts, budget]
    }

    /// Cancels `task` and waits for it to end.
    static func end(_ task: Task<Void, Never>?) async {
        task?.cancel()
        await task?.value
    }

    /// Stops live sync, then the outbox, then the state watcher, waiting for each to end.
    static func halt(on replica: isolated Replica<Custom>) async {
        for task in replica.tasks.takeRuns() { await end(task) }
    }

    // MARK: Counting the outbox

    /// Starts counting the outbox of `parts`, once per opened store (an actor's init cannot start
    /// isolated work: the first call that needs the counts does).
    static func count(_ parts: Replica<Custom>.Parts, on replica: isolated Replica<Custom>) async {
        guard replica.tasks.counter == nil else { return }
        // Only the newest event is kept while a count runs: a burst (a batch of sends, a drain)
        // costs one or two counts, not one count and one buffered event per op.
        let events = await parts.outbox.events(bufferingPolicy: .bufferingNewest(1))
        // The task holds neither the store nor the outbox: a replica released without `stop()`
        // (a command line tool's, at exit) closes its store at once, which checkpoints the WAL
        // and removes it, instead of leaving it for the next open to read (84 MB after
        // `send --count 100000`, and 140 ms more before its next `--dry-run` printed a line).
        replica.tasks.counter = Task { [weak replica] in
            for await _ in events {
                guard let replica else { return }
                await recount(on: replica)
            }
        }
    }

    /// Reads the outbox's counts into the status (the counter's work).
    static func recount(on replica: isolated Replica<Custom>) async {
        guard let store = replica.parts?.store, let tally = try? await store.fetch(OutboxTally.query(replica.queries)) else { return }
        replica.hub.update { $0.count(tally) }
    }

    // MARK: Launching

    /// Starts the runs of a started replica on `parts`.
    static func launch(_ parts: Replica<Custom>.Parts, on replica: isolated Replica<Custom>) {
        let outbox = parts.outbox, live = parts.live
        // Subscribed before the runs start, so that no state or event is missed.
        let activity = live.activity()
        replica.tasks.stateWatcher = Task { [weak replica] in
            for await item in activity {
                guard let replica else { return }
                switch item {
                case .state(let state):
                    await liveStateChanged(state, on: replica)
                    // Back online: settle what could not be settled offline.
                    if case .live = state {
                        await settleConflicts(on: replica)
                        await ReplicaExpiryWatch.refresh(replica)
                        await keepWithinBudget(on: replica)
                    }
                case .catchUpProgress(let progress): await caughtUp(progress, on: replica)
                case .gapFilled:
                    await ReplicaExpiryWatch.refresh(replica)
                    await keepWithinBudget(on: replica)
                case .event, .presenceRefreshed: continue
                }
            }
        }
        replica.tasks.outbox = run("outbox", reportingTo: replica.hub) { try await outbox.run() }
        replica.tasks.conflicts = Task { [weak replica] in
            // Subscribed first, so that a conflict met while the waiting ones settle is heard.
            let events = await outbox.events()
            if let replica { await settleConflicts(on: replica) }
            for await event in events {
                guard let replica else { return }
                if case .conflict = event { await settleConflicts(on: replica) }
            }
        }
        replica.tasks.live = run("live sync", reportingTo: replica.hub) { try await live.run() }
        launchAccess(on: replica)
    }

    /// A task running one part until it is cancelled; a failure that ends it early (a store that
    /// cannot be written) shows in the status's ``ReplicaStatus/lastError``.
    private static func run(
        _ part: String, reportingTo hub: ReplicaStatusHub<Custom>, _ body: @escaping @Sendable () async throws -> Void
    ) -> Task<Void, Never> {
        Task {
            do {
                try await body()
            } catch where !(error is CancellationError) {
                hub.update { $0.lastError = "\(part): \(error)" }
            } catch {}
        }
    }

    /// Waits until no op is in flight, or `budget` seconds of the clock have passed.
    static func finishSends(_ outbox: Outbox<Custom>, within budget: TimeInterval, clock: any ReplicaClock) async {
        guard let inflight = try? await outbox.store.reading({ try $0.outbox.ops(states: [.inflight]) }), !inflight.isEmpty
        else { return }
        let deadline = clock.now.addingTimeInterval(budget)
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
    /// dropped for it; `.manual` leaves it, with an open entry, for
    /// ``ReplicaOutbox/resolveConflict(id:take:)``. A settlement that cannot reach the server
    /// (offline) is tried again when live sync is back.
    private static func settleConflicts(on replica: isolated Replica<Custom>) async {
        guard let parts = replica.parts, let counts = try? await parts.store.fetch(replica.queries.outboxCounts()),
            (counts[.conflict] ?? 0) > 0
        else { return }
        do {
            let report = try await parts.reconciler.resolveConflicts()
            if let error = report.errors.first { replica.hub.update { $0.lastError = "conflicts: \(error)" } }
        } catch is CancellationError {
        } catch {
            replica.hub.update { $0.lastError = "conflicts: \(error)" }
        }
    }

    /// Enforces the store's retention policy in the background, unless an enforcement is still
    /// running (a sync enforces it too: `Reconciler.sync`). The channels kept hot are protected.
    private static func keepWithinBudget(on replica: isolated Replica<Custom>) {
        guard replica.tasks.budget == nil, let parts = replica.parts, let policy = parts.store.retention else { return }
        let store = parts.store, reconciler = parts.reconciler, userId = replica.configuration.userId, hub = replica.hub
        replica.tasks.budget = Task { [weak replica] in
            do {
                let hot = Set(await reconciler.hotChannels)
                try await store.enforceRetention(policy, userId: userId, protecting: hot)
            } catch is CancellationError {
            } catch {
                hub.update { $0.lastError = "storage budget: \(error)" }
            }
            if let replica { await budgetEnded(on: replica) }
        }
    }

    private static func budgetEnded(on replica: isolated Replica<Custom>) {
        replica.tasks.budget = nil
    }

    private static func caughtUp(_ progress: CatchUpProgress, on replica: isolated Replica<Custom>) {
        guard replica.parts != nil else { return }
        replica.hub.update { if case .catchingUp = $0.connection { $0.catchUp = progress } }
    }

    private static func liveStateChanged(_ state: LiveState, on replica: isolated Replica<Custom>) {
        guard replica.parts != nil else { return }
        let now = replica.clock.now
        replica.hub.update {
            $0.catchUp = nil
            switch state {
            case .connecting: $0.connection = .connecting
            case .catchingUp(let channels): $0.connection = .catchingUp(channels: channels)
            case .live:
                $0.connection = .live
                $0.hasSynced = true
                $0.lastSyncedAt = now
            case .offline(let reason): $0.connection = .offline(reason: reason)
            case .stopped: break  // stop() and suspend() say what the replica is then
            }
        }
    }

    // MARK: Access

    /// While started: follows the client's token into the status, and runs the token provider
    /// (``ReplicaConfiguration/tokenProvider``) when there is one.
    private static func launchAccess(on replica: isolated Replica<Custom>) {
        let configuration = replica.configuration, access = replica.client.access, hub = replica.hub
        let provider = configuration.tokenProvider.map { provider in
            var logger = Logger(label: configuration.logLabel + ".access")
            logger.logLevel = configuration.storeOptions.logger.logLevel
            return TokenRefresher(
                access: access, provider: provider, clock: replica.clock, retry: configuration.outbox.retry,
                random: configuration.random(0xACCE55), logger: logger)
        }
        let events = access.events()
        replica.tasks.access = Task {
            await withTaskGroup(of: Void.self) { group in
                if let provider { group.addTask { await provider.run() } }
                group.addTask {
                    await tokenChanged(access, provider: provider, hub: hub)
                    for await _ in events { await tokenChanged(access, provider: provider, hub: hub) }
                }
            }
        }
    }

    private static func tokenChanged(_ access: AccessControl, provider: TokenRefresher?, hub: ReplicaStatusHub<Custom>) async {
        let error = await provider?.lastError
        hub.update {
            $0.waitingForToken = access.waitingFor
            $0.tokenExpires = access.parsedToken?.expires
            $0.tokenError = error
        }
    }
}
