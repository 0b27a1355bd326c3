import Foundation
import PubNubWire

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
