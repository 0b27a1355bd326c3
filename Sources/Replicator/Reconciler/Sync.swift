import Foundation
import ReplicaModel
import ReplicaStore

/// What one ``Reconciler/sync(pushDeadline:deadline:full:progress:)`` did.
public struct SyncReport: Sendable {
    /// The outbox drains (push), added up.
    public var push = DrainReport()
    /// Conflicts settled or left for a person.
    public var conflicts = ConflictReport()
    /// The object pull, or nil when it failed (see ``errors``).
    public var objects: ObjectPullReport?
    /// History per channel.
    public var history: [ChannelPullReport] = []
    /// Reactions per channel.
    public var reactions: [String: ReactionSyncResult] = [:]
    /// Stored messages that could not be decrypted, read again with the client's crypto module
    /// before the history pull (``Reconciler/decryptPending()``); nil when the client has no
    /// cipher key or nothing was marked.
    public var decrypted: DecryptPendingReport?
    /// What failed, one line each (the rest of the sync still ran).
    public var errors: [String] = []

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
    /// drains what they sent back), then pulls objects, the history of every channel of interest
    /// and their reactions. With a crypto module, messages stored undecryptable are read again
    /// first (``decryptPending()``), so that a key supplied since the last pull takes effect. A failing part is reported in ``SyncReport/errors`` and the other
    /// parts still run, with three exceptions: when the server cannot be reached or the deadline
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
        try await SyncDeadline.$current.withValue(deadline) {
            try await syncWithinDeadline(
                pushDeadline: min(pushDeadline ?? clock.now.addingTimeInterval(60), deadline ?? .distantFuture),
                full: full, progress: progress)
        }
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
        do {
            report.objects = try await pullObjects(full: full)
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
        for channel in channels {
            if let unreachable {
                report.errors.append("reactions: \(channels.count) channel\(channels.count == 1 ? "" : "s") skipped (\(unreachable))")
                break
            }
            do {
                report.reactions[channel] = try await pullReactions(channel: channel)
            } catch {
                if let line = try Self.pullFailure(error, unreachable: &unreachable) {
                    report.errors.append("reactions \(channel): \(line)")
                }
            }
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
    }
}
