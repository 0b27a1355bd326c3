import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

/// What one `Reconciler.sync(pushDeadline:deadline:full:progress:)` did.
public struct SyncReport: Sendable {
    /// The outbox drains (push), added up.
    public var push = DrainReport()
    /// Conflicts settled or left for a person.
    public var conflicts = ConflictReport()
    /// The object pull, or nil when it failed (see ``errors``).
    public var objects: ObjectPullReport?
    /// History per channel.
    public var history: [ChannelPullReport] = []
    /// Reactions per hot channel (`Reconciler.markHot(_:)`).
    public var reactions: [String: ReactionSyncResult] = [:]
    /// Channels whose new messages were pulled but whose reactions and members were not listed
    /// (cold: not marked hot); their listing checkpoints say how fresh they are.
    public var coldChannels = 0
    /// Stored messages that could not be decrypted, read again with the client's crypto module
    /// before the history pull (`Reconciler.decryptPending()`); nil when the client has no
    /// cipher key or nothing was marked.
    public var decrypted: DecryptPendingReport?
    /// What failed, one line each (the rest of the sync still ran).
    public var errors: [String] = []
    /// Why requests wait for a new Access Manager token at the end of the sync (the token expired,
    /// was refused, or there is none yet), or nil: ops and pulls resume when one arrives
    /// (`docs/access.md`; `pnreplicate sync` exits 3 with `waiting for a token`).
    public var waitingForToken: AccessTokenNeed?

    /// Whether anything waits for a new token: the client does, or ops do (refused or not granted).
    public var waitsForToken: Bool { waitingForToken != nil || push.waitingForToken > 0 }

    /// An empty report.
    public init() {}

    /// Whether anything changed locally or remotely (a sync loop stops when a round changes nothing).
    public var changedAnything: Bool {
        push.completed > 0 || conflicts.resolved > 0 || (decrypted?.decrypted ?? 0) > 0 || history.contains { $0.inserted + $0.updated > 0 }
            || reactions.values.contains { $0.added + $0.removed > 0 }
            || objects.map { o in
                [o.users, o.channels, o.memberships, o.members].contains { $0.inserted + $0.updated + $0.removed > 0 }
            } ?? false
    }
}

extension Reconciler {
    /// Pushes, then pulls: drains the outbox, settles conflicts with the configured policies (and
    /// drains what they sent back), then pulls objects, the history of every channel of interest,
    /// and the reactions and members of the hot ones (``markHot(_:)``; a cold channel's may lag,
    /// and the store says by how much). When nothing changed it costs about two requests per 100
    /// channels. With a crypto module, messages stored undecryptable are read again first
    /// (``decryptPending()``), so that a key supplied since the last pull takes effect. A failing
    /// part is reported in ``SyncReport/errors`` and the other parts still run, with three exceptions: when the server cannot be reached or the deadline
    /// passes, the remaining pulls are skipped (reported once); when the store itself fails
    /// (disk full, I/O error), the sync throws that error.
    ///
    /// - Parameters:
    ///   - pushDeadline: when draining stops waiting for ops that cannot be sent yet (offline);
    ///     default one minute from now on the injected clock (never later than `deadline`).
    ///   - deadline: when the whole sync stops: no drain attempt or pull request starts after it
    ///     and no backoff waits past it; parts left undone are reported as
    ///     ``ReconcilerError/deadlineExceeded(scope:)``. A request already under way finishes or
    ///     times out by its transport's own deadline. Nil: no bound but each part's own.
    ///   - full: force (true) or skip (false) a full object listing; nil follows
    ///     ``ReconcilerOptions/fullListingInterval``.
    ///   - progress: called after each applied history page.
    public func sync(
        pushDeadline: Date? = nil, deadline: Date? = nil, full: Bool? = nil,
        progress: (@Sendable (PullProgress) -> Void)? = nil
    ) async throws -> SyncReport {
        var report = try await SyncDeadline.$current.withValue(deadline) {
            try await syncWithinDeadline(
                pushDeadline: min(pushDeadline ?? clock.now.addingTimeInterval(60), deadline ?? .distantFuture),
                full: full, progress: progress)
        }
        report.waitingForToken = client.access.waitingFor
        return report
    }

    private func syncWithinDeadline(
        pushDeadline deadline: Date, full: Bool?, progress: (@Sendable (PullProgress) -> Void)?
    ) async throws -> SyncReport {
        var report = SyncReport()
        if let outbox {
            report.push = try await outbox.drain(until: deadline)
            // A settled conflict goes back to the queue; a resend may meet a newer version again.
            for _ in 0...max(0, options.conflicts.maxAutomaticAttempts) {
                let settled = try await resolveConflicts()
                report.conflicts.resolved += settled.resolved
                report.conflicts.waiting = settled.waiting
                report.conflicts.errors = settled.errors
                report.errors += settled.errors.map { "conflicts: \($0)" }
                guard settled.resolved > 0 else { break }
                report.push.append(try await outbox.drain(until: Swift.max(deadline, clock.now)))
            }
        }
        // The first failure that would fail every later pull the same way (unreachable, deadline).
        var unreachable: String?
        // One `/time` per sync, and only when a hot channel's reactions or members are listed:
        // taken by the first listing that needs it, and shared by the rest.
        var snapshot: Timetoken?
        do {
            let pulled = try await pullObjects(full: full, members: .hot(and: []), snapshot: nil)
            report.objects = pulled.report
            snapshot = pulled.snapshot
        } catch {
            if let line = try Self.pullFailure(error, unreachable: &unreachable) { report.errors.append("objects: \(line)") }
        }
        let channels = try await channelsOfInterest()
        if let unreachable {
            report.errors.append("history and reactions of \(channels.count) channel\(channels.count == 1 ? "" : "s"): skipped (\(unreachable))")
            return report
        }
        if client.crypto != nil {
            let pending = try await decryptPending()
            if pending.decrypted + pending.stillUndecryptable > 0 { report.decrypted = pending }
        }
        report.history = try await pullHistory(channels: channels, progress: progress)
        report.errors += report.history.compactMap { r in r.error.map { "history \(r.channel): \($0)" } }
        if let failed = report.history.first(where: { $0.endedPulls }) { unreachable = failed.error }
        // Only the hot channels' reactions: a cold channel's lag, and its checkpoint says since when.
        // (The user's own channel holds events, not messages: it has no reactions.)
        let hot = channels.filter { $0 != userId && isHot($0) }
        report.coldChannels = channels.filter { $0 != userId }.count - hot.count
        for channel in hot {
            if let unreachable {
                report.errors.append("reactions: \(hot.count) channel\(hot.count == 1 ? "" : "s") skipped (\(unreachable))")
                break
            }
            do {
                if snapshot == nil { snapshot = try await serverSnapshot(atLeast: nil) }
                report.reactions[channel] = try await pullReactions(channel: channel, snapshot: snapshot)
            } catch {
                if let line = try Self.pullFailure(error, unreachable: &unreachable) {
                    report.errors.append("reactions \(channel): \(line)")
                }
            }
        }
        // A thread root the reactions just named (a `threadRootId` action on a hot channel's
        // message): its replies in this sync, not the next, so the thread's reply count is right
        // as soon as the root shows one.
        guard unreachable == nil, !hot.isEmpty else { return report }
        let threads = try await channelsOfInterest().filter { !channels.contains($0) && ChatSDKFormat.threadParent(ofChannel: $0) != nil }
        if !threads.isEmpty {
            let pulled = try await pullHistory(channels: threads, progress: progress)
            report.history += pulled
            report.errors += pulled.compactMap { r in r.error.map { "history \(r.channel): \($0)" } }
        }
        return report
    }
}

extension Reconciler {
    /// How a sync takes a failed pull: cancellation and store failures end the sync (rethrown);
    /// anything else becomes a report line, and a failure every later pull would meet too
    /// (unreachable, deadline) is remembered in `unreachable` so that the rest are skipped.
    static func pullFailure(_ error: any Error, unreachable: inout String?) throws -> String? {
        if error is CancellationError || stopsSync(error) { throw error }
        if endsPulls(error), unreachable == nil { unreachable = "\(error)" }
        return "\(error)"
    }
}

extension DrainReport {
    /// Adds a later drain: its work is added, and what it left replaces what this one left.
    mutating func append(_ later: DrainReport) {
        completed += later.completed
        attempts += later.attempts
        probes += later.probes
        remaining = later.remaining
        deadLetters = later.deadLetters
        conflicts = later.conflicts
        stoppedAtDeadline = later.stoppedAtDeadline
        peakWALBytes = max(peakWALBytes, later.peakWALBytes)
    }
}

// MARK: Messages stored undecryptable, read again

/// What `Reconciler.decryptPending()` did.
public struct DecryptPendingReport: Sendable, Hashable, Codable {
    /// Messages now readable.
    public var decrypted = 0
    /// Messages that still do not decrypt (a wrong key, or not encrypted at all).
    public var stillUndecryptable = 0

    /// A report with these counts (nothing done when both are 0).
    public init(decrypted: Int = 0, stillUndecryptable: Int = 0) {
        self.decrypted = decrypted
        self.stillUndecryptable = stillUndecryptable
    }
}

extension Reconciler {
    /// Reads again every stored message whose payload could not be decrypted
    /// (``undecryptableContentType``) with the client's crypto module: each one that decrypts now
    /// replaces its marked row with the message it holds, all in one transaction. Run it after
    /// the app supplies the right cipher key (`pnreplicate decrypt-pending`);
    /// ``sync(pushDeadline:deadline:full:progress:)`` runs it before its history pull, and a pull
    /// or live event that brings a marked message again, readable now, replaces it as well.
    public func decryptPending() async throws -> DecryptPendingReport {
        guard let crypto = client.crypto else { return DecryptPendingReport() }
        let marked = try await store.fetch(store.queries.messages(withContentType: Self.undecryptableContentType))
        var readable: [Message] = []
        for stored in marked {
            guard let timetoken = stored.timetoken, let payload = stored.content,
                  case (let plaintext, nil) = crypto.decryptKeepingPayload(payload)
            else { continue }
            let publisher = stored.userId == Self.unknownPublisher ? nil : stored.userId
            readable.append(try Self.message(
                HistoryMessage(message: plaintext, timetoken: timetoken, uuid: publisher), channel: stored.channelId))
        }
        if !readable.isEmpty {
            let logger = logger, messages = readable
            try await store.storeTransaction { tx in
                let ops = OpTransaction<Custom>(tx)
                var result = HistoryPageResult()  // `apply` replaces each marked row
                var lookups = try ServerMessageLookups(prefetching: messages, tx: tx)
                for message in messages { try ServerMessages<Custom>.apply(message, ops: ops, lookups: &lookups, into: &result, logger: logger) }
            }
        }
        return DecryptPendingReport(decrypted: readable.count, stillUndecryptable: marked.count - readable.count)
    }
}

// MARK: Unread counts

extension Reconciler {
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
        var positions = try await store.fetch(store.queries.readPositions(of: userId))
        if let channels { positions = positions.filter { channels.contains($0.key) } }
        let ordered = positions.keys.sorted()
        var counts: [String: Int] = [:]
        for start in stride(from: 0, to: ordered.count, by: 100) {
            let chunk = Array(ordered[start..<min(start + 100, ordered.count)])
            let since = chunk.map { (positions[$0] ?? nil) ?? Timetoken(rawValue: 0) }
            let page = try await fetch("message-counts") { () async throws(WireError) -> [String: Int] in
                try await client.messageCounts(channels: chunk, since: since)
            }
            counts.merge(page) { _, new in new }
        }
        return counts
    }
}

/// A channel's unread count and where it comes from.
public struct UnreadCount: Sendable, Hashable {
    /// Where a count comes from.
    public enum Source: String, Sendable, Hashable {
        /// The store: it holds every message after the read position, so the count is exact
        /// (others' messages, soft-deleted ones left out).
        case store
        /// PubNub's message counts: the store may not hold every message after the read
        /// position (own and soft-deleted messages included, capped at 10,000).
        case pubnub
    }

    /// How many messages are unread.
    public var count: Int
    /// Where the number comes from.
    public var source: Source

    /// A count.
    public init(count: Int, source: Source) {
        self.count = count
        self.source = source
    }
}

extension Reconciler {
    /// The user's unread counts, exact from the store wherever it can be, from PubNub elsewhere.
    ///
    /// The store's count is exact when the store holds every message after the read position:
    /// the position is at or after the oldest stored message of the channel (history pulls keep
    /// what is stored contiguous up to the present). A channel without a read position, or read
    /// only up to a point older than anything stored, is asked of PubNub
    /// (``remoteUnreadCounts(channels:)``). Offline, use the store's
    /// ``ReplicaStore/ChatQueries/unreadCounts(for:)``, which needs no network.
    public func unreadCounts() async throws -> [String: UnreadCount] {
        let local = try await store.fetch(store.queries.unreadCounts(for: userId))
        let positions = try await store.fetch(store.queries.readPositions(of: userId))
        var result: [String: UnreadCount] = [:]
        var remote: [String] = []
        for (channel, count) in local {
            let oldest = try await store.oldestTimetoken(channel: channel)
            if let position = positions[channel] ?? nil, let oldest, position >= oldest {
                result[channel] = UnreadCount(count: count, source: .store)
            } else {
                remote.append(channel)
            }
        }
        if !remote.isEmpty {
            for (channel, count) in try await remoteUnreadCounts(channels: remote) {
                result[channel] = UnreadCount(count: count, source: .pubnub)
            }
        }
        return result
    }
}

// MARK: Trusted time (the rule is TrustedTime's)

extension Reconciler {
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

    /// Takes a `/time` answer: the snapshot of the next listings (``lastServerTime``), and trusted
    /// when it agrees with the device clock. Returns whether it was trusted.
    @discardableResult
    func takeServerTime(_ answer: Timetoken) -> Bool {
        lastServerTime = answer
        let taken = trustedTime.accept(serverTime: answer, now: clock.now)
        if !taken {
            logger.warning("the server's time disagrees with this device's clock; it is not trusted", metadata: [
                "server": "\(answer)", "tolerance": "\(trustedTime.tolerance)",
            ])
        }
        return taken
    }

    /// Whether a subscribe cursor can be the server's present (``TrustedTime/isPlausible(cursor:now:)``).
    func isPlausible(cursor: Timetoken) -> Bool {
        trustedTime.isPlausible(cursor: cursor, now: clock.now)
    }

    /// Where a checkpoint may move given `cursor` (``TrustedTime/clamp(_:)``), or nil.
    func trustedCheckpoint(for cursor: Timetoken) -> Timetoken? { trustedTime.clamp(cursor) }
}

// Applying a history page: its messages and the checkpoint in one transaction.
extension Reconciler {
    /// Applies one history page and moves the channel's checkpoint, in one transaction: either both
    /// are stored or neither is, so a checkpoint never passes a page that was not applied. A nil
    /// checkpoint leaves the stored one alone (scroll-back pages below it).
    ///
    /// Messages are upserted by id. A message of ours still pending locally becomes `sent` with
    /// the server's timetoken, and its publish op leaves the outbox (announced by the outbox):
    /// the pull proved it arrived.
    ///
    /// - Parameter beforeCommit: runs inside the transaction after the writes (tests use it to
    ///   fail between applying a page and committing it).
    func applyHistoryPage(
        _ messages: [Message], checkpoint: SyncCheckpoint?, beforeCommit: (@Sendable () throws -> Void)? = nil
    ) async throws(StoreError) -> HistoryPageResult {
        let logger = logger
        do {
            let applied = try await ops.commit { ops in
                let tx = ops.tx
                var result = HistoryPageResult()
                var lookups = try ServerMessageLookups(prefetching: messages, tx: tx)
                for message in messages { try ServerMessages<Custom>.apply(message, ops: ops, lookups: &lookups, into: &result, logger: logger) }
                if let checkpoint { try tx.write(checkpoint) }
                try beforeCommit?()
                return result
            }
            // Stored messages' timetokens are server times this device may trust (TrustedTime).
            if let newest = messages.lazy.compactMap(\.timetoken).max() { trustedTime.stored(message: newest) }
            return applied
        } catch {
            throw ChatStore<Custom>.storeError(error)
        }
    }
}
