import Foundation
import ReplicaModel

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
