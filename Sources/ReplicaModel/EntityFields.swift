import Foundation

/// One replicated App Context field of `Entity`, declared once: its name on the wire, its column
/// in the store, and where it lives on the Swift type. Edits, change sets, their JSON and the
/// field lists of `FieldSchema` are all derived from an entity's `ReplicatedEntity.fields`.
///
/// ```swift
/// .text("profileUrl", column: "profile_url", \.profileUrl)   // ChatUser's avatar URL
/// ```
public struct EntityField<Entity: ReplicatedFields>: Sendable {
    /// Where the value lives on the entity, and how it is typed.
    enum Access: Sendable {
        /// An optional string; absent or `null` is nil.
        case text(WritableKeyPath<Entity, String?> & Sendable)
        /// The object type: a string whose absence is ``FieldSchema/defaultType``.
        case type(WritableKeyPath<Entity, String> & Sendable)
        /// The app's custom data, at ``ReplicatedFields/customField``.
        case custom
    }

    /// The field's name in PubNub's JSON (`description` for ``ChatChannel/details``).
    public let wireName: String
    /// The field's column in the store's table.
    public let column: String
    let access: Access

    /// An optional string field; the column defaults to the wire name.
    public static func text(_ wireName: String, column: String? = nil, _ keyPath: WritableKeyPath<Entity, String?> & Sendable)
        -> Self
    {
        Self(wireName: wireName, column: column ?? wireName, access: .text(keyPath))
    }

    /// The `type` field, with PubNub's default for an absent type.
    public static func type(_ keyPath: WritableKeyPath<Entity, String> & Sendable) -> Self {
        Self(wireName: "type", column: "type", access: .type(keyPath))
    }

    /// The `custom` field, at the entity's ``ReplicatedFields/customField``.
    public static var custom: Self { Self(wireName: "custom", column: "custom", access: .custom) }

    /// Whether this is the `custom` field (stored as JSON, read with ``ReplicatedFields/customField``).
    public var isCustom: Bool {
        if case .custom = access { return true }
        return false
    }

    /// Whether this is a user's or channel's `type`, whose absence is ``FieldSchema/defaultType``
    /// (a membership's type is plain text).
    var isDefaultedType: Bool {
        if case .type = access { return true }
        return false
    }

    /// The field's text on `entity` (the type, for `type`); nil when absent, and for `custom`.
    public func text(of entity: Entity) -> String? {
        switch access {
        case .text(let keyPath): entity[keyPath: keyPath]
        case .type(let keyPath): entity[keyPath: keyPath]
        case .custom: nil
        }
    }

    /// Sets a text field on `entity` (nil clears it; for `type`, nil is the default type). Does
    /// nothing for `custom`.
    public func setText(_ value: String?, on entity: inout Entity) {
        switch access {
        case .text(let keyPath): entity[keyPath: keyPath] = value
        case .type(let keyPath): entity[keyPath: keyPath] = FieldSchema.type(value)
        case .custom: break
        }
    }

    /// Whether this field lives at `keyPath`.
    func lives(at keyPath: AnyKeyPath) -> Bool {
        switch access {
        case .text(let path): (path as AnyKeyPath) == keyPath
        case .type(let path): (path as AnyKeyPath) == keyPath
        case .custom: (Entity.customField as AnyKeyPath) == keyPath
        }
    }
}

/// An App Context object whose replicated fields are declared in one table: users, channels and
/// memberships. Edits and change sets (``FieldChanges``), the JSON of its fields, the store's
/// columns and `FieldSchema` all come from ``fields``.
public protocol ReplicatedFields: Hashable, Sendable {
    /// What names one object of its kind: the id of a user or channel, the pair of a membership.
    associatedtype Key: Hashable & Sendable
    /// The type of its custom data.
    associatedtype CustomFields: CustomData
    /// What names this object (a change set applies only to the object of its key).
    var key: Key { get }
    /// Its replicated fields, in wire order: the one declaration each field has.
    static var fields: [EntityField<Self>] { get }
    /// Where its custom data lives.
    static var customField: WritableKeyPath<Self, CustomFields?> & Sendable { get }
    /// When the server last changed the object.
    var updated: ISOTimestamp? { get set }
    /// The server's version tag of the object.
    var eTag: String? { get set }
    /// What the server keeps beside the fields (DataSync's class and `expiresAt`, a membership's
    /// own id); nil on App Context.
    var metadata: ObjectMetadata? { get set }
}

/// A user or channel: replicated fields (``ReplicatedFields``) under a single string id.
public protocol ReplicatedEntity: ReplicatedFields, Identifiable where ID == String, Key == String {
    /// The entity known only by its id, every field absent (`type` the default); the id is
    /// checked as a stored identifier.
    static func placeholder(id: String) throws -> Self
    /// Object type; PubNub's default is ``FieldSchema/defaultType``. Read-only here: generic
    /// code changes fields by wire name, never through a requirement's key path (which is not
    /// the property's own and names no field).
    var type: String { get }
}

extension ReplicatedFields {
    /// The wire names of its fields, in order.
    public static var wireNames: [String] { fields.map(\.wireName) }

    /// The field at `keyPath`; a key path that is no replicated field (`id`, `eTag`, ...) is a
    /// programming error.
    static func field(at keyPath: AnyKeyPath) -> EntityField<Self> {
        guard let field = fields.first(where: { $0.lives(at: keyPath) }) else {
            preconditionFailure("\(keyPath) is not a replicated field of \(Self.self)")
        }
        return field
    }

    /// Reads its fields, `eTag` and `updated` from `c` by the field table: absent fields are
    /// absent, an absent `type` is the entity's default.
    mutating func decodeFields(from c: KeyedDecodingContainer<WireKey>) throws {
        for field in Self.fields {
            let key = WireKey(field.wireName)
            if field.isCustom {
                self[keyPath: Self.customField] = try c.decodeIfPresent(CustomFields.self, forKey: key)
            } else {
                field.setText(try c.decodeIfPresent(String.self, forKey: key), on: &self)
            }
        }
        eTag = try c.decodeIfPresent(String.self, forKey: WireKey("eTag"))
        updated = try c.decodeIfPresent(ISOTimestamp.self, forKey: WireKey("updated"))
    }

    /// Writes its fields in the table's order, leaving out absent ones and a `"default"` type,
    /// then `eTag` and `updated`.
    func encodeFields(to c: inout KeyedEncodingContainer<WireKey>) throws {
        for field in Self.fields {
            let key = WireKey(field.wireName)
            if field.isCustom {
                try c.encodeIfPresent(self[keyPath: Self.customField], forKey: key)
            } else if let text = field.text(of: self), !(field.isDefaultedType && text == FieldSchema.defaultType) {
                try c.encode(text, forKey: key)
            }
        }
        try c.encodeIfPresent(eTag, forKey: WireKey("eTag"))
        try c.encodeIfPresent(updated, forKey: WireKey("updated"))
    }

    /// Every field by wire name, an absent one as JSON `null`: the whole object as a PATCH that
    /// writes all of it, or as a conflict's remote side.
    public var wireFields: [String: JSONValue] {
        get throws {
            var values = Dictionary(uniqueKeysWithValues: Self.wireNames.map { ($0, JSONValue.null) })
            values.merge(try FieldChanges(self).fields()) { _, present in present }
            return values
        }
    }

    /// The object with wire-named `fields` applied, as a local op's payload or a live event's
    /// changed fields carry them: unknown names are ignored, a string field that is not a
    /// string is cleared, `type` null is the default (for users and channels), `custom` null
    /// clears it.
    public func applying(_ fields: [String: JSONValue]) throws -> Self {
        try FieldChanges<Self>(wireFields: fields).applied(to: self)
    }
}

extension ReplicatedEntity {
    /// Its id.
    public var key: String { id }

    /// Decodes the entity's unified JSON payload (`{id, <fields>, eTag, updated}`) by its field
    /// table: absent fields are absent, an absent `type` is the default; the id is validated.
    /// An entity's `init(from:)` calls it.
    public static func decodeReplicated(from decoder: any Decoder) throws -> Self {
        let c = try decoder.container(keyedBy: WireKey.self)
        var entity = try placeholder(id: c.decode(String.self, forKey: WireKey("id")))
        try entity.decodeFields(from: c)
        return entity
    }

    /// Encodes the entity's unified JSON payload in its field table's order, leaving out absent
    /// fields and a `"default"` type. An entity's `encode(to:)` calls it.
    public func encodeReplicated(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: WireKey.self)
        try c.encode(id, forKey: WireKey("id"))
        try encodeFields(to: &c)
    }
}

/// The changed fields of one user, channel or membership: what a local edit (``UserEdit``,
/// ``ChannelEdit``, ``MemberEdit``) and a real-time change set (`UserChangeset`,
/// `ChannelChangeset`, `MemberChangeset`) carry. Each field is
/// read and set by its name on the entity; `.unchanged` leaves it, `.set(nil)` clears it.
///
/// ```swift
/// var edit = UserEdit<FlatCustom>()
/// edit.name = .set("Ann")
/// edit.profileUrl = .set(nil)       // clears the avatar
/// try edit.fields()                 // ["name": "Ann", "profileUrl": null]
/// ```
///
/// Only the entity's replicated fields (``ReplicatedFields/fields``) can be named, on the concrete
/// type (`UserEdit<C>`, `ChannelEdit<C>`, `MemberEdit<C>`); naming another property (`id`, `eTag`, `updated`)
/// stops the program, as an index out of range does. Generic code sets fields by wire name
/// (``init(wireFields:)``).
@dynamicMemberLookup
public struct FieldChanges<Entity: ReplicatedFields>: Hashable, Sendable {
    /// Text fields and `type` by wire name; a nil value clears the field.
    private var texts: [String: String?] = [:]
    /// Custom data (replaces the whole object, as PubNub does).
    public var custom: FieldUpdate<Entity.CustomFields> = .unchanged

    /// Nothing changed yet.
    public init() {}

    /// Every field `entity` has, as changes: what writes the whole object (a field it lacks stays
    /// absent; `type` is always set).
    ///
    /// ```swift
    /// try await client.appContext.setUser(id: "ann", fields: UserEdit(try ChatUser(id: "ann", name: "Ann")))
    /// ```
    public init(_ entity: Entity) {
        for field in Entity.fields {
            if field.isCustom {
                if let value = entity[keyPath: Entity.customField] { custom = .set(value) }
            } else if let value = field.text(of: entity) {
                texts[field.wireName] = .some(value)
            }
        }
    }

    /// Reads wire-named changed fields leniently (see `ReplicatedFields.applying(_:)`).
    public init(wireFields fields: [String: JSONValue]) throws {
        for field in Entity.fields {
            guard let value = fields[field.wireName] else { continue }
            switch field.access {
            case .text, .type: texts[field.wireName] = .some(value.stringValue)
            case .custom: custom = .set(value.isNull ? nil : try Entity.CustomFields.fromJSON(value))
            }
        }
    }

    /// An optional string field, by its name on the entity (`edit.name`).
    public subscript(dynamicMember keyPath: WritableKeyPath<Entity, String?>) -> FieldUpdate<String> {
        get { self[Entity.field(at: keyPath).wireName] }
        set { self[Entity.field(at: keyPath).wireName] = newValue }
    }

    /// The `type` field (`edit.type`); `.set(nil)` is PubNub's default type.
    public subscript(dynamicMember keyPath: WritableKeyPath<Entity, String>) -> FieldUpdate<String> {
        get { self[Entity.field(at: keyPath).wireName] }
        set { self[Entity.field(at: keyPath).wireName] = newValue }
    }

    private subscript(wireName: String) -> FieldUpdate<String> {
        get { texts[wireName].map { .set($0) } ?? .unchanged }
        set {
            switch newValue {
            case .unchanged: texts[wireName] = nil
            case .set(let value): texts[wireName] = .some(value)
            }
        }
    }

    /// Whether no field is changed.
    public var isEmpty: Bool { texts.isEmpty && custom == .unchanged }

    /// The changed fields by wire name; a cleared field is JSON `null`.
    public func fields() throws -> [String: JSONValue] {
        var fields: [String: JSONValue] = [:]
        for (name, value) in texts { fields[name] = value.map(JSONValue.string) ?? .null }
        if case .set(let value) = custom { fields["custom"] = try value.map { try JSONValue(encoding: $0) } ?? .null }
        return fields
    }

    /// `entity` with these changes applied.
    public func applied(to entity: Entity) -> Entity {
        var result = entity
        for field in Entity.fields {
            if field.isCustom {
                result[keyPath: Entity.customField] = custom.applied(to: result[keyPath: Entity.customField])
            } else if let value = texts[field.wireName] {
                field.setText(value, on: &result)
            }
        }
        return result
    }
}

extension FieldChanges: Codable {
    /// Decodes the changed fields strictly: a present key must hold its type or `null`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: WireKey.self)
        for field in Entity.fields {
            let key = WireKey(field.wireName)
            switch field.access {
            case .text, .type: self[field.wireName] = try c.decodeUpdate(String.self, forKey: key)
            case .custom: custom = try c.decodeUpdate(Entity.CustomFields.self, forKey: key)
            }
        }
    }

    /// Encodes only the changed keys (`null` for a cleared one).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: WireKey.self)
        for field in Entity.fields {
            let key = WireKey(field.wireName)
            switch field.access {
            case .text, .type: try c.encodeUpdate(self[field.wireName], forKey: key)
            case .custom: try c.encodeUpdate(custom, forKey: key)
            }
        }
    }
}

/// A coding key named at run time (a field's wire name).
struct WireKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// A local edit of a user's metadata: only the fields set here change (`.set(nil)` clears one).
///
/// ```swift
/// var edit = UserEdit<FlatCustom>()
/// edit.name = .set("Ann")
/// try await replica.objects.setUser(id: "ann", edit: edit)
/// ```
public typealias UserEdit<Custom: CustomData> = FieldChanges<ChatUser<Custom>>

/// A local edit of a channel's metadata: only the fields set here change (`.set(nil)` clears one).
/// Its description is `details`, as on ``ChatChannel``.
public typealias ChannelEdit<Custom: CustomData> = FieldChanges<ChatChannel<Custom>>

/// A real-time update of a user, channel or membership (`e=2`, type `uuid`, `channel` or
/// `membership`, event `set`): which object (its ``key``), the new `updated` and `eTag`, and only
/// the fields that changed (an explicit `null` clears one). Its fields are read by name, as on
/// ``FieldChanges`` (`changeset.name`). ``UserChangeset``, ``ChannelChangeset`` and
/// ``MemberChangeset`` name it for each entity.
@dynamicMemberLookup
public struct ObjectChangeset<Entity: ReplicatedFields>: Hashable, Sendable {
    /// The object it changes.
    public var key: Entity.Key
    /// The new `updated`.
    public var updated: ISOTimestamp
    /// The new eTag.
    public var eTag: String
    /// The changed fields.
    public var changes = FieldChanges<Entity>()

    /// A changeset of the object named `key` that changes nothing yet.
    public init(key: Entity.Key, updated: ISOTimestamp, eTag: String) {
        self.key = key
        self.updated = updated
        self.eTag = eTag
    }

    /// A changed field, by its name on the entity (`changeset.name`, `changeset.custom`).
    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<FieldChanges<Entity>, Value>) -> Value {
        get { changes[keyPath: keyPath] }
        set { changes[keyPath: keyPath] = newValue }
    }

    /// The patched object, or nil when the changeset is for another object, older than `object`
    /// or carries its eTag (``VersionDecision``).
    public func apply(to object: Entity) -> Entity? {
        guard object.key == key,
            VersionDecision(incoming: (updated, eTag), stored: (object.updated, object.eTag)) == .apply
        else { return nil }
        var result = changes.applied(to: object)
        result.updated = updated
        result.eTag = eTag
        return result
    }
}

extension ObjectChangeset where Entity: ReplicatedEntity {
    /// A changeset of the user or channel `id` that changes nothing yet.
    public init(id: String, updated: ISOTimestamp, eTag: String) {
        self.init(key: id, updated: updated, eTag: eTag)
    }

    /// The user's or channel's id.
    public var id: String {
        get { key }
        set { key = newValue }
    }
}

extension ObjectChangeset: Codable where Entity: ReplicatedEntity {
    private enum CodingKeys: String, CodingKey { case id, updated, eTag }

    /// Decodes a changeset; absent field keys are `.unchanged`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            key: try c.decode(String.self, forKey: .id), updated: try c.decode(ISOTimestamp.self, forKey: .updated),
            eTag: try c.decode(String.self, forKey: .eTag))
        changes = try FieldChanges(from: decoder)
    }

    /// Encodes the id, version and only the changed keys.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(updated, forKey: .updated)
        try c.encode(eTag, forKey: .eTag)
        try changes.encode(to: encoder)
    }
}

/// A real-time user update (type `uuid`, event `set`).
public typealias UserChangeset<Custom: CustomData> = ObjectChangeset<ChatUser<Custom>>

/// A real-time channel update (type `channel`, event `set`); `description` is `details`.
public typealias ChannelChangeset<Custom: CustomData> = ObjectChangeset<ChatChannel<Custom>>
