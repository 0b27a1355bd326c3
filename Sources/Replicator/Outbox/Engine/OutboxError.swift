import Foundation
import ReplicaStore
import ReplicaModel

/// What an enqueue did in the outbox.
public enum OutboxDisposition: Sendable, Hashable {
    /// A new op was queued.
    case enqueued
    /// The change was merged into an earlier op that had not been sent yet.
    case merged(into: String)
    /// The change cancelled earlier unsent ops (their ids); nothing will be sent.
    case cancelled([String])
    /// Nothing to do: the store already holds this state and no op is needed.
    case unchanged
}

/// One message of a batch send (`Outbox.send(many:)`): what
/// `Outbox.send(text:to:contentType:content:custom:meta:)` takes.
public struct OutgoingMessage<Custom: CustomData>: Sendable {
    /// The text.
    public var text: String
    /// The channel.
    public var channel: String
    /// The content type, or nil.
    public var contentType: String?
    /// Structured content, or nil.
    public var content: JSONValue?
    /// The app's custom data, or nil.
    public var custom: Custom?
    /// Publish metadata; a JSON object when given.
    public var meta: JSONValue?
    /// PubNub's `custom_message_type` (3-50 characters of `A-Z a-z 0-9 - _`), or nil.
    public var customMessageType: String?

    /// A message of `text` to `channel`.
    public init(
        text: String, to channel: String, contentType: String? = nil, content: JSONValue? = nil, custom: Custom? = nil,
        meta: JSONValue? = nil, customMessageType: String? = nil
    ) {
        self.text = text
        self.channel = channel
        self.contentType = contentType
        self.content = content
        self.custom = custom
        self.meta = meta
        self.customMessageType = customMessageType
    }
}

/// An enqueue's result: the local object as now stored, and what happened in the outbox.
public struct OutboxReceipt<Value: Sendable>: Sendable {
    /// The local object after the change (nil for removals).
    public var value: Value?
    /// The op that will carry the change (nil when nothing will be sent).
    public var opId: String?
    /// What happened.
    public var disposition: OutboxDisposition
}

/// What sending a draft queued: the message's publish and one mention event per mentioned user.
public struct DraftSendReceipt<Message: Sendable>: Sendable {
    /// The pending message and its publish op.
    public var message: OutboxReceipt<Message>
    /// The mention event ops, one per mentioned user (in the order the draft first mentions
    /// them); each waits for the message's timetoken.
    public var mentionOpIds: [String]
    /// The op adding the Chat SDK's `threadRootId` action to a thread's root message, when this
    /// is the first reply the store knows of.
    public var threadRootOpId: String?
}

/// Errors of outbox operations.
public enum OutboxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No op with this id.
    case opNotFound(String)
    /// The op may already have reached PubNub (in flight or ambiguous), so it cannot be withdrawn.
    case mayHaveBeenApplied(opId: String, state: OutboxState)
    /// The op is not dead or in conflict, so there is nothing to retry.
    case notRetryable(opId: String, state: OutboxState)
    /// The message is not in the store.
    case messageNotFound(String)
    /// The message has no unsent op (it was sent already).
    case messageNotPending(String)
    /// The app's `meta` must be a JSON object (the op id is added to it).
    case metaNotAnObject
    /// The edit changes nothing.
    case emptyEdit(String)
    /// The draft has no text to send (there is no stored draft, or its text is empty).
    case emptyDraft(DraftKey)
    /// The message was soft-deleted by other users too; PubNub lets a user remove only their own
    /// `deleted` action, so it cannot be restored by this one.
    case deletedByOthers(messageId: String, users: [String])
    /// Another user wrote the message, and the store's `ReplicaStore.EditAuthority` does not let
    /// this user change it (no replica with that setting would show the edit or deletion).
    case notAllowedToChange(messageId: String, author: String)
    /// The channel is not in the store (pull it first: a pin is written over its custom data).
    case channelNotFound(String)
    /// The message has no timetoken yet (its publish has not gone out), so it cannot be pinned.
    case messageNotSent(String)
    /// The user has no membership of the channel in the store (a read position lives there).
    case notAMember(channel: String, user: String)
    /// A read position later than the present plus a tolerance (`ReplicaModel.ReadPosition.ceiling(now:)`):
    /// it would freeze the channel's unread count.
    case implausibleReadPosition(Timetoken, ceiling: Timetoken)
    /// A thread draft's root message (channel, timetoken) is not in the store.
    case threadRootNotFound(channel: String, timetoken: Timetoken)
    /// Another process holds the store's drain lease (see `ReplicaStore.DrainLease`) and did not give it up
    /// in time: only one process sends a store's outbox at a time.
    case drainLeaseHeld(path: String, holder: Int32?)
    /// A publish answer gave the message a timetoken that another stored message of the channel
    /// holds. The answer is not believed: the send turns ambiguous and is probed (found on the
    /// server, or sent again), so two messages never share one identity.
    case timetokenTaken(channel: String, timetoken: Timetoken, heldBy: String)
    /// Writing the outbox's own state failed (disk full, I/O error): the drain stopped rather
    /// than retry an op whose outcome it could not record.
    case storeFailed(String)
    /// A file to send was refused before anything was stored: unreadable, empty when it must be
    /// encrypted, over the 5 MiB upload limit, or a bad name (`docs/files.md`, "Limits").
    case invalidFile(String)
    /// A moderator restricted the current user in the channel (the Chat SDK's restrictions,
    /// `docs/chat.md`, "Moderation"): banned, no write to it; muted, no message sent to it.
    /// Refused before anything is queued.
    case restricted(ChannelRestriction)
    /// The channel is one the Chat SDK keeps out of sight (`PUBNUB_INTERNAL_*`, `PN_PRV.*`): apps
    /// do not write to it directly (reports and restrictions have their own calls).
    case hiddenChannel(String)
    /// The id is one of the Chat SDK's private objects (`PN_PRV.*`), not a user to mute.
    case hiddenUser(String)
    /// A message cannot be forwarded to the channel it is in (as in the Chat SDK).
    case forwardToSameChannel(String)
    /// A direct conversation needs another user (the id is the current user's own).
    case conversationWithSelf(String)
    /// The message has no thread (no `threadRootId` action in the store) to remove.
    case noThread(String)
    /// The object backend cannot hold an object with this id (DataSync refuses whitespace, which
    /// PubNub's App Context accepts; `ObjectBackend.identifierProblem(_:)`). Refused before
    /// anything is queued.
    case identifierRefused(field: String, id: String, backend: String, reason: String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .opNotFound(let id): "no outbox op \(id)"
        case .mayHaveBeenApplied(let id, let state):
            "op \(id) is \(state.rawValue) and may already have reached PubNub; it cannot be withdrawn"
        case .notRetryable(let id, let state): "op \(id) is \(state.rawValue); only dead or conflicted ops can be retried"
        case .messageNotFound(let id): "no message \(id) in the store"
        case .messageNotPending(let id): "message \(id) was already sent"
        case .notAllowedToChange(let id, let author):
            "message \(id) is \(author)'s; only its author or a moderator (EditAuthority) may edit or delete it"
        case .metaNotAnObject: "publish meta must be a JSON object"
        case .emptyEdit(let what): "the edit of \(what) changes no field"
        case .emptyDraft(let key): "the draft of \(key) has no text to send"
        case .deletedByOthers(let id, let users):
            "message \(id) was also deleted by \(users.joined(separator: ", ")); only they can restore it"
        case .channelNotFound(let id): "no channel \(id) in the store"
        case .timetokenTaken(let channel, let timetoken, let holder):
            "the publish answer gave timetoken \(timetoken), which message \(holder) of \(channel) already holds; not believed, the send is probed"
        case .messageNotSent(let id): "message \(id) has not been sent yet"
        case .notAMember(let channel, let user): "\(user) is not a member of \(channel) in the store"
        case .implausibleReadPosition(let position, let ceiling):
            "read position \(position) is in the future (the latest plausible is \(ceiling), the present plus 10 minutes)"
        case .threadRootNotFound(let channel, let timetoken): "no message \(timetoken) of \(channel) in the store to reply to"
        case .drainLeaseHeld(let path, let holder):
            "another process\(holder.map { " (pid \($0))" } ?? "") is sending this store's outbox (lease \(path)); try again when it is done"
        case .storeFailed(let message): "the outbox could not record its state, so sending stopped: \(message)"
        case .invalidFile(let reason): "cannot send the file: \(reason)"
        case .restricted(let r):
            "\(r.userId) is \(r.ban ? "banned from" : "muted in") channel \(r.channelId)\(r.reason.map { " (\($0))" } ?? ""); nothing was queued"
        case .hiddenChannel(let id): "\(id) is a Chat SDK internal channel; nothing was queued"
        case .hiddenUser(let id): "\(id) is a Chat SDK private object, not a user; nothing was queued"
        case .forwardToSameChannel(let id): "the message is in \(id) already; forward it to another channel"
        case .conversationWithSelf(let id): "a direct conversation is with another user; \(id) is you"
        case .noThread(let id): "message \(id) has no thread in the store"
        case .identifierRefused(let field, let id, let backend, let reason):
            "\(field) \"\(id)\" cannot be written to \(backend): \(reason); nothing was queued"
        }
    }
}
