import Foundation
import Logging
import PubNubWire
import ReplicaModel
import ReplicaStore

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
public actor Reconciler<Custom: ChatCustomData>: ReconcilerPart {
    /// A message with the store's custom type.
    public typealias Message = ChatMessage<Custom.Message>

    /// What the reconciler's parts share (``PullContext``).
    nonisolated let context: PullContext<Custom>
    /// The store.
    public nonisolated var store: ChatStore<Custom> { context.store }
    /// The wire client.
    public nonisolated var client: PubNubClient { context.client }
    /// The outbox whose ops a pull may finish and whose conflicts are settled; optional.
    public nonisolated var outbox: Outbox<Custom>? { context.outbox }
    /// Where users, channels and memberships are read (the outbox's backend, ``Outbox/objects``).
    public nonisolated var objects: any ObjectBackend { context.ops.objects }
    /// The options.
    public nonisolated var options: ReconcilerOptions { context.options }
    /// The current user.
    public nonisolated var userId: String { context.client.configuration.userId }

    /// A reconciler over `store` and `client`; pass the app's `outbox` so that pulls can finish
    /// its publishes and conflicts can be settled.
    public init(
        store: ChatStore<Custom>, client: PubNubClient, outbox: Outbox<Custom>? = nil,
        options: ReconcilerOptions = ReconcilerOptions(), clock: any ReplicaClock = SystemClock(),
        random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(),
        logger: Logger = Logger(label: "pnreplicate.reconciler")
    ) {
        context = PullContext(
            store: store, client: client, outbox: outbox, options: options, clock: clock, random: random, logger: logger)
    }

    /// The Access Manager denial a failed request or pull carries, if any (`docs/access.md`).
    public static func accessDenial(in error: any Error) -> AccessDenial? {
        switch error {
        case WireError.accessDenied(let denial): return denial
        case ReconcilerError.pullFailed(_, _, .accessDenied(let denial)): return denial
        default: return nil
        }
    }
}

// The work of each part (``HistorySync``, ``ObjectSync``, ``ReactionSync``, ``UnreadCounts``,
// ``ConflictResolver``), as the reconciler's API.
extension Reconciler {
    /// Catches up the history of `channels` from their checkpoints to now, in shared requests
    /// wherever they carry more than paging alone (up to ``ReconcilerOptions/channelsPerRequest``
    /// channels whose ids take at most ``ReconcilerOptions/channelBytesPerRequest`` bytes of the
    /// path, 25 messages each): quiet channels share one request, and a first pull or a long gap
    /// goes in shared rounds that take the channels active at the same time together; a channel
    /// no round serves is paged on its own (`docs/reconciler.md`, "Shared requests").
    ///
    /// A channel whose pull fails is reported with its error; the others go on.
    public func pullHistory(
        channels: [String], progress: (@Sendable (PullProgress) -> Void)? = nil
    ) async throws -> [ChannelPullReport] {
        try await history.pullHistory(channels: channels, progress: progress)
    }

    /// Pages one channel's history backward from now to its checkpoint, applying each page with
    /// the checkpoint's new position in one transaction. An interrupted catch-up (crash, error)
    /// resumes at the page where it stopped; messages published meanwhile are fetched by the
    /// next round, which runs until a round's first page is short.
    ///
    /// Pipelined: a fetcher requests and decodes the round's pages on the other core while the
    /// writer commits; up to ``ReconcilerOptions/pagesPerCommit`` pages wait for the writer (so
    /// memory stays bounded), and pages that are ready together commit together, each
    /// transaction with the checkpoint after its last page.
    @discardableResult
    public func catchUp(
        channel: String, progress: (@Sendable (PullProgress) -> Void)? = nil
    ) async throws -> ChannelPullReport {
        try await history.catchUp(channel: channel, progress: progress)
    }

    /// Scroll-back: the page of messages just older than the oldest stored one (`start` = the
    /// oldest local timetoken, exclusive). Returns the messages stored, oldest first; fewer than
    /// `limit` means the channel's history begins there.
    public func loadOlder(channel: String, limit: Int = 100) async throws -> [Message] {
        try await history.loadOlder(channel: channel, limit: limit)
    }

    /// Reads the server's history of `channel` without storing it, with PubNub's exact
    /// semantics: `start` exclusive, `end` inclusive, oldest first, at most `limit` (≤ 100).
    /// `reverse` takes the oldest slice instead of the newest (legacy v2 history, which carries
    /// no publisher), and like PubNub it is ignored when both bounds are given.
    public func remoteHistory(
        channel: String, start: Timetoken? = nil, end: Timetoken? = nil, reverse: Bool = false, limit: Int = 100
    ) async throws -> [Message] {
        try await history.remoteHistory(channel: channel, start: start, end: end, reverse: reverse, limit: limit)
    }

    /// Pulls App Context objects: users and channels (incrementally with an `updated` filter, or
    /// in full at least every ``ReconcilerOptions/fullListingInterval``, removing what the server
    /// no longer has), the current user's memberships, and the members of the hot channels
    /// (``markHot(_:)``) and of `channels` (both in full: membership lists carry no deletions
    /// otherwise). A cold channel's members are not listed: they lag until it is hot or refreshed
    /// (``refresh(channel:)``), and its member checkpoint says since when.
    ///
    /// Objects with unsent local edits keep showing them over the server's version.
    public func pullObjects(full: Bool? = nil, channels: [String]? = nil) async throws -> ObjectPullReport {
        try await objectSync.pullObjects(full: full, channels: channels)
    }

    /// Binds the classes of ``ReconcilerOptions/appData``, which the caller checked
    /// (``AppDataDeclaration/validate()``), to the store (a changed declaration: slots filled
    /// again, checkpoints reset, undeclared classes dropped; `docs/app-data.md`). Opening a
    /// replica does it once, before anything pulls.
    @discardableResult
    package nonisolated func bindAppData() throws -> AppDataCatalog.Binding { try appData.bind() }

    /// The channels a sync pulls: ``ReconcilerOptions/channels``, `extra`, the hot channels
    /// (``markHot(_:)``), the current user's stored memberships and every channel with stored
    /// messages.
    public func channelsOfInterest(extra: [String] = []) async throws -> [String] {
        try await objectSync.channelsOfInterest(extra: extra)
    }

    /// Whether the current Access Manager token (if any) grants reading `channel`: channels the
    /// app never named (the user's own, the Chat SDK's moderation ones) are followed only then.
    /// A grant only a pattern the client will not evaluate could give does not count: one channel
    /// the server does not grant would have it refuse a whole subscribe.
    public nonisolated func tokenAllowsReading(_ channel: String) -> Bool {
        objectSync.tokenAllowsReading(channel)
    }

    /// Reads the current user's mute list (a 404: they have none) and stores it under the unsent
    /// mute and unmute ops. Returns whether the list the app sees changed.
    @discardableResult
    public func pullMuteList() async throws -> Bool {
        try await objectSync.pullMuteList()
    }

    /// Makes the stored reactions (all message actions) on the channel's stored messages equal to
    /// the server's, with the outbox's unsent reaction changes laid over them (read-your-writes).
    ///
    /// The server's actions are listed from the present (a `time` request fixes the snapshot)
    /// back to the oldest stored message, then replace the local set in one transaction. The
    /// channel's reaction checkpoint then says they are complete up to that snapshot.
    @discardableResult
    public func pullReactions(channel: String) async throws -> ReactionSyncResult {
        try await reactionSync.pullReactions(channel: channel)
    }

    /// Reads again every stored message whose payload could not be decrypted
    /// (``undecryptableContentType``) with the client's crypto module: each one that decrypts now
    /// replaces its marked row with the message it holds, all in one transaction. Run it after
    /// the app supplies the right cipher key (`pnreplicate decrypt-pending`);
    /// ``sync(pushDeadline:deadline:full:progress:)`` runs it before its history pull, and a pull
    /// or live event that brings a marked message again, readable now, replaces it as well.
    public func decryptPending() async throws -> DecryptPendingReport {
        try await history.decryptPending()
    }

    /// PubNub's own unread counts of the user's channels, as the Chat SDK's
    /// `getUnreadMessagesCounts` reads them: the message-counts API after each stored read
    /// position (timetoken 0 where there is none), 100 channels a request.
    ///
    /// Use it for channels whose history the store has not pulled in full (the local
    /// ``ReplicaStore/ChatQueries/unreadCounts(for:)`` counts only what the store holds). PubNub's
    /// counts differ from the local rule: they include the user's own and soft-deleted messages,
    /// and PubNub caps each at 10,000 (`docs/chat.md`).
    ///
    /// - Parameter channels: only these channels (default: every membership of the user in the store).
    public func remoteUnreadCounts(channels: [String]? = nil) async throws -> [String: Int] {
        try await unread.remoteUnreadCounts(channels: channels)
    }

    /// The user's unread counts, exact from the store wherever it can be, from PubNub elsewhere.
    ///
    /// The store's count is exact when the store holds every message after the read position:
    /// the position is at or after the oldest stored message of the channel (history pulls keep
    /// what is stored contiguous up to the present). A channel without a read position, or read
    /// only up to a point older than anything stored, is asked of PubNub
    /// (``remoteUnreadCounts(channels:)``). Offline, use the store's
    /// ``ReplicaStore/ChatQueries/unreadCounts(for:)``, which needs no network.
    public func unreadCounts() async throws -> [String: UnreadCount] {
        try await unread.unreadCounts()
    }

    /// Settles every conflicted edit in the outbox with the policy of its entity kind, writing one
    /// conflict-log entry per decision. An op that went back to the queue is sent by the next
    /// drain; one already settled automatically ``ConflictPolicies/maxAutomaticAttempts`` times
    /// is left in `conflict` for a person, with an open log entry.
    @discardableResult
    public func resolveConflicts() async throws -> ConflictReport {
        try await conflictResolver.resolveConflicts()
    }

    /// Resolves a conflict waiting for a person (an open log entry, or any entry whose op is
    /// still in conflict) by taking the local edit, the server's version or their merge. The
    /// server's version is fetched again first, so the decision is made against what it holds now.
    @discardableResult
    public func resolve(conflictId: Int64, take: ConflictTake) async throws -> ConflictRecord {
        try await conflictResolver.resolve(conflictId: conflictId, take: take)
    }
}

// What the history marks stored messages with.
extension Reconciler {
    /// The content type of a message whose payload could not be decrypted (a wrong or missing
    /// cipher key, or corrupt data): `content` holds the payload as received, `text` is empty.
    /// ``decryptPending()`` reads such messages again once the key is right.
    public static var undecryptableContentType: String { "pubnub/undecryptable" }
    /// The content type of a message whose payload is not in the chat format.
    public static var foreignContentType: String { "pubnub/raw" }
    /// The content type of a message in the PubNub Chat SDK's format (`{"type":"text","text":…,
    /// "files":[]}`): its text is the payload's `text`, with mentions and links in it
    /// (``ReplicaModel/ChatSDKFormat/textContentType``).
    public static var chatSDKTextContentType: String { ChatSDKFormat.textContentType }
    /// The user id given to a message whose publisher history did not name.
    public static var unknownPublisher: String { "unknown" }
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

    /// How far the server's clock was ahead of this device's at the newest `/time` answer
    /// (negative: behind), and when; nil before any (``ServerTime/offset``). For diagnostics.
    nonisolated package var serverClockOffset: (seconds: TimeInterval, at: Date)? { context.serverTime.offset }

    /// A one-off full refresh of a channel, hot or not: its new messages, then its reactions and
    /// members made equal to the server's. Four requests when nothing is missing (history,
    /// `/time`, one page of reactions, one of members).
    @discardableResult
    public func refresh(channel: String) async throws -> ChannelRefreshReport {
        var report = ChannelRefreshReport(channel: channel)
        report.history = try await history.catchUp(channel: channel)
        let snapshot = try await serverSnapshot(atLeast: nil)
        report.reactions = try await reactionSync.pullReactions(channel: channel, snapshot: snapshot)
        report.members = try await objectSync.pullMembers(channel: channel, snapshot: snapshot)
        return report
    }
}
