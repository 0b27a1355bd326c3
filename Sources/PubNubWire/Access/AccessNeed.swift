import Foundation
import ReplicaModel

/// One permission on one resource: "write on channel room-1", "get on every user".
public struct AccessRequirement: Sendable, Hashable, CustomStringConvertible {
    /// The kind of resource.
    public var kind: AccessResourceKind
    /// The resource's name; nil for a category (a listing of every channel or user).
    public var name: String?
    /// The permission needed (one bit).
    public var permission: AccessPermissions

    /// A requirement.
    public init(_ kind: AccessResourceKind, _ name: String?, _ permission: AccessPermissions) {
        self.kind = kind
        self.name = name
        self.permission = permission
    }

    /// `write on channel "room-1"`, `get on every uuid`: what a dead letter and a log name.
    public var description: String {
        let kindName = kind.noun
        guard let name else { return "\(permission) on every \(kindName)" }
        return "\(permission) on \(kindName) \"\(name)\""
    }
}

/// What a request needs from Access Manager: the one owner of the permission table (PubNub's
/// "operations to permissions mapping"; `docs/access.md`), read by the client's pre-check and by
/// the simulator's enforcement alike.
///
/// ```swift
/// let need = AccessNeed.of(request)          // a publish to room-1
/// need.missing(in: token.grants)             // [write on channel "room-1"] when not granted
/// ```
public enum AccessNeed: Sendable, Hashable {
    /// Nothing: `/time`, where-now, leave, the storage's presigned requests.
    case nothing
    /// Every requirement must hold.
    case all([AccessRequirement])
    /// One of the alternatives must hold in full (setting a user's memberships: `join` on the
    /// user, or `update` on the user and `join` on each channel; PubNub's pages name both).
    case anyOf([[AccessRequirement]])
    /// Only a request signed with the secret key (granting and revoking tokens).
    case secretKey

    /// The requirements that `grants` leave unmet, empty when the request is allowed. For
    /// ``anyOf(_:)`` the first alternative's unmet ones; for ``secretKey`` none (a token never
    /// allows it: check ``secretKey`` yourself).
    ///
    /// - Parameter undecidedIsMet: how a requirement only a pattern the client will not evaluate
    ///   could grant (``AccessVerdict/undecided``) counts: met for a client's pre-check (the
    ///   request goes and the server decides; the default), unmet for a server that will not
    ///   evaluate it either (the simulator).
    public func missing(in grants: AccessGrants, undecidedIsMet: Bool = true) -> [AccessRequirement] {
        func unmet(_ requirement: AccessRequirement) -> Bool {
            switch grants.verdict(requirement) {
            case .granted: false
            case .notGranted: true
            case .undecided: !undecidedIsMet
            }
        }
        switch self {
        case .nothing, .secretKey:
            return []
        case .all(let requirements):
            return requirements.filter(unmet)
        case .anyOf(let alternatives):
            var first: [AccessRequirement]?
            for alternative in alternatives {
                let unmet = alternative.filter(unmet)
                if unmet.isEmpty { return [] }
                if first == nil { first = unmet }
            }
            return first ?? []
        }
    }

    /// The channels named by the requirements (a 403's `payload.channels`).
    public var channels: [String] {
        var names: [String] = []
        for requirement in requirementsFlattened where requirement.kind == .channel {
            if let name = requirement.name, !names.contains(name) { names.append(name) }
        }
        return names
    }

    var requirementsFlattened: [AccessRequirement] {
        switch self {
        case .nothing, .secretKey: []
        case .all(let list): list
        case .anyOf(let alternatives): alternatives.flatMap { $0 }
        }
    }

    /// What `request` needs, from its method and path (and, for memberships, its body).
    ///
    /// An endpoint this table does not know needs ``secretKey``: the simulator refuses it under a
    /// token, and the client's pre-check lets it go (the server decides).
    public static func of(_ request: WireRequest) -> AccessNeed {
        let s = request.pathSegments
        let method = request.method
        func at(_ index: Int) -> String? { index < s.count ? s[index] : nil }
        func channels(_ index: Int, _ bit: AccessPermissions) -> [AccessRequirement] {
            guard let list = at(index) else { return [] }
            return list.split(separator: ",", omittingEmptySubsequences: true).map {
                AccessRequirement(.channel, String($0), bit)
            }
        }
        func groups(_ bit: AccessPermissions) -> [AccessRequirement] {
            let value = request.query.first { $0.name == "channel-group" }?.value ?? ""
            return value.split(separator: ",").map { AccessRequirement(.group, String($0), bit) }
        }
        switch at(0) {
        case "time":
            return .nothing
        case "publish", "signal":
            // /publish/{pub}/{sub}/0/{channel}/0[/{message}]
            return .all(channels(4, .write))
        case "v2":
            switch at(1) {
            case "subscribe":
                // /v2/subscribe/{sub}/{channels}/0; presence channels (`-pnpres`) need read too.
                return .all(channels(3, .read) + groups(.read))
            case "presence":
                return presence(s, method: method, groups: groups(.read))
            case "history":
                return .all(channels(5, .read))
            case "objects":
                return objects(s, method: method, body: request.body, headers: request.headers)
            case "push":
                return push(request)
            default:
                return .secretKey
            }
        case "v3":
            switch (at(1), method) {
            case ("history", .delete): return .all(channels(5, .delete))
            case ("history", _), ("history-with-actions", _): return .all(channels(5, .read))
            case ("pam", _): return .secretKey
            default: return .secretKey
            }
        case "v1":
            switch at(1) {
            case "message-actions":
                // /v1/message-actions/{sub}/channel/{ch}[/message/{tt}[/action/{att}]]
                let bit: AccessPermissions = method == .get ? .read : (method == .delete ? .delete : .write)
                return .all(channels(4, bit))
            case "files":
                return files(s, method: method)
            case "push":
                return push(request)
            case "datasync":
                return dataSync(s, method: method, body: request.body)
            case "channel-registration":
                // /v1/channel-registration/sub-key/{sub}/channel-group/{group}[/remove].
                // Every call on a group, its listing included, needs the group's manage (PubNub's
                // permission table: read on a group is only for subscribing to it).
                return s.count > 5 ? .all([AccessRequirement(.group, s[5], .manage)]) : .secretKey
            default:
                return .secretKey
            }
        default:
            return .secretKey
        }
    }

    /// `/v1/datasync/subkeys/{sub}/{resource}[/{id}]` (the DataSync reference, §13): `get` to
    /// read one record, `create` to create one (named by the body's `data.id`), `update` for a
    /// replace or a patch, `delete`. A list needs only a valid token: the server leaves out the
    /// records the token may not `get`, and refuses nothing.
    private static func dataSync(_ s: [String], method: HTTPMethod, body: Data?) -> AccessNeed {
        guard s.count >= 5, s[2] == "subkeys" else { return .secretKey }
        let kind: AccessResourceKind
        switch s[4] {
        case "users": kind = .user
        case "channels": kind = .channel
        case "memberships": kind = .dataSyncMembership
        case "entities": kind = .dataSyncEntity
        case "relationships": kind = .dataSyncRelationship
        default: return .secretKey
        }
        guard s.count == 6 else {
            guard s.count == 5 else { return .secretKey }
            switch method {
            case .get: return .all([])
            case .post:
                let id = body.flatMap(JSONValue.parse)?.objectValue?["data"]?.objectValue?["id"]?.stringValue
                return .all(id.map { [AccessRequirement(kind, $0, .create)] } ?? [])
            default: return .secretKey
            }
        }
        let bit: AccessPermissions
        switch method {
        case .get: bit = .get
        case .put, .patch: bit = .update
        case .delete: bit = .delete
        case .post: return .secretKey
        }
        return .all([AccessRequirement(kind, s[5], bit)])
    }

    private static func presence(_ s: [String], method: HTTPMethod, groups: [AccessRequirement]) -> AccessNeed {
        // /v2/presence/sub-key/{sub}/channel/{channels}[/heartbeat|/leave|/uuid/{u}[/data]]
        // /v2/presence/sub-key/{sub}/uuid/{u} (where now)
        // Where-now needs nothing; the global here-now (every channel's occupants) only the secret key.
        guard s.count >= 6 else { return s.count == 4 ? .secretKey : .nothing }
        guard s[4] == "channel" else { return s[4] == "uuid" ? .nothing : .secretKey }
        if s.count >= 7, s[6] == "leave" { return .nothing }
        let names = s[5].split(separator: ",").map { AccessRequirement(.channel, String($0), .read) }
        return .all(names + groups)
    }

    /// Mobile Push (`/v1/push/sub-key/{sub}/devices/{token}`, `/v2/push/sub-key/{sub}/devices-apns2/{token}`,
    /// either with `/remove`): `read` on each channel of `add` and `remove`. Listing and removing
    /// the device name no channel: they need a valid token only.
    private static func push(_ request: WireRequest) -> AccessNeed {
        let listed = request.query.filter { ["add", "remove"].contains($0.name) }.compactMap(\.value)
        let names = listed.flatMap { $0.split(separator: ",").map(String.init) }
        return .all(names.map { AccessRequirement(.channel, $0, .read) })
    }

    private static func files(_ s: [String], method: HTTPMethod) -> AccessNeed {
        // /v1/files/publish-file/{pub}/{sub}/0/{ch}/0/{message}
        if s.count > 6, s[2] == "publish-file" { return .all([AccessRequirement(.channel, s[6], .write)]) }
        // /v1/files/{sub}/channels/{ch}/generate-upload-url | /files | /files/{id}/{name}
        guard s.count >= 6, s[3] == "channels" else { return .secretKey }
        let channel = s[4]
        switch (s[5], method) {
        case ("generate-upload-url", _): return .all([AccessRequirement(.channel, channel, .write)])
        case ("files", .delete): return .all([AccessRequirement(.channel, channel, .delete)])
        case ("files", _): return .all([AccessRequirement(.channel, channel, .read)])
        default: return .secretKey
        }
    }

    private static func objects(_ s: [String], method: HTTPMethod, body: Data?, headers: [String: String]) -> AccessNeed {
        // /v2/objects/{sub}/uuids[/{u}[/channels]] | /v2/objects/{sub}/channels[/{c}[/uuids]]
        guard s.count >= 4 else { return .secretKey }
        let kind: AccessResourceKind = s[3] == "uuids" ? .uuid : .channel
        guard s[3] == "uuids" || s[3] == "channels" else { return .secretKey }
        guard s.count >= 5 else { return .all([AccessRequirement(kind, nil, .get)]) }
        let id = s[4]
        let objectBit: AccessPermissions = method == .get ? .get : (method == .delete ? .delete : .update)
        guard s.count >= 6 else { return .all([AccessRequirement(kind, id, objectBit)]) }
        if method == .get { return .all([AccessRequirement(kind, id, .get)]) }
        if kind == .channel {
            // Setting or removing a channel's members.
            return .all([AccessRequirement(.channel, id, .manage)])
        }
        // Setting or removing a user's memberships.
        // A body that cannot be read names no channel the second alternative could check: only the first.
        let gzipped = headers.contains { $0.key.lowercased() == "content-encoding" && $0.value.lowercased().contains("gzip") }
        guard let channels = membershipChannels(body, gzipped: gzipped)
        else { return .all([AccessRequirement(.uuid, id, .join)]) }
        let joined = channels.map { AccessRequirement(.channel, $0, .join) }
        return .anyOf([[AccessRequirement(.uuid, id, .join)], [AccessRequirement(.uuid, id, .update)] + joined])
    }

    /// The channel ids a memberships body (`{"set":[{"channel":{"id":…}}],"delete":[…]}`) names,
    /// or nil when the body is not such an object (unreadable, gzip that does not inflate, an
    /// entry without a channel id).
    private static func membershipChannels(_ body: Data?, gzipped: Bool) -> [String]? {
        guard var body else { return nil }
        if gzipped {
            do { body = try Gzip.decompress(body, limit: 1 << 20) } catch { return nil }
        }
        guard let json = JSONValue.parse(body), case .object(let fields) = json else { return nil }
        var ids: [String] = []
        for key in ["set", "delete"] {
            guard let list = fields[key] else { continue }
            guard case .array(let items) = list else { return nil }
            for item in items {
                guard case .object(let entry) = item, case .object(let channel)? = entry["channel"],
                    case .string(let id)? = channel["id"]
                else { return nil }
                if !ids.contains(id) { ids.append(id) }
            }
        }
        return ids
    }
}
