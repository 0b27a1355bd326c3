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
/// case .send(let send): print("publish \(send.messageId) to \(send.channel)")
/// case .setUser(let id, let fields): print("PATCH user \(id): \(fields.keys.sorted())")
/// case let other: print(other.kind.rawValue)
/// }
/// ```
public enum OutboxOperation: Sendable, Hashable {
    /// Publish a chat message (`MessageSend`: its channel, id, payload, meta, custom message
    /// type and file shape).
    case send(MessageSend)
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
    /// Create, replace or patch a record of one of the app's own DataSync classes: the record as
    /// this device wants it (`AppRecordWrite`); its request is computed against the op's base
    /// when it is sent.
    case setAppRecord(AppRecordWrite)
    /// Delete a record of one of the app's own DataSync classes (`If-Match` its base's eTag).
    case removeAppRecord(AppRecordTarget)

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
        case .setAppRecord: .setAppRecord
        case .removeAppRecord: .removeAppRecord
        }
    }

    /// The fields an edit sets (user, channel and membership sets; an app record's wanted state,
    /// `AppRecordWrite.state`); nil for other operations.
    public var fields: [String: JSONValue]? {
        switch self {
        case .setMembership(_, _, let fields), .setUser(_, let fields), .setChannel(_, let fields): fields
        case .setAppRecord(let write): write.state
        case .send, .addReaction, .removeReaction, .removeMembership, .removeUser, .removeChannel, .mention, .receipt,
             .hardDelete, .report, .setMuteList, .invite, .push, .readPositions, .removeAppRecord:
            nil
        }
    }

    /// The same edit with other fields (other operations are returned unchanged).
    public func with(fields: [String: JSONValue]) -> OutboxOperation {
        switch self {
        case .setMembership(let channel, let user, _): .setMembership(channel: channel, user: user, fields: fields)
        case .setUser(let id, _): .setUser(id: id, fields: fields)
        case .setChannel(let id, _): .setChannel(id: id, fields: fields)
        case .setAppRecord(let write): .setAppRecord(write.with(state: fields))
        case .send, .addReaction, .removeReaction, .removeMembership, .removeUser, .removeChannel, .mention, .receipt,
             .hardDelete, .report, .setMuteList, .invite, .push, .readPositions, .removeAppRecord:
            self
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
        case .send, .setMembership, .removeMembership, .setUser, .removeUser, .setChannel, .removeChannel, .receipt,
             .hardDelete, .report, .setMuteList, .invite, .push, .readPositions, .setAppRecord, .removeAppRecord:
            return self
        }
    }

    /// The send's message, for a send; nil for other operations.
    public var send: MessageSend? {
        if case .send(let send) = self { send } else { nil }
    }

    /// The channel the operation concerns: a message's or reaction's channel (a mention event's
    /// message's channel), a membership's channel, an edited channel. Nil for user operations.
    public var channel: String? {
        switch self {
        case .send(let send): send.channel
        case .setMembership(let channel, _, _), .removeMembership(let channel, _), .setChannel(let channel, _),
             .removeChannel(let channel):
            channel
        case .addReaction(let target), .removeReaction(let target, _): target.channel
        case .mention(let notice): notice.channel
        case .receipt(let channel, _), .hardDelete(let channel, _, _, _), .report(let channel, _, _): channel
        case .invite(let notice): notice.channel
        case .setUser, .removeUser, .setMuteList, .push, .readPositions, .setAppRecord, .removeAppRecord: nil
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
        case .send, .addReaction, .removeReaction, .setChannel, .removeChannel, .receipt, .hardDelete, .report, .push,
             .setAppRecord, .removeAppRecord:
            nil
        }
    }

    /// The message's own id (sends, reactions and mention events); nil otherwise.
    public var messageId: String? {
        switch self {
        case .send(let send): send.messageId
        case .addReaction(let target), .removeReaction(let target, _): target.messageId
        case .mention(let notice): notice.messageId
        case .hardDelete(_, let id, _, _), .report(_, let id, _): id
        case .setMembership, .removeMembership, .setUser, .removeUser, .setChannel, .removeChannel, .receipt,
             .setMuteList, .invite, .push, .readPositions, .setAppRecord, .removeAppRecord:
            nil
        }
    }

    /// The timetoken of the message a reaction or mention event is about, when it was known at
    /// enqueue time (nil while the message is pending, and for other operations).
    public var messageTimetoken: Timetoken? {
        switch self {
        case .addReaction(let target), .removeReaction(let target, _): target.messageTimetoken
        case .mention(let notice): notice.messageTimetoken
        case .receipt(_, let timetoken), .hardDelete(_, _, let timetoken, _): timetoken
        case .send, .setMembership, .removeMembership, .setUser, .removeUser, .setChannel, .removeChannel, .report,
             .setMuteList, .invite, .push, .readPositions, .setAppRecord, .removeAppRecord:
            nil
        }
    }

    /// The reaction of a reaction add or removal; nil otherwise.
    public var reaction: ReactionTarget? {
        switch self {
        case .addReaction(let target), .removeReaction(let target, _): target
        case .send, .setMembership, .removeMembership, .setUser, .removeUser, .setChannel, .removeChannel, .mention,
             .receipt, .hardDelete, .report, .setMuteList, .invite, .push, .readPositions, .setAppRecord, .removeAppRecord:
            nil
        }
    }

    /// The app record the operation writes or removes (its kind, class and id); nil otherwise.
    public var appRecord: AppRecordTarget? {
        if case .setAppRecord(let write) = self { return AppRecordTarget(kind: write.kind, className: write.className, id: write.id) }
        if case .removeAppRecord(let target) = self { return target }
        return nil
    }

    /// A reaction removal's action timetoken, when it was known at enqueue time.
    public var actionTimetoken: Timetoken? {
        if case .removeReaction(_, let timetoken) = self { timetoken } else { nil }
    }
}
