import Foundation
import ReplicaModel

/// How the last failed attempt failed.
public enum OutboxErrorClass: String, Codable, Sendable {
    /// The request never left the device (offline, connection refused).
    case notSent
    /// The request may have been applied (timeout, connection lost after sending, crash while in flight).
    case outcomeUnknown
    /// HTTP 429: the server asked to wait.
    case rateLimited
    /// HTTP 5xx.
    case server
    /// HTTP 4xx that resending cannot fix (400, 401, 403, 404, 413, ...).
    case rejected
    /// HTTP 412: the object changed on the server since the local edit's base.
    case conflict
    /// Anything else (an undecodable answer, an invalid op).
    case other
    /// Access Manager: the token expired or was refused, or does not grant the op. A live op of
    /// this class waits for a new token (``OutboxEntry/waitsForToken``); a dead one was refused
    /// under a token that arrived after it first waited (`docs/access.md`).
    case accessDenied
    /// The keyset or the configuration refuses the op whatever the token (DataSync: not enabled
    /// on the keyset, Access Manager off, no credential, a class that does not fit:
    /// `docs/datasync.md`, "Errors"). The op stays pending and is tried again every few minutes;
    /// it never becomes a dead letter for this alone.
    case configuration
}
