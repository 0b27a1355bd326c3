import Crypto
import Foundation
import PubNubWire
import ReplicaModel

/// Why the simulator does not mint a token: the grant endpoint answers each with a 400 in
/// Access Manager's shape, and ``PubNubServer/grantToken(ttlMinutes:grants:authorizedUserId:meta:)``
/// throws it.
public enum AccessGrantError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server has no secret key: Access Manager is off and grants everything to everyone.
    case accessManagerOff
    /// A TTL outside 1...43200 minutes (``TokenGrant/ttlRange``).
    case invalidTTL
    /// A body the grant endpoint cannot read: what is wrong, and where (`permissions.meta`...).
    case invalidBody(message: String, location: String)

    /// A sentence naming the problem.
    public var description: String {
        switch self {
        case .accessManagerOff: "Access Manager is off: the server has no secret key"
        case .invalidTTL: "the ttl must be 1 to 43200 minutes"
        case .invalidBody(let message, let location): "\(location): \(message)"
        }
    }
}

/// What a grant asks for: the TTL, the grants, the authorized user and the app's `meta`; read
/// from the grant endpoint's body (``init(body:)``, reference §2.1) or made in process.
public struct TokenGrant: Sendable, Hashable {
    /// The TTLs Access Manager accepts, in minutes (1 minute to 30 days).
    public static let ttlRange = 1...43_200

    /// Minutes the token lives.
    public var ttlMinutes: Int
    /// Resources, patterns and categories granted.
    public var grants: AccessGrants
    /// The only `uuid` the token may be used with, if any.
    public var authorizedUserId: String?
    /// The app's own data carried in the token.
    public var meta: [String: JSONValue]

    /// A grant; ``ttlMinutes`` is checked when it is minted.
    public init(ttlMinutes: Int, grants: AccessGrants, authorizedUserId: String? = nil, meta: [String: JSONValue] = [:]) {
        self.ttlMinutes = ttlMinutes
        self.grants = grants
        self.authorizedUserId = authorizedUserId
        self.meta = meta
    }

    /// Reads the body the Python SDK sends (`{"ttl":60,"permissions":{"resources":{...},
    /// "patterns":{...},"meta":{},"uuid":"alice","categories":{...}}}`). `users` is DataSync's
    /// users bucket (the Python SDK also fills it as a mirror of `uuids`), `datasync:memberships`,
    /// `datasync:entities` and `datasync:relationships` DataSync's; `spaces` (the SDK's mirror of
    /// `channels`) is ignored; permission bits are 0...255;
    /// a pattern must be a valid regular expression.
    public init(body: JSONValue) throws(AccessGrantError) {
        guard case .object(let top) = body else { throw .invalidBody(message: "Not a JSON object", location: "body") }
        guard case .int(let ttl)? = top["ttl"], Self.ttlRange.contains(Int(clamping: ttl)) else { throw .invalidTTL }
        guard case .object(let permissions)? = top["permissions"] else {
            throw .invalidBody(message: "Missing permissions", location: "permissions")
        }
        var grants = AccessGrants()
        for (field, section) in [("resources", true), ("patterns", false)] {
            guard let value = permissions[field] else { continue }
            guard case .object(let kinds) = value else { throw .invalidBody(message: "Not an object", location: "permissions.\(field)") }
            for (kind, wire) in Self.wireKinds {
                guard let names = kinds[wire] else { continue }
                let parsed = try Self.permissionMap(names, location: "permissions.\(field).\(wire)", patterns: !section)
                if section { grants.resources[kind] = parsed } else { grants.patterns[kind] = parsed }
            }
        }
        if let value = permissions["categories"] {
            guard case .object(let categories) = value else {
                throw .invalidBody(message: "Not an object", location: "permissions.categories")
            }
            for (wire, bits) in categories {
                guard let kind = [("channels", AccessResourceKind.channel), ("uuids", .uuid)].first(where: { $0.0 == wire })?.1 else {
                    throw .invalidBody(message: "Unknown category", location: "permissions.categories.\(wire)")
                }
                grants.categories[kind] = try Self.bits(bits, location: "permissions.categories.\(wire)")
            }
        }
        var meta: [String: JSONValue] = [:]
        if let value = permissions["meta"] {
            guard case .object(let fields) = value else { throw .invalidBody(message: "Not an object", location: "permissions.meta") }
            meta = fields
        }
        var user: String?
        if let value = permissions["uuid"] {
            guard case .string(let name) = value, !name.isEmpty else {
                throw .invalidBody(message: "Not a non-empty string", location: "permissions.uuid")
            }
            user = name
        }
        self.init(ttlMinutes: Int(ttl), grants: grants, authorizedUserId: user, meta: meta)
    }

    /// The body's names for each kind (`spaces`, a mirror, is left out).
    static let wireKinds: [(AccessResourceKind, String)] = AccessResourceKind.allCases.map { ($0, $0.grantKey) }

    private static func permissionMap(_ value: JSONValue, location: String, patterns: Bool) throws(AccessGrantError)
        -> [String: AccessPermissions]
    {
        guard case .object(let names) = value else { throw .invalidBody(message: "Not an object", location: location) }
        var map: [String: AccessPermissions] = [:]
        for (name, bits) in names {
            if patterns, (try? NSRegularExpression(pattern: name)) == nil {
                throw .invalidBody(message: "Invalid regular expression", location: location)
            }
            map[name] = try Self.bits(bits, location: location)
        }
        return map
    }

    private static func bits(_ value: JSONValue, location: String) throws(AccessGrantError) -> AccessPermissions {
        guard case .int(let bits) = value, (0...255).contains(bits) else {
            throw .invalidBody(message: "Permissions must be an integer from 0 to 255", location: location)
        }
        return AccessPermissions(rawValue: UInt32(bits))
    }
}

/// A token the simulator minted: its grant, when it was issued (unix seconds on the server's
/// clock) and whether it was revoked. The server keeps these by token text and never decodes a
/// token it did not mint.
struct MintedToken: Sendable, Hashable {
    var grant: TokenGrant
    var issued: Int64
    var revoked = false

    /// `t + ttl * 60`.
    var expires: Date { Date(timeIntervalSince1970: TimeInterval(issued) + TimeInterval(grant.ttlMinutes) * 60) }

    /// Expired at `date`: from the expiry instant on.
    func isExpired(at date: Date) -> Bool { date >= expires }

    /// The token text: base64url (padding kept: the Python SDK's `parse_token` needs it) of a
    /// CBOR map whose keys are byte strings, `v` 2, `t`, `ttl`, `res` and `pat` (`chan`, `grp`,
    /// `uuid`, names sorted), `meta`, `uuid` (the authorized user, if any), `cat` (if any) and
    /// `sig`: HMAC-SHA256 with the secret key over the same map without `sig` (reference §2.3).
    func text(secretKey: String) -> String {
        var pairs: [CBORPair] = [
            CBORPair(key: .key("v"), value: .unsigned(2)),
            CBORPair(key: .key("t"), value: .unsigned(UInt64(max(issued, 0)))),
            CBORPair(key: .key("ttl"), value: .unsigned(UInt64(max(grant.ttlMinutes, 0)))),
            CBORPair(key: .key("res"), value: Self.section(grant.grants.resources)),
            CBORPair(key: .key("pat"), value: Self.section(grant.grants.patterns)),
            CBORPair(key: .key("meta"), value: CBOREncoder.value(json: .object(grant.meta))),
        ]
        if let user = grant.authorizedUserId { pairs.append(CBORPair(key: .key("uuid"), value: .text(user))) }
        if !grant.grants.categories.isEmpty {
            let categories = AccessResourceKind.allCases.compactMap { kind in
                grant.grants.categories[kind].map { CBORPair(key: .key(kind.tokenKey), value: .unsigned(UInt64($0.rawValue))) }
            }
            pairs.append(CBORPair(key: .key("cat"), value: .map(categories)))
        }
        let unsigned = CBOREncoder.encode(.map(pairs))
        let mac = HMAC<SHA256>.authenticationCode(for: unsigned, using: SymmetricKey(data: Data(secretKey.utf8)))
        pairs.append(CBORPair(key: .key("sig"), value: .bytes(Array(mac))))
        return AccessSignature.base64URL(CBOREncoder.encode(.map(pairs)))
    }

    /// `{chan: {name: bits}, grp: {...}, uuid: {...}}`, those three always present (the SDK
    /// iterates them); DataSync's kinds (`usr`, `datasync:*`) only when granted, so that a token
    /// without them is the very token PubNub's reference example gives.
    private static func section(_ map: [AccessResourceKind: [String: AccessPermissions]]) -> CBORValue {
        let always: Set<AccessResourceKind> = [.channel, .group, .uuid]
        return .map(AccessResourceKind.allCases.filter { always.contains($0) || !(map[$0] ?? [:]).isEmpty }.map { kind in
            let names = (map[kind] ?? [:]).sorted { $0.key < $1.key }
                .map { CBORPair(key: .text($0.key), value: .unsigned(UInt64($0.value.rawValue))) }
            return CBORPair(key: .key(kind.tokenKey), value: .map(names))
        })
    }
}
