import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

// The Chat SDK's conversations through the façade (`docs/conversations.md`): each write works
// offline and is sent once; the feeds are store queries an app observes.
extension Replica {
    /// Opens the direct conversation with `user`: the Chat SDK's `direct.<hash>` channel, the
    /// current user's membership and `user`'s invitation. See `Outbox.openDirectConversation(with:name:)`.
    ///
    /// ```swift
    /// let chat = try await replica.openDirectConversation(with: "bob")
    /// try await replica.send(text: "Hi Bob", to: chat.channelId)
    /// ```
    @discardableResult
    public func openDirectConversation(with user: String, name: String? = nil) async throws -> ConversationReceipt<Custom> {
        try await write { try await $0.conversations.openDirectConversation(with: user, name: name) }
    }

    /// Creates a group conversation and invites `users` (`createGroupConversation`).
    @discardableResult
    public func createGroupConversation(with users: [String], channelId: String? = nil, name: String? = nil) async throws
        -> ConversationReceipt<Custom>
    {
        try await write { try await $0.conversations.createGroupConversation(with: users, channelId: channelId, name: name) }
    }

    /// Creates a public conversation anyone may join (`createPublicConversation`).
    @discardableResult
    public func createPublicConversation(channelId: String? = nil, name: String? = nil) async throws -> ConversationReceipt<Custom> {
        try await write { try await $0.conversations.createPublicConversation(channelId: channelId, name: name) }
    }

    /// Invites `user` to `channel` (`Channel.invite`): a pending membership and an `invite` event.
    @discardableResult
    public func invite(_ user: String, to channel: String) async throws -> OutboxReceipt<ChatMember<Custom>> {
        try await write { try await $0.conversations.invite(user, to: channel) }
    }

    /// Accepts an invitation: joins the channel, which replaces `pending`.
    @discardableResult
    public func acceptInvitation(to channel: String) async throws -> OutboxReceipt<ChatMember<Custom>> {
        try await write { try await $0.conversations.acceptInvitation(to: channel) }
    }

    /// Forwards a sent message to `channel` (`forwardMessage`).
    @discardableResult
    public func forward(message messageId: String, to channel: String) async throws -> OutboxReceipt<ChatMessage<Custom.Message>> {
        try await write { try await $0.conversations.forward(message: messageId, to: channel) }
    }

    /// Marks every channel of the current user read up to its newest stored message
    /// (`markAllMessagesAsRead`); see `Outbox.markAllRead()` for how it is sent.
    @discardableResult
    public func markAllRead() async throws -> [String: OutboxReceipt<ChatMember<Custom>>] {
        try await write { try await $0.memberships.markAllRead() }
    }

    /// Removes the thread of a message (`removeThreadChannel`); `soft` keeps its channel marked `deleted`.
    @discardableResult
    public func removeThread(ofMessage messageId: String, soft: Bool = false) async throws -> [String] {
        try await write { try await $0.conversations.removeThread(ofMessage: messageId, soft: soft) }
    }

    /// Restores a removed thread (`restoreThreadChannel`).
    @discardableResult
    public func restoreThread(ofMessage messageId: String) async throws -> [String] {
        try await write { try await $0.conversations.restoreThread(ofMessage: messageId) }
    }

    /// Registers this device for the pushes of `channels` (`registerPushChannels`); messages carry
    /// push keys when `ReplicaConfiguration.outbox.push` is set.
    ///
    /// ```swift
    /// let device = try PushDevice.apns2(deviceToken: token, topic: Bundle.main.bundleIdentifier!)
    /// try await replica.registerPush(device, channels: memberships.map(\.channelId))
    /// ```
    @discardableResult
    public func registerPush(_ device: PushDevice, channels: [String]) async throws -> OutboxReceipt<PushRegistration> {
        try await write { try await $0.push.registerPush(device, channels: channels) }
    }

    /// Stops the pushes of `channels` to `device`.
    @discardableResult
    public func unregisterPush(_ device: PushDevice, channels: [String]) async throws -> OutboxReceipt<PushRegistration> {
        try await write { try await $0.push.unregisterPush(device, channels: channels) }
    }

    /// Removes `device` from every channel's pushes (sign-out).
    @discardableResult
    public func removePushDevice(_ device: PushDevice) async throws -> OutboxReceipt<PushRegistration> {
        try await write { try await $0.push.removePushDevice(device) }
    }

    /// The channels PubNub sends pushes of to `device` now, read from the server (the Chat SDK's
    /// `getPushChannels`): to check what ``registerPush(_:channels:)`` left registered.
    ///
    /// ```swift
    /// let channels = try await replica.pushChannels(of: device)
    /// ```
    public func pushChannels(of device: PushDevice) async throws -> [String] {
        try await client.push.channels(device: device)
    }

    /// The current user's open invitations, newest first; observable.
    public var invitations: StoreQuery<[ChatInvitation<Custom>]> { queries.invitations(for: userId) }

    /// The current user's mentions feed, newest first; observable.
    ///
    /// ```swift
    /// for try await feed in replica.observe(replica.mentions) { badge = feed.count }
    /// ```
    public var mentions: StoreQuery<[MentionFeedItem<Custom.Message>]> { queries.mentions(of: userId) }
}

// The Chat SDK's moderation through the façade (`docs/chat.md`, "Moderation"): what a user does
// (report, mute, unmute) and what a moderator decided about them (restrictions, read-only here:
// setting them needs the keyset's secret key, which an app never holds).
extension Replica {
    /// Reports a message to the channel's moderators (the Chat SDK's `Message.report`): works
    /// offline, sent exactly once. See `ModerationWrites.report(message:reason:)`.
    ///
    /// ```swift
    /// try await replica.report(message: message.id, reason: "spam")
    /// ```
    @discardableResult
    public func report(message messageId: String, reason: String) async throws -> OutboxReceipt<JSONValue> {
        try await write { try await $0.moderation.report(message: messageId, reason: reason) }
    }

    /// Mutes users: their messages leave the default message queries at once, and the mute list
    /// (`PN_PRV.<userId>.mute1`) is written when online, for the user's other devices.
    @discardableResult
    public func mute(users: [String]) async throws -> OutboxReceipt<[String]> {
        try await write { try await $0.moderation.mute(users: users) }
    }

    /// Unmutes users: their messages show again at once.
    @discardableResult
    public func unmute(users: [String]) async throws -> OutboxReceipt<[String]> {
        try await write { try await $0.moderation.unmute(users: users) }
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
