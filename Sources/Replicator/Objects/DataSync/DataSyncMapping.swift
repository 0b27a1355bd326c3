import Foundation
import PubNubWire
import ReplicaModel

/// Where the replica's fields live in a DataSync record, and the membership id: the one owner of
/// pnreplicate's chat conventions on DataSync (`docs/datasync.md`, "The mapping" and "Ids").
///
/// A field the replica names (``ReplicaModel/FieldSchema``: `name`, `email`, `type`, `custom`…)
/// lives at `/payload/<field>`, except `status`, which is DataSync's own `/status`. `updated` is
/// `updatedAt`, `eTag` is `eTag`. Payload keys no field names are kept on the server and never
/// touched (every write is a JSON Patch of the mapped pointers). A JSON `null` in the payload
/// reads as an absent field.
///
/// ```swift
/// DataSyncMapping.pointer("name")          // /payload/name
/// DataSyncMapping.pointer("status")        // /status
/// DataSyncMapping.membershipId(channel: "general", user: "alice")   // "pnm.5.7.alice.general"
/// ```
public enum DataSyncMapping {
    /// The pointer of a replica field.
    public static func pointer(_ field: String) -> JSONPointer {
        field == "status" ? JSONPointer(["status"]) : JSONPointer(["payload", field])
    }

    /// The value of a replica field in `row` (nil: absent or null).
    static func value(_ field: String, in row: DataSyncRow) -> JSONValue? {
        if field == "status" { return row.status.map(JSONValue.string) }
        guard let value = row.payload?[field], !value.isNull else { return nil }
        return value
    }

    /// Every field of `names` as `row` holds it, an absent one as JSON `null`: a complete event's
    /// fields.
    static func fields(_ names: [String], of row: DataSyncRow) -> [String: JSONValue] {
        Dictionary(uniqueKeysWithValues: names.map { ($0, value($0, in: row) ?? .null) })
    }

    /// A user or channel of `row` as App Context's JSON shape, which the model decodes.
    static func objectJSON(_ row: DataSyncRow, fields names: [String]) -> [String: JSONValue] {
        var object: [String: JSONValue] = ["id": .string(row.id)]
        for name in names { if let value = value(name, in: row) { object[name] = value } }
        if let updated = row.updatedAt { object["updated"] = .string(updated.description) }
        if let eTag = row.eTag { object["eTag"] = .string(eTag) }
        return object
    }

    /// The server's metadata of `row`: its class and `expiresAt`, and for a membership its own id.
    static func metadata(of row: DataSyncRow, membership: Bool) -> ObjectMetadata {
        ObjectMetadata(
            backendId: membership ? row.id : nil, className: row.className, classVersion: row.classVersion, expiresAt: row.expiresAt)
    }

    /// A user model of `row`, with its metadata.
    static func user<C: CustomData>(_ row: DataSyncRow, as custom: C.Type) throws -> ChatUser<C> {
        var user = try decode(.object(objectJSON(row, fields: ChatUser<C>.wireNames)), as: ChatUser<C>.self)
        user.metadata = metadata(of: row, membership: false)
        return user
    }

    /// A channel model of `row`, with its metadata.
    static func channel<C: CustomData>(_ row: DataSyncRow, as custom: C.Type) throws -> ChatChannel<C> {
        var channel = try decode(.object(objectJSON(row, fields: ChatChannel<C>.wireNames)), as: ChatChannel<C>.self)
        channel.metadata = metadata(of: row, membership: false)
        return channel
    }

    /// A membership model of `row` (its channel and user from `channelId`/`userId`, or an older
    /// event's `entityAId`/`entityBId`).
    static func membership<C: ChatCustomData>(_ row: DataSyncRow, as custom: C.Type) throws -> ChatMember<C> {
        guard let channel = row.channelId ?? row.entityAId, let user = row.userId ?? row.entityBId else {
            throw DataSyncUnreadable(reason: "a membership without channelId or userId")
        }
        var object = objectJSON(row, fields: FieldSchema.membership)
        object["id"] = nil
        object["channel"] = ["id": .string(channel)]
        object["uuid"] = ["id": .string(user)]
        var member = try decode(.object(object), as: ChatMember<C>.self)
        member.metadata = metadata(of: row, membership: true)
        return member
    }

    static func decode<T: Decodable>(_ json: JSONValue, as type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: try json.jsonData())
    }

    /// The status a create sends for replica `fields`: nil for none or an empty one (DataSync's
    /// status has 1 to 100 characters; pnreplicate reads an absent one as empty).
    static func status(_ fields: [String: JSONValue]) -> String? {
        guard let text = fields["status"]?.stringValue, !text.isEmpty else { return nil }
        return text
    }

    /// The payload a create sends for replica `fields` (nulls left out).
    static func payload(_ fields: [String: JSONValue]) -> [String: JSONValue] {
        fields.filter { $0.key != "status" && !$0.value.isNull }
    }

    /// The JSON Patch writing replica `fields`: `add` of each value (RFC 6902's `add` sets a member
    /// that exists too), a JSON `null` for a cleared payload field, `remove /status` for a cleared
    /// status only when `row` (the server's current record, when known) has one. Without a `row`,
    /// a cleared status is `add /status null`.
    static func patch(_ fields: [String: JSONValue], current row: DataSyncRow?) -> [JSONPatchOperation] {
        var operations: [JSONPatchOperation] = []
        if let row, row.payload == nil, fields.contains(where: { $0.key != "status" }) {
            operations.append(.add(JSONPointer(["payload"]), .object([:])))
        }
        for (field, value) in fields.sorted(by: { $0.key < $1.key }) {
            if field == "status", value.isNull {
                if let row {
                    if row.status != nil { operations.append(.remove(pointer(field))) }
                } else {
                    operations.append(.add(pointer(field), .null))
                }
            } else {
                operations.append(.add(pointer(field), value))
            }
        }
        return operations
    }

    /// Whether `row` holds every one of replica `fields` as given (a null: absent).
    static func holds(_ fields: [String: JSONValue], in row: DataSyncRow) -> Bool {
        fields.allSatisfy { field, value in (value.isNull ? nil : value) == Self.value(field, in: row) }
    }

    // MARK: Membership ids

    /// The id pnreplicate gives the membership of `user` in `channel`: `pnm.<u>.<c>.<user>.<channel>`,
    /// where `<u>` and `<c>` are the ids' lengths in UTF-8 bytes. The lengths fix where each id
    /// ends, so two pairs never share an id, and ``pair(ofMembershipId:)`` inverts it. Nil when
    /// the id would break DataSync's rule (over 255 characters).
    public static func membershipId(channel: String, user: String) -> String? {
        let id = "pnm.\(user.utf8.count).\(channel.utf8.count).\(user).\(channel)"
        return DataSyncIdentifier.problem(id) == nil ? id : nil
    }

    /// The (channel, user) of an id ``membershipId(channel:user:)`` made; nil for any other id.
    public static func pair(ofMembershipId id: String) -> (channel: String, user: String)? {
        let bytes = Array(id.utf8)
        guard bytes.starts(with: Array("pnm.".utf8)) else { return nil }
        var index = 4
        func number() -> Int? {
            var digits = 0, value = 0
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39, digits < 4 {
                value = value * 10 + Int(bytes[index] - 0x30)
                index += 1
                digits += 1
            }
            guard digits > 0, index < bytes.count, bytes[index] == 0x2E else { return nil }
            index += 1
            return value
        }
        guard let userLength = number(), let channelLength = number(), userLength > 0, channelLength > 0,
              bytes.count == index + userLength + 1 + channelLength, bytes[index + userLength] == 0x2E
        else { return nil }
        let user = String(decoding: bytes[index..<(index + userLength)], as: UTF8.self)
        let channel = String(decoding: bytes[(index + userLength + 1)...], as: UTF8.self)
        guard membershipId(channel: channel, user: user) == id else { return nil }
        return (channel, user)
    }
}
