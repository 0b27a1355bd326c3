import Foundation
import PubNubWire
import ReplicaStore
import Replicator

/// Where a ``Replica`` stands, in one value: the connection, the catch-up, what waits to be sent,
/// and when the store was last known complete. ``Replica/statuses()`` yields a new value at each
/// change; ``ReplicaStatusModel`` holds the latest for a SwiftUI view.
///
/// ```swift
/// for await status in replica.statuses() {
///     banner.text = status.isOffline ? "Offline: \(status.pending) waiting" : nil
/// }
/// ```
public struct ReplicaStatus: Sendable, Hashable, CustomStringConvertible {
    /// The replica's connection to PubNub.
    public enum Connection: Sendable, Hashable, CustomStringConvertible {
        /// Not started, or stopped: nothing is sent or received. Writes still land in the store.
        case stopped
        /// Asking PubNub where the stream stands (a handshake).
        case connecting
        /// Filling gaps from history before the channels are declared live: these channels.
        case catchingUp(channels: [String])
        /// Connected: every followed channel is complete up to the stream.
        case live
        /// Requests fail; retried with a growing backoff (``Replica/networkIsBack()`` retries at
        /// once). The reason is one line, without keys.
        case offline(reason: String)
        /// ``Replica/suspend()`` closed the store and stopped the network: ``Replica/resume()``.
        case suspended

        /// `live`, `offline: reason`, ...
        public var description: String {
            switch self {
            case .stopped: "stopped"
            case .connecting: "connecting"
            case .catchingUp(let channels): "catching up (\(channels.count) channel\(channels.count == 1 ? "" : "s"))"
            case .live: "live"
            case .offline(let reason): "offline: \(reason)"
            case .suspended: "suspended"
            }
        }
    }

    /// The connection.
    public var connection: Connection = .stopped
    /// While ``connection`` is ``Connection/catchingUp(channels:)``: how much history it has read
    /// so far (pages and messages; PubNub does not tell the total ahead). Nil otherwise.
    public var catchUp: CatchUpProgress?
    /// Ops waiting to be sent (pending, or ambiguous: they are probed first). Dead letters and
    /// conflicts are not counted here.
    public var pending = 0
    /// Ops being sent now.
    public var sending = 0
    /// Ops refused for good: they wait for the app (`retry(opId:)` or `discard(opId:)`).
    public var deadLetters = 0
    /// Edits that hit another device's newer version and wait for the app (policy `.manual`).
    public var conflicts = 0
    /// Whether the store was ever complete with the server (live, after a catch-up).
    public var hasSynced = false
    /// When the store was last known complete: the last time the replica was live (now, while live).
    public var lastSyncedAt: Date?
    /// The last failure that stopped a part of the replica (a store that cannot be written), if any.
    public var lastError: String?
    /// Why every request waits for a new Access Manager token (expired, refused, none yet), or
    /// nil. Writes still land in the store; they go when ``ReplicaAccess/setToken(_:)`` or the token
    /// provider gives one (`docs/access.md`).
    public var waitingForToken: AccessTokenNeed?
    /// When the current token expires (nil: no token, or a legacy auth key).
    public var tokenExpires: Date?
    /// The token provider's last failure, until it gives a token.
    public var tokenError: String?
    /// Why user, channel and membership writes wait on the keyset's configuration, or nil:
    /// DataSync not enabled on the keyset, Access Manager off, or no credential (the `DS-0201`,
    /// `DS-0203` and `DS-0006` answers, `docs/datasync.md`, "Errors"). Those writes stay in the
    /// outbox and are tried again every few minutes; they go once the keyset (or the replica's
    /// configuration) is fixed. Messages are not held by it.
    ///
    /// ```swift
    /// if let problem = status.configurationError { showSetupHint(problem) }
    /// ```
    public var configurationError: String?
    /// The objects this user follows that the server deletes soon (DataSync's expiry; always
    /// empty on App Context), soonest first: read after each sync, gap fill and reconnection
    /// (``Replica/expiryWarnings()`` reads them now). A change is a new status, so
    /// ``Replica/statuses()`` is the event to follow.
    ///
    /// ```swift
    /// for await status in replica.statuses() where !status.expiring.isEmpty {
    ///     showExpiryBanner(status.expiring)
    /// }
    /// ```
    public var expiring: [ExpiringObject] = []

    /// A status with nothing known yet: stopped, nothing waiting.
    public init() {}

    /// Whether the replica is started but cannot reach PubNub.
    public var isOffline: Bool { if case .offline = connection { true } else { false } }

    /// Ops the outbox still holds in any state.
    public var waiting: Int { pending + sending + deadLetters + conflicts }

    /// `live, 3 pending, 1 sending`.
    public var description: String {
        var parts = [catchUp.map { "catching up (\($0))" } ?? "\(connection)"]
        if let configurationError { parts.append("waiting on the keyset's configuration (\(configurationError))") }
        if let waitingForToken { parts.append("waiting for a token (\(waitingForToken == .missing ? "none yet" : waitingForToken.rawValue))") }
        if pending > 0 { parts.append("\(pending) pending") }
        if sending > 0 { parts.append("\(sending) sending") }
        if deadLetters > 0 { parts.append("\(deadLetters) dead letter\(deadLetters == 1 ? "" : "s")") }
        if conflicts > 0 { parts.append("\(conflicts) conflict\(conflicts == 1 ? "" : "s")") }
        if let first = expiring.first {
            parts.append("\(expiring.count) followed object\(expiring.count == 1 ? "" : "s") expiring (first: \(first))")
        }
        return parts.joined(separator: ", ")
    }

    /// Takes the outbox's counts by state and what waits on the configuration.
    mutating func count(_ tally: OutboxTally) {
        let states = tally.states
        pending = (states[.pending] ?? 0) + (states[.ambiguous] ?? 0)
        sending = states[.inflight] ?? 0
        deadLetters = states[.dead] ?? 0
        conflicts = states[.conflict] ?? 0
        configurationError = tally.configurationError
    }
}

/// What the status reads of the outbox, in one read: the counts by state and the newest failure
/// of an op waiting on the keyset's configuration.
struct OutboxTally: Sendable {
    var states: [OutboxState: Int]
    var configurationError: String?

    /// The read.
    static func query<C>(_ queries: ChatQueries<C>) -> StoreQuery<OutboxTally> {
        let counts = queries.outboxCounts(), problem = queries.outboxConfigurationProblem()
        return StoreQuery { db in OutboxTally(states: try counts.fetch(db), configurationError: try problem.fetch(db)) }
    }
}
