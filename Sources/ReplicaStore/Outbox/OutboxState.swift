import Foundation
import ReplicaModel

/// Where an op is in its life. An op leaves the table when it succeeds or is discarded.
public enum OutboxState: String, Codable, Sendable, CaseIterable {
    /// Waiting to be sent (possibly after a backoff).
    case pending
    /// Handed to the transport by a drain that is still running (or that crashed: see ``ambiguous``).
    case inflight
    /// The last attempt may or may not have reached PubNub; the next attempt probes before resending.
    case ambiguous
    /// An edit hit a stale eTag (412); waits for the app (retry or discard).
    case conflict
    /// Refused for good (4xx, or too many server failures); waits for the app (retry or discard).
    case dead
}
