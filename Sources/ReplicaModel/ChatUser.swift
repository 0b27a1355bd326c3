import Foundation

/// A chat user: PubNub App Context "uuid" metadata, in the seed's unified user payload.
///
/// JSON: `{id, name, email, externalId, profileUrl, type, status, custom, eTag, updated}`.
/// `type` defaults to `"default"` and is left out of the JSON when it has that value.
public struct ChatUser<Custom: CustomData>: Codable, Hashable, Sendable, Identifiable, VersionedObject, ReplicatedEntity {
    /// The user id (PubNub `uuid`).
    public var id: String
    /// Display name.
    public var name: String?
    /// User type; PubNub's default is `"default"`.
    public var type: String
    /// Free-form status ("active", ...).
    public var status: String?
    /// An id in another system.
    public var externalId: String?
    /// The avatar URL, `profileUrl` on the wire.
    public var profileUrl: String?
    /// Email address.
    public var email: String?
    /// The app's custom data.
    public var custom: Custom?
    /// When the server last changed the object.
    public var updated: ISOTimestamp?
    /// The server's version tag of the object.
    public var eTag: String?
    /// What a DataSync server keeps beside the fields (class, `expiresAt`); nil on App Context.
    /// Stored and read back, never encoded in the user's JSON.
    public var metadata: ObjectMetadata?

    /// A user; `id` is checked with `Validation.validateStoredIdentifier(_:field:)` (ids a server
    /// gives are kept as given; the outbox holds this device's writes to `Validation.validateIdentifier(_:field:)`).
    public init(
        id: String, name: String? = nil, type: String = FieldSchema.defaultType, status: String? = nil,
        externalId: String? = nil, profileUrl: String? = nil, email: String? = nil, custom: Custom? = nil,
        updated: ISOTimestamp? = nil, eTag: String? = nil
    ) throws(ModelValidationError) {
        try Validation.validateStoredIdentifier(id, field: "user.id")
        self.id = id
        self.name = name
        self.type = type
        self.status = status
        self.externalId = externalId
        self.profileUrl = profileUrl
        self.email = email
        self.custom = custom
        self.updated = updated
        self.eTag = eTag
    }

    /// The replicated fields: wire name, store column, property (`ReplicatedEntity`).
    public static var fields: [EntityField<Self>] {
        [
            .text("name", \.name), .text("email", \.email), .text("externalId", column: "external_id", \.externalId),
            .text("profileUrl", column: "profile_url", \.profileUrl), .type(\.type), .text("status", \.status), .custom,
        ]
    }

    /// Where the custom data lives.
    public static var customField: WritableKeyPath<Self, Custom?> & Sendable { \.custom }

    /// The user known only by its id.
    public static func placeholder(id: String) throws -> Self { try Self(id: id) }

    /// ``profileUrl`` as a URL.
    public var avatarURL: URL? { profileUrl.flatMap(URL.init(string:)) }

    /// Decodes the unified user payload by the field table; the id is validated.
    public init(from decoder: any Decoder) throws { self = try Self.decodeReplicated(from: decoder) }

    /// Encodes the unified user payload, leaving out nil fields and a `"default"` type.
    public func encode(to encoder: any Encoder) throws { try encodeReplicated(to: encoder) }
}
