import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

/// The Chat SDK's moderation writes a user makes (`docs/chat.md`, "Moderation"): reporting a
/// message, muting and unmuting users.
public struct ModerationWrites<Custom: ChatCustomData>: OutboxWriter {
    /// The outbox the ops are queued in.
    public let outbox: Outbox<Custom>

    /// Reports a message to the channel's moderators, as the Chat SDK's `Message.report(reason)`:
    /// a `report` event published to `PUBNUB_INTERNAL_MODERATION_<channel>` with the message's
    /// text, timetoken, channel and author. Works offline; sent exactly once (a report that may
    /// have arrived is looked up in that channel's history before it is sent again).
    ///
    /// ```swift
    /// try await outbox.moderation.report(message: id, reason: "spam")
    /// ```
    /// - Throws: ``OutboxError/messageNotFound(_:)``, ``OutboxError/messageNotSent(_:)`` (the
    ///   report names the message by its timetoken), `missingValue` for an empty reason.
    @discardableResult
    public func report(message messageId: String, reason: String) async throws -> OutboxReceipt<JSONValue> {
        let opId = Outbox<Custom>.newOpId(), now = clock.now
        return try await commit { try $0.enqueue.report(opId: opId, messageId: messageId, reason: reason, now: now) }
    }

    /// Mutes users for the current user, as the Chat SDK's `MutedUsersManager.muteUser` with
    /// `syncMutedUsers`: their messages leave the default message queries at once, and the whole
    /// mute list (`PN_PRV.<userId>.mute1`) is written when online, so the user's other devices
    /// (pnreplicate or the Chat SDK) hide them too. The receipt's value is the new list.
    ///
    /// ```swift
    /// try await outbox.moderation.mute(users: ["troll"])
    /// ```
    @discardableResult
    public func mute(users: [String]) async throws -> OutboxReceipt<[String]> {
        let opId = Outbox<Custom>.newOpId(), now = clock.now, userId = userId
        return try await commit { try $0.enqueue.muteList(opId: opId, owner: userId, mute: users, unmute: [], now: now) }
    }

    /// Unmutes users, as ``mute(users:)`` mutes them: their messages show again at once.
    @discardableResult
    public func unmute(users: [String]) async throws -> OutboxReceipt<[String]> {
        let opId = Outbox<Custom>.newOpId(), now = clock.now, userId = userId
        return try await commit { try $0.enqueue.muteList(opId: opId, owner: userId, mute: [], unmute: users, now: now) }
    }
}
