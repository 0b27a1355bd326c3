import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

/// Turns an outbox op into the exact request it sends. The drain engine and the dry run both use
/// this, so what `pnreplicate --dry-run` prints is what goes on the wire.
enum OutboxRequests {
    /// What an op needs that may only be known at send time.
    struct Resolved {
        /// A reaction's message timetoken (the parent publish may have finished after enqueue).
        var messageTimetoken: Timetoken?
        /// A removal's action timetoken.
        var actionTimetoken: Timetoken?
        /// The `If-Match` eTag (a rebased conflict uses the server's current one).
        var ifMatch: String?
    }

    enum Problem: Error, CustomStringConvertible {
        case missing(String)
        case wire(WireError)

        var description: String {
            switch self {
            case .missing(let what): "not known yet: \(what)"
            case .wire(let error): error.description
            }
        }
    }

    static func request(for entry: OutboxEntry, resolved: Resolved, client: PubNubClient) throws(Problem) -> WireRequest {
        let p = entry.payload
        func need<T>(_ value: T?, _ what: String) throws(Problem) -> T {
            guard let value else { throw .missing(what) }
            return value
        }
        do {
            switch entry.kind {
            case .send:
                return try client.publishRequest(
                    PublishRequest(
                        channel: try need(p.channel, "channel"), message: try need(p.message, "message"), meta: p.meta))
            case .addReaction:
                return try client.addMessageActionRequest(
                    channel: try need(p.channel, "channel"),
                    messageTimetoken: try need(resolved.messageTimetoken, "the message's timetoken"),
                    type: try need(p.actionType, "action type"), value: try need(p.actionValue, "action value"))
            case .removeReaction:
                return client.removeMessageActionRequest(
                    channel: try need(p.channel, "channel"),
                    messageTimetoken: try need(resolved.messageTimetoken, "the message's timetoken"),
                    actionTimetoken: try need(resolved.actionTimetoken, "the action's timetoken"))
            case .setMembership:
                // PubNub replaces a membership's status, type and custom together: fields the edit
                // leaves alone are sent as the base version held them, so the write does not clear them.
                var f = p.fields ?? [:]
                if let snapshot = entry.baseSnapshot,
                   let base = try? JSONValue(jsonData: Data(snapshot.utf8)).objectValue
                {
                    for key in ["status", "type", "custom"] where f[key] == nil { f[key] = base[key] ?? .null }
                }
                let set = MembershipSet<JSONValue>(
                    id: try need(p.channel, "channel"), status: f["status"]?.stringValue, type: f["type"]?.stringValue,
                    custom: f["custom"].flatMap { $0.isNull ? nil : $0 })
                return try client.setMembershipsRequest(userId: try need(p.user, "user"), set: [set], remove: [])
            case .removeMembership:
                return try client.setMembershipsRequest(
                    userId: try need(p.user, "user"), set: [MembershipSet<JSONValue>](), remove: [try need(p.channel, "channel")])
            case .setUser:
                return try client.setUserRequest(
                    id: try need(p.user, "user"), fields: userFields(p.fields ?? [:]), ifMatch: resolved.ifMatch)
            case .removeUser:
                return client.removeUserRequest(id: try need(p.user, "user"))
            case .setChannel:
                return try client.setChannelRequest(
                    id: try need(p.channel, "channel"), fields: channelFields(p.fields ?? [:]), ifMatch: resolved.ifMatch)
            case .removeChannel:
                return client.removeChannelRequest(id: try need(p.channel, "channel"))
            }
        } catch let error as WireError {
            throw .wire(error)
        } catch let problem as Problem {
            throw problem
        } catch {
            throw .missing("\(error)")
        }
    }

    static func field(_ value: JSONValue?) -> FieldValue<String>? {
        switch value {
        case .none: nil
        case .null?: .null
        case .string(let text)?: .value(text)
        case let other?: .value(other.jsonStringOrEmpty)
        }
    }

    static func customField(_ value: JSONValue?) -> FieldValue<JSONValue>? {
        switch value {
        case .none: nil
        case .null?: .null
        case let other?: .value(other)
        }
    }

    static func userFields(_ f: [String: JSONValue]) -> UserFields<JSONValue> {
        var fields = UserFields<JSONValue>()
        fields.name = field(f["name"])
        fields.externalId = field(f["externalId"])
        fields.profileUrl = field(f["profileUrl"])
        fields.email = field(f["email"])
        fields.type = field(f["type"])
        fields.status = field(f["status"])
        fields.custom = customField(f["custom"])
        return fields
    }

    static func channelFields(_ f: [String: JSONValue]) -> ChannelFields<JSONValue> {
        var fields = ChannelFields<JSONValue>()
        fields.name = field(f["name"])
        fields.details = field(f["description"])
        fields.type = field(f["type"])
        fields.status = field(f["status"])
        fields.custom = customField(f["custom"])
        return fields
    }
}

extension JSONValue {
    var jsonStringOrEmpty: String { (try? jsonString()) ?? "" }
}
