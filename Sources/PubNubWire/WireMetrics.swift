import CoreMetrics
import Foundation

/// The metrics of requests (`docs/metrics.md` lists every metric pnreplicate reports), through
/// swift-metrics, to the client's factory (``PubNubClient/metrics``: by default the one an app
/// bootstrapped, `MetricsSystem.bootstrap(...)`, with Prometheus, StatsD or OpenTelemetry behind
/// it; without one, swift-metrics' no-op handler).
///
/// This type is the one place that names a request metric and its dimensions.
public enum WireMetrics {
    /// `pnreplicate_requests_total`: requests answered or failed, by `operation` (`publish`,
    /// `fetchHistory`, `subscribe`...) and `status` (the HTTP status, or `failed` when no answer came).
    public static let requests = "pnreplicate_requests_total"
    /// `pnreplicate_request_duration_seconds`: a timer of each request's time from sending to its
    /// answer or failure, by `operation`.
    public static let requestDuration = "pnreplicate_request_duration_seconds"

    /// Counts a finished request (``RequestJournal`` calls it as it records one).
    static func request(operation: String, status: Int?, nanoseconds: Int64, factory: any MetricsFactory) {
        Counter(label: requests, dimensions: [("operation", operation), ("status", status.map(String.init) ?? "failed")], factory: factory)
            .increment()
        Timer(label: requestDuration, dimensions: [("operation", operation)], factory: factory).recordNanoseconds(nanoseconds)
    }
}

/// What ties a request to the outbox op it was sent for: an op's attempt runs with its id here
/// (`WireTrace.$op.withValue(id) { ... }`), and the client's log lines about each request (and
/// its ``RequestJournal`` entry) carry it as `op`, so that `grep OPID` over a verbose log tells
/// the op's story (`docs/diagnostics.md`, "One op traced"). The request itself does not change.
public enum WireTrace {
    /// The outbox op the current task's requests are sent for, or nil.
    @TaskLocal public static var op: String?
}
