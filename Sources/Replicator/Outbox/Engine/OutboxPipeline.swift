import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

/// What the commit that runs beside a request ended with (``OutboxAttempt/pipeline(_:lane:on:)``).
private enum Settled: Sendable {
    /// It committed; the op after the one being sent, marked in flight (nil: none could go ahead).
    case marked(MarkedOp?)
    /// It failed: the op it was completing (as it was before its attempt) and why.
    case failed(OutboxEntry, any Error)

    var ahead: MarkedOp? {
        if case .marked(let marked) = self { return marked }
        return nil
    }
}

extension OutboxAttempt {
    /// Sends a lane's run of plain publishes (``canGoAhead(_:)``), each op's commit overlapping
    /// the next op's request, and returns the op to go on with (marked in flight, not sent) or nil
    /// to read the lane again.
    ///
    /// While op k's request is out, one commit completes op k−1 and marks op k+1 in flight; when
    /// k's answer comes back, k+1's request goes at once and the commit completing k (and marking
    /// k+2) runs beside it. So the lane's order holds on the server (k+1 is sent only after k is
    /// answered), no op is sent before its `inflight` mark is committed, and at most two ops of a
    /// lane are in flight in the store: one sent, one marked ahead. A kill -9 leaves both
    /// ambiguous, and each probe finds its op sent or not: each is sent once. The op marked ahead
    /// is put back (``OpTransaction/unmark(_:now:)``) when the op before it fails or the drain stops
    /// (docs/outbox.md, "The next request overlaps the commit").
    func pipeline(_ first: MarkedOp, lane: String, on outbox: isolated Outbox<Custom>) async -> MarkedOp? {
        var current = first
        // The commit running beside `current`'s request: completes the op before it (none for the first) and marks the one after it.
        var settling = settle(nil, after: first.inflight, lane: lane, on: outbox)
        while true {
            let exchanged: Result<Completion?, any Error>
            do {
                exchanged = .success(try await exchange(current.inflight, resolved: OutboxRequests.Resolved(ifMatch: current.inflight.baseETag), on: outbox))
            } catch {
                exchanged = .failure(error)
            }
            let settled = await settling.value
            if case .failed(let previous, let error) = settled { await record(error, of: previous, on: outbox) }
            let ahead = settled.ahead
            guard case .success(let answer?) = exchanged else {
                // This op failed (or could not be built, and is dead): the one marked after it does
                // not go (put back first, so that a failure that parks the lane's ops sees it pending).
                if let ahead { await unmark(ahead, on: outbox) }
                if case .failure(let error) = exchanged { await record(error, of: current.head, on: outbox) }
                return nil
            }
            guard let ahead, Self.drainGoesOn(now: outbox.clock.now, on: outbox) else {
                if let ahead { await unmark(ahead, on: outbox) }
                // The ordinary step: this op's completion marks the lane's next op, whatever its kind.
                return await recordingFailures(of: current.head, on: outbox) {
                    try await self.complete(current.inflight, answer, next: ahead == nil ? lane : nil, on: outbox)
                }
            }
            settling = settle((current, answer), after: ahead.inflight, lane: lane, on: outbox)
            current = ahead
        }
    }

    /// Starts the commit that completes `answered` (when given) and marks the op after `sending`
    /// in flight. It runs on its own task, so it is not cancelled with the drain: an answer that
    /// came back is always recorded.
    private func settle(
        _ answered: (op: MarkedOp, completion: Completion)?, after sending: OutboxEntry, lane: String, on outbox: isolated Outbox<Custom>
    ) -> Task<Settled, Never> {
        let goesOn = Self.drainGoesOn(now: outbox.clock.now, on: outbox)
        return Task {
            await self.settled(answered, after: sending, lane: lane, goesOn: goesOn, on: outbox)
        }
    }

    private func settled(
        _ answered: (op: MarkedOp, completion: Completion)?, after sending: OutboxEntry, lane: String, goesOn: Bool,
        on outbox: isolated Outbox<Custom>
    ) async -> Settled {
        do {
            if let answered {
                return .marked(try await complete(
                    answered.op.inflight, answered.completion, next: goesOn ? lane : nil, ahead: sending, on: outbox))
            }
            guard goesOn else { return .marked(nil) }
            let now = outbox.clock.now
            return .marked(try await outbox.commit { try $0.markAhead(lane: lane, after: sending, now: now) })
        } catch {
            // Marking alone failed: nothing to record for an op (the store failure stops the drain).
            guard let answered else {
                if StoreError.isStorageFailure(error) { outbox.storeFailed(error) }
                return .marked(nil)
            }
            return .failed(answered.op.head, error)
        }
    }

    /// Puts an op marked ahead back (``OpTransaction/unmark(_:now:)``), on its own task so that a
    /// cancelled drain still does it (if it cannot, the op is probed before it is sent).
    private func unmark(_ marked: MarkedOp, on outbox: isolated Outbox<Custom>) async {
        let now = outbox.clock.now
        let done = Task { () -> (any Error)? in
            do {
                try await outbox.commit { try $0.unmark(marked, now: now) }
                return nil
            } catch {
                return error
            }
        }
        if let error = await done.value, StoreError.isStorageFailure(error) { outbox.storeFailed(error) }
    }
}

extension OutboxAttempt {
    /// Whether an op may be marked in flight while the op before it in its lane is being sent
    /// (``OpTransaction/markAhead(lane:after:now:)``): a plain publish, one that ``sendsAsIs(_:)``.
    /// Its request does not depend on how the op before it ends; an object write's does (a
    /// completion rebases the later writes of the same object on the server's new eTag).
    static func canGoAhead(_ entry: OutboxEntry) -> Bool {
        entry.kind == .send && sendsAsIs(entry)
    }
}

extension OpTransaction {
    /// The op after `sending` in its lane, marked in flight in this transaction while `sending`'s
    /// request is out, when it is a plain publish that can go as it is (``OutboxAttempt/canGoAhead(_:)``)
    /// and is due; nil otherwise. Its request goes only once `sending`'s answer has come back
    /// (the lane's order holds on the server); if it never goes, ``unmark(_:now:)`` puts it back
    /// (docs/outbox.md, "The next request overlaps the commit").
    func markAhead(lane: String, after sending: OutboxEntry, now: Date) throws -> MarkedOp? {
        guard let entry = try tx.outbox.laneOp(lane: lane, after: sending.seq, states: OutboxState.live),
              OutboxAttempt<Custom>.canGoAhead(entry), OutboxWait.of(head: try LaneHead.of(entry, in: tx), now: now) == .ready,
              let inflight = try markInflight(entry, now: now)
        else { return nil }
        return MarkedOp(head: entry, inflight: inflight)
    }

    /// Puts an op marked ahead back as it was (``markAhead(lane:after:now:)``) when its request
    /// did not go: the op before it failed, or the drain stopped. Nothing happens when the row
    /// changed since (it is not the attempt marked). Announced as a retry due at once: the
    /// attempt that was announced did not go.
    func unmark(_ marked: MarkedOp, now: Date) throws {
        guard let row = try tx.outbox.op(id: marked.inflight.id), row.state == .inflight, row.attempts == marked.inflight.attempts else { return }
        try tx.outbox.saveAttempt(marked.head)
        let failure = OutboxFailure(errorClass: .other, message: "not sent: the op before it in its lane did not go, or the drain stopped")
        // Only a pending op is marked ahead (``OutboxAttempt/canGoAhead(_:)``).
        changes.events.append(.retrying(opId: row.id, at: marked.head.nextAttemptAt ?? now, failure: failure))
    }
}
