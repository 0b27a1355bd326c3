import Foundation
import ReplicaModel
import PubNubWire

/// A request as it travels on the wire: the method, the request target (the percent-encoded path
/// and query, `/v2/objects/demo/uuids/a%2Fb?include=custom`), the header fields and the body bytes.
///
/// The simulator reads every request through ``decoded()``, its one parser: the HTTP front end
/// (`SimulatorHTTP`) with what Hummingbird received, and the in-process transport of
/// `PubNubSimulatorTesting` with ``init(encoding:for:)``, the bytes an HTTP transport would send.
/// So a request that would not survive the trip over a socket (a `/` or `?` left unencoded in an
/// id, raw UTF-8 in a URL) fails in process as it would over HTTP.
///
/// ## Topics
///
/// ### Creating a request
///
/// - ``init(method:target:headers:body:)``
/// - ``init(encoding:for:)``
///
/// ### The bytes
///
/// - ``method``
/// - ``target``
/// - ``headers``
/// - ``body``
///
/// ### Parsing
///
/// - ``decoded()``
/// - ``badRequest``
public struct RawRequest: Sendable, Hashable {
    /// The method as sent (`GET`, `POST`, `PATCH`, `DELETE`).
    public var method: String
    /// The request target: the path and the query, percent-encoded, with no scheme or host.
    public var target: String
    /// Header fields by name, as sent.
    public var headers: [String: String]
    /// The body bytes; nil or empty when there is none.
    public var body: Data?

    /// A request as received.
    public init(method: String, target: String, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
    }

    /// What an HTTP transport of `PubNubWire` puts on the wire for `request` sent to `origin`: the
    /// target of ``PubNubWire/Origin/url(for:)`` (every path segment and query component
    /// percent-encoded by ``PubNubWire/PercentEncoding``), the headers and the body unchanged.
    public init(encoding request: WireRequest, for origin: Origin) {
        let url = origin.url(for: request)
        let prefix = origin.description
        self.init(
            method: request.method.rawValue,
            target: url.hasPrefix(prefix) ? String(url.dropFirst(prefix.count)) : url,
            headers: request.headers, body: request.body)
    }

    /// The request the simulator serves, or nil when the bytes are not a request it can read (an
    /// unknown method, a target that is not `/`-rooted visible ASCII, a fragment, a malformed
    /// percent escape or invalid UTF-8); the caller answers nil with ``badRequest``.
    ///
    /// The path is split on `/` **before** each segment is percent-decoded, so a channel `a/b`
    /// (sent as `a%2Fb`) stays one segment. The query is split on `&`, then on the first `=`; a
    /// key without `=` is a valueless item (PubNub accepts `?ee`); `+` stays a plus. Header names
    /// are lowercased (HTTP names are case-insensitive), an empty body becomes nil, and the
    /// request's ``PubNubWire/WireRequest/operation`` is its first path segment.
    public func decoded() -> WireRequest? {
        guard let method = HTTPMethod(rawValue: method),
            target.first == "/",
            target.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "#") })
        else { return nil }
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var segments: [String] = []
        for raw in parts[0].split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            guard let segment = PercentEncoding.decode(String(raw)) else { return nil }
            segments.append(segment)
        }
        var query: [QueryItem] = []
        for pair in (parts.count == 2 ? parts[1] : "").split(separator: "&") where !pair.isEmpty {
            let item = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = PercentEncoding.decode(String(item[0])) else { return nil }
            if item.count == 2 {
                guard let value = PercentEncoding.decode(String(item[1])) else { return nil }
                query.append(QueryItem(name, value))
            } else {
                query.append(QueryItem(name, nil))
            }
        }
        return WireRequest(
            method: method, pathSegments: segments, query: query,
            headers: Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last }),
            body: body?.isEmpty == false ? body : nil, operation: segments.first ?? "/")
    }

    /// The answer to bytes that ``decoded()`` cannot read: 400 with a JSON error body.
    public static let badRequest = WireResponse(
        status: 400, headers: ["Content-Type": "application/json"],
        body: Data(#"{"status":400,"error":true,"message":"Bad Request"}"#.utf8))
}
