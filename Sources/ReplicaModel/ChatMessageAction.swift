import Foundation

/// A message action (a reaction, receipt or edit) on a message.
///
/// JSON follows PubNub's action element: `{type, value, uuid, messageTimetoken, actionTimetoken}`
/// plus the local `channelId` and `messageId`.
public struct ChatMessageAction: Codable, Hashable, Sendable {
    /// Action type, e.g. `"reaction"`.
    public var type: String
    /// Action value, e.g. an emoji.
    public var value: String
    /// Who added the action (`uuid` on the wire).
    public var userId: String
    /// The channel of the message.
    public var channelId: String
    /// The timetoken of the message; nil while the message itself is still pending.
    public var messageTimetoken: Timetoken?
    /// The action's own timetoken; nil until PubNub assigns one.
    public var actionTimetoken: Timetoken?
    /// The local id of the message, when known (always set for actions on pending messages).
    public var messageId: String?

    /// An action. Ids are validated; `type` and `value` must not be empty.
    public init(
        type: String, value: String, userId: String, channelId: String, messageTimetoken: Timetoken? = nil,
        actionTimetoken: Timetoken? = nil, messageId: String? = nil
    ) throws(ModelValidationError) {
        if type.isEmpty { throw .missingValue(field: "action.type") }
        if value.isEmpty { throw .missingValue(field: "action.value") }
        try Validation.validateStoredIdentifier(userId, field: "action.userId")
        try Validation.validateStoredIdentifier(channelId, field: "action.channelId")
        if messageTimetoken == nil, messageId == nil { throw .missingValue(field: "action.messageTimetoken") }
        self.type = type
        self.value = value
        self.userId = userId
        self.channelId = channelId
        self.messageTimetoken = messageTimetoken
        self.actionTimetoken = actionTimetoken
        self.messageId = messageId
    }

    /// Whether PubNub has acknowledged the action.
    public var isPending: Bool { actionTimetoken == nil }

    enum CodingKeys: String, CodingKey {
        case type, value, uuid, channelId, messageTimetoken, actionTimetoken, messageId
    }

    /// Decodes an action element and validates it.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(
            type: c.decode(String.self, forKey: .type),
            value: c.decode(String.self, forKey: .value),
            userId: c.decode(String.self, forKey: .uuid),
            channelId: c.decode(String.self, forKey: .channelId),
            messageTimetoken: c.decodeIfPresent(Timetoken.self, forKey: .messageTimetoken),
            actionTimetoken: c.decodeIfPresent(Timetoken.self, forKey: .actionTimetoken),
            messageId: c.decodeIfPresent(String.self, forKey: .messageId))
    }

    /// Encodes the action.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(type, forKey: .type)
        try c.encode(value, forKey: .value)
        try c.encode(userId, forKey: .uuid)
        try c.encode(channelId, forKey: .channelId)
        try c.encodeIfPresent(messageTimetoken, forKey: .messageTimetoken)
        try c.encodeIfPresent(actionTimetoken, forKey: .actionTimetoken)
        try c.encodeIfPresent(messageId, forKey: .messageId)
    }
}

/// Reactions of one message grouped by (type, value), as a reaction bar shows them.
public struct ReactionSummary: Hashable, Sendable {
    /// Action type.
    public var type: String
    /// Action value (the emoji).
    public var value: String
    /// How many users reacted.
    public var count: Int
    /// The users who reacted, sorted.
    public var userIds: [String]
    /// Whether the current user is among them.
    public var reactedByCurrentUser: Bool

    /// A summary row.
    public init(type: String, value: String, count: Int, userIds: [String], reactedByCurrentUser: Bool) {
        self.type = type
        self.value = value
        self.count = count
        self.userIds = userIds
        self.reactedByCurrentUser = reactedByCurrentUser
    }
}
