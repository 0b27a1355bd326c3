import Foundation
import Logging
import PubNubWire
import ReplicaModel
import ReplicaStore

/// What every part of a reconciler shares: the store, the wire, the outbox, the options, the
/// clock, the hot channels, the server times and the retry jitter. One per ``Reconciler``; each
/// part (``HistorySync``, ``ObjectSync``, ``ReactionSync``, ``LiveApply``, ``ConflictResolver``,
/// ``UnreadCounts``) is a value over it.
final class PullContext<Custom: ChatCustomData>: Sendable {
    let store: ChatStore<Custom>
    let client: PubNubClient
    /// The app's outbox, when one was given (a sync drains it; conflicts are settled in it).
    let outbox: Outbox<Custom>?
    /// The owner of op state: the app's outbox, or one of the reconciler's own.
    let ops: Outbox<Custom>
    let options: ReconcilerOptions
    let clock: any ReplicaClock
    let logger: Logger
    let hot: HotChannels
    let serverTime: ServerTime
    let jitter: Jitter
    /// The app-data classes' id channels, read at most every 30 s (``AppDataLive/channels(_:context:)``).
    let appChannels = AppChannelCache()

    init(
        store: ChatStore<Custom>, client: PubNubClient, outbox: Outbox<Custom>?, options: ReconcilerOptions,
        clock: any ReplicaClock, random: any RandomNumberGenerator & Sendable, logger: Logger
    ) {
        self.store = store
        self.client = client
        self.outbox = outbox
        ops = outbox ?? Outbox(store: store, client: client, clock: clock, logger: logger)
        self.options = options
        self.clock = clock
        self.logger = logger
        hot = HotChannels(everyChannel: options.everyChannelHot)
        serverTime = ServerTime(tolerance: options.clockTolerance)
        jitter = Jitter(random)
    }
}

/// The random numbers of a reconciler's backoffs, behind a lock (its parts retry from any task).
final class Jitter: @unchecked Sendable {
    // An NSLock guards `random`.
    private let lock = NSLock()
    private var random: any RandomNumberGenerator & Sendable

    init(_ random: any RandomNumberGenerator & Sendable) { self.random = random }

    /// The wait before attempt `attempt + 1` (``RetryPolicy/wait(afterAttempt:atLeast:using:)``).
    func wait(_ retry: RetryPolicy, afterAttempt attempt: Int, atLeast minimum: TimeInterval) -> TimeInterval {
        lock.withLock { retry.wait(afterAttempt: attempt, atLeast: minimum, using: &random) }
    }
}

/// A part of a reconciler: a value over its ``PullContext``, with the context's members and the
/// helpers every part uses (retrying requests, server time, listings) at hand.
protocol ReconcilerPart: Sendable {
    associatedtype Custom: ChatCustomData
    var context: PullContext<Custom> { get }
}

extension ReconcilerPart {
    typealias Message = ChatMessage<Custom.Message>

    var store: ChatStore<Custom> { context.store }
    var client: PubNubClient { context.client }
    var outbox: Outbox<Custom>? { context.outbox }
    var ops: Outbox<Custom> { context.ops }
    /// Where users, channels and memberships are read (the outbox's backend).
    var objects: any ObjectBackend { context.ops.objects }
    var options: ReconcilerOptions { context.options }
    var clock: any ReplicaClock { context.clock }
    var logger: Logger { context.logger }
    var hot: HotChannels { context.hot }
    /// The current user.
    var userId: String { context.client.configuration.userId }

    // The parts, for one to call another.
    var history: HistorySync<Custom> { HistorySync(context: context) }
    var objectSync: ObjectSync<Custom> { ObjectSync(context: context) }
    var reactionSync: ReactionSync<Custom> { ReactionSync(context: context) }
    var live: LiveApply<Custom> { LiveApply(context: context) }
    var conflictResolver: ConflictResolver<Custom> { ConflictResolver(context: context) }
    var unread: UnreadCounts<Custom> { UnreadCounts(context: context) }
    var appData: AppDataSync<Custom> { AppDataSync(context: context) }
}

// MARK: Requests

extension ReconcilerPart {
    /// Runs one pull request, retrying failures that a later attempt can fix (offline, lost
    /// answers, 5xx, 429 after its Retry-After) with backoff on the injected clock.
    ///
    /// Within ``Reconciler/sync(pushDeadline:deadline:full:progress:)`` with a deadline, no
    /// request starts after it and no backoff waits past it: the pull stops with
    /// ``ReconcilerError/deadlineExceeded(scope:)``.
    func fetch<T: Sendable>(_ what: String, _ body: () async throws(WireError) -> T) async throws -> T {
        let deadline = SyncDeadline.current
        var attempt = 0
        while true {
            if let deadline, clock.now > deadline { throw ReconcilerError.deadlineExceeded(scope: what) }
            attempt += 1
            do {
                return try await body()
            } catch {
                // Offline: one more try, then the pull stops rather than wait out every backoff.
                let limit = Self.isOffline(error) ? min(2, options.maxAttempts) : options.maxAttempts
                guard let wait = Self.retryWait(error), attempt < limit else {
                    throw ReconcilerError.pullFailed(scope: what, attempts: attempt, error: error)
                }
                let delay = context.jitter.wait(options.retry, afterAttempt: attempt, atLeast: wait)
                let wake = clock.now.addingTimeInterval(delay)
                if let deadline, wake > deadline {
                    throw ReconcilerError.pullFailed(scope: what, attempts: attempt, error: error)
                }
                logger.debug("pull request failed; retrying", metadata: ["scope": "\(what)", "error": "\(error)"])
                try await clock.sleep(until: wake)
            }
        }
    }

    /// Whether a failed pull means the rest of this sync's pulls would fail the same way: the
    /// server could not be reached (after the request's retries) or the sync's deadline passed.
    static func endsPulls(_ error: any Error) -> Bool {
        switch error as? ReconcilerError {
        case .deadlineExceeded?: return true
        case .pullFailed(_, _, let error)?: return error.retryability.isUnreachable || error.retryability == .waitForToken
        default: return false
        }
    }

    /// Whether a failed pull must stop the whole sync: the store itself failed (disk full, I/O
    /// error), so nothing more can be recorded.
    static func stopsSync(_ error: any Error) -> Bool { StoreError.isStorageFailure(error) }

    /// Whether the request never left the device.
    static func isOffline(_ error: WireError) -> Bool { error.retryability == .notSent }

    /// Whether a failed pull never reached the server.
    static func isOffline(_ error: any Error) -> Bool {
        if case ReconcilerError.pullFailed(_, _, let wire)? = error as? ReconcilerError { return isOffline(wire) }
        return false
    }

    /// The least wait before retrying a failed read, or nil when retrying cannot help. A read has
    /// no effect to look for, so every retryable class is simply sent again
    /// (``PubNubWire/WireError/Retryability/minimumWait``).
    static func retryWait(_ error: WireError) -> TimeInterval? { error.retryability.minimumWait }

    /// How a sync takes a failed pull: cancellation and store failures end the sync (rethrown);
    /// anything else becomes a report line, and a failure every later pull would meet too
    /// (unreachable, deadline) is remembered in `unreachable` so that the rest are skipped.
    static func pullFailure(_ error: any Error, unreachable: inout String?) throws -> String? {
        if error is CancellationError || stopsSync(error) { throw error }
        if endsPulls(error), unreachable == nil { unreachable = "\(error)" }
        return "\(error)"
    }
}

// MARK: Server time (the rule is TrustedTime's) and listings

extension ReconcilerPart {
    /// Asks PubNub for its time once and trusts it when it agrees with the device clock
    /// (``TrustedTime``). A failed request or a disagreeing answer changes nothing: checkpoints
    /// then move only with stored messages. Returns whether the answer was taken.
    @discardableResult
    func verifyServerTime() async -> Bool {
        let answer: Timetoken
        do {
            answer = try await client.time()
        } catch {
            logger.debug("time request failed; checkpoints move with stored messages only", metadata: ["error": "\(error)"])
            return false
        }
        return takeServerTime(answer)
    }

    /// Takes a `/time` answer: the snapshot of the next listings, and trusted when it agrees with
    /// the device clock. Returns whether it was trusted.
    @discardableResult
    func takeServerTime(_ answer: Timetoken) -> Bool {
        let taken = context.serverTime.take(answer, now: clock.now)
        if !taken {
            logger.warning("the server's time disagrees with this device's clock; it is not trusted", metadata: [
                "server": "\(answer)", "tolerance": "\(context.serverTime.tolerance)",
            ])
        }
        return taken
    }

    /// Whether a subscribe cursor can be the server's present (``TrustedTime/isPlausible(cursor:now:)``).
    func isPlausible(cursor: Timetoken) -> Bool {
        context.serverTime.isPlausible(cursor: cursor, now: clock.now)
    }

    /// Where a checkpoint may move given `cursor` (``TrustedTime/clamp(_:)``), or nil.
    func trustedCheckpoint(for cursor: Timetoken) -> Timetoken? { context.serverTime.clamp(cursor) }

    /// A server time to list reactions and members against: the `/time` this reconciler took
    /// last when it is at or after `atLeast` (a fill's gap end), otherwise a new one, never
    /// before `atLeast` (a server answering an earlier time is listed up to the gap's end).
    func serverSnapshot(atLeast floor: Timetoken?) async throws -> Timetoken {
        if let last = context.serverTime.lastAnswer, let floor, last >= floor { return last }
        let answer = try await fetch("time") { () async throws(WireError) -> Timetoken in try await client.time() }
        takeServerTime(answer)
        return floor.map { max(answer, $0) } ?? answer
    }

    /// Logs the objects of a page that were left out because they could not be read (an invalid
    /// id, a wrong type): one bad object from the server never stops a listing.
    func logSkipped(_ reasons: [String], scope: String) {
        for reason in reasons {
            logger.warning("skipped an object the server sent", metadata: ["scope": "\(scope)", "reason": "\(reason)"])
        }
    }

    /// Records that the listing of `scope` (a channel's reactions or members) made the store
    /// equal to the server's as of `snapshot` (``ListingLag/listed(_:snapshot:through:tx:now:)``). The time
    /// recorded is never one this device has not verified: a `/time` in the future, from a broken
    /// or hostile server, is clamped like a live checkpoint (``TrustedTime``), or to the device's
    /// clock plus the tolerance when nothing is verified.
    func saveListing(_ scope: String, snapshot: Timetoken) async throws {
        let deviceCeiling = (try? Timetoken(date: clock.now.addingTimeInterval(options.clockTolerance))) ?? snapshot
        let recorded = trustedCheckpoint(for: snapshot) ?? min(snapshot, deviceCeiling)
        let now = clock.now
        try await store.storeTransaction { tx in try ListingLag.listed(scope, snapshot: snapshot, through: recorded, tx: tx, now: now) }
    }
}
