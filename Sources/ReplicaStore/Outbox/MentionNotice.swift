import Foundation
import ReplicaModel

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
