import Foundation
import ReplicaModel

/// Why a text is not an Access Manager token pnreplicate can use.
public enum AccessTokenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text is empty.
    case empty
    /// Longer than ``AccessToken/maxLength`` characters.
    case tooLong(characters: Int)
    /// Not base64url (with or without `=` padding).
    case notBase64
    /// The bytes are not CBOR the decoder accepts.
    case cbor(CBORError)
    /// The CBOR is not a map with the fields a token has (`v`, `t`, `ttl`, `res`, `pat`, `meta`).
    case malformed(String)
    /// A token version other than 2.
    case unsupportedVersion(Int64)
    /// The token is for another user: Access Manager refuses every request whose `uuid` is not
    /// the token's authorized user.
    case otherUser(tokenUser: String, configuredUser: String)

    /// A sentence naming the problem; never the token.
    public var description: String {
        switch self {
        case .empty: "the token is empty"
        case .tooLong(let count): "the token is \(count) characters long, over the limit of \(AccessToken.maxLength)"
        case .notBase64: "the token is not base64url text"
        case .cbor(let error): "the token is not readable CBOR: \(error)"
        case .malformed(let what): "the token is malformed: \(what)"
        case .unsupportedVersion(let version): "the token's version \(version) is not supported (only 2)"
        case .otherUser(let tokenUser, let configuredUser):
            "the token is for user \"\(tokenUser)\", not for the configured user \"\(configuredUser)\""
        }
    }
}

/// An Access Manager v3 token, parsed: when it was issued, how long it lives, whom it is for and
/// what it grants. Parsing checks nothing cryptographic (only PubNub can verify the signature);
/// it lets pnreplicate know a token is expired before sending anything, and refuse an op the
/// token cannot allow before it is queued to fail.
///
/// The token's text is kept (``text``, sent as `auth`) but never printed: `description`,
/// `debugDescription` and `dump` show only its parsed fields.
///
/// ```swift
/// let token = try AccessToken(parsing: tokenFromMyServer)
/// token.expires                                  // issued + ttl minutes
/// token.grants.permissions(.channel, name: "room-1")
/// ```
public struct AccessToken: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The longest token text accepted (a token travels in every request's URL).
    public static let maxLength = 1 << 15

    /// The token as the server minted it (sent as `auth`); never log it.
    public let text: String
    /// The token format's version (2).
    public let version: Int
    /// When the server issued it (`t`).
    public let issued: Date
    /// How long it lives, in minutes (`ttl`).
    public let ttlMinutes: Int
    /// The user it is for (`uuid`), when it names one.
    public let authorizedUserId: String?
    /// What it grants.
    public let grants: AccessGrants
    /// The app's own data in the token (`meta`), as JSON.
    public let meta: JSONValue

    /// When it expires: ``issued`` plus ``ttlMinutes``.
    public var expires: Date { issued.addingTimeInterval(TimeInterval(ttlMinutes) * 60) }

    /// Whether it has expired at `date`.
    public func isExpired(at date: Date) -> Bool { date >= expires }

    /// Parses `text` (base64url of CBOR, padding optional; `+` and `/` are accepted too).
    public init(parsing text: String) throws(AccessTokenError) {
        guard !text.isEmpty else { throw .empty }
        guard text.count <= Self.maxLength else { throw .tooLong(characters: text.count) }
        guard let bytes = Self.base64URLDecoded(text) else { throw .notBase64 }
        let root: CBORValue
        do {
            root = try CBORDecoder.decode(bytes)
        } catch {
            throw .cbor(error)
        }
        guard case .map = root else { throw .malformed("not a map") }
        guard let version = root["v"]?.integer else { throw .malformed("no version (v)") }
        guard version == 2 else { throw .unsupportedVersion(version) }
        guard let issued = root["t"]?.integer, issued >= 0, issued < 1 << 40 else { throw .malformed("no issue time (t)") }
        guard let ttl = root["ttl"]?.integer, ttl >= 0, ttl <= 1 << 31 else { throw .malformed("no ttl") }
        guard let resources = root["res"], let patterns = root["pat"] else { throw .malformed("no res or pat") }
        guard let meta = root["meta"] else { throw .malformed("no meta") }
        var user: String?
        if let value = root["uuid"] {
            guard let name = value.keyText else { throw .malformed("uuid is not text") }
            user = name
        }
        self.text = text
        self.version = Int(version)
        self.issued = Date(timeIntervalSince1970: TimeInterval(issued))
        self.ttlMinutes = Int(ttl)
        self.authorizedUserId = user
        self.grants = AccessGrants(
            resources: try Self.permissionMap(resources, field: "res"),
            patterns: try Self.permissionMap(patterns, field: "pat"),
            categories: try Self.categories(root["cat"]))
        self.meta = try Self.json(meta, depth: 0)
    }

    /// Checks that the token is for `userId` (or for nobody in particular).
    public func checkUser(_ userId: String) throws(AccessTokenError) {
        if let authorizedUserId, authorizedUserId != userId {
            throw .otherUser(tokenUser: authorizedUserId, configuredUser: userId)
        }
    }

    /// The parsed token with the keys the Python SDK's `parse_token` returns (`version`,
    /// `timestamp`, `ttl`, `authorized_uuid`, `resources`, `patterns`, `meta`, and `categories`
    /// when the token has some); each permission set as `read`, `write`, `manage`, `delete`,
    /// `get`, `update`, `join` booleans. No signature. A token with DataSync grants adds
    /// `datasync` (`resources` and `patterns` by `users`, `datasync:memberships`…, with `create`
    /// too), which `parse_token` does not show.
    public var parsedJSON: JSONValue {
        func bits(_ permissions: AccessPermissions, create: Bool) -> JSONValue {
            var fields: [String: JSONValue] = [:]
            for (name, bit) in AccessPermissions.named where bit != .create || create {
                fields[name] = .bool(permissions.contains(bit))
            }
            return .object(fields)
        }
        func section(_ map: [AccessResourceKind: [String: AccessPermissions]], _ kinds: [AccessResourceKind]) -> JSONValue {
            var fields: [String: JSONValue] = [:]
            let create = !kinds.contains(.channel)
            for kind in kinds { fields[kind.grantKey] = .object((map[kind] ?? [:]).mapValues { bits($0, create: create) }) }
            return .object(fields)
        }
        // DataSync's grants, beside parse_token's three sections: a `usr` that repeats `uuid` is
        // the SDKs' mirror, not a DataSync grant of its own.
        let mirror = (grants.resources[.user] ?? [:]) == (grants.resources[.uuid] ?? [:])
            && (grants.patterns[.user] ?? [:]) == (grants.patterns[.uuid] ?? [:])
        var dataSync: [String: JSONValue] = [:]
        for (name, map) in [("resources", grants.resources), ("patterns", grants.patterns)] {
            let kinds = [AccessResourceKind.user, .dataSyncMembership, .dataSyncEntity, .dataSyncRelationship].filter {
                !(map[$0] ?? [:]).isEmpty && !($0 == .user && mirror)
            }
            if !kinds.isEmpty { dataSync[name] = section(map, kinds) }
        }
        var fields: [String: JSONValue] = [
            "version": .int(Int64(version)), "timestamp": .int(Int64(issued.timeIntervalSince1970)),
            "ttl": .int(Int64(ttlMinutes)), "authorized_uuid": authorizedUserId.map(JSONValue.string) ?? .null,
            "resources": section(grants.resources, [.channel, .group, .uuid]),
            "patterns": section(grants.patterns, [.channel, .group, .uuid]), "meta": meta,
        ]
        if !dataSync.isEmpty { fields["datasync"] = .object(dataSync) }
        if !grants.categories.isEmpty {
            var categories: [String: JSONValue] = [:]
            if let bits = grants.categories[.channel] { categories["channels"] = .object(["get": .bool(bits.contains(.get))]) }
            if let bits = grants.categories[.uuid] { categories["uuids"] = .object(["get": .bool(bits.contains(.get))]) }
            fields["categories"] = .object(categories)
        }
        return .object(fields)
    }

    /// The parsed fields, never the token's text.
    public var description: String {
        "AccessToken(issued: \(ISOTimestamp(date: issued)), ttl: \(ttlMinutes) min, user: \(authorizedUserId ?? "any"))"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// What `dump` and debuggers show: the parsed fields, not the text.
    public var customMirror: Mirror {
        Mirror(self, children: ["issued": issued, "ttlMinutes": ttlMinutes, "authorizedUserId": authorizedUserId as Any])
    }

    // MARK: Decoding

    static func base64URLDecoded(_ text: String) -> [UInt8]? {
        var base64 = String(text.map { $0 == "-" ? "+" : ($0 == "_" ? "/" : $0) })
        while base64.hasSuffix("=") { base64.removeLast() }
        guard base64.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        let remainder = base64.utf8.count % 4
        guard remainder != 1 else { return nil }
        if remainder > 0 { base64 += String(repeating: "=", count: 4 - remainder) }
        return Data(base64Encoded: base64).map { [UInt8]($0) }
    }

    private static func permissionMap(_ value: CBORValue, field: String) throws(AccessTokenError)
        -> [AccessResourceKind: [String: AccessPermissions]]
    {
        guard case .map(let kinds) = value else { throw .malformed("\(field) is not a map") }
        var result: [AccessResourceKind: [String: AccessPermissions]] = [:]
        for pair in kinds {
            // `spc` (a legacy mirror of channels) and unknown kinds are ignored.
            guard let key = pair.key.keyText,
                let kind = AccessResourceKind.allCases.first(where: { $0.tokenKey == key })
            else { continue }
            guard case .map(let entries) = pair.value else { throw .malformed("\(field).\(key) is not a map") }
            var names: [String: AccessPermissions] = [:]
            for entry in entries {
                guard let name = entry.key.keyText else { throw .malformed("a name in \(field).\(key) is not text") }
                guard let bits = entry.value.integer, (0...Int64(UInt32.max)).contains(bits) else {
                    throw .malformed("the permissions of a name in \(field).\(key) are not a number")
                }
                names[name, default: []].formUnion(AccessPermissions(rawValue: UInt32(bits)))
            }
            result[kind] = names
        }
        return result
    }

    private static func categories(_ value: CBORValue?) throws(AccessTokenError) -> [AccessResourceKind: AccessPermissions] {
        guard let value else { return [:] }
        guard case .map(let pairs) = value else { throw .malformed("cat is not a map") }
        var result: [AccessResourceKind: AccessPermissions] = [:]
        for pair in pairs {
            guard let key = pair.key.keyText, let kind = AccessResourceKind.allCases.first(where: { $0.tokenKey == key }),
                let bits = pair.value.integer, (0...Int64(UInt32.max)).contains(bits)
            else { continue }
            result[kind] = AccessPermissions(rawValue: UInt32(bits))
        }
        return result
    }

    /// `meta` as JSON: maps with text (or UTF-8 byte) keys become objects, byte strings base64.
    private static func json(_ value: CBORValue, depth: Int) throws(AccessTokenError) -> JSONValue {
        switch value {
        case .unsigned(let n):
            return value.integer.map(JSONValue.int) ?? .double(Double(n))
        case .negative(let n):
            return value.integer.map(JSONValue.int) ?? .double(-1 - Double(n))
        case .bytes(let bytes):
            return String(validating: bytes, as: UTF8.self).map(JSONValue.string) ?? .string(Data(bytes).base64EncodedString())
        case .text(let text):
            return .string(text)
        case .array(let items):
            var list: [JSONValue] = []
            for item in items { list.append(try json(item, depth: depth + 1)) }
            return .array(list)
        case .map(let pairs):
            var fields: [String: JSONValue] = [:]
            for pair in pairs {
                guard let key = pair.key.keyText else { throw .malformed("a meta key is not text") }
                fields[key] = try json(pair.value, depth: depth + 1)
            }
            return .object(fields)
        case .tagged(_, let inner):
            return try json(inner, depth: depth + 1)
        case .bool(let flag):
            return .bool(flag)
        case .null, .simple:
            return .null
        case .float(let number):
            return number.isFinite ? .double(number) : .null
        }
    }
}
