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
    /// A payload is over the server's size limit (a signal over 64 bytes), refused before
    /// sending: shorten it, or publish it as a message instead.
    case payloadTooLarge(operation: String, bytes: Int, limit: Int)
    /// Access Manager: the request waits for a new token, or the token does not grant it
    /// (``AccessDenial``; `docs/access.md`). Only a client whose `AccessControl` has a token, or
    /// requires one, throws it; without Access Manager a 403 stays ``service(_:)``.
    case accessDenied(AccessDenial)

    /// A one-line explanation; never contains keys.
    public var description: String {
        switch self {
        case .service(let error): error.description
        case .transport(let failure): failure.description
        case .decoding(let operation, let status, let message): "\(operation): cannot decode HTTP \(status) body: \(message)"
        case .invalidConfiguration(let what): "invalid configuration: \(what)"
        case .invalidArgument(let what): "invalid argument: \(what)"
        case .payloadTooLarge(let operation, let bytes, let limit): "\(operation): the payload is \(bytes) bytes; the limit is \(limit)"
        case .accessDenied(let denial): denial.description
        }
    }
}

extension WireError {
    /// What a failed request means for sending it again: the generic classification that every
    /// caller shares (the outbox's writes, the reconciler's reads). Callers add their own rules
    /// on top (a 409 on a reaction add means done, a 412 means a conflict, a publish is probed
    /// after a 5xx), but never decide again which statuses are worth a retry.
    ///
    /// | error | retryability |
    /// | --- | --- |
    /// | `.transport(.notSent)` | ``notSent`` |
    /// | `.transport(.outcomeUnknown)` | ``outcomeUnknown(answered:)`` with `answered: false` |
    /// | HTTP 408, a 2xx body that cannot be read (`.decoding`) | ``outcomeUnknown(answered:)`` with `answered: true` |
    /// | HTTP 429 | ``rateLimited(retryAfter:)`` |
    /// | HTTP 500-599 | ``serverFailure`` |
    /// | any other status (3xx redirects, 4xx), `.invalidArgument`, `.invalidConfiguration`, `.payloadTooLarge` | ``permanent`` |
    /// | `.accessDenied` waiting for a token (expired, refused, none yet) | ``waitForToken`` |
    /// | `.accessDenied` the token does not grant (`notGranted`) | ``permanent`` |
    ///
    /// ```swift
    /// do {
    ///     return try await client.history.fetchHistory(query)
    /// } catch {
    ///     guard let wait = error.retryability.minimumWait else { throw error }   // permanent
    ///     try await Task.sleep(for: .seconds(max(wait, backoff)))                  // then try again
    /// }
    /// ```
    public enum Retryability: Sendable, Hashable {
        /// The request never left this device (offline, connection refused, DNS): nothing happened
        /// on the server and sending it again is always safe.
        case notSent
        /// The server may have applied the request, and no usable answer says whether it did: the
        /// connection broke after the request left (`answered: false`), or the server answered
        /// 408 or a 2xx whose body could not be read (`answered: true`). A read can be sent again;
        /// a write that is not idempotent must first look for its effect.
        case outcomeUnknown(answered: Bool)
        /// HTTP 429: retry, but not before `retryAfter` seconds (the server's `Retry-After`,
        /// already clamped to ``ServiceError/maxRetryAfter``; nil: the caller's own backoff).
        case rateLimited(retryAfter: TimeInterval?)
        /// HTTP 5xx: the server failed; a later attempt may succeed. A gateway may have forwarded
        /// the request before failing, so a write without an idempotency key (a publish) is
        /// probed before it is sent again.
        case serverFailure
        /// Sending the same request again cannot help: 4xx other than 408 and 429, a 3xx (a
        /// refused redirect), any other status, or a request the client refused to build.
        case permanent
        /// Only a new Access Manager token can help (``WireError/accessDenied(_:)`` that
        /// ``AccessDenial/waitsForToken``): wait for one (``AccessControl/waitForToken(after:)``),
        /// then send again.
        case waitForToken

        /// Whether trying the same request again may succeed (everything but ``permanent``).
        public var isRetryable: Bool { self != .permanent && self != .waitForToken }

        /// The least wait before the next attempt, in seconds: the 429's `Retry-After` (or 0
        /// without one), 0 for the other retryable classes, nil for ``permanent``. Callers wait
        /// `max(minimumWait, their backoff)`.
        public var minimumWait: TimeInterval? {
            switch self {
            case .permanent, .waitForToken: nil
            case .rateLimited(let retryAfter): retryAfter ?? 0
            case .notSent, .outcomeUnknown, .serverFailure: 0
            }
        }

        /// Whether no answer came from the server at all: the request never left
        /// (``notSent``) or its answer never arrived (``outcomeUnknown(answered:)`` with
        /// `answered: false`). Every other request to the same server would likely fail the
        /// same way now, so a batch of reads can stop instead of trying each in turn.
        public var isUnreachable: Bool {
            switch self {
            case .notSent, .outcomeUnknown(answered: false): true
            case .outcomeUnknown(answered: true), .rateLimited, .serverFailure, .permanent, .waitForToken: false
            }
        }
    }

    /// How this failure is classified for sending the request again (see ``Retryability``).
    ///
    /// ```swift
    /// WireError.transport(.notSent(reason: "offline")).retryability          // .notSent
    /// WireError.service(ServiceError(operation: "publish", status: 503, family: .unknown, message: ""))
    ///     .retryability                                                         // .serverFailure
    /// ```
    public var retryability: Retryability {
        switch self {
        case .transport(.notSent): .notSent
        case .transport(.outcomeUnknown): .outcomeUnknown(answered: false)
        case .decoding: .outcomeUnknown(answered: true)
        case .invalidArgument, .invalidConfiguration, .payloadTooLarge: .permanent
        case .accessDenied(let denial): denial.waitsForToken ? .waitForToken : .permanent
        case .service(let service):
            switch service.status {
            case 408: .outcomeUnknown(answered: true)
            case 429: .rateLimited(retryAfter: service.retryAfter)
            case 500...599: .serverFailure
            default: .permanent
            }
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
        /// S3's XML `<Error><Code>…</Code><Message>…</Message></Error>` (a file upload's or
        /// download's storage; `message` is `Code: Message`).
        case storage
        /// `{"error":"message"}` (Mobile Push: device registration).
        case push
        /// `{"errors":[{"errorCode":"DS-0100","message":…,"path":…}]}` (DataSync; the codes are in
        /// ``ServiceError/codes``, each classified once in `DataSyncErrors`).
        case dataSync
        /// A body that fits none of the shapes, or none at all.
        case unknown
    }

    /// What went wrong, from the status code, or from a known message (the push service's:
    /// ``pushNotEnabled``, ``invalidDeviceToken``, ``invalidPushType``).
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
        /// Mobile Push: the keyset does not have Push Notifications enabled (a 403 that is not
        /// Access Manager's: no new token helps; enable the add-on on PubNub's dashboard).
        case pushNotEnabled
        /// Mobile Push: PubNub refused the device token (400 `Invalid device token`).
        case invalidDeviceToken
        /// Mobile Push: the push type is missing or unknown (400 `Invalid type argument`).
        case invalidPushType
        /// DataSync: the keyset refuses DataSync calls whatever the token carries: DataSync or
        /// Access Manager is not enabled on it (403 `DS-0201`), or the configured class does not
        /// extend `User` or `Channel` (400 `DS-0006`). No new token helps: the keyset or the
        /// configuration must change (`docs/datasync.md`, "Errors").
        case notConfigured
        /// DataSync: the write touches a field outside the token's projection (403 `DS-0202`).
        /// Sending it again cannot succeed; the token's grant or the write must change.
        case outsideProjection
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
    /// The `details` of an object error (`location: message`), or of a DataSync error
    /// (`path: code message`), if any.
    public var details: [String]
    /// The `errorCode` of each item of a DataSync error body (`DS-0100`, `SYN-0004`), in order;
    /// empty for every other family.
    public var codes: [String]

    /// A service error.
    public init(
        operation: String, status: Int, reason: Reason? = nil, family: Family, message: String,
        retryAfter: Double? = nil, details: [String] = [], codes: [String] = []
    ) {
        self.operation = operation
        self.status = status
        self.reason = reason ?? Self.reason(forStatus: status)
        self.family = family
        self.message = message
        self.retryAfter = retryAfter.flatMap { $0.isNaN ? nil : Swift.min(Swift.max(0, $0), Self.maxRetryAfter) }
        self.details = details
        self.codes = codes
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
        if !codes.isEmpty { text += " (\(codes.joined(separator: ", ")))" }
        if let retryAfter { text += " (retry after \(retryAfter) s)" }
        return text
    }
}
