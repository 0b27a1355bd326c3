import Foundation

/// A real-time user update (`e=2`, type `uuid`, event `set`): the id, `updated`, `eTag` and only
/// the fields that changed. An explicit `null` clears a field.
public struct UserChangeset<Custom: CustomData>: Codable, Hashable, Sendable {
    /// The user id.
    public var id: String
    /// The new `updated`.
    public var updated: ISOTimestamp
    /// The new eTag.
    public var eTag: String
    /// Changed name.
    public var name: FieldUpdate<String> = .unchanged
    /// Changed type.
    public var type: FieldUpdate<String> = .unchanged
    /// Changed status.
    public var status: FieldUpdate<String> = .unchanged
    /// Changed external id.
    public var externalId: FieldUpdate<String> = .unchanged
    /// Changed profile URL.
    public var profileUrl: FieldUpdate<String> = .unchanged
    /// Changed email.
    public var email: FieldUpdate<String> = .unchanged
    /// Changed custom data (replaced whole, as PubNub does).
    public var custom: FieldUpdate<Custom> = .unchanged

    /// A changeset that changes nothing yet.
    public init(id: String, updated: ISOTimestamp, eTag: String) {
        self.id = id
        self.updated = updated
        self.eTag = eTag
    }

    /// The patched user, or nil when the changeset is for another id, older than `user` or carries
    /// its eTag (``VersionDecision``).
    public func apply(to user: ChatUser<Custom>) -> ChatUser<Custom>? {
        guard user.id == id,
            VersionDecision(incoming: (updated, eTag), stored: (user.updated, user.eTag)) == .apply
        else { return nil }
        var result = user
        result.name = name.applied(to: user.name)
        result.type = FieldSchema.type(type.applied(to: user.type))
        result.status = status.applied(to: user.status)
        result.externalId = externalId.applied(to: user.externalId)
        result.profileUrl = profileUrl.applied(to: user.profileUrl)
        result.email = email.applied(to: user.email)
        result.custom = custom.applied(to: user.custom)
        result.updated = updated
        result.eTag = eTag
        return result
    }

    enum CodingKeys: String, CodingKey {
        case id, updated, eTag, name, type, status, externalId, profileUrl, email, custom
    }

    /// Decodes a changeset; absent keys are `.unchanged`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        updated = try c.decode(ISOTimestamp.self, forKey: .updated)
        eTag = try c.decode(String.self, forKey: .eTag)
        name = try c.decodeUpdate(String.self, forKey: .name)
        type = try c.decodeUpdate(String.self, forKey: .type)
        status = try c.decodeUpdate(String.self, forKey: .status)
        externalId = try c.decodeUpdate(String.self, forKey: .externalId)
        profileUrl = try c.decodeUpdate(String.self, forKey: .profileUrl)
        email = try c.decodeUpdate(String.self, forKey: .email)
        custom = try c.decodeUpdate(Custom.self, forKey: .custom)
    }

    /// Encodes only the changed keys.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(updated, forKey: .updated)
        try c.encode(eTag, forKey: .eTag)
        try c.encodeUpdate(name, forKey: .name)
        try c.encodeUpdate(type, forKey: .type)
        try c.encodeUpdate(status, forKey: .status)
        try c.encodeUpdate(externalId, forKey: .externalId)
        try c.encodeUpdate(profileUrl, forKey: .profileUrl)
        try c.encodeUpdate(email, forKey: .email)
        try c.encodeUpdate(custom, forKey: .custom)
    }
}

/// A real-time channel update (type `channel`, event `set`): id, `updated`, `eTag` and the changed fields.
public struct ChannelChangeset<Custom: CustomData>: Codable, Hashable, Sendable {
    /// The channel id.
    public var id: String
    /// The new `updated`.
    public var updated: ISOTimestamp
    /// The new eTag.
    public var eTag: String
    /// Changed name.
    public var name: FieldUpdate<String> = .unchanged
    /// Changed type.
    public var type: FieldUpdate<String> = .unchanged
    /// Changed status.
    public var status: FieldUpdate<String> = .unchanged
    /// Changed description.
    public var details: FieldUpdate<String> = .unchanged
    /// Changed custom data (replaced whole).
    public var custom: FieldUpdate<Custom> = .unchanged

    /// A changeset that changes nothing yet.
    public init(id: String, updated: ISOTimestamp, eTag: String) {
        self.id = id
        self.updated = updated
        self.eTag = eTag
    }

    /// The patched channel, or nil when the changeset is for another id, older than `channel` or
    /// carries its eTag (``VersionDecision``).
    public func apply(to channel: ChatChannel<Custom>) -> ChatChannel<Custom>? {
        guard channel.id == id,
            VersionDecision(incoming: (updated, eTag), stored: (channel.updated, channel.eTag)) == .apply
        else { return nil }
        var result = channel
        result.name = name.applied(to: channel.name)
        result.type = FieldSchema.type(type.applied(to: channel.type))
        result.status = status.applied(to: channel.status)
        result.details = details.applied(to: channel.details)
        result.custom = custom.applied(to: channel.custom)
        result.updated = updated
        result.eTag = eTag
        return result
    }

    enum CodingKeys: String, CodingKey {
        case id, updated, eTag, name, type, status, description, custom
    }

    /// Decodes a changeset; absent keys are `.unchanged`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        updated = try c.decode(ISOTimestamp.self, forKey: .updated)
        eTag = try c.decode(String.self, forKey: .eTag)
        name = try c.decodeUpdate(String.self, forKey: .name)
        type = try c.decodeUpdate(String.self, forKey: .type)
        status = try c.decodeUpdate(String.self, forKey: .status)
        details = try c.decodeUpdate(String.self, forKey: .description)
        custom = try c.decodeUpdate(Custom.self, forKey: .custom)
    }

    /// Encodes only the changed keys.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(updated, forKey: .updated)
        try c.encode(eTag, forKey: .eTag)
        try c.encodeUpdate(name, forKey: .name)
        try c.encodeUpdate(type, forKey: .type)
        try c.encodeUpdate(status, forKey: .status)
        try c.encodeUpdate(details, forKey: .description)
        try c.encodeUpdate(custom, forKey: .custom)
    }
}

/// A real-time membership update (type `membership`, event `set`).
public struct MemberChangeset<Custom: CustomData>: Hashable, Sendable {
    /// The channel id.
    public var channelId: String
    /// The user id.
    public var userId: String
    /// The new `updated`.
    public var updated: ISOTimestamp
    /// The new eTag.
    public var eTag: String
    /// Changed status.
    public var status: FieldUpdate<String> = .unchanged
    /// Changed type.
    public var type: FieldUpdate<String> = .unchanged
    /// Changed custom data (replaced whole).
    public var custom: FieldUpdate<Custom> = .unchanged

    /// A changeset that changes nothing yet.
    public init(channelId: String, userId: String, updated: ISOTimestamp, eTag: String) {
        self.channelId = channelId
        self.userId = userId
        self.updated = updated
        self.eTag = eTag
    }

    /// The patched membership, or nil when it is for another pair, older than `member` or carries
    /// its eTag (``VersionDecision``).
    public func apply<C: ChatCustomData>(to member: ChatMember<C>) -> ChatMember<C>? where C.Member == Custom {
        guard member.channelId == channelId, member.userId == userId,
            VersionDecision(incoming: (updated, eTag), stored: (member.updated, member.eTag)) == .apply
        else { return nil }
        var result = member
        result.status = status.applied(to: member.status)
        result.type = type.applied(to: member.type)
        result.custom = custom.applied(to: member.custom)
        result.updated = updated
        result.eTag = eTag
        return result
    }
}
