import Foundation
import ReplicaModel

/// Paging, filtering and sorting of an App Context list.
public struct ObjectListQuery: Sendable, Hashable {
    /// Page size, 1-100 (default 100).
    public var limit = 100
    /// Forward cursor (`next` of the previous page).
    public var start: String?
    /// Backward cursor (`prev`); ignored by the server when `start` is set.
    public var end: String?
    /// Ask for `totalCount`.
    public var count = false
    /// Filter expression, e.g. `updated >= "2024-01-01T00:00:00Z"`.
    public var filter: String?
    /// Sort keys, `field[:asc|:desc]`, sent comma-joined.
    public var sort: [String] = []

    /// A query.
    public init(limit: Int = 100, start: String? = nil, end: String? = nil, count: Bool = false,
                filter: String? = nil, sort: [String] = []) {
        self.limit = limit
        self.start = start
        self.end = end
        self.count = count
        self.filter = filter
        self.sort = sort
    }

    func items(include: String) throws(WireError) -> [QueryItem] {
        guard (1...100).contains(limit) else { throw .invalidArgument("limit must be 1-100") }
        var items = [QueryItem("limit", String(limit)), QueryItem("include", include)]
        if let start { items.append(QueryItem("start", start)) }
        if let end { items.append(QueryItem("end", end)) }
        if count { items.append(QueryItem("count", "true")) }
        if let filter { items.append(QueryItem("filter", filter)) }
        if !sort.isEmpty { items.append(QueryItem("sort", sort.joined(separator: ","))) }
        return items
    }
}

/// One page of an App Context list.
public struct ObjectPage<Element: Decodable & Sendable & Hashable>: Decodable, Sendable, Hashable {
    /// The objects.
    public var data: [Element]
    /// Present with `count=true`.
    public var totalCount: Int?
    /// Cursor of the next page (may be present on the last page: stop on a short or empty page).
    public var next: String?
    /// Cursor of the previous page.
    public var prev: String?
    /// Why each element that could not be read was left out (one line each, in page order).
    ///
    /// One malformed object (an invalid id such as `""` or `..`, a wrong type, an `updated` outside
    /// the years 1677–2262) must not make the whole listing unreadable: it is skipped, and the
    /// reconciler logs the reason. Cursors still advance past it.
    public var skipped: [String] = []

    enum CodingKeys: String, CodingKey { case data, totalCount, next, prev }

    /// A page; `skipped` lists elements left out.
    public init(data: [Element], totalCount: Int? = nil, next: String? = nil, prev: String? = nil, skipped: [String] = []) {
        self.data = data
        self.totalCount = totalCount
        self.next = next
        self.prev = prev
        self.skipped = skipped
    }

    /// Decodes the page, keeping every element that decodes and listing why the others did not.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let elements = try c.decode([Lenient<Element>].self, forKey: .data)
        data = elements.compactMap(\.value)
        skipped = elements.enumerated().compactMap { index, element in element.error.map { "data[\(index)]: \($0)" } }
        totalCount = try c.decodeIfPresent(Int.self, forKey: .totalCount)
        next = try c.decodeIfPresent(String.self, forKey: .next)
        prev = try c.decodeIfPresent(String.self, forKey: .prev)
    }
}

/// One array element that may fail to decode without failing the array.
struct Lenient<Value: Decodable>: Decodable {
    let value: Value?
    let error: String?

    init(from decoder: any Decoder) throws {
        do {
            value = try Value(from: decoder)
            error = nil
        } catch {
            // The model's own checks (an id of "..", a nested custom value) throw their typed errors.
            value = nil
            if let decoding = error as? DecodingError {
                self.error = Self.describe(decoding)
            } else {
                self.error = "\(error)"
            }
        }
    }

    /// A short reason: the failing path and what was wrong, without the value itself.
    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(path(context)): \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "\(path(context)): missing \(key.stringValue)"
        @unknown default:
            return "\(error)"
        }
    }
}

struct ObjectEnvelope<Element: Decodable>: Decodable {
    let data: Element
}

/// A user or channel as App Context serves it: where it lives under `/v2/objects/{sub}/` and
/// the noun of its operations' names (`getUser`, `listChannels`).
protocol AppContextObject: ReplicatedEntity, Codable {
    /// `uuids` or `channels`.
    static var pathSegment: String { get }
    /// `User` or `Channel`.
    static var noun: String { get }
}

extension ChatUser: AppContextObject {
    static var pathSegment: String { "uuids" }
    static var noun: String { "User" }
}

extension ChatChannel: AppContextObject {
    static var pathSegment: String { "channels" }
    static var noun: String { "Channel" }
}

/// App Context through a client (`client.appContext`): users, channels, memberships and members,
/// read, listed, paged, set and removed (`/v2/objects/`). The object backend `AppContextBackend`
/// is built on it.
///
/// ```swift
/// let alice = try await client.appContext.getUser(id: "alice")
/// ```
public struct PubNubAppContext: PubNubService {
    /// The client whose keys, origin, transport, token and crypto module are used.
    public let client: PubNubClient

    /// AppContext through `client`.
    public init(client: PubNubClient) { self.client = client }

    static let objectInclude = "custom,status,type"

    func objectRequest(
        _ method: HTTPMethod, _ path: [String], query: [QueryItem] = [], body: Data? = nil, ifMatch: String? = nil,
        operation: String
    ) -> WireRequest {
        var headers: [String: String] = [:]
        if body != nil { headers["Content-Type"] = "application/json; charset=UTF-8" }
        if let ifMatch { headers["If-Match"] = ifMatch }
        return WireRequest(
            method: method, pathSegments: ["v2", "objects", configuration.subscribeKey] + path,
            query: commonQuery() + query, headers: headers, body: body, operation: operation)
    }

    // MARK: Users and channels, one way

    /// One user or channel; a missing id fails with reason `notFound`.
    func getObject<E: AppContextObject>(_: E.Type, id: String) async throws(WireError) -> E {
        let request = objectRequest(
            .get, [E.pathSegment, id], query: [QueryItem("include", Self.objectInclude)], operation: "get\(E.noun)")
        return try await perform(request, as: ObjectEnvelope<E>.self).data
    }

    /// A page of users or channels.
    func listObjects<E: AppContextObject>(_: E.Type, _ query: ObjectListQuery) async throws(WireError) -> ObjectPage<E> {
        let request = objectRequest(
            .get, [E.pathSegment], query: try query.items(include: Self.objectInclude), operation: "list\(E.noun)s")
        return try await perform(request, as: ObjectPage<E>.self)
    }

    /// The PATCH of a user's or channel's changed fields.
    func setObjectRequest<E: AppContextObject>(id: String, fields: FieldChanges<E>, ifMatch: String?) throws(WireError)
        -> WireRequest
    {
        objectRequest(
            .patch, [E.pathSegment, id], query: [QueryItem("include", Self.objectInclude)], body: try PubNubClient.json(fields),
            ifMatch: ifMatch, operation: "set\(E.noun)")
    }

    /// The DELETE of a user's or channel's metadata.
    func removeObjectRequest<E: AppContextObject>(_: E.Type, id: String) -> WireRequest {
        objectRequest(.delete, [E.pathSegment, id], operation: "remove\(E.noun)")
    }

    // MARK: Users

    /// One user; a missing id fails with reason `notFound`.
    public func getUser<C: CustomData>(id: String, as custom: C.Type = FlatCustom.self) async throws(WireError) -> ChatUser<C> {
        try await getObject(ChatUser<C>.self, id: id)
    }

    /// A page of users.
    public func listUsers<C: CustomData>(_ query: ObjectListQuery = ObjectListQuery(), as custom: C.Type = FlatCustom.self)
        async throws(WireError) -> ObjectPage<ChatUser<C>>
    {
        try await listObjects(ChatUser<C>.self, query)
    }

    /// The request ``setUser(id:fields:ifMatch:)`` sends.
    public func setUserRequest<C: CustomData>(id: String, fields: UserEdit<C>, ifMatch: String? = nil) throws(WireError) -> WireRequest {
        try setObjectRequest(id: id, fields: fields, ifMatch: ifMatch)
    }

    /// PATCHes a user; with `ifMatch`, a stale eTag fails with reason `preconditionFailed` (412).
    public func setUser<C: CustomData>(id: String, fields: UserEdit<C>, ifMatch: String? = nil) async throws(WireError) -> ChatUser<C> {
        try await perform(try setUserRequest(id: id, fields: fields, ifMatch: ifMatch), as: ObjectEnvelope<ChatUser<C>>.self).data
    }

    /// The request ``removeUser(id:)`` sends.
    public func removeUserRequest(id: String) -> WireRequest { removeObjectRequest(ChatUser<JSONValue>.self, id: id) }

    /// Deletes a user's metadata.
    public func removeUser(id: String) async throws(WireError) {
        _ = try await perform(removeUserRequest(id: id))
    }

    /// Decodes a page answer (lists, and membership sets, which answer with a page).
    public static func page<T: Decodable & Sendable & Hashable>(of type: T.Type, from response: WireResponse, operation: String)
        throws(WireError) -> ObjectPage<T>
    {
        try PubNubClient.decode(ObjectPage<T>.self, from: response, operation: operation)
    }

    /// Decodes the object (`data`) of a get or set answer: a ``ReplicaModel/ChatUser`` or ``ReplicaModel/ChatChannel``.
    public static func object<T: Decodable>(_ type: T.Type, from response: WireResponse, operation: String) throws(WireError) -> T {
        try PubNubClient.decode(ObjectEnvelope<T>.self, from: response, operation: operation).data
    }

    // MARK: Channels

    /// One channel; a missing id fails with reason `notFound`.
    public func getChannel<C: CustomData>(id: String, as custom: C.Type = FlatCustom.self) async throws(WireError) -> ChatChannel<C> {
        try await getObject(ChatChannel<C>.self, id: id)
    }

    /// A page of channels.
    public func listChannels<C: CustomData>(_ query: ObjectListQuery = ObjectListQuery(), as custom: C.Type = FlatCustom.self)
        async throws(WireError) -> ObjectPage<ChatChannel<C>>
    {
        try await listObjects(ChatChannel<C>.self, query)
    }

    /// The request ``setChannel(id:fields:ifMatch:)`` sends.
    public func setChannelRequest<C: CustomData>(id: String, fields: ChannelEdit<C>, ifMatch: String? = nil) throws(WireError) -> WireRequest {
        try setObjectRequest(id: id, fields: fields, ifMatch: ifMatch)
    }

    /// PATCHes a channel; with `ifMatch`, a stale eTag fails with reason `preconditionFailed` (412).
    public func setChannel<C: CustomData>(id: String, fields: ChannelEdit<C>, ifMatch: String? = nil) async throws(WireError) -> ChatChannel<C> {
        try await perform(try setChannelRequest(id: id, fields: fields, ifMatch: ifMatch), as: ObjectEnvelope<ChatChannel<C>>.self).data
    }

    /// Deletes a channel's metadata.
    public func removeChannel(id: String) async throws(WireError) {
        _ = try await perform(removeChannelRequest(id: id))
    }

    /// The request ``removeChannel(id:)`` sends.
    public func removeChannelRequest(id: String) -> WireRequest { removeObjectRequest(ChatChannel<JSONValue>.self, id: id) }
}

// MARK: Memberships

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

extension PubNubAppContext {
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
            body: try PubNubClient.json(MembershipBody(key: "channel", set: set, delete: remove)), operation: "setMemberships")
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
            body: try PubNubClient.json(MembershipBody(key: "uuid", set: set, delete: remove)), operation: "setMembers")
        return try await perform(request, as: ObjectPage<WireChannelMember<C>>.self)
    }
}

// The App Context pagers (the engine and the stop rule are in Pagers.swift).
extension PubNubAppContext {
    /// Every user of the keyset matching `query` (scope `users`); see ``ObjectPages``.
    public func userPages<C: CustomData>(_ query: ObjectListQuery = ObjectListQuery(), as custom: C.Type = FlatCustom.self)
        -> ObjectPages<ChatUser<C>>
    {
        ObjectPages(scope: "users", query: query) { query in try await self.listUsers(query, as: C.self) }
    }

    /// Every channel of the keyset matching `query` (scope `channels`); see ``ObjectPages``.
    public func channelPages<C: CustomData>(_ query: ObjectListQuery = ObjectListQuery(), as custom: C.Type = FlatCustom.self)
        -> ObjectPages<ChatChannel<C>>
    {
        ObjectPages(scope: "channels", query: query) { query in try await self.listChannels(query, as: C.self) }
    }

    /// Every membership of `userId` (scope `memberships:<userId>`); see ``ObjectPages``.
    public func membershipPages<C: ChatCustomData>(
        userId: String, _ query: ObjectListQuery = ObjectListQuery(), as custom: C.Type
    ) -> ObjectPages<WireMembership<C>> {
        ObjectPages(scope: "memberships:\(userId)", query: query) { query in
            try await self.getMemberships(userId: userId, query, as: C.self)
        }
    }

    /// Every member of `channelId` (scope `members:<channelId>`); see ``ObjectPages``.
    public func memberPages<C: ChatCustomData>(
        channelId: String, _ query: ObjectListQuery = ObjectListQuery(), as custom: C.Type
    ) -> ObjectPages<WireChannelMember<C>> {
        ObjectPages(scope: "members:\(channelId)", query: query) { query in
            try await self.getMembers(channelId: channelId, query, as: C.self)
        }
    }
}
