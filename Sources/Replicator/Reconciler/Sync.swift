import Foundation
import ReplicaModel
import ReplicaStore

/// What one ``Reconciler/sync(pushDeadline:full:progress:)`` did.
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
    /// What failed, one line each (the rest of the sync still ran).
    public var errors: [String] = []

    /// An empty report.
    public init() {}

    /// Whether anything changed locally or remotely (a sync loop stops when a round changes nothing).
    public var changedAnything: Bool {
        push.completed > 0 || conflicts.resolved > 0 || history.contains { $0.inserted + $0.updated > 0 }
            || reactions.values.contains { $0.added + $0.removed > 0 }
            || objects.map { o in
                [o.users, o.channels, o.memberships, o.members].contains { $0.inserted + $0.updated + $0.removed > 0 }
            } ?? false
    }
}

extension Reconciler {
    /// Pushes, then pulls: drains the outbox, settles conflicts with the configured policies (and
    /// drains what they sent back), then pulls objects, the history of every channel of interest
    /// and their reactions. A failing part is reported in ``SyncReport/errors`` and the other
    /// parts still run.
    ///
    /// - Parameters:
    ///   - pushDeadline: when draining stops waiting for ops that cannot be sent yet (offline);
    ///     default one minute from now on the injected clock.
    ///   - full: force (true) or skip (false) a full object listing; nil follows
    ///     ``ReconcilerOptions/fullListingInterval``.
    ///   - progress: called after each applied history page.
    public func sync(
        pushDeadline: Date? = nil, full: Bool? = nil, progress: (@Sendable (PullProgress) -> Void)? = nil
    ) async throws -> SyncReport {
        var report = SyncReport()
        let deadline = pushDeadline ?? clock.now.addingTimeInterval(60)
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
        do {
            report.objects = try await pullObjects(full: full)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            report.errors.append("objects: \(error)")
            // Offline: every other pull would fail the same way.
            if Self.isOffline(error) { return report }
        }
        let channels = try await channelsOfInterest()
        report.history = try await pullHistory(channels: channels, progress: progress)
        report.errors += report.history.compactMap { r in r.error.map { "history \(r.channel): \($0)" } }
        for channel in channels {
            do {
                report.reactions[channel] = try await pullReactions(channel: channel)
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                report.errors.append("reactions \(channel): \(error)")
            }
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
    }
}
