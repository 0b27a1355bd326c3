import Foundation
import ReplicaModel
import ReplicaStore

/// A write tried with nothing kept (``Outbox/rehearsing(_:)``): what it returned, and each op it
/// queued or changed as it would have stood, with the exact request it would have sent. What a
/// write command's `--dry-run` prints (`pnreplicate entity patch … --dry-run`).
package struct OutboxRehearsal<Value: Sendable>: Sendable {
    /// What the write returned. A receipt in it names an op that was not kept.
    package var value: Value
    /// The ops the write queued, or merged into (a coalesced edit shows the op it joined), in the
    /// order they were touched. Empty when it queued nothing (an edit that changes nothing, a
    /// delete that cancelled an unsent create).
    package var plan: [OutboxPlanEntry]
}

/// The plans gathered by the commits of one rehearsal.
final class RehearsalLog: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [OutboxPlanEntry] = []

    func append(_ more: [OutboxPlanEntry]) { lock.withLock { entries += more } }
    var plan: [OutboxPlanEntry] { lock.withLock { entries } }

    /// Set while a rehearsal runs: ``Outbox/commit(_:)`` plans and rolls back instead of committing.
    @TaskLocal static var current: RehearsalLog?
}

/// Thrown out of a rehearsed transaction, so that it rolls back, carrying what it read.
private struct RolledBack<Value: Sendable>: Error {
    var value: Value
    var plan: [OutboxPlanEntry]
}

extension Outbox {
    /// Runs `write` (a write through this outbox, e.g. `outbox.appRecords.update(…)`) so that
    /// nothing is kept: each commit it makes is rolled back once the ops it queued or merged into
    /// are read and planned. The store is left as it was, nothing is sent, no event is emitted
    /// and no op completes.
    ///
    /// Every commit sees the store without the ones before it, so rehearse one write at a time;
    /// a write that does more than one commit (a send with files copies them first) is not for
    /// rehearsing. Throws what the write throws: a write the store would refuse is refused here
    /// too, with nothing stored.
    ///
    /// ```swift
    /// let rehearsal = try await outbox.rehearsing { try await outbox.appRecords.update("Poll", id: id) { $0.payload["closed"] = true } }
    /// print(rehearsal.plan.first?.request?.body ?? "nothing to send")   // the JSON Patch
    /// ```
    package nonisolated func rehearsing<Value: Sendable>(_ write: () async throws -> Value) async throws -> OutboxRehearsal<Value> {
        let log = RehearsalLog()
        let value = try await RehearsalLog.$current.withValue(log) { try await write() }
        return OutboxRehearsal(value: value, plan: log.plan)
    }

    /// ``commit(_:)`` under a rehearsal: the body runs, the ops it touched are planned in the same
    /// transaction, and the transaction rolls back.
    func rehearse<T: Sendable>(_ body: @escaping @Sendable (OpTransaction<Custom>) throws -> T, into log: RehearsalLog) async throws -> T {
        let userId = userId, push = client.crypto == nil ? options.push : nil, objects = objects, now = clock.now
        do {
            _ = try await store.transaction { [self] tx in
                let ops = OpTransaction(tx, actingUser: userId, push: push, objects: objects)
                let value = try body(ops)
                var touched: [String] = []
                for event in ops.changes.events {
                    switch event {
                    case .enqueued(let id, _): touched.append(id)
                    case .coalesced(let into?, _): touched.append(into)
                    default: break
                    }
                }
                var plan: [OutboxPlanEntry] = []
                var seen = Set<String>()
                for id in touched where seen.insert(id).inserted {
                    guard let entry = try tx.outbox.op(id: id) else { continue }
                    let waiting: String
                    if let head = try tx.outbox.laneHead(lane: entry.lane, states: Planner.live), head.id != entry.id {
                        waiting = "behind \(head.id)"
                    } else {
                        waiting = Outbox.describe(OutboxWait.of(head: try LaneHead.of(entry, in: tx), now: now), entry: entry)
                    }
                    plan.append(Planner.entry(
                        entry, position: try tx.outbox.position(ofSeq: entry.seq), waiting: waiting,
                        resolved: OutboxRequests.Resolved(ifMatch: entry.baseETag), outbox: self, now: now))
                }
                throw RolledBack(value: value, plan: plan)
            }
        } catch let rolledBack as RolledBack<T> {
            log.append(rolledBack.plan)
            return rolledBack.value
        }
        // The transaction above always throws: it is never committed.
        throw CancellationError()
    }
}
