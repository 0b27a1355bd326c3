import Foundation
import PubNubWire

/// Access Manager's answers, byte for byte in the shapes of reference §2.1 and §2.5 (keys in the
/// recorded order): grants, revokes, their 400s, and the 403 of each endpoint family.
enum AccessReply {
    /// Which 403 body a refused request gets, from its path.
    enum Family: Sendable, Hashable {
        /// Publish, signal, subscribe, presence, history (and anything else PubNub's edge serves):
        /// `{"message":"Forbidden","payload":{"channels":[...]},...}`.
        case forbidden
        /// Message actions: the `source:"actions"` error envelope.
        case actions
        /// App Context: the `source:"objects"` error envelope.
        case objects
        /// File Sharing (`/v1/files/...`, publish-file too): the `source:"Files"` envelope (§1.8 option A).
        case files
        /// DataSync (`/v1/datasync/...`): `{"error":true,"status":403,"service":"Access Manager","message":"Forbidden"}`
        /// as `text/javascript; charset=UTF-8` (recorded).
        case dataSync

        /// The family of `request`.
        static func of(_ request: WireRequest) -> Family {
            let s = request.pathSegments
            guard s.count >= 2 else { return .forbidden }
            switch (s[0], s[1]) {
            case ("v1", "message-actions"): return .actions
            case ("v2", "objects"): return .objects
            case ("v1", "files"): return .files
            case ("v1", "datasync"): return .dataSync
            default: return .forbidden
            }
        }
    }

    /// The sentence the actions, objects and files envelopes carry.
    static let notPermitted = "Supplied authorization key does not have the permissions required to perform this operation."

    /// A missing, unknown or insufficient token, or a `uuid` other than the token's authorized
    /// user: the family's 403. `refused` names what was missing (the Forbidden body lists its
    /// channels and channel groups).
    static func denied(_ family: Family, refused: [AccessRequirement]) -> WireResponse {
        switch family {
        case .forbidden:
            let channels = names(refused, .channel), groups = names(refused, .group)
            var payload: [(String, String)] = []
            if !channels.isEmpty || groups.isEmpty { payload.append(("channels", list(channels))) }
            if !groups.isEmpty { payload.append(("channel-groups", list(groups))) }
            return reply(403, OrderedJSON.object([
                ("message", OrderedJSON.string("Forbidden")), ("payload", OrderedJSON.object(payload)), ("error", "true"),
                ("service", OrderedJSON.string("Access Manager")), ("status", "403"),
            ]))
        case .actions:
            return reply(403, OrderedJSON.object([
                ("status", "403"),
                ("error", OrderedJSON.object([("source", OrderedJSON.string("actions")), ("message", OrderedJSON.string(notPermitted))])),
            ]), contentType: Reply.json)
        case .objects:
            return reply(403, OrderedJSON.object([
                ("status", "403"),
                ("error", OrderedJSON.object([("message", OrderedJSON.string(notPermitted)), ("source", OrderedJSON.string("objects"))])),
            ]), contentType: Reply.json)
        case .dataSync:
            return DataSyncReply.forbidden
        case .files:
            return reply(403, OrderedJSON.object([
                ("status", "403"),
                ("error", OrderedJSON.object([("source", OrderedJSON.string("Files")), ("message", OrderedJSON.string(notPermitted))])),
            ]), contentType: Reply.json)
        }
    }

    /// `{"error":true,"status":403,"service":"Access Manager","message":...}`: a revoked token
    /// (`Token is revoked`, recorded), an expired one (`Token is expired.`), a bad signature
    /// (`Invalid Signature`, our choice: the reference leaves that body unconfirmed).
    static func tokenRefused(_ message: String) -> WireResponse {
        reply(403, OrderedJSON.object([
            ("error", "true"), ("status", "403"), ("service", OrderedJSON.string("Access Manager")),
            ("message", OrderedJSON.string(message)),
        ]))
    }

    static let revoked = tokenRefused("Token is revoked")
    static let expired = tokenRefused("Token is expired.")
    static let invalidSignature = tokenRefused("Invalid Signature")

    /// `200 {"data":{"message":"Success","token":"…"},"service":"Access Manager","status":200}`.
    static func granted(_ token: String) -> WireResponse {
        reply(200, OrderedJSON.object([
            ("data", OrderedJSON.object([("message", OrderedJSON.string("Success")), ("token", OrderedJSON.string(token))])),
            ("service", OrderedJSON.string("Access Manager")), ("status", "200"),
        ]))
    }

    /// `200 {"data":{"message":"Success"},"service":"Access Manager","status":200}`.
    static let revokedNow = reply(200, OrderedJSON.object([
        ("data", OrderedJSON.object([("message", OrderedJSON.string("Success"))])),
        ("service", OrderedJSON.string("Access Manager")), ("status", "200"),
    ]))

    /// A grant the body or TTL of which is refused: 400 with `source:"grant"` (the TTL's body is
    /// recorded; the others follow its shape).
    static func grantRefused(_ error: AccessGrantError) -> WireResponse {
        switch error {
        case .invalidTTL:
            return badRequest(message: "Invalid ttl", source: "grant", detail: "Range should be 1 to 43200 minute(s).", location: "ttl", in: "body")
        case .invalidBody(let detail, let location):
            return badRequest(message: "Invalid RequestBody", source: "grant", detail: detail, location: location, in: "body")
        case .accessManagerOff:
            return Reply.notFound()
        }
    }

    /// Revoking an expired token: 400, `Token is expired.`, exactly as recorded (its keys sorted).
    static let revokeExpired = reply(
        400,
        #"{"error":{"details":[{"location":"token","locationType":"path","message":"Token is expired."}],"message":"Invalid token","source":"revoke"},"service":"Access Manager","status":400}"#)
    /// Revoking a token this server never minted (our choice of words).
    static let revokeUnknown = badRequest(message: "Invalid token", source: "revoke", detail: "Token is invalid.", location: "token", in: "path")
    /// A grant or revoke for another subscribe key.
    static let wrongSubscribeKey = badRequest(
        message: "Invalid subscribe key", source: "grant", detail: "Unknown subscribe key.", location: "sub-key", in: "path")

    /// `{"error":{"message":...,"source":...,"details":[{"message":...,"location":...,"locationType":...}]},
    /// "service":"Access Manager","status":400}`, in the key order of the recorded TTL answer.
    private static func badRequest(message: String, source: String, detail: String, location: String, in place: String) -> WireResponse {
        let details = OrderedJSON.object([
            ("message", OrderedJSON.string(detail)), ("location", OrderedJSON.string(location)),
            ("locationType", OrderedJSON.string(place)),
        ])
        return reply(400, OrderedJSON.object([
            ("error", OrderedJSON.object([
                ("message", OrderedJSON.string(message)), ("source", OrderedJSON.string(source)), ("details", "[\(details)]"),
            ])),
            ("service", OrderedJSON.string("Access Manager")), ("status", "400"),
        ]))
    }

    private static func names(_ requirements: [AccessRequirement], _ kind: AccessResourceKind) -> [String] {
        var names: [String] = []
        for requirement in requirements where requirement.kind == kind {
            if let name = requirement.name, !names.contains(name) { names.append(name) }
        }
        return names
    }

    private static func list(_ names: [String]) -> String { "[" + names.map(OrderedJSON.string).joined(separator: ",") + "]" }

    /// Access Manager answers as `text/javascript` (its real content type, reference §2.1).
    private static func reply(_ status: Int, _ text: String, contentType: String = Reply.javascript) -> WireResponse {
        WireResponse(status: status, headers: ["Content-Type": contentType], body: Data(text.utf8))
    }
}
