import CoreMetrics
import Foundation
import ReplicaStore

/// The metrics of the outbox, conflicts, live sync and catch-up (`docs/metrics.md` lists every
/// metric pnreplicate reports; ``PubNubWire/WireMetrics`` has the request metrics), through
/// swift-metrics, to the factory of the client they work through (``PubNubWire/PubNubClient/metrics``).
///
/// This type is the one place that names these metrics and their dimensions. Each is counted
/// after the store committed what it counts (an op's transition, a settled conflict, an applied
/// page or live batch), so a rolled-back transaction is never counted.
public enum ReplicatorMetrics {
    /// `pnreplicate_ops_enqueued_total`: ops queued, by `kind` (`send`, `updateChannel`...).
    public static let opsEnqueued = "pnreplicate_ops_enqueued_total"
    /// `pnreplicate_ops_sent_total`: ops that reached PubNub.
    public static let opsSent = "pnreplicate_ops_sent_total"
    /// `pnreplicate_ops_retried_total`: failed attempts that will be tried again, by `reason` (the
    /// failure's class: `server`, `notSent`, `outcomeUnknown`, `rateLimited`...).
    public static let opsRetried = "pnreplicate_ops_retried_total"
    /// `pnreplicate_ops_dead_total`: ops that became dead letters, by `reason` (the failure's class).
    public static let opsDead = "pnreplicate_ops_dead_total"
    /// `pnreplicate_ops_conflicted_total`: ops that met a newer version on the server (a stale
    /// eTag, a failed JSON Patch test).
    public static let opsConflicted = "pnreplicate_ops_conflicted_total"
    /// `pnreplicate_conflicts_settled_total`: conflicts settled, by `policy` (`lastWriterWins`,
    /// `merge`, `manual`, `take:local`...), `entity` and `automatic` (`true` when a policy
    /// settled it, `false` when it was left for a person or a person settled it).
    public static let conflictsSettled = "pnreplicate_conflicts_settled_total"
    /// `pnreplicate_live_lag_seconds`: a timer of the time from the newest message of each live
    /// batch being published (its timetoken) to its being stored, on the device's clock corrected
    /// by the server's clock offset when one was measured.
    public static let liveLag = "pnreplicate_live_lag_seconds"
    /// The longest lag recorded, in seconds (a year): what a timetoken older than that records.
    static let maximumLag: TimeInterval = 365 * 24 * 3600
    /// `pnreplicate_catchup_pages_total`: pages fetched to catch up, by `part` (`history`,
    /// `reactions`, `objects`).
    public static let catchUpPages = "pnreplicate_catchup_pages_total"

    /// Counts an outbox event (``Outbox`` calls it for each, after their commit).
    static func record(_ event: OutboxEvent, to factory: any MetricsFactory) {
        switch event {
        case .enqueued(_, let kind): Counter(label: opsEnqueued, dimensions: [("kind", kind.rawValue)], factory: factory).increment()
        case .sent: Counter(label: opsSent, factory: factory).increment()
        case .retrying(_, _, let failure), .ambiguous(_, _, let failure):
            Counter(label: opsRetried, dimensions: [("reason", failure.errorClass.rawValue)], factory: factory).increment()
        case .failed(_, let failure):
            Counter(label: opsDead, dimensions: [("reason", failure.errorClass.rawValue)], factory: factory).increment()
        case .conflict: Counter(label: opsConflicted, factory: factory).increment()
        case .coalesced, .sending, .probed, .discarded, .retried, .settled: break
        }
    }

    /// Counts a settled conflict.
    static func settled(policy: String, entity: String, automatic: Bool, to factory: any MetricsFactory) {
        Counter(
            label: conflictsSettled, dimensions: [("policy", policy), ("entity", entity), ("automatic", "\(automatic)")], factory: factory
        ).increment()
    }

    /// Records a live batch's lag: `seconds` from its newest message's publication to now. A
    /// server's timetoken may be anything (a hostile or broken answer: zero, the far future): the
    /// lag is kept within 0 and a year, never a trap on a value too large for nanoseconds.
    static func liveLag(seconds: TimeInterval, to factory: any MetricsFactory) {
        let bounded = seconds.isFinite ? min(max(0, seconds), maximumLag) : maximumLag
        Timer(label: liveLag, factory: factory).recordNanoseconds(Int64(bounded * 1_000_000_000))
    }

    /// Counts a page fetched to catch up.
    static func catchUpPage(_ part: String, to factory: any MetricsFactory) {
        Counter(label: catchUpPages, dimensions: [("part", part)], factory: factory).increment()
    }
}
