import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

/// The Chat SDK's conversations: direct, group and public channels, invitations and mentions.
///
/// Each write works offline and is sent once; the feeds are store queries an app observes (`docs/conversations.md`).
///
/// ```swift
/// let chat = try await replica.conversations.openDirect(with: "bob")
/// try await replica.messages.send(text: "Hi Bob", to: chat.channelId)
/// ```
///
/// Reached through ``Replica/conversations``: a value made per access, holding only the replica.
public struct ReplicaConversations<Custom: ChatCustomData>: Sendable {
    /// The replica these calls go through.
    let replica: Replica<Custom>

    /// Opens the direct conversation with `user`: the Chat SDK's `direct.<hash>` channel, the
    /// current user's membership and `user`'s invitation. See `Outbox.openDirectConversation(with:name:)`.
    ///
    /// ```swift
    /// let chat = try await replica.openDirectConversation(with: "bob")
    /// try await replica.send(text: "Hi Bob", to: chat.channelId)
    /// ```
    @discardableResult
    public func openDirect(with user: String, name: String? = nil) async throws -> ConversationReceipt<Custom> {
        try await replica.write { try await $0.conversations.openDirectConversation(with: user, name: name) }
    }

    /// Creates a group conversation and invites `users` (`createGroupConversation`).
    @discardableResult
    public func createGroup(with users: [String], channelId: String? = nil, name: String? = nil) async throws
        -> ConversationReceipt<Custom>
    {
        try await replica.write { try await $0.conversations.createGroupConversation(with: users, channelId: channelId, name: name) }
    }

    /// Creates a public conversation anyone may join (`createPublicConversation`).
    @discardableResult
    public func createPublic(channelId: String? = nil, name: String? = nil) async throws -> ConversationReceipt<Custom> {
        try await replica.write { try await $0.conversations.createPublicConversation(channelId: channelId, name: name) }
    }

    /// Invites `user` to `channel` (`Channel.invite`): a pending membership and an `invite` event.
    @discardableResult
    public func invite(_ user: String, to channel: String) async throws -> OutboxReceipt<ChatMember<Custom>> {
        try await replica.write { try await $0.conversations.invite(user, to: channel) }
    }

    /// Accepts an invitation: joins the channel, which replaces `pending`.
    @discardableResult
    public func acceptInvitation(to channel: String) async throws -> OutboxReceipt<ChatMember<Custom>> {
        try await replica.write { try await $0.conversations.acceptInvitation(to: channel) }
    }

    /// The current user's open invitations, newest first; observable.
    public var invitations: StoreQuery<[ChatInvitation<Custom>]> { replica.queries.invitations(for: replica.userId) }

    /// The current user's mentions feed, newest first; observable.
    ///
    /// ```swift
    /// for try await feed in replica.observe(replica.mentions) { badge = feed.count }
    /// ```
    public var mentions: StoreQuery<[MentionFeedItem<Custom.Message>]> { replica.queries.mentions(of: replica.userId) }
}

extension Replica {
    /// The Chat SDK's conversations: direct, group and public channels, invitations and mentions.
    public nonisolated var conversations: ReplicaConversations<Custom> { ReplicaConversations(replica: self) }
}
