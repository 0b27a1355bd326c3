import Foundation
import ReplicaModel

/// DataSync's error bodies and what each `DS-` code means: the one table (`docs/datasync.md`,
/// "Errors"; the protocol reference, §2 and §14).
///
/// DataSync answers an error with `{"errors":[{"errorCode":"DS-0100","message":"Entity not found: u1","path":"/payload/x"}]}`
/// (`application/json`); a body may hold several items, and `path` names the input an item is
/// about. Clients key on `errorCode`, never on the message. Access Manager's own refusal on a
/// DataSync path keeps its older shape (`{"error":true,"status":403,"service":"Access Manager",…}`,
/// ``ServiceError/Family/legacyService``) and means, as everywhere, that the token does not
/// allow the call: it waits for a new token.
///
/// | code | HTTP | reason | meaning |
/// | --- | --- | --- | --- |
/// | `DS-0100` | 404 | ``ServiceError/Reason/notFound`` | no such object (or class) |
/// | `DS-0201` | 403 | ``ServiceError/Reason/notConfigured`` | DataSync or Access Manager is not enabled on the keyset, or a request carried two credentials |
/// | `DS-0202` | 403 | ``ServiceError/Reason/outsideProjection`` | a write outside the token's projection |
/// | `DS-0203` | 401 | ``ServiceError/Reason/notConfigured`` | no credential: DataSync needs a token or the secret key |
/// | `DS-0006` | 400 | ``ServiceError/Reason/notConfigured`` | the class is not a `User` or `Channel` subclass |
/// | `DS-0302` | 409 | ``ServiceError/Reason/preconditionFailed`` | a JSON Patch `test` failed: the object is not as the write expected |
/// | `DS-0801` | 409 | ``ServiceError/Reason/conflict`` | a relationship's cardinality (a second membership of a pair) |
/// | `DS-0005` | 400 | ``ServiceError/Reason/badRequest`` | a filter or sort on a field that cannot be filtered |
/// | any other | any | from the status | `DS-0004`, `DS-0008`, `DS-0650`, `DS-1001`, `SYN-*`: the request is wrong |
public enum DataSyncErrors {
    /// One item of a DataSync error body.
    public struct Item: Sendable, Hashable {
        /// `errorCode` (`DS-0100`), when the item has one.
        public var code: String?
        /// `message`, for people (never keyed on).
        public var message: String
        /// `path`: the input the item is about (`/payload/x`, `userId`), when given.
        public var path: String?

        /// An item.
        public init(code: String?, message: String, path: String? = nil) {
            self.code = code
            self.message = message
            self.path = path
        }

        /// `path: code message`, leaving out what is missing.
        public var line: String {
            [path.map { $0 + ":" }, code, message.isEmpty ? nil : message].compactMap { $0 }.joined(separator: " ")
        }
    }

    /// The items of a DataSync error body, or nil when `json` is not one (no `errors` array).
    /// Items that are not objects are skipped.
    public static func items(_ json: [String: Any]) -> [Item]? {
        guard let list = json["errors"] as? [Any] else { return nil }
        return list.compactMap { element in
            guard let item = element as? [String: Any] else { return nil }
            return Item(
                code: (item["errorCode"] as? String).map { String($0.prefix(32)) },
                message: String((item["message"] as? String ?? "").prefix(300)),
                path: (item["path"] as? String).map { String($0.prefix(200)) })
        }
    }

    /// The code of a relationship write refused by its class's cardinality (one end is linked
    /// already): a 409 that, unlike a create meeting its own id, no resend or merge can settle.
    public static let cardinality = "DS-0801"

    /// What `codes` mean, the first code this table knows deciding; nil when none is known
    /// (the reason then follows the status).
    public static func reason(codes: [String]) -> ServiceError.Reason? {
        for code in codes {
            switch code {
            case "DS-0100": return .notFound
            case "DS-0201", "DS-0203", "DS-0006": return .notConfigured
            case "DS-0202": return .outsideProjection
            // DS-0300: a stale If-Match, as the Kotlin SDK's stubs answer it (the Dart SDK's: no body).
            case "DS-0302", "DS-0300": return .preconditionFailed
            case "DS-0801": return .conflict
            // A filter or sort on what cannot be filtered (DS-0005, or DS-1001 in the Kotlin SDK's
            // stubs), a declared property of the wrong kind (DS-0008) or missing (DS-0650).
            case "DS-0005", "DS-0008", "DS-0650", "DS-1001": return .badRequest
            default: continue
            }
        }
        return nil
    }
}
