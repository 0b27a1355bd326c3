import Foundation
import ReplicaModel

/// A message to publish.
public struct PublishRequest: Sendable, Hashable {
    /// How the message travels.
    public enum Method: Sendable, Hashable {
        /// JSON URL-encoded into the path (the classic form; limited by URL length).
        case get
        /// JSON in the body.
        case post
        /// JSON in a gzip-compressed body (`Content-Encoding: gzip`), for large messages.
        case postGzip
    }

    /// The channel.
    public var channel: String
    /// The message, any JSON.
    public var message: JSONValue
    /// GET, POST or gzip POST; default POST.
    public var method: Method = .post
    /// Store in history (`store=1/0`); nil leaves the keyset default.
    public var store: Bool?
    /// Per-message storage TTL in hours.
    public var ttl: Int?
    /// Publish metadata (a JSON object): the outbox puts its op id here.
    public var meta: JSONValue?
    /// `custom_message_type` (3-50 chars of `[A-Za-z0-9-_]`).
    public var customMessageType: String?

    /// A publish of `message` to `channel`.
    public init(channel: String, message: JSONValue, method: Method = .post, store: Bool? = nil, ttl: Int? = nil,
                meta: JSONValue? = nil, customMessageType: String? = nil) {
        self.channel = channel
        self.message = message
        self.method = method
        self.store = store
        self.ttl = ttl
        self.meta = meta
        self.customMessageType = customMessageType
    }
}

struct PublishResponse: Decodable {
    let timetoken: Timetoken

    init(from decoder: any Decoder) throws {
        var c = try decoder.unkeyedContainer()
        let code = try c.decode(Int.self)
        let text = try c.decode(String.self)
        guard code == 1 else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "publish answered [\(code),\"\(text)\"]")
        }
        timetoken = try c.decode(Timetoken.self)
    }
}

extension PubNubClient {
    /// The request ``publish(_:)`` sends, for inspection (dry runs) and tests.
    public func publishRequest(_ publish: PublishRequest) throws(WireError) -> WireRequest {
        guard !configuration.publishKey.isEmpty else { throw .invalidConfiguration("publishKey is empty") }
        var message = publish.message
        if let crypto {
            // Only the payload: meta, actions and App Context travel in the clear, as in the SDKs.
            do {
                message = try crypto.encrypt(message: message)
            } catch {
                throw .invalidArgument("publish: \(error)")
            }
        }
        let body = try Self.json(message)
        var query = commonQuery()
        if let store = publish.store { query.append(QueryItem("store", store ? "1" : "0")) }
        if let ttl = publish.ttl { query.append(QueryItem("ttl", String(ttl))) }
        if let meta = publish.meta {
            query.append(QueryItem("meta", String(decoding: try Self.json(meta), as: UTF8.self)))
        }
        if let type = publish.customMessageType { query.append(QueryItem("custom_message_type", type)) }
        var path = ["publish", configuration.publishKey, configuration.subscribeKey, "0", publish.channel, "0"]
        switch publish.method {
        case .get:
            path.append(String(decoding: body, as: UTF8.self))
            return WireRequest(method: .get, pathSegments: path, query: query, operation: "publish")
        case .post:
            return WireRequest(
                method: .post, pathSegments: path, query: query,
                headers: ["Content-Type": "application/json; charset=UTF-8"], body: body, operation: "publish")
        case .postGzip:
            return WireRequest(
                method: .post, pathSegments: path, query: query,
                headers: ["Content-Type": "application/json; charset=UTF-8", "Content-Encoding": "gzip"],
                body: try Gzip.compress(body), operation: "publish")
        }
    }

    /// Publishes a message and returns its server timetoken.
    public func publish(_ publish: PublishRequest) async throws(WireError) -> Timetoken {
        try Self.publishTimetoken(from: try await perform(try publishRequest(publish)))
    }

    /// Decodes a publish answer (`[1,"Sent","<timetoken>"]`) into its timetoken.
    public static func publishTimetoken(from response: WireResponse) throws(WireError) -> Timetoken {
        try decode(PublishResponse.self, from: response, operation: "publish").timetoken
    }

    /// `GET /time/0`: the server's current timetoken.
    public func time() async throws(WireError) -> Timetoken {
        let request = WireRequest(method: .get, pathSegments: ["time", "0"], query: commonQuery(auth: false), operation: "time")
        let values = try await perform(request, as: [Timetoken].self)
        guard let first = values.first else {
            throw .decoding(operation: "time", status: 200, message: "empty array")
        }
        return first
    }
}
