import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

/// What waits to be sent: retrying, discarding and settling ops, their outcomes and events, and sending them once.
///
/// ```swift
/// let receipt = try await replica.messages.send(text: "hi", to: "general")
/// if case .failed(let failure) = try await replica.outbox.completion(of: receipt.opId!) { show(failure) }
/// ```
///
/// Reached through ``Replica/outbox``: a value made per access, holding only the replica.
public struct ReplicaOutbox<Custom: ChatCustomData>: Sendable {
    /// The replica these calls go through.
    let replica: Replica<Custom>

    /// Puts a dead letter or a conflicted op back in the queue (a conflict is retried over the
    /// server's current version: the app chose to keep its edit).
    public func retry(opId: String) async throws {
        try await replica.write { try await $0.retry(opId: opId) }
    }

    /// Withdraws an unsent op and reverts its local change; returns every op id removed.
    @discardableResult
    public func discard(opId: String) async throws -> [String] {
        try await replica.write { try await $0.discard(opId: opId) }
    }

    /// Resolves a conflict waiting for a person (an entry the `.manual` policy left open, or any
    /// whose op is still in conflict) by taking the local edit, the server's version or their
    /// merge. The server's version is fetched again first, so the decision is made against what
    /// it holds now; a local edit taken goes back to the queue, over that version.
    ///
    /// ```swift
    /// for conflict in try await replica.fetch(replica.queries.conflicts()) where conflict.isOpen {
    ///     try await replica.resolveConflict(id: conflict.id, take: .merged)
    /// }
    /// ```
    @discardableResult
    public func resolveConflict(id: Int64, take: ConflictTake) async throws -> ConflictRecord {
        try await replica.recounting { try await $0.reconciler.resolve(conflictId: id, take: take) }
    }

    /// Waits for an op's final outcome (sent, failed, conflict or discarded), from the `opId` of
    /// a write's receipt. Returns at once for an op already dead, in conflict, or gone;
    /// cancelling the waiting task ends the wait with `.unknown` (the op goes on).
    ///
    /// ```swift
    /// let receipt = try await replica.send(text: "hi", to: "general")
    /// if case .failed(let failure) = try await replica.completion(of: receipt.opId!) { show(failure) }
    /// ```
    public func completion(of opId: String) async throws -> OutboxOutcome {
        let outbox = try await replica.openParts().outbox
        return await outbox.completion(of: opId)
    }

    /// Every outbox event from now on (an op queued, attempted, sent, failed...), until the
    /// consumer stops iterating or ``Replica/suspend()`` closes the store.
    public func events() async throws -> AsyncStream<OutboxEvent> {
        let outbox = try await replica.openParts().outbox
        return await outbox.events()
    }

    /// Sends what waits now, once, and returns what happened: for a background task with a
    /// deadline (iOS `BGProcessingTask`, a CLI's one-shot send), when ``Replica/start()`` is not running.
    /// Returns when nothing more can be sent, or when the next attempt would be after `deadline`.
    /// Without a deadline, a device that stays offline keeps trying until the task is cancelled.
    ///
    /// ```swift
    /// let report = try await replica.sendPending(until: .now.addingTimeInterval(25))
    /// print(report.completed, report.remaining)
    /// ```
    @discardableResult
    public func sendPending(until deadline: Date? = nil) async throws -> DrainReport {
        try await replica.recounting { try await $0.outbox.drain(until: deadline) }
    }

    /// The outbox in send order, each op with why it waits and the exact request it would make,
    /// read page by page as it is iterated (the first ops come at once; two pages are in memory at
    /// most, however long the outbox): a dry run, which sends nothing and changes nothing, so it
    /// works on a store opened with ``Replica/init(readingStoreAt:userId:options:)``. What
    /// `pnreplicate --dry-run` prints.
    ///
    /// ```swift
    /// for try await entry in try await replica.plannedSends() {
    ///     print(entry.position, entry.kind, entry.waiting, entry.request?.path ?? "-")
    /// }
    /// ```
    public func planned(pageSize: Int = 500) async throws -> PlannedSends<Custom> {
        PlannedSends(entries: try await replica.currentParts().outbox.planEntries(pageSize: pageSize))
    }

    /// Runs `write` (one write through this replica, e.g. `replica.appData.update(…)`) with
    /// nothing kept: the ops it would queue, each with the exact request it would send
    /// (``Replicator/Outbox/rehearsing(_:)``). What a write command's `--dry-run` prints.
    package func rehearsing<Value: Sendable>(_ write: () async throws -> Value) async throws -> OutboxRehearsal<Value> {
        try await replica.currentParts().outbox.rehearsing(write)
    }
}

extension Replica {
    /// What waits to be sent: retrying, discarding and settling ops, their outcomes and events, and sending them once.
    public nonisolated var outbox: ReplicaOutbox<Custom> { ReplicaOutbox(replica: self) }
}
