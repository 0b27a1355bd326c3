import Foundation
import PubNubWire
import ReplicaModel

/// A DataSync class the simulator knows: PubNub's built-ins (`User`, `Channel`, `Membership`,
/// Global, version 1, 30 days) or one defined through the Admin API
/// (`POST /v2/datasync/subkeys/{subKey}/entity-classes/{Name}/versions/{n}`), by a test
/// (``PubNubServer/defineDataSyncClass(_:)``) or by `simulator serve --datasync-class` (the
/// protocol reference, §1, §8, §16).
///
/// ```swift
/// await server.defineDataSyncClass(DataSyncClass(name: "Poll", properties: [
///     DataSyncProperty(name: "closed", pointer: JSONPointer(["payload", "closed"]), valueKind: .boolean, filtering: .simple),
/// ]))
/// ```
public struct DataSyncClass: Sendable, Hashable {
    /// Whether the class's records are entities or relationships.
    public enum Kind: Sendable, Hashable {
        /// Users, channels and an app's entity classes.
        case entity
        /// Memberships and an app's relationship classes.
        case relationship
    }

    /// The class name (`User`, `Employee`).
    public var name: String
    /// The class version.
    public var version: Int
    /// Global (PubNub's) or SubKey (the keyset's).
    public var level: DataSyncClassLevel
    /// Entity or relationship.
    public var kind: Kind
    /// The built-in class it extends (`User`, `Channel`), or nil.
    public var extends: String?
    /// How long a record lives after its creation (rounded up to a UTC midnight).
    public var ttlSeconds: Int
    /// The properties it declares: typed, validated on write, filterable and sortable as their
    /// ``DataSyncProperty/filtering`` says.
    public var properties: [DataSyncProperty]
    /// Whether its records publish `e: 5` events (an event rule in PubNub's portal; on here by
    /// default).
    public var events: Bool
    /// The Admin API's `description`, or nil.
    public var summary: String?
    /// A relationship class's cardinality (nil for an entity class; many-to-many when a
    /// definition leaves it out).
    public var cardinality: DataSyncCardinality?
    /// A relationship class's end classes (`entityAClass`, `entityBClass`); nil for an entity
    /// class, and for `Membership` and its subclasses (a channel and a user).
    public var ends: (a: String, b: String)? {
        get { endA.flatMap { a in endB.map { (a, $0) } } }
        set { (endA, endB) = (newValue?.a, newValue?.b) }
    }
    var endA: String?
    var endB: String?

    /// A class; `properties` default to none.
    public init(
        name: String, version: Int = 1, level: DataSyncClassLevel = .subKey, kind: Kind = .entity, extends: String? = nil,
        ttlSeconds: Int = 2_678_400, properties: [DataSyncProperty] = [], events: Bool = true,
        cardinality: DataSyncCardinality? = nil, ends: (a: String, b: String)? = nil, summary: String? = nil
    ) {
        self.name = name
        self.version = version
        self.level = level
        self.kind = kind
        self.extends = extends
        self.ttlSeconds = ttlSeconds
        self.properties = properties
        self.events = events
        self.cardinality = cardinality ?? (kind == .relationship ? .manyToMany : nil)
        self.summary = summary
        self.ends = ends
    }

    /// The declared property named `name`, or nil.
    public func property(named name: String) -> DataSyncProperty? { properties.first { $0.name == name } }

    /// `name` and `type` at `/payload/…`: the built-in `User`'s and `Channel`'s properties
    /// (nullable strings, fully filterable; reference §1).
    public static let builtInProperties = ["name", "type"].map {
        DataSyncProperty(name: $0, pointer: JSONPointer(["payload", $0]), valueKind: .string, filtering: .full)
    }

    /// The built-in `User`: `name` and `type` at `/payload/…`, 30 days.
    public static let user = DataSyncClass(name: "User", level: .global, ttlSeconds: 2_592_000, properties: builtInProperties)
    /// The built-in `Channel`: `name` and `type` at `/payload/…`, 30 days.
    public static let channel = DataSyncClass(name: "Channel", level: .global, ttlSeconds: 2_592_000, properties: builtInProperties)
    /// The built-in `Membership` (a channel and a user, one per pair), 30 days.
    public static let membership = DataSyncClass(name: "Membership", level: .global, kind: .relationship, ttlSeconds: 2_592_000)

    /// The Global ancestor events name as `metadata.type` (reference §12).
    var eventType: String {
        switch (kind, extends ?? (level == .global ? name : nil)) {
        case (.entity, "User"): "user"
        case (.entity, "Channel"): "channel"
        case (.relationship, "Membership"): "membership"
        case (.entity, _): "entity"
        case (.relationship, _): "relationship"
        }
    }

    /// The resource its records are served under.
    var resource: DataSyncResource {
        switch eventType {
        case "user": .users
        case "channel": .channels
        case "membership": .memberships
        case "entity": .entities
        default: .relationships
        }
    }

    struct Key: Hashable, Sendable {
        var name: String
        var version: Int
        var level: DataSyncClassLevel
    }

    var key: Key { Key(name: name, version: version, level: level) }
}

/// One stored DataSync record.
struct DataSyncRecord: Sendable, Hashable {
    var resource: DataSyncResource
    var id: String
    var type: DataSyncClass
    var status: String?
    var payload: [String: JSONValue]?
    var createdAt: ISOTimestamp
    var updatedAt: ISOTimestamp
    var expiresAt: ISOTimestamp
    var eTag: String
    /// `channelId`/`userId` (memberships) or `entityAId`/`entityBId` (relationships).
    var endA: String?
    var endB: String?
    /// Creation order: the listing's default order and its cursors.
    var sequence: UInt64

    func isExpired(at now: ISOTimestamp) -> Bool { now >= expiresAt }

    /// The record as the REST answers give it (reference §1, §4).
    var json: JSONValue {
        var data = eventData
        if resource.isRelationship {
            data["relationshipClass"] = .string(type.name)
            data["relationshipClassVersion"] = .int(Int64(type.version))
        } else {
            data["entityClass"] = .string(type.name)
            data["entityClassVersion"] = .int(Int64(type.version))
            data["entityClassLevel"] = .string(type.level.rawValue)
        }
        return .object(data)
    }

    /// The record as an event's `data` carries it: no class fields, an unset status left out
    /// (reference §12; the recordings' README).
    var eventData: [String: JSONValue] {
        var data: [String: JSONValue] = [
            "id": .string(id), "createdAt": .string(createdAt.description), "updatedAt": .string(updatedAt.description),
            "eTag": .string(eTag), "expiresAt": .string(expiresAt.description),
        ]
        if let status { data["status"] = .string(status) }
        if let payload { data["payload"] = .object(payload) }
        switch resource {
        case .memberships:
            data["channelId"] = endA.map(JSONValue.string)
            data["userId"] = endB.map(JSONValue.string)
        case .relationships:
            data["entityAId"] = endA.map(JSONValue.string)
            data["entityBId"] = endB.map(JSONValue.string)
        default:
            break
        }
        return data
    }

    /// What a JSON Patch applies to: the mutable fields (reference §5).
    var patchable: JSONValue {
        var document: [String: JSONValue] = [(resource.isRelationship ? "relationshipClassVersion" : "entityClassVersion"): .int(Int64(type.version))]
        if let status { document["status"] = .string(status) }
        if let payload { document["payload"] = .object(payload) }
        return .object(document)
    }

    /// The channels its events go to: its id's, or a membership's or relationship's two ends'.
    var eventChannels: [String] {
        resource.isRelationship ? [endA, endB].compactMap { $0 } : [id]
    }

    /// A field's text for filtering and sorting: the system fields, then the class's properties.
    func value(of field: String) -> String? {
        switch field {
        case "id": return id
        case "createdAt": return createdAt.description
        case "updatedAt": return updatedAt.description
        case "status": return status
        case "channelId", "entityAId": return endA
        case "userId", "entityBId": return endB
        default:
            guard let pointer = type.property(named: field)?.pointer, let value = try? JSONPatch.value(at: pointer, in: patchable) else { return nil }
            return ObjectFilter.scalarText(value)
        }
    }
}

/// An `e: 5` event to publish on each of `channels`.
struct DataSyncEmission: Sendable {
    var channels: [String]
    var payload: JSONValue
}

/// The simulator's DataSync answers in their real shapes.
enum DataSyncReply {
    /// `{"errors":[{"errorCode","message","path"?}]}` as `application/json` (reference §2).
    static func error(_ status: Int, _ code: String?, _ message: String, path: String? = nil) -> WireResponse {
        var item: [String: JSONValue] = ["message": .string(message)]
        if let code { item["errorCode"] = .string(code) }
        if let path { item["path"] = .string(path) }
        return Reply.json(status, ["errors": [.object(item)]])
    }

    /// A stale `If-Match`: 412 with an empty body when `code` is nil (choice 1a, `docs/datasync.md`),
    /// else with the error `code` (``DataSyncCodes/stale``).
    static func stale(_ code: String?) -> WireResponse {
        guard let code else { return WireResponse(status: 412, headers: ["Content-Type": Reply.json], body: Data()) }
        return error(412, code, "Precondition failed: the record changed")
    }

    /// `{"data":{…}}` with the resource's vendor content type.
    static func record(_ status: Int, _ record: DataSyncRecord) -> WireResponse {
        Reply.json(status, ["data": record.json], contentType: record.resource.contentType)
    }

    /// Access Manager's refusal on a DataSync path (the recording `datasync_errors-01`).
    static let forbidden = WireResponse(
        status: 403, headers: ["Content-Type": "text/javascript; charset=UTF-8"],
        body: Data(#"{"error":true,"status":403,"service":"Access Manager","message":"Forbidden"}"#.utf8))

    /// The 404 of a missing record: `Entity not found: <id>` or `Relationship '<id>' not found`.
    static func notFound(_ resource: DataSyncResource, _ id: String, code: String) -> WireResponse {
        error(404, code, resource.isRelationship ? "Relationship '\(id)' not found" : "Entity not found: \(id)")
    }
}
