import Foundation
import Logging
import PubNubWire
import ReplicaModel
import ReplicaStore

/// Something that happened to an outbox op, in the order it happened.
public enum OutboxEvent: Sendable, Hashable {
    /// A new op was queued.
    case enqueued(opId: String, kind: OutboxKind)
    /// A change was merged into an unsent op (`into`), or cancelled unsent ops so nothing is sent.
    case coalesced(into: String?, cancelled: [String])
    /// An attempt started (attempt number from 1).
    case sending(opId: String, attempt: Int)
    /// The op reached PubNub; publishes and reaction adds carry their timetoken.
    case sent(opId: String, timetoken: Timetoken?)
    /// The attempt failed in a way worth retrying; the next attempt is not before `at`.
    case retrying(opId: String, at: Date, failure: OutboxFailure)
    /// The attempt may have been applied; the next attempt (not before `at`) probes first.
    case ambiguous(opId: String, at: Date, failure: OutboxFailure)
    /// A probe looked for an ambiguous op's effect on the server.
    case probed(opId: String, found: Bool)
    /// The op became a dead letter.
    case failed(opId: String, failure: OutboxFailure)
    /// An edit hit a stale eTag (or a probe found the object changed by someone else).
    case conflict(opId: String, failure: OutboxFailure)
    /// The app withdrew ops (the op and any ops waiting on it); local changes were reverted.
    case discarded(opIds: [String])
    /// The app put a dead or conflicted op back in the queue.
    case retried(opId: String)
    /// A conflict policy (or a person, through the reconciler) settled a conflicted op: it went
    /// back to the queue over the server's version (`resent`), or was dropped for the server's
    /// version. `conflictId` is its conflict-log entry.
    case settled(opId: String, resent: Bool, conflictId: Int64)
}

extension OutboxEvent {
    /// The event's name in a log line (`op sent`).
    var name: String {
        switch self {
        case .enqueued: "enqueued"
        case .coalesced: "coalesced"
        case .sending: "sending"
        case .sent: "sent"
        case .retrying: "retrying"
        case .ambiguous: "ambiguous"
        case .probed: "probed"
        case .failed: "failed"
        case .conflict: "conflict"
        case .discarded: "discarded"
        case .retried: "retried"
        case .settled: "settled"
        }
    }

    /// The event's log metadata: its op (`op`, or `ops` for several) and what it says, never a
    /// message's text (a failure's message is cut as a diagnostics report cuts it).
    var logMetadata: Logger.Metadata {
        func failureLine(_ failure: OutboxFailure) -> Logger.MetadataValue { "\(failure.safeLine)" }
        switch self {
        case .enqueued(let op, let kind): return ["op": "\(op)", "kind": "\(kind.rawValue)"]
        case .coalesced(let into, let cancelled):
            var metadata: Logger.Metadata = ["cancelled": "\(cancelled.joined(separator: ","))"]
            if let into { metadata["op"] = "\(into)" }
            return metadata
        case .sending(let op, let attempt): return ["op": "\(op)", "attempt": "\(attempt)"]
        case .sent(let op, let timetoken): return ["op": "\(op)", "timetoken": "\(timetoken.map(\.description) ?? "none")"]
        case .retrying(let op, let at, let failure), .ambiguous(let op, let at, let failure):
            return ["op": "\(op)", "next": "\(ISOTimestamp(date: at))", "failure": failureLine(failure)]
        case .probed(let op, let found): return ["op": "\(op)", "found": "\(found)"]
        case .failed(let op, let failure), .conflict(let op, let failure): return ["op": "\(op)", "failure": failureLine(failure)]
        case .discarded(let ops): return ["ops": "\(ops.joined(separator: ","))"]
        case .retried(let op): return ["op": "\(op)"]
        case .settled(let op, let resent, let conflictId): return ["op": "\(op)", "resent": "\(resent)", "conflict": "\(conflictId)"]
        }
    }
}

extension OutboxFailure {
    /// The failure in one line safe to log or show in a diagnostics report: its HTTP status, its
    /// class and its message cut as ``PubNubWire/RequestJournal/safeLine(_:)`` cuts an error text
    /// (`HTTP 503 server: Service Unavailable`). The one rule for an op's failure in a log line
    /// or a report.
    public var safeLine: String {
        "\(httpStatus.map { "HTTP \($0) " } ?? "")\(errorClass.rawValue): \(RequestJournal.safeLine(message))"
    }
}

/// How an op ended, as `Outbox.completion(of:)` reports it.
public enum OutboxOutcome: Sendable, Hashable {
    /// It reached PubNub (with the timetoken of a publish or reaction add).
    case sent(timetoken: Timetoken?)
    /// It is a dead letter; it stays in the outbox until retried or discarded.
    case failed(OutboxFailure)
    /// It is in conflict; it stays in the outbox until retried or discarded.
    case conflict(OutboxFailure)
    /// The app discarded it.
    case discarded
    /// No such op in the outbox, and this process saw no outcome for it (it finished in an
    /// earlier run, or never existed); also what a cancelled `Outbox.completion(of:)` returns.
    case unknown
}
