import Foundation
import ReplicaModel

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
