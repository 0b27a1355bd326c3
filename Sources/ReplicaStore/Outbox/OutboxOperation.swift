import Foundation
import ReplicaModel

/// What an outbox op does, with exactly the data its kind needs.
///
/// Each case carries its own fields, so code that handles an op switches on the operation and
/// finds every value it needs already there: no optional to unpack, no field that may be missing.
/// The store keeps an operation in the `outbox.payload` column (`OutboxPayload`, the
/// row's JSON form); `init(kind:payload:)` is the one place that form is checked.
///
/// ```swift
/// switch entry.operation {
/// case .send(let channel, let messageId, _, _, _, _): print("publish \(messageId) to \(channel)")
/// case .setUser(let id, let fields): print("PATCH user \(id): \(fields.keys.sorted())")
/// default: break
/// }
/// ```
public enum OutboxOperation: Sendable, Hashable {
    /// Publish `message` (the chat payload with its `id`) to `channel`, with `meta` (the app's
    /// meta plus `pnr_op`, the op id) and the message's `custom_message_type`, if any. With
    /// `files`, the op first uploads the files of its `file_uploads` rows, then publishes them in
    /// that shape (`docs/files.md`).
    case send(channel: String, messageId: String, message: JSONValue, meta: JSONValue?, customMessageType: String? = nil,
              files: FileShape? = nil)
    /// Add the current user's reaction (a message action).
    case addReaction(ReactionTarget)
    /// Remove the current user's reaction; `actionTimetoken` when it was known at enqueue time.
    case removeReaction(ReactionTarget, actionTimetoken: Timetoken?)
    /// Set a membership's fields (`status`, `type`, `custom`, by wire name; JSON null clears).
    case setMembership(channel: String, user: String, fields: [String: JSONValue])
    /// Remove a membership.
    case removeMembership(channel: String, user: String)
    /// PATCH a user's metadata with `fields` (wire names; JSON null clears).
    case setUser(id: String, fields: [String: JSONValue])
    /// Delete a user's metadata.
    case removeUser(id: String)
    /// PATCH a channel's metadata with `fields` (wire names; JSON null clears).
    case setChannel(id: String, fields: [String: JSONValue])
    /// Delete a channel's metadata.
    case removeChannel(id: String)
    /// Publish the Chat SDK's mention event (`ReplicaModel.ChatSDKFormat.mentionEvent(messageTimetoken:channel:parentChannel:)`)
    /// on the mentioned user's channel, once the message has its timetoken.
    case mention(MentionNotice)
    /// Signal the Chat SDK's read receipt (`ReplicaModel.ChatSDKFormat.receiptSignal(messageTimetoken:)`)
    /// on `channel`: the user has read up to `messageTimetoken`.
    case receipt(channel: String, messageTimetoken: Timetoken)
    /// Delete the message `messageId` (at `messageTimetoken`) from `channel`'s history:
    /// `DELETE /v3/history/…?start=<tt+1>&end=<tt>`; then its files, unless `preserveFiles` (the
    /// Chat SDK's option), as far as they are the message's own (`FileOwnership`, `docs/files.md`).
    case hardDelete(channel: String, messageId: String, messageTimetoken: Timetoken, preserveFiles: Bool)
    /// Report the message `messageId` of `channel`: publish `body` (the Chat SDK's report,
    /// `ReplicaModel.ChatModeration.reportBody(text:reason:messageTimetoken:channel:author:)`) to
    /// the channel's moderation channel `PUBNUB_INTERNAL_MODERATION_<channel>`.
    case report(channel: String, messageId: String, body: JSONValue)
    /// Write `owner`'s whole mute list (`muted`, sorted) as the Chat SDK does: the user object
    /// `PN_PRV.<owner>.mute1` (`ReplicaModel.ChatModeration.muteListFields(owner:muted:)`).
    case setMuteList(owner: String, muted: [String])
    /// Publish the Chat SDK's invitation event
    /// (`ReplicaModel.ChatConversations.inviteEvent(channelType:channelId:)`) on the invitee's
    /// channel, after the pending membership that invites them (same lane). Skipped without a
    /// request when the invitee turned out to be a member already.
    case invite(InviteNotice)
    /// Register or remove a device for mobile push (PubNub's `/v1/push` for FCM, `/v2/push` for
    /// APNs2). Idempotent: resent as it is.
    case push(PushRegistration)
    /// Write the user's read positions of many channels (``ReadPositions``) in one membership
    /// PATCH: each channel's custom data as the server holds it then, with the position, as the
    /// Chat SDK's `markAllMessagesAsRead` writes them. Laid over each membership until it is sent.
    case readPositions(ReadPositions)

    /// The kind, as the `outbox.kind` column names it.
    public var kind: OutboxKind {
        switch self {
        case .send: .send
        case .addReaction: .addReaction
        case .removeReaction: .removeReaction
        case .setMembership: .setMembership
        case .removeMembership: .removeMembership
        case .setUser: .setUser
        case .removeUser: .removeUser
        case .setChannel: .setChannel
        case .removeChannel: .removeChannel
        case .mention: .mention
        case .receipt: .receipt
        case .hardDelete: .hardDelete
        case .report: .report
        case .setMuteList: .setMuteList
        case .invite: .invite
        case .push: .push
        case .readPositions: .readPositions
        }
    }

    /// The fields an edit sets (user, channel and membership sets); nil for other operations.
    public var fields: [String: JSONValue]? {
        switch self {
        case .setMembership(_, _, let fields), .setUser(_, let fields), .setChannel(_, let fields): fields
        default: nil
        }
    }

    /// The same edit with other fields (other operations are returned unchanged).
    public func with(fields: [String: JSONValue]) -> OutboxOperation {
        switch self {
        case .setMembership(let channel, let user, _): .setMembership(channel: channel, user: user, fields: fields)
        case .setUser(let id, _): .setUser(id: id, fields: fields)
        case .setChannel(let id, _): .setChannel(id: id, fields: fields)
        default: self
        }
    }

    /// The same operation naming its message by `timetoken` (reactions and mention events; other
    /// operations are returned unchanged): for an op whose message leaves the store.
    public func with(messageTimetoken timetoken: Timetoken) -> OutboxOperation {
        switch self {
        case .addReaction(var target):
            target.messageTimetoken = timetoken
            return .addReaction(target)
        case .removeReaction(var target, let action):
            target.messageTimetoken = timetoken
            return .removeReaction(target, actionTimetoken: action)
        case .mention(var notice):
            notice.messageTimetoken = timetoken
            return .mention(notice)
        default:
            return self
        }
    }

    /// The channel the operation concerns: a message's or reaction's channel (a mention event's
    /// message's channel), a membership's channel, an edited channel. Nil for user operations.
    public var channel: String? {
        switch self {
        case .send(let channel, _, _, _, _, _), .setMembership(let channel, _, _), .removeMembership(let channel, _),
             .setChannel(let channel, _), .removeChannel(let channel):
            channel
        case .addReaction(let target), .removeReaction(let target, _): target.channel
        case .mention(let notice): notice.channel
        case .receipt(let channel, _), .hardDelete(let channel, _, _, _), .report(let channel, _, _): channel
        case .invite(let notice): notice.channel
        case .setUser, .removeUser, .setMuteList, .push, .readPositions: nil
        }
    }

    /// The user the operation concerns: a membership's user, an edited user, a mentioned user.
    /// Nil otherwise.
    public var user: String? {
        switch self {
        case .setMembership(_, let user, _), .removeMembership(_, let user), .setUser(let user, _), .removeUser(let user),
             .setMuteList(let user, _):
            user
        case .mention(let notice): notice.user
        case .invite(let notice): notice.user
        case .readPositions(let positions): positions.user
        default: nil
        }
    }

    /// The message's own id (sends, reactions and mention events); nil otherwise.
    public var messageId: String? {
        switch self {
        case .send(_, let id, _, _, _, _): id
        case .addReaction(let target), .removeReaction(let target, _): target.messageId
        case .mention(let notice): notice.messageId
        case .hardDelete(_, let id, _, _), .report(_, let id, _): id
        default: nil
        }
    }

    /// The timetoken of the message a reaction or mention event is about, when it was known at
    /// enqueue time (nil while the message is pending, and for other operations).
    public var messageTimetoken: Timetoken? {
        switch self {
        case .addReaction(let target), .removeReaction(let target, _): target.messageTimetoken
        case .mention(let notice): notice.messageTimetoken
        case .receipt(_, let timetoken), .hardDelete(_, _, let timetoken, _): timetoken
        default: nil
        }
    }

    /// The reaction of a reaction add or removal; nil otherwise.
    public var reaction: ReactionTarget? {
        switch self {
        case .addReaction(let target), .removeReaction(let target, _): target
        default: nil
        }
    }

    /// A reaction removal's action timetoken, when it was known at enqueue time.
    public var actionTimetoken: Timetoken? {
        if case .removeReaction(_, let timetoken) = self { timetoken } else { nil }
    }

    /// Whether the operation deletes its object (a user, a channel or a membership).
    public var isRemoval: Bool {
        switch self {
        case .removeMembership, .removeUser, .removeChannel: true
        default: false
        }
    }
}

/// How a send with files publishes them (`docs/files.md`, "Two shapes").
public enum FileShape: String, Sendable, Hashable, Codable {
    /// One file message (`publish-file`, stored): `{"message": <the message>, "file": {…}}`. The
    /// file message carries the exactly-once guarantee. What the core SDKs' `sendFile` sends.
    case fileMessage
    /// The Chat SDK's: each file announced by a `store=0` file event (at most once), then the
    /// text message with the files in its `files`, which carries the exactly-once guarantee.
    case chatText
}

/// A reaction of the current user: (message, type, value).
public struct ReactionTarget: Sendable, Hashable {
    /// The message's channel.
    public var channel: String
    /// The message's own id.
    public var messageId: String
    /// The message's timetoken, when it was known at enqueue time (nil while the message is pending).
    public var messageTimetoken: Timetoken?
    /// The action type (`reaction` for emoji reactions).
    public var type: String
    /// The action value (the emoji).
    public var value: String

    /// A reaction target.
    public init(channel: String, messageId: String, messageTimetoken: Timetoken?, type: String, value: String) {
        self.channel = channel
        self.messageId = messageId
        self.messageTimetoken = messageTimetoken
        self.type = type
        self.value = value
    }
}

/// A device's mobile push registration change: channels added or removed, or the device removed
/// from every channel. The device is a token with its service: `fcm`, or `apns2` with the app's
/// topic (bundle id) and environment.
public struct PushRegistration: Sendable, Hashable, Codable {
    /// What changes.
    public enum Change: Sendable, Hashable, Codable {
        /// The device gets pushes of these channels too.
        case add([String])
        /// The device no longer gets pushes of these channels.
        case remove([String])
        /// The device gets no pushes at all.
        case removeDevice
    }

    /// The device token (FCM registration token, or the APNs token in hex).
    public var token: String
    /// `fcm` or `apns2`.
    public var service: String
    /// The APNs topic (the app's bundle id); nil for FCM.
    public var topic: String?
    /// The APNs environment (`development`, `production`); nil for FCM.
    public var environment: String?
    /// What changes.
    public var change: Change

    /// A registration change.
    public init(token: String, service: String, topic: String? = nil, environment: String? = nil, change: Change) {
        self.token = token
        self.service = service
        self.topic = topic
        self.environment = environment
        self.change = change
    }
}

/// An invitation event to publish: `user` is invited to `channel` (of type `channelType`, as the
/// event announces it). The event goes to the channel named after the user's id.
public struct InviteNotice: Sendable, Hashable {
    /// The invited user (the event's channel).
    public var user: String
    /// The channel they are invited to.
    public var channel: String
    /// The channel's type (`direct`, `group`, `public`, `unknown`).
    public var channelType: String

    /// An invitation event.
    public init(user: String, channel: String, channelType: String) {
        self.user = user
        self.channel = channel
        self.channelType = channelType
    }

    /// The event's body.
    public var body: JSONValue { ChatConversations.inviteEvent(channelType: channelType, channelId: channel) }
}

/// A mention event to publish: `user` was mentioned in the message `messageId` of `channel`.
/// The event goes to the channel named after the user's id, as the Chat SDK sends it.
public struct MentionNotice: Sendable, Hashable {
    /// The mentioned user (the event's channel).
    public var user: String
    /// The message's channel.
    public var channel: String
    /// The message's own id.
    public var messageId: String
    /// The message's timetoken, when it was known at enqueue time (nil while the message is pending).
    public var messageTimetoken: Timetoken?
    /// The thread's parent channel, when the message is in a thread.
    public var parentChannel: String?
    /// The Chat SDK's push keys (`pn_fcm`, `pn_apns`) the event carries, when the app sends pushes.
    public var push: JSONValue?

    /// A mention event.
    public init(
        user: String, channel: String, messageId: String, messageTimetoken: Timetoken?, parentChannel: String? = nil, push: JSONValue? = nil
    ) {
        self.user = user
        self.channel = channel
        self.messageId = messageId
        self.messageTimetoken = messageTimetoken
        self.parentChannel = parentChannel
        self.push = push
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
            self = .send(
                channel: try need(p.channel, "channel"), messageId: try need(p.messageId, "messageId"),
                message: try need(p.message, "message"), meta: p.meta, customMessageType: p.customMessageType,
                files: try p.fileShape.map { text in try need(FileShape(rawValue: text), "fileShape") })
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
        case .send(let channel, let messageId, let message, let meta, let customMessageType, let files):
            p.fileShape = files?.rawValue
            p.channel = channel
            p.messageId = messageId
            p.message = message
            p.meta = meta
            p.customMessageType = customMessageType
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
        }
        return p
    }
}
