import Foundation
import Logging
import PubNubWire
import ReplicaModel
import ReplicaStore

/// Options of a `Reconciler`.
public struct ReconcilerOptions: Sendable {
    /// Messages per history page for one channel (1-100); default 100.
    public var pageSize = 100
    /// Messages per channel when several channels share one history request (1-25); default 25.
    public var multiChannelPageSize = 25
    /// A catch-up's fetcher runs ahead of its writer by up to this many pages, and pages that are
    /// ready together are committed in one transaction (with the checkpoint after the last), so a
    /// fast network pays one commit per several pages; default 32 (3,200 messages: about 30 ms
    /// of the writer on a laptop-class core, and a few MB held). 1 commits every page alone. On a
    /// slow network the pages arrive one by one and commit one by one, as soon as each is fetched.
    public var pagesPerCommit = 32
    /// Channels per shared history request; default 500, PubNub's most for one request
    /// (`docs/reconciler.md`).
    public var channelsPerRequest = 500
    /// The most bytes the channel ids of one shared history request take in its path, percent-
    /// encoded with their separators; default 8192, well under the 32 KiB a URL may have. A
    /// request holds ``channelsPerRequest`` channels or fewer when their ids are long.
    public var channelBytesPerRequest = 8192
    /// On a channel's first pull, how many of its newest messages to fetch (older ones come with
    /// `Reconciler.loadOlder(channel:limit:)`); nil fetches the whole history. Default nil.
    public var initialMessages: Int?
    /// Channels to pull besides the current user's memberships and the channels with stored messages.
    public var channels: [String] = []
    /// Pull every user of the keyset (`listUsers`); default true. Turn it off for large keysets.
    public var pullAllUsers = true
    /// Pull every channel of the keyset (`listChannels`); default true.
    public var pullAllChannels = true
    /// Read the current user's mute list (`PN_PRV.<userId>.mute1`, one `GET` per object pull), as
    /// the Chat SDK does with `syncMutedUsers`; default true. Off, a pull does not read it (live
    /// sync still follows it, and each mute list write reads the server's list first).
    public var syncMuteList = true
    /// List every channel's reactions and members on each sync and gap fill, as if every channel
    /// were hot (`Reconciler.markHot(_:)`). Default false: only hot channels are listed, and the
    /// cost of a sync follows what changed, not the keyset. Turn it on for an app with a handful
    /// of channels that wants every one complete; each channel then costs two or three requests
    /// per sync and per reconnect (docs/reconciler.md, "Hot and cold channels").
    public var everyChannelHot = false
    /// A full object listing (which also removes what the server deleted) at least this often;
    /// incremental listings (`updated` filter) in between. Default one hour.
    public var fullListingInterval: TimeInterval = 3600
    /// How a failed pull request is retried (pulls are reads: every failure but a 4xx is retried).
    public var retry = RetryPolicy()
    /// Attempts of one pull request before the pull of that scope stops with the error; default 8.
    public var maxAttempts = 8
    /// Conflict policies per entity kind.
    public var conflicts = ConflictPolicies()
    /// Test hook: runs inside each history page's transaction before it commits; throwing rolls
    /// the page and its checkpoint back together, as a crash at that point would.
    public var beforeHistoryCommit: (@Sendable (String) throws -> Void)?

    /// How far PubNub's `/time` and the device clock may disagree (seconds) for the time to be
    /// trusted; default 120. Checkpoints never claim a time the device has not verified: a
    /// subscribe cursor alone is never trusted (docs/reliability.md, "Which times a checkpoint
    /// trusts"). A device whose clock is further off than this still works; its checkpoints
    /// then move only with the messages it stores.
    public var clockTolerance: TimeInterval = 120

    /// Default options.
    public init() {}
}

/// The reconciler: pulls history, reactions and App Context objects from PubNub into the store,
/// resumably, and settles conflicted edits with the app's policies, logging each one.
///
/// ```swift
/// let reconciler = Reconciler(store: store, client: client, outbox: outbox)
/// let report = try await reconciler.sync()          // push, settle conflicts, pull
/// ```
///
/// See `docs/reconciler.md` and `docs/conflicts.md`.
///
/// ## Topics
///
/// ### Creating a reconciler
///
/// - ``init(store:client:outbox:options:clock:random:logger:)``
/// - ``store``
/// - ``client``
/// - ``outbox``
/// - ``options``
/// - ``userId``
/// - ``Message``
///
/// ### Everything
///
/// - ``sync(pushDeadline:deadline:full:progress:)``
/// - ``channelsOfInterest(extra:)``
///
/// ### Hot and cold channels
///
/// - ``markHot(_:)``
/// - ``unmarkHot(_:)``
/// - ``isHot(_:)``
/// - ``hotChannels``
/// - ``refresh(channel:)``
///
/// ### History
///
/// - ``pullHistory(channels:progress:)``
/// - ``catchUp(channel:progress:)``
/// - ``loadOlder(channel:limit:)``
/// - ``remoteHistory(channel:start:end:reverse:limit:)``
/// - ``foreignContentType``
/// - ``unknownPublisher``
///
/// ### Reactions
///
/// - ``pullReactions(channel:)``
///
/// ### Objects
///
/// - ``pullObjects(full:channels:)``
///
/// ### Conflicts
///
/// - ``resolveConflicts()``
/// - ``resolve(conflictId:take:)``
public actor Reconciler<Custom: ChatCustomData> {
    /// A message with the store's custom type.
    public typealias Message = ChatMessage<Custom.Message>

    /// The store.
    public nonisolated let store: ChatStore<Custom>
    /// The wire client.
    public nonisolated let client: PubNubClient
    /// The outbox whose ops a pull may finish and whose conflicts are settled; optional.
    public nonisolated let outbox: Outbox<Custom>?
    /// The owner of op state: the app's outbox, or one of the reconciler's own when none was
    /// given. Every op change a pull or a settlement makes goes through it, so each is announced.
    let ops: Outbox<Custom>
    /// Where users, channels and memberships are read (the outbox's backend, ``Outbox/objects``).
    public nonisolated var objects: any ObjectBackend { ops.objects }
    /// The options.
    public nonisolated let options: ReconcilerOptions
    let clock: any ReplicaClock
    var random: any RandomNumberGenerator & Sendable
    let logger: Logger
    /// The server times this device verified (the cursor trust rule).
    var trustedTime: TrustedTime
    /// The newest `/time` answer, trusted or not: the snapshot listings are taken against.
    var lastServerTime: Timetoken?
    /// Which channels are hot (``markHot(_:)``).
    nonisolated let hot: HotChannels

    /// A reconciler over `store` and `client`; pass the app's `outbox` so that pulls can finish
    /// its publishes and conflicts can be settled.
    public init(
        store: ChatStore<Custom>, client: PubNubClient, outbox: Outbox<Custom>? = nil,
        options: ReconcilerOptions = ReconcilerOptions(), clock: any ReplicaClock = SystemClock(),
        random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(),
        logger: Logger = Logger(label: "pnreplicate.reconciler")
    ) {
        self.store = store
        self.client = client
        self.outbox = outbox
        ops = outbox ?? Outbox(store: store, client: client, clock: clock, logger: logger)
        self.options = options
        self.clock = clock
        self.random = random
        self.logger = logger
        trustedTime = TrustedTime(tolerance: options.clockTolerance)
        hot = HotChannels(everyChannel: options.everyChannelHot)
    }

    /// The current user.
    public nonisolated var userId: String { client.configuration.userId }

    /// Runs one pull request, retrying failures that a later attempt can fix (offline, lost
    /// answers, 5xx, 429 after its Retry-After) with backoff on the injected clock.
    ///
    /// Within ``sync(pushDeadline:deadline:full:progress:)`` with a deadline, no request starts
    /// after it and no backoff waits past it: the pull stops with
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
                let delay = options.retry.wait(afterAttempt: attempt, atLeast: wait, using: &random)
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

    /// The Access Manager denial a failed request or pull carries, if any (`docs/access.md`).
    public static func accessDenial(in error: any Error) -> AccessDenial? {
        switch error {
        case WireError.accessDenied(let denial): return denial
        case ReconcilerError.pullFailed(_, _, .accessDenied(let denial)): return denial
        default: return nil
        }
    }

    /// Whether a failed pull must stop the whole sync: the store itself failed (disk full, I/O
    /// error), so nothing more can be recorded.
    static func stopsSync(_ error: any Error) -> Bool { ChatStore<Custom>.isStorageFailure(error) }

    /// Whether the request never left the device.
    static func isOffline(_ error: WireError) -> Bool { error.retryability == .notSent }

    /// Whether a pull failed because the device is offline.
    static func isOffline(_ error: any Error) -> Bool {
        if case ReconcilerError.pullFailed(_, _, let wire)? = error as? ReconcilerError { return isOffline(wire) }
        return false
    }

    /// The least wait before retrying a failed read, or nil when retrying cannot help. A read has
    /// no effect to look for, so every retryable class is simply sent again
    /// (``PubNubWire/WireError/Retryability/minimumWait``).
    static func retryWait(_ error: WireError) -> TimeInterval? { error.retryability.minimumWait }
}

// MARK: Hot and cold channels (the rule is HotChannels')

extension Reconciler {
    /// Marks a channel hot: from now on each sync and gap fill keeps its reactions and members
    /// equal to the server's, as well as its messages. Marks are counted: a channel stays hot
    /// until each mark is taken back with ``unmarkHot(_:)``. Marking does not pull by itself;
    /// call ``refresh(channel:)`` to bring a channel that just became hot up to date (the
    /// façade's `Replica.markHot(_:)` does both).
    ///
    /// ```swift
    /// if try await reconciler.markHot("general") { try await reconciler.refresh(channel: "general") }
    /// ```
    ///
    /// - Returns: Whether the channel became hot (it was not marked before).
    /// - Throws: `ModelValidationError` for an id no channel can have (empty, `.`, `..`, a comma,
    ///   a control character, over 92 bytes); nothing is marked.
    @discardableResult
    public func markHot(_ channel: String) throws(ModelValidationError) -> Bool {
        try Validation.validateStoredIdentifier(channel, field: "channel")
        return hot.mark(channel)
    }

    /// Takes back one ``markHot(_:)``; the channel turns cold when no mark is left.
    public func unmarkHot(_ channel: String) { hot.unmark(channel) }

    /// Whether a sync or gap fill lists this channel's reactions and members
    /// (it is marked hot, or ``ReconcilerOptions/everyChannelHot`` is on).
    public func isHot(_ channel: String) -> Bool { hot.contains(channel) }

    /// The channels marked hot (``markHot(_:)``), sorted.
    public var hotChannels: [String] { hot.marked }

    /// Sets the marks at once, with no suspension point: a replica reopening its store hands its
    /// marks to the new reconciler before anything else can reach it.
    nonisolated package func restoreHotMarks(_ marks: [String: Int]) { hot.replace(marks) }

    /// A one-off full refresh of a channel, hot or not: its new messages, then its reactions and
    /// members made equal to the server's. Four requests when nothing is missing (history,
    /// `/time`, one page of reactions, one of members).
    @discardableResult
    public func refresh(channel: String) async throws -> ChannelRefreshReport {
        var report = ChannelRefreshReport(channel: channel)
        report.history = try await catchUp(channel: channel)
        let snapshot = try await serverSnapshot(atLeast: nil)
        report.reactions = try await pullReactions(channel: channel, snapshot: snapshot)
        report.members = try await pullMembers(channel: channel, snapshot: snapshot)
        return report
    }

    /// A server time to list reactions and members against: the `/time` this reconciler took
    /// last when it is at or after `atLeast` (a fill's gap end), otherwise a new one, never
    /// before `atLeast` (a server answering an earlier time is listed up to the gap's end).
    func serverSnapshot(atLeast floor: Timetoken?) async throws -> Timetoken {
        if let last = lastServerTime, let floor, last >= floor { return last }
        let answer = try await fetch("time") { () async throws(WireError) -> Timetoken in try await client.time() }
        takeServerTime(answer)
        return floor.map { max(answer, $0) } ?? answer
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

/// Errors of the reconciler.
public enum ReconcilerError: Error, Sendable, CustomStringConvertible {
    /// A pull request kept failing (or failed for good); what was applied before stays applied
    /// and the checkpoint is where the last applied page left it.
    case pullFailed(scope: String, attempts: Int, error: WireError)
    /// No conflict log entry with this id.
    case conflictNotFound(Int64)
    /// The entry was already resolved.
    case conflictClosed(Int64)
    /// The entry's op is no longer in the outbox.
    case conflictOpGone(Int64, opId: String?)
    /// A limit out of range.
    case invalidArgument(String)
    /// The sync's deadline passed before this pull could finish; what was applied stays applied
    /// and the next sync resumes from the checkpoint.
    case deadlineExceeded(scope: String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .pullFailed(let scope, let attempts, let error):
            "pull of \(scope) failed after \(attempts) attempt\(attempts == 1 ? "" : "s"): \(error)"
        case .conflictNotFound(let id): "no conflict \(id) in the log"
        case .conflictClosed(let id): "conflict \(id) is already resolved"
        case .conflictOpGone(let id, let opId): "conflict \(id): its op \(opId ?? "-") is no longer in the outbox"
        case .invalidArgument(let message): message
        case .deadlineExceeded(let scope): "pull of \(scope) stopped: the sync's deadline passed"
        }
    }
}

/// The deadline of the sync running in this task, read by every pull request it makes.
enum SyncDeadline {
    @TaskLocal static var current: Date?
}
