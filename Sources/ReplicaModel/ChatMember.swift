import Foundation

/// A membership: a user in a channel, with the membership's own status and custom data.
///
/// JSON follows PubNub's membership element: `{channel, uuid, status, type, custom, updated, eTag}`,
/// where `channel` and `uuid` are full objects or just `{"id": ...}`. ``isPresent`` and
/// ``presenceState`` are local (presence) and never encoded.
public struct ChatMember<Custom: ChatCustomData>: Codable, Hashable, Sendable, VersionedObject {
    /// The channel (possibly only its id).
    public var channel: ChatChannel<Custom.Channel>
    /// The user (possibly only its id).
    public var user: ChatUser<Custom.User>
    /// Membership status.
    public var status: String?
    /// Membership type.
    public var type: String?
    /// The app's custom data for the membership.
    public var custom: Custom.Member?
    /// When the server last changed the membership.
    public var updated: ISOTimestamp?
    /// The server's version tag of the membership.
    public var eTag: String?
    /// Whether the user is present on the channel (local presence state).
    public var isPresent: Bool?
    /// The user's presence state on the channel (local).
    public var presenceState: JSONValue?
    /// What a DataSync server keeps beside the fields: the membership's own id, its class and
    /// `expiresAt`; nil on App Context. Stored and read back, never encoded in the JSON.
    public var metadata: ObjectMetadata?

    /// A membership of `user` in `channel`.
    public init(
        channel: ChatChannel<Custom.Channel>, user: ChatUser<Custom.User>, status: String? = nil,
        type: String? = nil, custom: Custom.Member? = nil, updated: ISOTimestamp? = nil, eTag: String? = nil,
        isPresent: Bool? = nil, presenceState: JSONValue? = nil
    ) {
        self.channel = channel
        self.user = user
        self.status = status
        self.type = type
        self.custom = custom
        self.updated = updated
        self.eTag = eTag
        self.isPresent = isPresent
        self.presenceState = presenceState
    }

    /// A membership from ids only; both ids are validated.
    public init(
        channelId: String, userId: String, status: String? = nil, type: String? = nil,
        custom: Custom.Member? = nil, updated: ISOTimestamp? = nil, eTag: String? = nil
    ) throws(ModelValidationError) {
        self.init(
            channel: try ChatChannel(id: channelId), user: try ChatUser(id: userId), status: status, type: type,
            custom: custom, updated: updated, eTag: eTag)
    }

    /// The channel id.
    public var channelId: String { channel.id }
    /// The user id.
    public var userId: String { user.id }

    /// Decodes a membership element: `channel` and `uuid`, then the fields by the table.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: WireKey.self)
        self.init(
            channel: try c.decode(ChatChannel<Custom.Channel>.self, forKey: WireKey("channel")),
            user: try c.decode(ChatUser<Custom.User>.self, forKey: WireKey("uuid")))
        try decodeFields(from: c)
    }

    /// Encodes a membership element: `channel`, `uuid`, then the fields by the table.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: WireKey.self)
        try c.encode(channel, forKey: WireKey("channel"))
        try c.encode(user, forKey: WireKey("uuid"))
        try encodeFields(to: &c)
    }
}

/// What names a membership: its channel and its user.
public struct MemberKey: Hashable, Sendable {
    /// The channel id.
    public var channelId: String
    /// The user id.
    public var userId: String

    /// The membership of `userId` in `channelId`.
    public init(channelId: String, userId: String) {
        self.channelId = channelId
        self.userId = userId
    }
}

extension ChatMember: ReplicatedFields {
    /// The channel and user.
    public var key: MemberKey { MemberKey(channelId: channelId, userId: userId) }
    /// A membership's replicated fields: PubNub writes the three together. Its `type` is plain
    /// text (no default, unlike a user's or channel's).
    public static var fields: [EntityField<Self>] { [.text("status", \.status), .text("type", \.type), .custom] }
    /// Its custom data.
    public static var customField: WritableKeyPath<Self, Custom.Member?> & Sendable { \.custom }
}

/// A local edit of a membership: only the fields set here change (`.set(nil)` clears one).
///
/// ```swift
/// try await replica.memberships.set(channel: "general", edit: MemberEdit(status: "away"))
/// var edit = MemberEdit<DefaultChatCustom>()
/// edit.custom = .set(nil)          // clears the membership's custom data
/// ```
public typealias MemberEdit<Custom: ChatCustomData> = FieldChanges<ChatMember<Custom>>

extension FieldChanges {
    /// A membership edit of the fields given (nil leaves a field as it is).
    public init<C: ChatCustomData>(status: String? = nil, type: String? = nil, custom: C.Member? = nil)
    where Entity == ChatMember<C> {
        self.init()
        if let status { self.status = .set(status) }
        if let type { self.type = .set(type) }
        if let custom { self.custom = .set(custom) }
    }
}
