import Foundation
import ReplicaModel
import ReplicaStore
import Replicator

// The Chat SDK's moderation through the façade (`docs/chat.md`, "Moderation"): what a user does
// (report, mute, unmute) and what a moderator decided about them (restrictions, read-only here:
// setting them needs the keyset's secret key, which an app never holds).
extension Replica {
    /// Reports a message to the channel's moderators (the Chat SDK's `Message.report`): works
    /// offline, sent exactly once. See `Outbox.report(message:reason:)`.
    ///
    /// ```swift
    /// try await replica.report(message: message.id, reason: "spam")
    /// ```
    @discardableResult
    public func report(message messageId: String, reason: String) async throws -> OutboxReceipt<JSONValue> {
        try await write { try await $0.report(message: messageId, reason: reason) }
    }

    /// Mutes users: their messages leave the default message queries at once, and the mute list
    /// (`PN_PRV.<userId>.mute1`) is written when online, for the user's other devices.
    @discardableResult
    public func mute(users: [String]) async throws -> OutboxReceipt<[String]> {
        try await write { try await $0.mute(users: users) }
    }

    /// Unmutes users: their messages show again at once.
    @discardableResult
    public func unmute(users: [String]) async throws -> OutboxReceipt<[String]> {
        try await write { try await $0.unmute(users: users) }
    }

    /// The current user's restrictions (banned or muted by a moderator), by channel; observable.
    /// A send to a channel that bans or mutes the user throws `OutboxError.restricted` before
    /// anything is queued.
    ///
    /// ```swift
    /// for try await list in replica.observe(replica.restrictions) { composer.disable(in: list.map(\.channelId)) }
    /// ```
    public var restrictions: StoreQuery<[ChannelRestriction]> { queries.restrictions(of: userId) }

    /// The users the current user muted (sorted), as the app sees them; observable.
    public var mutedUsers: StoreQuery<[String]> { queries.mutedUsers(by: userId) }
}
