import Foundation
import ReplicaModel

/// The row form of an ``OutboxOperation`` (the `outbox.payload` column): which fields are set
/// depends on the kind. Only the store reads and writes it; code that handles ops uses
/// ``OutboxEntry/operation``.
struct OutboxPayload: Codable, Sendable, Hashable {
    /// The channel's key in the JSON (read in SQL by ``OutboxGlance``).
    static let channelKey = "channel"
    /// The channel (sends, reactions, memberships, channel edits).
    var channel: String?
    /// The user (memberships, user edits).
    var user: String?
    /// The message's own id (sends, reactions).
    var messageId: String?
    /// The message's timetoken when it was known at enqueue time (reactions).
    var messageTimetoken: Timetoken?
    /// The action's timetoken when known (reaction removals).
    var actionTimetoken: Timetoken?
    /// The action type (reactions).
    var actionType: String?
    /// The action value (reactions).
    var actionValue: String?
    /// The thread's parent channel (mention events of a message in a thread).
    var parentChannel: String?
    /// The publish body (sends): the message payload with its `id`.
    var message: JSONValue?
    /// The publish `meta` (sends): the app's meta plus `pnr_op`, the op id.
    var meta: JSONValue?
    /// The publish's `custom_message_type` (sends), when it has one.
    var customMessageType: String?
    /// Changed fields by wire name (edits and membership sets); a JSON `null` clears a field.
    var fields: [String: JSONValue]?
    /// How a send with files publishes them (``FileShape``'s raw value); nil for a send without files.
    var fileShape: String?
    /// Set by `retry` on a conflicted edit: the next attempt fetches the server's eTag and resends over it.
    var rebase: Bool?
    /// A hard delete that leaves the message's files on PubNub (the Chat SDK's `preserveFiles`).
    var preserveFiles: Bool?

    /// An empty payload.
    init() {}

    /// The payload as its column holds it: the fields that are set, by name (what `Codable`
    /// writes), for the fast JSON writer.
    var jsonValue: JSONValue {
        var object: [String: JSONValue] = [:]
        object[Self.channelKey] = channel.map(JSONValue.string)
        object["user"] = user.map(JSONValue.string)
        object["messageId"] = messageId.map(JSONValue.string)
        object["messageTimetoken"] = messageTimetoken.map { .string($0.description) }
        object["actionTimetoken"] = actionTimetoken.map { .string($0.description) }
        object["actionType"] = actionType.map(JSONValue.string)
        object["actionValue"] = actionValue.map(JSONValue.string)
        object["parentChannel"] = parentChannel.map(JSONValue.string)
        object["message"] = message
        object["meta"] = meta
        object["customMessageType"] = customMessageType.map(JSONValue.string)
        object["fileShape"] = fileShape.map(JSONValue.string)
        object["fields"] = fields.map(JSONValue.object)
        object["rebase"] = rebase.map(JSONValue.bool)
        object["preserveFiles"] = preserveFiles.map(JSONValue.bool)
        return .object(object)
    }

    /// Reads the column's parsed JSON as `Codable` would, or nil when a field is not as expected
    /// (then `JSONDecoder` decodes it, or names what is wrong).
    init?(json: JSONValue) {
        guard case .object(let object) = json else { return nil }
        func string(_ key: String) -> String?? {
            switch object[key] {
            case nil, .null?: .some(nil)
            case .string(let value)?: .some(value)
            default: nil
            }
        }
        func timetoken(_ key: String) -> Timetoken?? {
            switch object[key] {
            case nil, .null?: return .some(nil)
            case .string(let text)?: return (try? Timetoken(parsing: text)).map { .some($0) }
            case .int(let value)?: return UInt64(exactly: value).map { .some(Timetoken(rawValue: $0)) }
            default: return nil
            }
        }
        guard let channel = string(Self.channelKey), let user = string("user"), let messageId = string("messageId"),
              let messageTimetoken = timetoken("messageTimetoken"), let actionTimetoken = timetoken("actionTimetoken"),
              let actionType = string("actionType"), let actionValue = string("actionValue"),
              let parentChannel = string("parentChannel"), let customMessageType = string("customMessageType"),
              let fileShape = string("fileShape")
        else { return nil }
        self.customMessageType = customMessageType
        self.fileShape = fileShape
        self.channel = channel
        self.user = user
        self.messageId = messageId
        self.messageTimetoken = messageTimetoken
        self.actionTimetoken = actionTimetoken
        self.actionType = actionType
        self.actionValue = actionValue
        self.parentChannel = parentChannel
        message = object["message"].flatMap { $0 == .null ? JSONValue?.none : $0 }
        meta = object["meta"].flatMap { $0 == .null ? JSONValue?.none : $0 }
        switch object["fields"] {
        case nil, .null?: fields = nil
        case .object(let value)?: fields = value
        default: return nil
        }
        switch object["rebase"] {
        case nil, .null?: rebase = nil
        case .bool(let value)?: rebase = value
        default: return nil
        }
        switch object["preserveFiles"] {
        case nil, .null?: preserveFiles = nil
        case .bool(let value)?: preserveFiles = value
        default: return nil
        }
    }
}

/// An op row whose payload lacks what its kind needs.
struct IncompletePayload: Error, CustomStringConvertible {
    var kind: OutboxKind
    var field: String
    var description: String { "a \(kind.rawValue) op has no \(field)" }
}

extension OutboxOperation {
    /// Reads an operation from its row form; throws when the payload lacks a field its kind needs.
    init(kind: OutboxKind, payload p: OutboxPayload) throws {
        func need<T>(_ value: T?, _ field: String) throws -> T {
            guard let value else { throw IncompletePayload(kind: kind, field: field) }
            return value
        }
        func reaction() throws -> ReactionTarget {
            ReactionTarget(
                channel: try need(p.channel, "channel"), messageId: try need(p.messageId, "messageId"),
                messageTimetoken: p.messageTimetoken, type: try need(p.actionType, "actionType"),
                value: try need(p.actionValue, "actionValue"))
        }
        switch kind {
        case .send:
            self = .send(MessageSend(
                channel: try need(p.channel, "channel"), messageId: try need(p.messageId, "messageId"),
                message: try need(p.message, "message"), meta: p.meta, customMessageType: p.customMessageType,
                files: try p.fileShape.map { text in try need(FileShape(rawValue: text), "fileShape") }))
        case .addReaction: self = .addReaction(try reaction())
        case .removeReaction: self = .removeReaction(try reaction(), actionTimetoken: p.actionTimetoken)
        case .setMembership:
            self = .setMembership(channel: try need(p.channel, "channel"), user: try need(p.user, "user"), fields: p.fields ?? [:])
        case .removeMembership: self = .removeMembership(channel: try need(p.channel, "channel"), user: try need(p.user, "user"))
        case .setUser: self = .setUser(id: try need(p.user, "user"), fields: p.fields ?? [:])
        case .removeUser: self = .removeUser(id: try need(p.user, "user"))
        case .setChannel: self = .setChannel(id: try need(p.channel, "channel"), fields: p.fields ?? [:])
        case .removeChannel: self = .removeChannel(id: try need(p.channel, "channel"))
        case .mention:
            self = .mention(MentionNotice(
                user: try need(p.user, "user"), channel: try need(p.channel, "channel"),
                messageId: try need(p.messageId, "messageId"), messageTimetoken: p.messageTimetoken,
                parentChannel: p.parentChannel, push: p.message))
        case .receipt:
            self = .receipt(channel: try need(p.channel, "channel"), messageTimetoken: try need(p.messageTimetoken, "messageTimetoken"))
        case .hardDelete:
            self = .hardDelete(
                channel: try need(p.channel, "channel"), messageId: try need(p.messageId, "messageId"),
                messageTimetoken: try need(p.messageTimetoken, "messageTimetoken"), preserveFiles: p.preserveFiles ?? false)
        case .report:
            self = .report(
                channel: try need(p.channel, "channel"), messageId: try need(p.messageId, "messageId"),
                body: try need(p.message, "message"))
        case .setMuteList:
            self = .setMuteList(
                owner: try need(p.user, "user"), muted: ChatModeration.mutedUsers(fromCustom: try need(p.fields, "fields")["custom"]))
        case .push:
            self = .push(try need(p.message.flatMap { try? $0.decode(as: PushRegistration.self) }, "message"))
        case .setAppRecord:
            self = .setAppRecord(try need(p.message.flatMap { try? $0.decode(as: AppRecordWrite.self) }, "message"))
        case .removeAppRecord:
            self = .removeAppRecord(try need(p.message.flatMap { try? $0.decode(as: AppRecordTarget.self) }, "message"))
        case .readPositions:
            let marks = try need(p.message.flatMap { try? $0.decode(as: [ReadMark].self) }, "message")
            self = .readPositions(ReadPositions(user: try need(p.user, "user"), marks: marks))
        case .invite:
            self = .invite(InviteNotice(
                user: try need(p.user, "user"), channel: try need(p.channel, "channel"),
                channelType: try need(p.message?.objectValue?["channelType"]?.stringValue, "message.channelType")))
        }
    }

    /// The row form (the `outbox.payload` column), with the `rebase` flag.
    func payload(rebase: Bool) -> OutboxPayload {
        var p = OutboxPayload()
        p.rebase = rebase ? true : nil
        switch self {
        case .send(let send):
            p.fileShape = send.files?.rawValue
            p.channel = send.channel
            p.messageId = send.messageId
            p.message = send.message
            p.meta = send.meta
            p.customMessageType = send.customMessageType
        case .addReaction(let target), .removeReaction(let target, _):
            p.channel = target.channel
            p.messageId = target.messageId
            p.messageTimetoken = target.messageTimetoken
            p.actionType = target.type
            p.actionValue = target.value
            if case .removeReaction(_, let actionTimetoken) = self { p.actionTimetoken = actionTimetoken }
        case .setMembership(let channel, let user, let fields):
            p.channel = channel
            p.user = user
            p.fields = fields
        case .removeMembership(let channel, let user):
            p.channel = channel
            p.user = user
        case .setUser(let id, let fields):
            p.user = id
            p.fields = fields
        case .removeUser(let id):
            p.user = id
        case .setChannel(let id, let fields):
            p.channel = id
            p.fields = fields
        case .removeChannel(let id):
            p.channel = id
        case .mention(let notice):
            p.user = notice.user
            p.channel = notice.channel
            p.messageId = notice.messageId
            p.messageTimetoken = notice.messageTimetoken
            p.parentChannel = notice.parentChannel
            p.message = notice.push
        case .receipt(let channel, let timetoken):
            p.channel = channel
            p.messageTimetoken = timetoken
        case .hardDelete(let channel, let id, let timetoken, let preserveFiles):
            p.channel = channel
            p.messageId = id
            p.messageTimetoken = timetoken
            p.preserveFiles = preserveFiles ? true : nil
        case .report(let channel, let id, let body):
            p.channel = channel
            p.messageId = id
            p.message = body
        case .setMuteList(let owner, let muted):
            p.user = owner
            p.fields = ChatModeration.muteListFields(owner: owner, muted: muted)
        case .invite(let notice):
            p.user = notice.user
            p.channel = notice.channel
            p.message = notice.body
        case .push(let registration):
            p.message = try? JSONValue(encoding: registration)
        case .readPositions(let positions):
            p.user = positions.user
            p.message = try? JSONValue(encoding: positions.marks)
        case .setAppRecord(let write):
            p.message = try? JSONValue(encoding: write)
        case .removeAppRecord(let target):
            p.message = try? JSONValue(encoding: target)
        }
        return p
    }
}
