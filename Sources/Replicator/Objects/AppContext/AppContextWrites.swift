import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

// App Context's writes: a user's or channel's PATCH (with `If-Match`) or DELETE, and the user's
// memberships PATCH for one membership, a removal or a batch of read positions.
extension AppContextBackend {
    public func plannedRequest(for write: ObjectWrite) throws(WireError) -> WireRequest {
        switch write {
        case .setUser(let id, let fields, let precondition):
            return try client.appContext.setUserRequest(id: id, fields: try Self.edit(fields) as UserEdit<JSONValue>, ifMatch: precondition.eTag)
        case .removeUser(let id, _):
            // App Context's DELETE takes no If-Match: a removal is not conditional.
            return client.appContext.removeUserRequest(id: id)
        case .setChannel(let id, let fields, let precondition):
            return try client.appContext.setChannelRequest(id: id, fields: try Self.edit(fields) as ChannelEdit<JSONValue>, ifMatch: precondition.eTag)
        case .removeChannel(let id, _):
            return client.appContext.removeChannelRequest(id: id)
        case .setMembership(let channel, let user, let fields, let base, _):
            // App Context replaces a membership's status, type and custom together: fields the edit
            // leaves alone are sent as the base version held them, so the write does not clear them.
            var f = fields
            if let base {
                for key in FieldSchema.membership where f[key] == nil { f[key] = base[key] ?? .null }
            }
            return try client.appContext.setMembershipsRequest(userId: user, set: [Self.set(channel, f)], remove: [])
        case .removeMembership(let channel, let user, _):
            return try client.appContext.setMembershipsRequest(userId: user, set: [MembershipSet<JSONValue>](), remove: [channel])
        case .setMemberships(let user, let sets, let answering):
            // Answered with the memberships of the batch's channels (the filter of the read before it).
            return try client.appContext.setMembershipsRequest(
                userId: user, set: sets.map { Self.set($0.channel, $0.fields) }, remove: [],
                query: ObjectListQuery(limit: 100, filter: AppContextFilter.filter(answering)))
        }
    }

    public func write(_ write: ObjectWrite) async throws(WireError) -> ObjectWritten {
        let response = try await client.perform(try plannedRequest(for: write))
        switch write {
        case .setUser:
            return .user(try PubNubAppContext.object(ChatUser<JSONValue>.self, from: response, operation: "setUser"))
        case .setChannel:
            return .channel(try PubNubAppContext.object(ChatChannel<JSONValue>.self, from: response, operation: "setChannel"))
        case .setMembership(let channel, let user, _, _, _):
            let page = try PubNubAppContext.page(of: WireMembership<RawChatCustom>.self, from: response, operation: "setMemberships")
            return .membership(try page.data.first { $0.channel.id == channel }.map { wire throws(WireError) in try Self.model(wire, user: user) })
        case .setMemberships(let user, _, let answering):
            let page = try PubNubAppContext.page(of: WireMembership<RawChatCustom>.self, from: response, operation: "setMemberships")
            let wanted = Set(answering)
            return .memberships(try page.data.filter { wanted.contains($0.channel.id) }.map { wire throws(WireError) in
                try Self.model(wire, user: user)
            })
        case .removeUser, .removeChannel, .removeMembership:
            return .removed
        }
    }

    /// A `set` entry of the memberships PATCH from replica fields (a JSON null custom clears it).
    private static func set(_ channel: String, _ fields: [String: JSONValue]) -> MembershipSet<JSONValue> {
        MembershipSet(
            id: channel, status: fields["status"]?.stringValue, type: fields["type"]?.stringValue,
            custom: fields["custom"].flatMap { $0.isNull ? JSONValue?.none : $0 })
    }

    private static func edit<E: ReplicatedFields>(_ fields: [String: JSONValue]) throws(WireError) -> FieldChanges<E> {
        do {
            return try FieldChanges<E>(wireFields: fields)
        } catch {
            throw .invalidArgument("\(error)")
        }
    }

    private static func model(_ wire: WireMembership<RawChatCustom>, user: String) throws(WireError) -> ChatMember<RawChatCustom> {
        do {
            return try wire.model(userId: user)
        } catch {
            throw .decoding(operation: "setMemberships", status: 200, message: "\(error)")
        }
    }
}

extension ObjectPrecondition {
    /// The `If-Match` eTag, if any.
    var eTag: String? {
        if case .ifMatch(let eTag) = self { return eTag }
        return nil
    }
}
