import Foundation
import GRDB
import ReplicaModel

/// The last failure of an op, kept until it succeeds or is discarded.
public struct OutboxFailure: Codable, Sendable, Hashable, CustomStringConvertible {
    /// The error class.
    public var errorClass: OutboxErrorClass
    /// The HTTP status, when there was an answer.
    public var httpStatus: Int?
    /// The server's message or the transport's reason.
    public var message: String
    /// For ``OutboxErrorClass/accessDenied``: the fingerprint of the Access Manager token it was
    /// refused under (a short hash, never the token; "none" without one). A later refusal under
    /// the same token leaves the op waiting; under another, it is a dead letter (`docs/access.md`).
    public var token: String?

    /// A failure record.
    public init(errorClass: OutboxErrorClass, httpStatus: Int? = nil, message: String, token: String? = nil) {
        self.errorClass = errorClass
        self.httpStatus = httpStatus
        self.message = message
        self.token = token
    }

    /// `class (HTTP n): message`.
    public var description: String {
        "\(errorClass.rawValue)\(httpStatus.map { " (HTTP \($0))" } ?? ""): \(message)"
    }
}

extension OutboxFailure {
    /// The failure an outbox row records in its `last_error_*` columns (at the given indexes of
    /// `row`), nil when it records none or an unknown class.
    init?(row: Row, errorClass: Int, httpStatus: Int, message: Int, token: Int) {
        guard let errorClass = (row[errorClass] as String?).flatMap(OutboxErrorClass.init(rawValue:)) else { return nil }
        self.init(errorClass: errorClass, httpStatus: row[httpStatus], message: row[message] ?? "", token: row[token])
    }
}
