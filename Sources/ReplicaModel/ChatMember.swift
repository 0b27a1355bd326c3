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

    enum CodingKeys: String, CodingKey {
        case channel, uuid, status, type, custom, updated, eTag
    }

    /// Decodes a membership element.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            channel: try c.decode(ChatChannel<Custom.Channel>.self, forKey: .channel),
            user: try c.decode(ChatUser<Custom.User>.self, forKey: .uuid),
            status: try c.decodeIfPresent(String.self, forKey: .status),
            type: try c.decodeIfPresent(String.self, forKey: .type),
            custom: try c.decodeIfPresent(Custom.Member.self, forKey: .custom),
            updated: try c.decodeIfPresent(ISOTimestamp.self, forKey: .updated),
            eTag: try c.decodeIfPresent(String.self, forKey: .eTag))
    }

    /// Encodes a membership element.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(channel, forKey: .channel)
        try c.encode(user, forKey: .uuid)
        try c.encodeIfPresent(status, forKey: .status)
        try c.encodeIfPresent(type, forKey: .type)
        try c.encodeIfPresent(custom, forKey: .custom)
        try c.encodeIfPresent(updated, forKey: .updated)
        try c.encodeIfPresent(eTag, forKey: .eTag)
    }
}
