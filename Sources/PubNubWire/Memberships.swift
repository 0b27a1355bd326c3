import Foundation
import ReplicaModel

/// A membership element of a user's memberships list (`channel` plus the membership's fields).
public struct WireMembership<Custom: ChatCustomData>: Decodable, Sendable, Hashable {
    /// The channel (full object when included, else only its id).
    public var channel: ChatChannel<Custom.Channel>
    /// Free-form status.
    public var status: String?
    /// Object type.
    public var type: String?
    /// Custom data.
    public var custom: Custom.Member?
    /// When the membership last changed.
    public var updated: ISOTimestamp?
    /// The membership's version tag.
    public var eTag: String?

    /// As a model membership of `userId`.
    public func model(userId: String) throws(ModelValidationError) -> ChatMember<Custom> {
        ChatMember(channel: channel, user: try ChatUser(id: userId), status: status, type: type, custom: custom,
                   updated: updated, eTag: eTag)
    }
}

/// A member element of a channel's members list (`uuid` plus the membership's fields).
public struct WireChannelMember<Custom: ChatCustomData>: Decodable, Sendable, Hashable {
    /// The user (full object when included, else only its id).
    public var uuid: ChatUser<Custom.User>
    /// Free-form status.
    public var status: String?
    /// Object type.
    public var type: String?
    /// Custom data.
    public var custom: Custom.Member?
    /// When the membership last changed.
    public var updated: ISOTimestamp?
    /// The membership's version tag.
    public var eTag: String?

    /// As a model membership in `channelId`.
    public func model(channelId: String) throws(ModelValidationError) -> ChatMember<Custom> {
        ChatMember(channel: try ChatChannel(id: channelId), user: uuid, status: status, type: type, custom: custom,
                   updated: updated, eTag: eTag)
    }
}

/// One entry of a membership PATCH's `set` list.
public struct MembershipSet<Custom: CustomData>: Encodable, Sendable, Hashable {
    /// The other side's id (a channel for memberships, a user for members).
    public var id: String
    /// Free-form status.
    public var status: String?
    /// Object type.
    public var type: String?
    /// Custom data.
    public var custom: Custom?

    /// An entry.
    public init(id: String, status: String? = nil, type: String? = nil, custom: Custom? = nil) {
        self.id = id
        self.status = status
        self.type = type
        self.custom = custom
    }
}

struct MembershipBody<Custom: CustomData>: Encodable {
    let key: String
    let set: [MembershipSet<Custom>]
    let delete: [String]

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: any Encoder) throws {
        var root = encoder.container(keyedBy: Key.self)
        var setList = root.nestedUnkeyedContainer(forKey: Key("set"))
        for entry in set {
            var item = setList.nestedContainer(keyedBy: Key.self)
            var reference = item.nestedContainer(keyedBy: Key.self, forKey: Key(key))
            try reference.encode(entry.id, forKey: Key("id"))
            try item.encodeIfPresent(entry.status, forKey: Key("status"))
            try item.encodeIfPresent(entry.type, forKey: Key("type"))
            try item.encodeIfPresent(entry.custom, forKey: Key("custom"))
        }
        var deleteList = root.nestedUnkeyedContainer(forKey: Key("delete"))
        for id in delete {
            var item = deleteList.nestedContainer(keyedBy: Key.self)
            var reference = item.nestedContainer(keyedBy: Key.self, forKey: Key(key))
            try reference.encode(id, forKey: Key("id"))
        }
    }
}

extension PubNubClient {
    static let membershipInclude = "custom,status,type,channel,channel.custom,channel.type,channel.status"
    static let memberInclude = "custom,status,type,uuid,uuid.custom,uuid.type,uuid.status"

    /// A page of a user's memberships.
    public func getMemberships<C: ChatCustomData>(userId: String, _ query: ObjectListQuery = ObjectListQuery(), as custom: C.Type)
        async throws(WireError) -> ObjectPage<WireMembership<C>>
    {
        let request = objectRequest(
            .get, ["uuids", userId, "channels"], query: try query.items(include: Self.membershipInclude), operation: "getMemberships")
        return try await perform(request, as: ObjectPage<WireMembership<C>>.self)
    }

    /// The request ``setMemberships(userId:set:remove:query:as:)`` sends.
    public func setMembershipsRequest<M: CustomData>(
        userId: String, set: [MembershipSet<M>], remove: [String], query: ObjectListQuery = ObjectListQuery()
    ) throws(WireError) -> WireRequest {
        objectRequest(
            .patch, ["uuids", userId, "channels"], query: try query.items(include: Self.membershipInclude),
            body: try Self.json(MembershipBody(key: "channel", set: set, delete: remove)), operation: "setMemberships")
    }

    /// Sets and removes memberships of a user; returns the user's membership page after the change.
    public func setMemberships<C: ChatCustomData>(
        userId: String, set: [MembershipSet<C.Member>], remove: [String] = [], query: ObjectListQuery = ObjectListQuery(),
        as custom: C.Type
    ) async throws(WireError) -> ObjectPage<WireMembership<C>> {
        try await perform(try setMembershipsRequest(userId: userId, set: set, remove: remove, query: query),
                          as: ObjectPage<WireMembership<C>>.self)
    }

    /// A page of a channel's members.
    public func getMembers<C: ChatCustomData>(channelId: String, _ query: ObjectListQuery = ObjectListQuery(), as custom: C.Type)
        async throws(WireError) -> ObjectPage<WireChannelMember<C>>
    {
        let request = objectRequest(
            .get, ["channels", channelId, "uuids"], query: try query.items(include: Self.memberInclude), operation: "getMembers")
        return try await perform(request, as: ObjectPage<WireChannelMember<C>>.self)
    }

    /// Sets and removes members of a channel; returns the channel's member page after the change.
    public func setMembers<C: ChatCustomData>(
        channelId: String, set: [MembershipSet<C.Member>], remove: [String] = [], query: ObjectListQuery = ObjectListQuery(),
        as custom: C.Type
    ) async throws(WireError) -> ObjectPage<WireChannelMember<C>> {
        let request = objectRequest(
            .patch, ["channels", channelId, "uuids"], query: try query.items(include: Self.memberInclude),
            body: try Self.json(MembershipBody(key: "uuid", set: set, delete: remove)), operation: "setMembers")
        return try await perform(request, as: ObjectPage<WireChannelMember<C>>.self)
    }
}
