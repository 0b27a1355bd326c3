import Foundation
import ReplicaModel

/// The five kinds of DataSync records, each under `/v1/datasync/subkeys/{subKey}/{resource}`
/// (the protocol reference, §3). Users and channels are entities of the built-in `User` and
/// `Channel` classes (or their subclasses); memberships are relationships of the built-in
/// `Membership` class between a channel and a user.
public enum DataSyncResource: String, Sendable, Hashable, CaseIterable {
    /// `users`.
    case users
    /// `channels`.
    case channels
    /// `memberships`.
    case memberships
    /// `entities`: records of an app's own entity classes.
    case entities
    /// `relationships`: links of an app's own relationship classes.
    case relationships

    /// `user`, `channel`, `membership`, `entity` or `relationship`: the noun of the vendor
    /// content type and of the events' `metadata.type`.
    public var noun: String {
        switch self {
        case .users: "user"
        case .channels: "channel"
        case .memberships: "membership"
        case .entities: "entity"
        case .relationships: "relationship"
        }
    }

    /// Whether records of this kind are relationships (their class is `relationshipClass`, they
    /// link two entities).
    public var isRelationship: Bool { self == .memberships || self == .relationships }

    /// The content type of a create or replace body: `application/vnd.pubnub.objects.user+json;version=1`.
    public var contentType: String { "application/vnd.pubnub.objects.\(noun)+json;version=1" }

    /// `User` → ``users``: the operation names' noun.
    var operationNoun: String {
        switch self {
        case .users: "User"
        case .channels: "Channel"
        case .memberships: "Membership"
        case .entities: "Entity"
        case .relationships: "Relationship"
        }
    }
}

/// Where a DataSync class is defined: PubNub's built-in classes are `Global`; a keyset's own
/// (including subclasses of `User` and `Channel`) are `SubKey`.
public enum DataSyncClassLevel: String, Sendable, Hashable, Codable, CaseIterable {
    /// PubNub's built-in classes (`User`, `Channel`, `Membership`).
    case global = "Global"
    /// A class defined on the keyset.
    case subKey = "SubKey"
}

/// DataSync's rule for record ids (reference §15): 1 to 255 characters, none of them
/// whitespace, a control character, `,`, `:`, `*`, `/` or `\`. Characters are counted as
/// Unicode scalars.
///
/// ```swift
/// try DataSyncIdentifier.validate("user-alice")        // fine
/// try DataSyncIdentifier.validate("general:random")    // WireError.invalidArgument
/// ```
public enum DataSyncIdentifier {
    /// The longest id, in Unicode scalars.
    public static let maxLength = 255
    /// The characters an id may not hold besides whitespace and control characters.
    public static let forbidden: Set<Unicode.Scalar> = [",", ":", "*", "/", "\\"]

    /// Why `id` cannot be a DataSync id, or nil when it can.
    public static func problem(_ id: String) -> String? {
        let scalars = id.unicodeScalars
        if scalars.isEmpty { return "a DataSync id cannot be empty" }
        if scalars.count > maxLength { return "a DataSync id has at most \(maxLength) characters (this one has \(scalars.count))" }
        for scalar in scalars {
            if forbidden.contains(scalar) { return "a DataSync id cannot contain \"\(scalar)\"" }
            if scalar.properties.isWhitespace { return "a DataSync id cannot contain whitespace" }
            if scalar.properties.generalCategory == .control { return "a DataSync id cannot contain control characters" }
        }
        return nil
    }

    /// Throws ``WireError/invalidArgument(_:)`` naming the rule `id` breaks.
    public static func validate(_ id: String) throws(WireError) {
        if let problem = problem(id) { throw .invalidArgument(problem) }
    }
}

/// DataSync's service limits besides the id rule (reference §15): the one place the client's
/// checks and the simulator's answers read them from.
public enum DataSyncLimits {
    /// A list's `limit`: 1 to 100.
    public static let pageSize = 1...100
    /// A `status`: 1 to 100 characters.
    public static let statusLength = 1...100
    /// A class name: 1 to 128 characters.
    public static let classNameLength = 1...128

    /// Why `name` cannot name a class (`^[a-zA-Z][a-zA-Z0-9_-]*$`, 1 to 128 characters), or nil.
    ///
    /// ```swift
    /// DataSyncLimits.classNameProblem("Poll")      // nil
    /// DataSyncLimits.classNameProblem("2polls")    // "a class name starts with a letter …"
    /// ```
    public static func classNameProblem(_ name: String) -> String? {
        guard classNameLength.contains(name.utf8.count) else { return "a class name has 1 to 128 characters" }
        guard let first = name.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic else {
            return "a class name starts with a letter (A-Z, a-z)"
        }
        let allowed = name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "-") }
        return allowed ? nil : "a class name holds only letters, digits, _ and -"
    }
}

/// Why a DataSync record in an answer could not be read.
public struct DataSyncUnreadable: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong (the field, never its value).
    public var reason: String

    /// A reason.
    public init(reason: String) { self.reason = reason }
    /// The description: ``reason``.
    public var description: String { reason }
}

/// One DataSync record as an answer or an event gives it: a user, channel, membership, entity or
/// relationship, with its system fields (reference §1). Every field but ``id`` is optional: a
/// delete event carries only ``id`` and ``deletedAt``, and events never carry the class.
public struct DataSyncRow: Sendable, Hashable, Decodable {
    /// `id`.
    public var id: String
    /// `createdAt`.
    public var createdAt: ISOTimestamp?
    /// `updatedAt`: when the record last changed (each write sets it).
    public var updatedAt: ISOTimestamp?
    /// `expiresAt`: when the server deletes the record (its class's TTL after creation, rounded up
    /// to a UTC midnight; reference §8).
    public var expiresAt: ISOTimestamp?
    /// `deletedAt`: only in a delete event.
    public var deletedAt: ISOTimestamp?
    /// `eTag`: the version, for `If-Match` (opaque).
    public var eTag: String?
    /// `status`: a free string of 1 to 100 characters.
    public var status: String?
    /// `payload`: the record's data.
    public var payload: [String: JSONValue]?
    /// `entityClass` or `relationshipClass`.
    public var className: String?
    /// `entityClassVersion` or `relationshipClassVersion`.
    public var classVersion: Int?
    /// `entityClassLevel` (entities, users, channels; as sent).
    public var classLevel: String?
    /// A membership's channel (`channelId`).
    public var channelId: String?
    /// A membership's user (`userId`).
    public var userId: String?
    /// A relationship's first entity (`entityAId`; older membership events name the channel here).
    public var entityAId: String?
    /// A relationship's second entity (`entityBId`; older membership events name the user here).
    public var entityBId: String?

    /// A row with an id and nothing else.
    public init(id: String) { self.id = id }

    /// Reads a row from its JSON object; throws ``DataSyncUnreadable`` when `id` is missing or not
    /// a non-empty string, a timestamp cannot be read, `payload` is not an object, or a field has
    /// the wrong type. Unknown members are ignored.
    public init(object: [String: JSONValue]) throws(DataSyncUnreadable) {
        guard let id = object["id"]?.stringValue, !id.isEmpty else { throw DataSyncUnreadable(reason: "id: missing or not a string") }
        self.id = id
        func text(_ key: String) throws(DataSyncUnreadable) -> String? {
            switch object[key] {
            case nil, .null?: return nil
            case .string(let value)?: return value
            default: throw DataSyncUnreadable(reason: "\(key): not a string")
            }
        }
        func time(_ key: String) throws(DataSyncUnreadable) -> ISOTimestamp? {
            guard let value = try text(key) else { return nil }
            do {
                return try ISOTimestamp(parsing: value)
            } catch {
                throw DataSyncUnreadable(reason: "\(key): \(error)")
            }
        }
        func integer(_ key: String) throws(DataSyncUnreadable) -> Int? {
            switch object[key] {
            case nil, .null?: return nil
            case .int(let value)?:
                guard let small = Int(exactly: value), (0...Int(Int32.max)).contains(small) else {
                    throw DataSyncUnreadable(reason: "\(key): out of range")
                }
                return small
            default: throw DataSyncUnreadable(reason: "\(key): not an integer")
            }
        }
        createdAt = try time("createdAt")
        updatedAt = try time("updatedAt")
        expiresAt = try time("expiresAt")
        deletedAt = try time("deletedAt")
        eTag = try text("eTag")
        status = try text("status")
        switch object["payload"] {
        case nil, .null?: payload = nil
        case .object(let fields)?: payload = fields
        default: throw DataSyncUnreadable(reason: "payload: not an object")
        }
        if let entityClass = try text("entityClass") { className = entityClass } else { className = try text("relationshipClass") }
        if let version = try integer("entityClassVersion") { classVersion = version } else {
            classVersion = try integer("relationshipClassVersion")
        }
        classLevel = try text("entityClassLevel")
        channelId = try text("channelId")
        userId = try text("userId")
        entityAId = try text("entityAId")
        entityBId = try text("entityBId")
    }

    /// Decodes the row as ``init(object:)`` reads it.
    public init(from decoder: any Decoder) throws {
        guard case .object(let object) = try JSONValue(from: decoder) else {
            throw DataSyncUnreadable(reason: "not an object")
        }
        try self.init(object: object)
    }
}

/// One page of a DataSync list: `{"data":[…],"meta":{"has_next","next_cursor","limit"},"links":{…}}`
/// (reference §10). Paging is forward only; the last page says `has_next: false` and may leave
/// `next_cursor` out.
public struct DataSyncPage: Sendable, Hashable, Decodable {
    /// The records that could be read.
    public var data: [DataSyncRow]
    /// Why each record that could not be read was left out (`data[3]: payload: not an object`).
    public var skipped: [String]
    /// `meta.has_next`: whether another page follows (false when `meta` is missing).
    public var hasNext: Bool
    /// `meta.next_cursor`: the next request's `cursor`.
    public var nextCursor: String?
    /// `meta.limit`, as the server applied it.
    public var limit: Int?

    /// A page.
    public init(data: [DataSyncRow], skipped: [String] = [], hasNext: Bool = false, nextCursor: String? = nil, limit: Int? = nil) {
        self.data = data
        self.skipped = skipped
        self.hasNext = hasNext
        self.nextCursor = nextCursor
        self.limit = limit
    }

    /// The next page's cursor: ``nextCursor`` when ``hasNext``, else nil.
    public var next: String? { hasNext ? nextCursor : nil }

    /// Reads a page from its JSON; throws ``DataSyncUnreadable`` when `data` is not an array or
    /// `meta` is not an object. A record that cannot be read is listed in ``skipped``.
    public init(object: [String: JSONValue]) throws(DataSyncUnreadable) {
        guard case .array(let items)? = object["data"] else { throw DataSyncUnreadable(reason: "data: not an array") }
        var rows: [DataSyncRow] = []
        var skipped: [String] = []
        for (index, item) in items.enumerated() {
            guard case .object(let fields) = item else {
                skipped.append("data[\(index)]: not an object")
                continue
            }
            do {
                rows.append(try DataSyncRow(object: fields))
            } catch {
                skipped.append("data[\(index)]: \(error.reason)")
            }
        }
        data = rows
        self.skipped = skipped
        switch object["meta"] {
        case nil, .null?:
            hasNext = false
        case .object(let meta)?:
            hasNext = meta["has_next"] == .bool(true)
            nextCursor = meta["next_cursor"]?.stringValue
            if case .int(let value)? = meta["limit"] { limit = Int(exactly: value) }
        default:
            throw DataSyncUnreadable(reason: "meta: not an object")
        }
    }

    /// Decodes the page as ``init(object:)`` reads it.
    public init(from decoder: any Decoder) throws {
        guard case .object(let object) = try JSONValue(from: decoder) else { throw DataSyncUnreadable(reason: "not an object") }
        try self.init(object: object)
    }
}

/// What a DataSync list asks for (reference §10): paging, filtering, sorting, and for
/// memberships and relationships the linked ids. Sent snake_case.
///
/// ```swift
/// var query = DataSyncListQuery()
/// query.userId = "alice"                                  // alice's memberships
/// query.filterFast = #"updatedAt >= "2026-11-01T00:00:00Z""#
/// query.sort = ["updatedAt"]
/// ```
public struct DataSyncListQuery: Sendable, Hashable {
    /// Page size, 1-100 (the server's default is 20; this client asks for 100).
    public var limit = 100
    /// `cursor`: the previous page's ``DataSyncPage/nextCursor``.
    public var cursor: String?
    /// `filter_fast`: a strongly consistent filter (at most 10 predicates by default).
    public var filterFast: String?
    /// `filter`: an eventually consistent filter. Sending both filters is refused.
    public var filter: String?
    /// Sort keys, `field` or `field:desc`, sent comma-joined.
    public var sort: [String] = []
    /// Memberships: `user_id`.
    public var userId: String?
    /// Memberships: `channel_id`.
    public var channelId: String?
    /// Relationships: `entity_a_id`.
    public var entityAId: String?
    /// Relationships: `entity_b_id`.
    public var entityBId: String?
    /// `entity_class` (required for entities; a subclass of `User` or `Channel` for those) or
    /// `relationship_class` (required for relationships).
    public var className: String?
    /// `entity_class_version` or `relationship_class_version`; nil lists every version.
    public var classVersion: Int?
    /// `entity_class_level` (entities, users, channels).
    public var classLevel: DataSyncClassLevel?

    /// A query (100 per page, no filter).
    public init() {}

    func items(for resource: DataSyncResource) throws(WireError) -> [QueryItem] {
        guard DataSyncLimits.pageSize.contains(limit) else { throw .invalidArgument("limit must be 1-100") }
        guard filter == nil || filterFast == nil else { throw .invalidArgument("send filter or filter_fast, not both") }
        if resource == .entities || resource == .relationships, className == nil {
            throw .invalidArgument("listing \(resource.rawValue) needs a class name")
        }
        let prefix = resource.isRelationship ? "relationship_class" : "entity_class"
        var items = [QueryItem("limit", String(limit))]
        if let cursor { items.append(QueryItem("cursor", cursor)) }
        if let filterFast { items.append(QueryItem("filter_fast", filterFast)) }
        if let filter { items.append(QueryItem("filter", filter)) }
        if !sort.isEmpty { items.append(QueryItem("sort", sort.joined(separator: ","))) }
        if resource == .memberships {
            if let userId { items.append(QueryItem("user_id", userId)) }
            if let channelId { items.append(QueryItem("channel_id", channelId)) }
        }
        if resource == .relationships {
            if let entityAId { items.append(QueryItem("entity_a_id", entityAId)) }
            if let entityBId { items.append(QueryItem("entity_b_id", entityBId)) }
        }
        if let className, resource != .memberships { items.append(QueryItem(prefix, className)) }
        if let classVersion { items.append(QueryItem(prefix + "_version", String(classVersion))) }
        if let classLevel, !resource.isRelationship { items.append(QueryItem("entity_class_level", classLevel.rawValue)) }
        return items
    }
}

/// What a create (POST) or a replace (PUT) sends: `{"data":{…}}` (reference §4, §6). Which
/// members go depends on the resource and the verb (``body(for:creating:)``).
///
/// ```swift
/// var user = DataSyncObject(id: "alice")
/// user.payload = ["name": "Alice"]
/// let request = try client.dataSync.createRequest(.users, user)
/// ```
public struct DataSyncObject: Sendable, Hashable {
    /// `id`; nil lets the server choose one (creates only).
    public var id: String?
    /// `entityClass` or `relationshipClass`: required for entities and relationships; for users
    /// and channels a subclass of `User` or `Channel` (nil: the built-in class). For memberships,
    /// sent only when set (a Membership subclass; reference §4 names no class field there).
    public var className: String?
    /// `entityClassVersion` or `relationshipClassVersion` (required; 1 for the built-in classes).
    public var classVersion: Int
    /// `entityClassLevel` (entities, users, channels; creates only).
    public var classLevel: DataSyncClassLevel?
    /// A membership's channel (`channelId`).
    public var channelId: String?
    /// A membership's user (`userId`).
    public var userId: String?
    /// A relationship's first entity (`entityAId`).
    public var entityAId: String?
    /// A relationship's second entity (`entityBId`).
    public var entityBId: String?
    /// `status` (1 to 100 characters).
    public var status: String?
    /// `payload`.
    public var payload: [String: JSONValue]?

    /// An object to create or replace.
    public init(
        id: String? = nil, className: String? = nil, classVersion: Int = 1, classLevel: DataSyncClassLevel? = nil,
        channelId: String? = nil, userId: String? = nil, status: String? = nil, payload: [String: JSONValue]? = nil
    ) {
        self.id = id
        self.className = className
        self.classVersion = classVersion
        self.classLevel = classLevel
        self.channelId = channelId
        self.userId = userId
        self.status = status
        self.payload = payload
    }

    /// The body's `data` for `resource`: a create sends the id, the class and the links; a
    /// replace sends the version, status and payload (and a membership's or relationship's
    /// links, which the JS SDK sends and its tests say the server requires). Throws
    /// ``WireError/invalidArgument(_:)`` for what the server would refuse: a missing class or
    /// link, an invalid id, a status outside 1-100 characters.
    public func body(for resource: DataSyncResource, creating: Bool) throws(WireError) -> JSONValue {
        var data: [String: JSONValue] = [:]
        if creating, let id {
            try DataSyncIdentifier.validate(id)
            data["id"] = .string(id)
        }
        if let status {
            guard DataSyncLimits.statusLength.contains(status.count) else { throw .invalidArgument("a DataSync status has 1-100 characters") }
            data["status"] = .string(status)
        }
        if let payload { data["payload"] = .object(payload) }
        switch resource {
        case .users, .channels, .entities:
            data["entityClassVersion"] = .int(Int64(classVersion))
            if creating {
                if resource == .entities, className == nil { throw .invalidArgument("creating an entity needs its class") }
                if let className { data["entityClass"] = .string(className) }
                if let classLevel { data["entityClassLevel"] = .string(classLevel.rawValue) }
            }
        case .memberships:
            data["relationshipClassVersion"] = .int(Int64(classVersion))
            guard let channelId, let userId else { throw .invalidArgument("a membership needs channelId and userId") }
            try DataSyncIdentifier.validate(channelId)
            try DataSyncIdentifier.validate(userId)
            data["channelId"] = .string(channelId)
            data["userId"] = .string(userId)
            if creating, let className { data["relationshipClass"] = .string(className) }
        case .relationships:
            data["relationshipClassVersion"] = .int(Int64(classVersion))
            guard let entityAId, let entityBId else { throw .invalidArgument("a relationship needs entityAId and entityBId") }
            data["entityAId"] = .string(entityAId)
            data["entityBId"] = .string(entityBId)
            if creating {
                guard let className else { throw .invalidArgument("creating a relationship needs its class") }
                data["relationshipClass"] = .string(className)
            }
        }
        return ["data": .object(data)]
    }
}
