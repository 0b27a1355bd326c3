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
    /// The pull of each app-data class (``ReconcilerOptions/appData``), by class name; a class
    /// whose pull failed is missing (see ``errors``).
    public var appData: [String: AppClassPullResult] = [:]
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
    /// What the storage budget evicted after the pulls (`StoreOptions.retention`), or
    /// nil when the store has no retention policy.
    public var retention: RetentionReport?
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
            || reactions.values.contains { $0.added + $0.removed > 0 } || appData.values.contains { (result: AppClassPullResult) in result.changedAnything }
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
        // The storage budget: the store back within it (docs/store.md, "Storage budget").
        if let policy = store.retention {
            report.retention = try await store.enforceRetention(policy, userId: userId, protecting: Set(hotChannels))
        }
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
            let pulled = try await objectSync.pullObjects(full: full, members: .hot(and: []), snapshot: nil)
            report.objects = pulled.report
            snapshot = pulled.snapshot
        } catch {
            if let line = try Self.pullFailure(error, unreachable: &unreachable) { report.errors.append("objects: \(line)") }
        }
        if unreachable == nil {
            let pulled = try await appData.pull(full: full)
            report.appData = pulled.results
            report.errors += pulled.errors
            unreachable = pulled.unreachable
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
                report.reactions[channel] = try await reactionSync.pullReactions(channel: channel, snapshot: snapshot)
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
