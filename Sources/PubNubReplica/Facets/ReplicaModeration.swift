import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

/// The Chat SDK's moderation: what a user does (report, mute, unmute) and what moderators decided about them.
///
/// Setting restrictions needs the keyset's secret key, which an app never holds: they are read-only here (`docs/chat.md`, "Moderation").
///
/// ```swift
/// try await replica.moderation.report(message: message.id, reason: "spam")
/// ```
///
/// Reached through ``Replica/moderation``: a value made per access, holding only the replica.
public struct ReplicaModeration<Custom: ChatCustomData>: Sendable {
    /// The replica these calls go through.
    let replica: Replica<Custom>

    /// Reports a message to the channel's moderators (the Chat SDK's `Message.report`): works
    /// offline, sent exactly once. See `ModerationWrites.report(message:reason:)`.
    ///
    /// ```swift
    /// try await replica.report(message: message.id, reason: "spam")
    /// ```
    @discardableResult
    public func report(message messageId: String, reason: String) async throws -> OutboxReceipt<JSONValue> {
        try await replica.write { try await $0.moderation.report(message: messageId, reason: reason) }
    }

    /// Mutes users: their messages leave the default message queries at once, and the mute list
    /// (`PN_PRV.<userId>.mute1`) is written when online, for the user's other devices.
    @discardableResult
    public func mute(users: [String]) async throws -> OutboxReceipt<[String]> {
        try await replica.write { try await $0.moderation.mute(users: users) }
    }

    /// Unmutes users: their messages show again at once.
    @discardableResult
    public func unmute(users: [String]) async throws -> OutboxReceipt<[String]> {
        try await replica.write { try await $0.moderation.unmute(users: users) }
    }

    /// The current user's restrictions (banned or muted by a moderator), by channel; observable.
    /// A send to a channel that bans or mutes the user throws `OutboxError.restricted` before
    /// anything is queued.
    ///
    /// ```swift
    /// for try await list in replica.observe(replica.restrictions) { composer.disable(in: list.map(\.channelId)) }
    /// ```
    public var restrictions: StoreQuery<[ChannelRestriction]> { replica.queries.restrictions(of: replica.userId) }

    /// The users the current user muted (sorted), as the app sees them; observable.
    public var mutedUsers: StoreQuery<[String]> { replica.queries.mutedUsers(by: replica.userId) }
}

extension Replica {
    /// The Chat SDK's moderation: what a user does (report, mute, unmute) and what moderators decided about them.
    public nonisolated var moderation: ReplicaModeration<Custom> { ReplicaModeration(replica: self) }
}
