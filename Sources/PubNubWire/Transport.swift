import Foundation
import ReplicaModel

/// An HTTP method.
public enum HTTPMethod: String, Sendable, Hashable, Codable {
    /// GET.
    case get = "GET"
    /// POST.
    case post = "POST"
    /// PATCH.
    case patch = "PATCH"
    /// PUT (DataSync's replace).
    case put = "PUT"
    /// DELETE.
    case delete = "DELETE"
}

/// One query item; `value == nil` is a valueless key (`?ee`), which PubNub accepts.
public struct QueryItem: Sendable, Hashable, Codable {
    /// The key.
    public var name: String
    /// The value, or nil for a bare key.
    public var value: String?

    /// A query item.
    public init(_ name: String, _ value: String?) {
        self.name = name
        self.value = value
    }
}

/// A request as it goes on the wire: origin-relative path segments (not yet percent-encoded),
/// query, headers and body.
public struct WireRequest: Sendable, Hashable {
    /// The method.
    public var method: HTTPMethod
    /// Path segments, each encoded separately when the URL is built (a `/` inside a segment becomes `%2F`).
    public var pathSegments: [String]
    /// Query items, in order.
    public var query: [QueryItem]
    /// Header fields.
    public var headers: [String: String]
    /// The body, if any.
    public var body: Data?
    /// A name for logs and metrics ("publish", "fetchHistory", ...); never contains keys.
    public var operation: String
    /// How long this request may take as a whole, overriding the transport's own timeout; nil
    /// uses the transport's. Long polls (`PubNubClient.subscribe(_:)`) set it past the
    /// server's hold time.
    public var timeout: Duration?

    /// A request.
    public init(
        method: HTTPMethod, pathSegments: [String], query: [QueryItem] = [], headers: [String: String] = [:],
        body: Data? = nil, operation: String
    ) {
        self.method = method
        self.pathSegments = pathSegments
        self.query = query
        self.headers = headers
        self.body = body
        self.operation = operation
    }

    /// The percent-encoded path, `/seg1/seg2`.
    public var encodedPath: String {
        "/" + pathSegments.map(PercentEncoding.pathSegment).joined(separator: "/")
    }

    /// The percent-encoded query string without `?` (empty when there is no query).
    public var encodedQuery: String {
        query.map { item in
            let name = PercentEncoding.queryComponent(item.name)
            guard let value = item.value else { return name }
            return name + "=" + PercentEncoding.queryComponent(value)
        }.joined(separator: "&")
    }

    /// The value of the first query item named `name`.
    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }
}

/// A response as it came off the wire.
public struct WireResponse: Sendable, Hashable {
    /// The HTTP status code.
    public var status: Int
    /// Header fields, names lowercased.
    public var headers: [String: String]
    /// The body.
    public var body: Data

    /// A response; header names are lowercased.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.body = body
    }

    /// A header value by case-insensitive name.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// Why a request produced no response. The split is what makes effectively-once delivery possible.
public enum TransportFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request certainly did not reach the server (connection refused, DNS failure, offline):
    /// safe to send again.
    case notSent(reason: String)
    /// The request may have reached the server and been applied (timeout, connection lost after
    /// sending): probe before sending again.
    case outcomeUnknown(reason: String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .notSent(let reason): "not sent: \(reason)"
        case .outcomeUnknown(let reason): "outcome unknown: \(reason)"
        }
    }
}

/// The bounds every transport puts on one request, so that no server can hold a caller or its
/// memory: a deadline on the whole exchange and a cap on the response body. See
/// `docs/protocol.md`, "Request deadlines, the body cap and redirects".
///
/// ## Topics
///
/// ### Limits
///
/// - ``defaultMaximumResponseBytes``
/// - ``timeoutRange``
public enum TransportLimits {
    /// The largest response body a transport accepts by default: 32 MiB. PubNub's largest answers
    /// (a 100-message history page of 32 KiB messages with actions and meta) stay well below it; a
    /// bigger body fails the request with ``TransportFailure/outcomeUnknown(reason:)`` instead of
    /// exhausting memory.
    public static let defaultMaximumResponseBytes = 32 << 20

    /// The timeouts a transport accepts: 1 ms to one day. A value outside (zero, negative, NaN,
    /// infinite) is clamped into it, so a configured timeout can never trap a conversion.
    public static let timeoutRange: ClosedRange<Duration> = .milliseconds(1) ... .seconds(86_400)

    /// `timeout` clamped into ``timeoutRange``.
    package static func clamp(_ timeout: Duration) -> Duration {
        min(max(timeout, timeoutRange.lowerBound), timeoutRange.upperBound)
    }

    /// `seconds` clamped into ``timeoutRange``; NaN reads as the longest timeout.
    package static func clamp(seconds: Double) -> Duration {
        guard !seconds.isNaN else { return timeoutRange.upperBound }
        let bounded = Swift.min(Swift.max(seconds, 0.001), 86_400)
        return clamp(.milliseconds(Int64((bounded * 1000).rounded())))
    }

    /// The reason a transport gives when the deadline fires: "deadline of 1.5 s exceeded".
    package static func deadlineExceeded(_ timeout: Duration) -> String {
        let (seconds, attoseconds) = clamp(timeout).components
        let milliseconds = (Double(seconds) * 1000 + Double(attoseconds) / 1e15).rounded()
        let text = milliseconds.truncatingRemainder(dividingBy: 1000) == 0
            ? "\(Int64(milliseconds / 1000))" : "\(milliseconds / 1000)"
        return "deadline of \(text) s exceeded for the whole request"
    }

    /// The reason a transport gives for a body over the cap.
    package static func bodyTooLarge(_ maximumBytes: Int) -> String {
        "response body larger than the cap of \(maximumBytes) bytes"
    }
}

/// Sends one request and returns the response. Implementations never retry: retrying is the
/// outbox's job. They throw ``TransportFailure`` when no response arrived.
///
/// Every implementation bounds the whole request (connecting, sending and reading the whole body)
/// by its timeout, caps the response body (`TransportLimits.defaultMaximumResponseBytes`),
/// returns promptly when the calling task is cancelled, and never follows a redirect: a 3xx
/// response is returned as is, and `PubNubClient.perform(_:)` refuses it, because the keys and
/// user id in the URL would otherwise go to the other host.
public protocol Transport: Sendable {
    /// Sends `request` to `origin` and returns the response.
    func send(_ request: WireRequest, to origin: Origin) async throws(TransportFailure) -> WireResponse
}

/// Where requests go: scheme, host and optional port.
public struct Origin: Sendable, Hashable, CustomStringConvertible {
    /// `https` unless configured otherwise.
    public var secure: Bool
    /// Host name or address.
    public var host: String
    /// Port, or nil for the scheme's default.
    public var port: Int?

    /// An origin.
    public init(host: String, port: Int? = nil, secure: Bool = true) {
        self.host = host
        self.port = port
        self.secure = secure
    }

    /// Parses `host[:port]` (secure unless `secure` is false) or a full `http://host:port` /
    /// `https://host[:port]` URL, which sets the scheme itself.
    public init(parsing text: String, secure: Bool = true) throws(WireError) {
        var rest = text
        var isSecure = secure
        if rest.hasPrefix("http://") {
            isSecure = false
            rest.removeFirst(7)
        } else if rest.hasPrefix("https://") {
            isSecure = true
            rest.removeFirst(8)
        }
        while rest.hasSuffix("/") { rest.removeLast() }
        let parts = rest.split(separator: ":", omittingEmptySubsequences: false)
        guard !rest.isEmpty, parts.count <= 2, !parts[0].isEmpty else { throw .invalidConfiguration("origin \"\(text)\"") }
        var port: Int?
        if parts.count == 2 {
            guard let value = Int(parts[1]), (1...65535).contains(value) else {
                throw .invalidConfiguration("origin port in \"\(text)\"")
            }
            port = value
        }
        self.init(host: String(parts[0]), port: port, secure: isSecure)
    }

    /// `scheme://host[:port]`.
    public var description: String {
        (secure ? "https://" : "http://") + host + (port.map { ":\($0)" } ?? "")
    }

    /// The full URL of a request.
    public func url(for request: WireRequest) -> String {
        let query = request.encodedQuery
        return description + request.encodedPath + (query.isEmpty ? "" : "?" + query)
    }
}
