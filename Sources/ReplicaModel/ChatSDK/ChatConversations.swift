import Foundation

/// The Chat SDK's conversation shapes (`pubnub/kmp-chat`, `ChatImpl.create…Conversation`,
/// `BaseChannel.invite`, `ChatImpl.forwardMessage`, `BaseMessage.createThread`): channel types,
/// the `invite` event, the events a user's own channel carries, forwarding meta and the thread
/// channel's description. The direct conversation's id is ``ChatSDKFormat/directChannelId(_:_:)``.
///
/// ```swift
/// ChatConversations.inviteEvent(channelType: "direct", channelId: "direct.6290047293405539")
/// // {"channelId":"direct.6290047293405539","channelType":"direct","type":"invite"}
/// ```
public enum ChatConversations {
    /// The `type` of a one-to-one conversation's channel (`ChannelType.DIRECT`).
    public static let directType = "direct"
    /// The `type` of a conversation of invited users (`ChannelType.GROUP`).
    public static let groupType = "group"
    /// The `type` of a conversation anyone may join (`ChannelType.PUBLIC`).
    public static let publicType = "public"
    /// The type an invitation names when the channel has none (`ChannelType.UNKNOWN`).
    public static let unknownType = "unknown"
    /// The `type` of an invitation event.
    public static let inviteType = "invite"
    /// The publish `meta` key naming a forwarded message's author.
    public static let originalPublisherKey = "originalPublisher"
    /// The publish `meta` key naming the channel a forwarded message came from.
    public static let originalChannelKey = "originalChannelId"

    /// The invitation event published on the invitee's channel (named after their id):
    /// `{"type":"invite","channelType":<type>,"channelId":<channel>}`; a channel without a type is
    /// announced as `unknown`.
    public static func inviteEvent(channelType: String?, channelId: String) -> JSONValue {
        [
            "type": .string(inviteType), "channelType": .string(channelType ?? unknownType),
            "channelId": .string(channelId),
        ]
    }

    /// The `meta` of a forwarded message: the original's meta (an object, or none) with
    /// `originalPublisher` and `originalChannelId` set, as `ChatImpl.forwardMessage` writes it.
    public static func forwardMeta(original: JSONValue?, publisher: String, channel: String) -> JSONValue {
        var meta = original?.objectValue ?? [:]
        meta[originalPublisherKey] = .string(publisher)
        meta[originalChannelKey] = .string(channel)
        return .object(meta)
    }

    /// Where a forwarded message came from (`meta.originalPublisher`, `meta.originalChannelId`), or
    /// nil when `meta` does not say.
    public static func forwardedFrom(meta: JSONValue?) -> (publisher: String, channel: String)? {
        guard let object = meta?.objectValue, let publisher = object[originalPublisherKey]?.stringValue,
              let channel = object[originalChannelKey]?.stringValue
        else { return nil }
        return (publisher, channel)
    }

    /// The description the Chat SDK gives a thread channel when its first reply creates it.
    public static func threadDescription(channel: String, root: Timetoken) -> String {
        "Thread on channel \(channel) with message timetoken \(root.rawValue)"
    }
}

/// An event the Chat SDK publishes on a user's own channel (the channel named after the user's
/// id): a mention of the user in a message, or an invitation to a channel. These are
/// notifications, not chat messages: the store keeps them apart (`user_events`) and shows them as
/// the user's mentions feed and invitations.
public struct ChatUserEvent: Sendable, Hashable, Codable {
    /// What the event says.
    public enum Kind: Sendable, Hashable, Codable {
        /// The user was mentioned in the message at `messageTimetoken` of `channel`; `parentChannel`
        /// is the thread's parent when the message is a thread reply.
        case mention(messageTimetoken: Timetoken, channel: String, parentChannel: String?)
        /// The user was invited to `channel`, of type `channelType` (`direct`, `group`, `public`,
        /// `unknown`).
        case invite(channelType: String, channel: String)
    }

    /// The user whose channel carried the event (the mentioned or invited user).
    public var userId: String
    /// The event's own timetoken on that channel.
    public var timetoken: Timetoken
    /// Who published it (the author of the message, the inviter); nil when the server did not say.
    public var publisher: String?
    /// What it says.
    public var kind: Kind

    /// An event.
    public init(userId: String, timetoken: Timetoken, publisher: String?, kind: Kind) {
        self.userId = userId
        self.timetoken = timetoken
        self.publisher = publisher
        self.kind = kind
    }

    /// Reads a message body as a user event: nil when it is not a well-formed `mention` or
    /// `invite`: a mention's `messageTimetoken` is a string of digits or a number (as other SDKs
    /// have written it) that a timetoken can be (at most 2^63 - 1, as the store keeps them); its
    /// `channel`, `parentChannel` and an invitation's `channelId` are ids the store could keep
    /// (`Validation.validateStoredIdentifier(_:field:)`); `channelType` is at most 50 characters.
    public static func kind(ofBody body: JSONValue) -> Kind? {
        guard let object = body.objectValue, let type = object["type"]?.stringValue else { return nil }
        func id(_ key: String) -> String? {
            guard let value = object[key]?.stringValue, (try? Validation.validateStoredIdentifier(value, field: key)) != nil else { return nil }
            return value
        }
        switch type {
        case ChatSDKFormat.mentionType:
            guard let channel = id("channel"), let timetoken = timetoken(object["messageTimetoken"]),
                  timetoken.rawValue <= UInt64(Int64.max)
            else { return nil }
            // A parent channel that is there must be an id the store can keep.
            let parent = id("parentChannel")
            if parent == nil, let raw = object["parentChannel"], raw != .null { return nil }
            return .mention(messageTimetoken: timetoken, channel: channel, parentChannel: parent)
        case ChatConversations.inviteType:
            guard let channel = id("channelId") else { return nil }
            let type = object["channelType"]?.stringValue ?? ChatConversations.unknownType
            guard type.count <= 50 else { return nil }
            return .invite(channelType: type, channel: channel)
        default:
            return nil
        }
    }

    private static func timetoken(_ value: JSONValue?) -> Timetoken? {
        switch value {
        case .string(let text)?: try? Timetoken(parsing: text)
        case .int(let number)?: UInt64(exactly: number).map(Timetoken.init(rawValue:))
        default: nil
        }
    }

    /// What the event names, in one line: the message (`<channel>/<timetoken>`) of a mention,
    /// the channel of an invitation.
    public var subject: String {
        switch kind {
        case .mention(let timetoken, let channel, _): "\(channel)/\(timetoken.rawValue)"
        case .invite(_, let channel): channel
        }
    }

    /// The body as the Chat SDK publishes it.
    public var body: JSONValue {
        switch kind {
        case .mention(let timetoken, let channel, let parent):
            ChatSDKFormat.mentionEvent(messageTimetoken: timetoken, channel: channel, parentChannel: parent)
        case .invite(let type, let channel):
            ChatConversations.inviteEvent(channelType: type, channelId: channel)
        }
    }
}
