import Foundation

/// A chat channel: PubNub App Context channel metadata, in the seed's unified channel payload.
///
/// JSON: `{id, name, description, type, status, custom, eTag, updated}`. PubNub channels have no
/// `profileUrl` field; the avatar lives in `custom.profileUrl` (see ``avatarURL``).
/// ``memberCount`` is local only and never encoded.
public struct ChatChannel<Custom: CustomData>: Codable, Hashable, Sendable, Identifiable, VersionedObject, ReplicatedEntity {
    /// The channel id.
    public var id: String
    /// Display name.
    public var name: String?
    /// Channel type; PubNub's default is `"default"`.
    public var type: String
    /// Free-form status.
    public var status: String?
    /// The channel description (`description` on the wire).
    public var details: String?
    /// The app's custom data.
    public var custom: Custom?
    /// When the server last changed the object.
    public var updated: ISOTimestamp?
    /// The server's version tag of the object.
    public var eTag: String?
    /// How many members the local store holds for this channel (filled in by store queries).
    public var memberCount: Int?
    /// What a DataSync server keeps beside the fields (class, `expiresAt`); nil on App Context.
    /// Stored and read back, never encoded in the channel's JSON.
    public var metadata: ObjectMetadata?

    /// A channel; `id` is checked with `Validation.validateStoredIdentifier(_:field:)` (ids a server
    /// gives are kept as given; the outbox holds this device's writes to `Validation.validateIdentifier(_:field:)`).
    public init(
        id: String, name: String? = nil, type: String = FieldSchema.defaultType, status: String? = nil, details: String? = nil,
        custom: Custom? = nil, updated: ISOTimestamp? = nil, eTag: String? = nil, memberCount: Int? = nil
    ) throws(ModelValidationError) {
        try Validation.validateStoredIdentifier(id, field: "channel.id")
        self.id = id
        self.name = name
        self.type = type
        self.status = status
        self.details = details
        self.custom = custom
        self.updated = updated
        self.eTag = eTag
        self.memberCount = memberCount
    }

    /// The avatar URL text kept in `custom.profileUrl`, when the custom type carries one.
    public var avatarURLString: String? {
        get { custom?.profileUrl }
        set {
            if custom == nil, newValue == nil { return }
            if var existing = custom {
                existing.profileUrl = newValue
                custom = existing
            }
        }
    }

    /// The replicated fields: wire name, store column, property (`ReplicatedEntity`).
    public static var fields: [EntityField<Self>] {
        [.text("name", \.name), .text("description", \.details), .type(\.type), .text("status", \.status), .custom]
    }

    /// Where the custom data lives.
    public static var customField: WritableKeyPath<Self, Custom?> & Sendable { \.custom }

    /// The channel known only by its id.
    public static func placeholder(id: String) throws -> Self { try Self(id: id) }

    /// ``avatarURLString`` as a URL.
    public var avatarURL: URL? { avatarURLString.flatMap(URL.init(string:)) }

    /// Decodes the unified channel payload by the field table; the id is validated.
    public init(from decoder: any Decoder) throws { self = try Self.decodeReplicated(from: decoder) }

    /// Encodes the unified channel payload, leaving out nil fields and a `"default"` type;
    /// ``memberCount`` is never encoded.
    public func encode(to encoder: any Encoder) throws { try encodeReplicated(to: encoder) }
}
