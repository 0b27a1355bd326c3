import CoreMetrics
import Foundation
import ReplicaModel

/// The last requests a client sent, for a diagnostics report (`docs/diagnostics.md`): each
/// one's method, operation, path and query with every secret taken out, its status or failure,
/// how long it took, whether it repeated a request that had just failed, and the DataSync codes
/// of its answer.
///
/// What is never kept: the publish and subscribe keys (the path shows `{pub}` and `{sub}`), the
/// `auth` token, the signature and its timestamp, and a published message (a GET publish or
/// signal carries it as the path's last segment: `{message}`); query values other than a few
/// paging and option parameters are left out, their names kept. Ids (user and channel) stay, as
/// in the log lines; the report hashes them on request.
///
/// Thread-safe; every copy of a `PubNubClient` shares its journal. It holds the last
/// ``capacity`` requests.
///
/// ```swift
/// for entry in client.journal.entries() { print(entry.method, entry.path, entry.status ?? 0) }
/// ```
public final class RequestJournal: @unchecked Sendable {
    /// One request as the journal keeps it.
    public struct Entry: Sendable, Hashable, Codable {
        /// When it was sent (the client's clock).
        public var at: Date
        /// What it did (`publish`, `fetchHistory`, `subscribe`...).
        public var operation: String
        /// `GET`, `POST`, `PATCH`, `DELETE`...
        public var method: String
        /// The path with the keys and a published message replaced: `/v2/objects/{sub}/uuids/me`.
        public var path: String
        /// The query with only safe values kept: `limit=100&include=custom&auth&uuid`.
        public var query: String
        /// The HTTP status, or nil when no answer came.
        public var status: Int?
        /// Why no answer came (a transport failure), in one line.
        public var failure: String?
        /// Milliseconds from sending to the answer or the failure.
        public var milliseconds: Int
        /// Whether the same request (same method and path) failed just before it.
        public var retry: Bool
        /// The `DS-` (and other) codes of a DataSync error answer.
        public var codes: [String]
        /// The outbox op it was sent for (`WireTrace.op`), or nil.
        public var op: String? = nil
    }

    /// How many requests the journal keeps.
    public let capacity: Int
    private let clock: any ReplicaClock
    private let lock = NSLock()
    private var ring: [Entry] = []
    private var next = 0
    private var keys: (publish: String, subscribe: String) = ("", "")
    private var seenCodes: [String: Int] = [:]

    /// Query parameters whose values are kept: paging and options, never a secret or a text.
    static let keptValues: Set<String> = [
        "limit", "count", "max", "include", "include_meta", "include_message_type", "include_uuid", "include_custom_message_type",
        "include_message_actions", "tt", "tr", "start", "end", "heartbeat", "sort", "store", "norep", "ttl", "channel-group",
        "totalCount", "include_token",
    ]

    /// A journal of the last `capacity` requests, timed by `clock`.
    public init(capacity: Int = 50, clock: any ReplicaClock = SystemClock()) {
        self.capacity = max(1, capacity)
        self.clock = clock
    }

    /// The kept requests, oldest first.
    public func entries() -> [Entry] {
        lock.withLock { Array(ring[next...] + ring[..<next]) }
    }

    /// Every error code seen in an answer since the journal was made, with how many times (the
    /// codes outlive the ring: a `DS-0201` seen once at launch stays named).
    public func codes() -> [String: Int] {
        lock.withLock { seenCodes }
    }

    /// Tells the journal the keys to take out of paths (the client does at its creation).
    func redacting(publishKey: String, subscribeKey: String) {
        lock.withLock { keys = (publishKey, subscribeKey) }
    }

    /// The time now, for ``record(_:started:status:failure:codes:)``.
    func start() -> (date: Date, instant: ContinuousClock.Instant) { (clock.now, ContinuousClock.now) }

    /// Records `request`, sent at `started`, with its answer's `status` or its `failure`, counts it
    /// in the request metrics (``WireMetrics``, to `metrics`), and returns the entry (what the client's log line
    /// about the request shows).
    @discardableResult
    func record(
        _ request: WireRequest, started: (date: Date, instant: ContinuousClock.Instant), status: Int?, failure: String?, codes: [String],
        metrics: any MetricsFactory
    ) -> Entry {
        let elapsed = ContinuousClock.now - started.instant
        let nanoseconds = elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000
        let milliseconds = Int(nanoseconds / 1_000_000)
        WireMetrics.request(operation: request.operation, status: status, nanoseconds: nanoseconds, factory: metrics)
        return lock.withLock {
            let path = Self.path(request, keys: keys)
            let method = request.method.rawValue
            let previous = ring.isEmpty ? nil : ring[(next + ring.count - 1) % ring.count]
            let retry = previous.map { $0.method == method && $0.path == path && ($0.status.map { !(200..<300).contains($0) } ?? true) } ?? false
            let entry = Entry(
                at: started.date, operation: request.operation, method: method, path: path, query: Self.query(request),
                status: status, failure: failure.map(Self.safeLine), milliseconds: milliseconds, retry: retry, codes: codes,
                op: WireTrace.op)
            if ring.count < capacity {
                ring.append(entry)
            } else {
                ring[next] = entry
                next = (next + 1) % capacity
            }
            for code in codes { seenCodes[code, default: 0] += 1 }
            return entry
        }
    }

    /// An error's text cut to what is safe to show: before the first JSON body (`{`, `[`: an
    /// answer echoed back may hold a message) or URL (`://`: a URL holds the keys), at most 160
    /// characters, on one line. The one rule for error texts in a diagnostics report.
    public static func safeLine(_ text: String) -> String {
        var end = text.endIndex
        for marker in ["{", "[", "://"] {
            if let range = text.range(of: marker), range.lowerBound < end { end = range.lowerBound }
        }
        var line = String(text[..<end].prefix(160)).replacingOccurrences(of: "\n", with: " ")
        if end != text.endIndex || text.count > 160 { line += "…" }
        return line
    }

    /// The path with the keys and a published message taken out.
    static func path(_ request: WireRequest, keys: (publish: String, subscribe: String)) -> String {
        var segments = request.pathSegments.map { segment -> String in
            if !keys.publish.isEmpty, segment == keys.publish { return "{pub}" }
            if !keys.subscribe.isEmpty, segment == keys.subscribe { return "{sub}" }
            return segment
        }
        // `/publish/{pub}/{sub}/0/{channel}/0/{message}`, `/signal/…` and
        // `/v1/files/publish-file/…`: the last segment is the message.
        if let first = segments.first, first == "publish" || first == "signal" || segments.contains("publish-file"), segments.count >= 7 {
            segments[segments.count - 1] = "{message}"
        }
        return "/" + segments.joined(separator: "/")
    }

    /// The query: names in order, values only for ``keptValues``.
    static func query(_ request: WireRequest) -> String {
        request.query.map { item in
            guard keptValues.contains(item.name), let value = item.value else { return item.name }
            return item.name + "=" + String(value.prefix(100))
        }.joined(separator: "&")
    }
}
