import Foundation

/// Every way a PubNub call can fail, in one type.
public enum WireError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server answered with an error.
    case service(ServiceError)
    /// No response arrived; see ``TransportFailure`` for whether the request may have been applied.
    case transport(TransportFailure)
    /// The server answered 2xx but the body could not be decoded.
    case decoding(operation: String, status: Int, message: String)
    /// The request could not be built from the given values (a bad key, origin or argument).
    case invalidConfiguration(String)
    /// An argument breaks a protocol rule (e.g. `limit` above 100).
    case invalidArgument(String)

    /// A one-line explanation; never contains keys.
    public var description: String {
        switch self {
        case .service(let error): error.description
        case .transport(let failure): failure.description
        case .decoding(let operation, let status, let message): "\(operation): cannot decode HTTP \(status) body: \(message)"
        case .invalidConfiguration(let what): "invalid configuration: \(what)"
        case .invalidArgument(let what): "invalid argument: \(what)"
        }
    }
}

/// An error response from a PubNub service.
public struct ServiceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Which error body shape the service used.
    public enum Family: String, Sendable, Hashable, Codable {
        /// `[0,"message","tt"]` (publish, signal).
        case publishArray
        /// `{"status","error":true,"error_message",...}` (history, counts, delete).
        case history
        /// `{"status","error":{"message","source","details"}}` (App Context, message actions).
        case object
        /// `{"status","error":true,"message","service","payload"}` (Access Manager, presence).
        case legacyService
        /// A body that fits none of the shapes, or none at all.
        case unknown
    }

    /// What went wrong, from the status code (and a few known messages).
    public enum Reason: String, Sendable, Hashable, Codable {
        /// 400.
        case badRequest
        /// 401.
        case unauthorized
        /// 403.
        case forbidden
        /// 404.
        case notFound
        /// 409 (e.g. an action already added).
        case conflict
        /// 412 (stale `If-Match` eTag).
        case preconditionFailed
        /// 413.
        case payloadTooLarge
        /// 414.
        case uriTooLong
        /// 415.
        case unsupportedType
        /// 429.
        case tooManyRequests
        /// 500 and other 5xx.
        case server
        /// 503.
        case serviceUnavailable
        /// Anything else.
        case other
    }

    /// The operation that failed ("publish", "setUser", ...).
    public var operation: String
    /// The HTTP status.
    public var status: Int
    /// The reason.
    public var reason: Reason
    /// The body shape.
    public var family: Family
    /// The server's message.
    public var message: String
    /// For 429: how long the server asked to wait (from `Retry-After`), in seconds, clamped to
    /// `0...maxRetryAfter` when the error is made.
    public var retryAfter: Double?

    /// The longest `Retry-After` honoured: one hour. A larger value (`1e17`) is read as this, so
    /// no wait computed from a server's header can overflow a date or a duration, and an op is
    /// never parked for longer than an hour by one answer.
    public static let maxRetryAfter: Double = 3600
    /// The `details` of an object error (`location: message`), if any.
    public var details: [String]

    /// A service error.
    public init(
        operation: String, status: Int, reason: Reason? = nil, family: Family, message: String,
        retryAfter: Double? = nil, details: [String] = []
    ) {
        self.operation = operation
        self.status = status
        self.reason = reason ?? Self.reason(forStatus: status)
        self.family = family
        self.message = message
        self.retryAfter = retryAfter.flatMap { $0.isNaN ? nil : Swift.min(Swift.max(0, $0), Self.maxRetryAfter) }
        self.details = details
    }

    /// The reason PubNub's SDKs give a status code.
    public static func reason(forStatus status: Int) -> Reason {
        switch status {
        case 400: .badRequest
        case 401: .unauthorized
        case 403: .forbidden
        case 404: .notFound
        case 409: .conflict
        case 412: .preconditionFailed
        case 413: .payloadTooLarge
        case 414: .uriTooLong
        case 415: .unsupportedType
        case 429: .tooManyRequests
        case 503: .serviceUnavailable
        case 500...599: .server
        default: .other
        }
    }

    /// A one-line explanation.
    public var description: String {
        var text = "\(operation): HTTP \(status) \(reason.rawValue): \(message)"
        if let retryAfter { text += " (retry after \(retryAfter) s)" }
        return text
    }
}
