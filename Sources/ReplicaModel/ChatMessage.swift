import Foundation

/// Where a message is on its way to PubNub.
public enum DeliveryState: String, Codable, Hashable, Sendable, CaseIterable {
    /// Written locally, not yet acknowledged by PubNub (no timetoken yet).
    case pending
    /// PubNub assigned a timetoken.
    case sent
    /// Sending failed for good (a dead letter); the app decides what to do.
    case failed
}

/// The JSON a chat message publishes: the seed's unified message payload
/// `{id, text, contentType, content, custom, createdAt}`.
public struct MessagePayload<Custom: CustomData>: Codable, Hashable, Sendable {
    /// Client-generated UUID v4 string; identifies the message across retries and devices.
    public var id: String
    /// The message text.
    public var text: String
    /// Kind of rich content ("none", "link", ...).
    public var contentType: String?
    /// Rich content, any JSON.
    public var content: JSONValue?
    /// The app's custom data.
    public var custom: Custom?
    /// When the author created the message.
    public var createdAt: ISOTimestamp

    /// A payload; `id` must be non-empty and `text` at most 32 KiB once encoded.
    public init(
        id: String, text: String, contentType: String? = nil, content: JSONValue? = nil, custom: Custom? = nil,
        createdAt: ISOTimestamp
    ) throws(ModelValidationError) {
        try Validation.validateMessageId(id)
        try Validation.validateMessageText(text, field: "message.text")
        self.id = id
        self.text = text
        self.contentType = contentType
        self.content = content
        self.custom = custom
        self.createdAt = createdAt
    }

    enum CodingKeys: String, CodingKey {
        case id, text, contentType, content, custom, createdAt
    }

    /// A payload read from already-parsed JSON (a history page's message), without a second
    /// round through a decoder for anything but `custom`; nil when `json` is not in this format.
    public init?(json: JSONValue) {
        guard case .object(let body) = json, case .string(let id)? = body["id"], case .string(let text)? = body["text"],
              case .string(let created)? = body["createdAt"], let createdAt = try? ISOTimestamp(parsing: created)
        else { return nil }
        var contentType: String?
        switch body["contentType"] {
        case .none, .null?: contentType = nil
        case .string(let value)?: contentType = value
        default: return nil
        }
        var custom: Custom?
        if let value = body["custom"], value != .null {
            guard let decoded = try? Custom.fromJSON(value) else { return nil }
            custom = decoded
        }
        let content = body["content"].flatMap { $0 == .null ? JSONValue?.none : $0 }
        guard let payload = try? MessagePayload(
            id: id, text: text, contentType: contentType, content: content, custom: custom, createdAt: createdAt)
        else { return nil }
        self = payload
    }

    /// Decodes and validates a payload.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(
            id: c.decode(String.self, forKey: .id),
            text: c.decode(String.self, forKey: .text),
            contentType: c.decodeIfPresent(String.self, forKey: .contentType),
            content: c.decodeIfPresent(JSONValue.self, forKey: .content),
            custom: c.decodeIfPresent(Custom.self, forKey: .custom),
            createdAt: c.decode(ISOTimestamp.self, forKey: .createdAt))
    }

    /// The payload as JSON, built directly (what ``encode(to:)`` writes, without an encoder):
    /// nil fields left out, `createdAt` as its text.
    public func jsonValue() throws -> JSONValue {
        var object: [String: JSONValue] = ["id": .string(id), "text": .string(text), "createdAt": .string(createdAt.description)]
        if let contentType { object["contentType"] = .string(contentType) }
        if let content { object["content"] = content }
        if let custom { object["custom"] = try JSONValue(encoding: custom) }
        return .object(object)
    }

    /// Encodes the payload, leaving out nil fields.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(text, forKey: .text)
        try c.encodeIfPresent(contentType, forKey: .contentType)
        try c.encodeIfPresent(content, forKey: .content)
        try c.encodeIfPresent(custom, forKey: .custom)
        try c.encode(createdAt, forKey: .createdAt)
    }
}

/// A chat message: its payload plus where and when it was (or will be) published.
public struct ChatMessage<Custom: CustomData>: Codable, Hashable, Sendable, Identifiable {
    /// Client-generated UUID v4 string.
    public var id: String
    /// The message text.
    public var text: String
    /// Kind of rich content.
    public var contentType: String?
    /// Rich content, any JSON.
    public var content: JSONValue?
    /// The app's custom data.
    public var custom: Custom?
    /// When the author created the message.
    public var createdAt: ISOTimestamp
    /// The server's publish timetoken; nil until PubNub assigns one.
    public var timetoken: Timetoken?
    /// The publisher's user id.
    public var userId: String
    /// The channel the message belongs to.
    public var channelId: String
    /// Where the message is on its way to PubNub.
    public var delivery: DeliveryState
    /// Actions (reactions, ...) that came with the message, e.g. from history-with-actions.
    public var messageActions: [ChatMessageAction] = []
    /// The text of the newest edit (the PubNub Chat SDK's `edited` message action with the
    /// largest action timetoken, whoever added it; an edit still waiting in the outbox counts as
    /// the newest), or nil when the message was never edited. The store fills it in.
    public var editedText: String?
    /// Whether the message is soft-deleted (it has a Chat SDK `deleted` action). The store fills
    /// it in; default message queries leave such messages out.
    public var isDeleted = false
    /// Whether the current user muted the message's author (their mute list, the Chat SDK's
    /// `PN_PRV.<user>.mute1`). The store fills it in; default message queries leave such messages
    /// out, `includeMuted: true` lists them with this set.
    public var isFromMutedUser = false
    /// Whether the message has a thread of replies (the Chat SDK's `hasThread`: a `threadRootId`
    /// action with a value, whoever added it). The store fills it in; the replies are the
    /// messages of `ChatSDKFormat.threadChannel(of:root:)`.
    public var hasThread = false
    /// The publish metadata the message carried (any JSON; the Chat SDK's quotes and the
    /// outbox's `pnr_op` live here), as the server gave it; nil when it had none.
    public var meta: JSONValue?
    /// The message's `custom_message_type` (3-50 characters of `A-Z a-z 0-9 - _`; the Chat SDK's
    /// file messages and moderation events use one), as the server gave it; nil when it had none.
    public var customMessageType: String?

    /// The text to show: the newest edit's, else the published one.
    public var shownText: String { editedText ?? text }
    /// The files attached (``ChatFile``): a file message's file, a Chat SDK text message's
    /// `files`, or, while this device still uploads them, the files it sends (no id yet).
    public var files: [ChatFile] = []

    /// A message. Ids are validated; `delivery` defaults to `.sent` when a timetoken is given and
    /// `.pending` otherwise.
    public init(
        id: String = RandomIdentifier.uuidV4(), text: String, contentType: String? = nil,
        content: JSONValue? = nil, custom: Custom? = nil, createdAt: ISOTimestamp, timetoken: Timetoken? = nil,
        userId: String, channelId: String, delivery: DeliveryState? = nil
    ) throws(ModelValidationError) {
        let payload = try MessagePayload(
            id: id, text: text, contentType: contentType, content: content, custom: custom, createdAt: createdAt)
        try self.init(payload: payload, channelId: channelId, userId: userId, timetoken: timetoken, delivery: delivery)
    }

    /// A message from its published payload and envelope.
    public init(
        payload: MessagePayload<Custom>, channelId: String, userId: String, timetoken: Timetoken?,
        delivery: DeliveryState? = nil
    ) throws(ModelValidationError) {
        try Validation.validateStoredIdentifier(channelId, field: "message.channelId")
        try Validation.validateStoredIdentifier(userId, field: "message.userId")
        self.id = payload.id
        self.text = payload.text
        self.contentType = payload.contentType
        self.content = payload.content
        self.custom = payload.custom
        self.createdAt = payload.createdAt
        self.timetoken = timetoken
        self.userId = userId
        self.channelId = channelId
        self.delivery = delivery ?? (timetoken == nil ? .pending : .sent)
    }

    enum CodingKeys: String, CodingKey {
        case id, text, contentType, content, custom, createdAt, timetoken, userId, channelId, delivery, messageActions
        case editedText, isDeleted, isFromMutedUser, hasThread, meta, customMessageType, files
    }

    /// Decodes a message (payload fields plus envelope); missing `messageActions` means none.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let payload = try MessagePayload<Custom>(
            id: c.decode(String.self, forKey: .id),
            text: c.decode(String.self, forKey: .text),
            contentType: c.decodeIfPresent(String.self, forKey: .contentType),
            content: c.decodeIfPresent(JSONValue.self, forKey: .content),
            custom: c.decodeIfPresent(Custom.self, forKey: .custom),
            createdAt: c.decode(ISOTimestamp.self, forKey: .createdAt))
        try self.init(
            payload: payload,
            channelId: c.decode(String.self, forKey: .channelId),
            userId: c.decode(String.self, forKey: .userId),
            timetoken: c.decodeIfPresent(Timetoken.self, forKey: .timetoken),
            delivery: c.decodeIfPresent(DeliveryState.self, forKey: .delivery))
        messageActions = try c.decodeIfPresent([ChatMessageAction].self, forKey: .messageActions) ?? []
        editedText = try c.decodeIfPresent(String.self, forKey: .editedText)
        isDeleted = try c.decodeIfPresent(Bool.self, forKey: .isDeleted) ?? false
        isFromMutedUser = try c.decodeIfPresent(Bool.self, forKey: .isFromMutedUser) ?? false
        hasThread = try c.decodeIfPresent(Bool.self, forKey: .hasThread) ?? false
        meta = try c.decodeIfPresent(JSONValue.self, forKey: .meta)
        customMessageType = try c.decodeIfPresent(String.self, forKey: .customMessageType)
        files = try c.decodeIfPresent([ChatFile].self, forKey: .files) ?? []
    }

    /// Encodes the message, leaving out nil fields and an empty action list.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(text, forKey: .text)
        try c.encodeIfPresent(contentType, forKey: .contentType)
        try c.encodeIfPresent(content, forKey: .content)
        try c.encodeIfPresent(custom, forKey: .custom)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encodeIfPresent(timetoken, forKey: .timetoken)
        try c.encode(userId, forKey: .userId)
        try c.encode(channelId, forKey: .channelId)
        try c.encode(delivery, forKey: .delivery)
        if !messageActions.isEmpty { try c.encode(messageActions, forKey: .messageActions) }
        try c.encodeIfPresent(editedText, forKey: .editedText)
        if isDeleted { try c.encode(isDeleted, forKey: .isDeleted) }
        if isFromMutedUser { try c.encode(isFromMutedUser, forKey: .isFromMutedUser) }
        if hasThread { try c.encode(hasThread, forKey: .hasThread) }
        try c.encodeIfPresent(meta, forKey: .meta)
        try c.encodeIfPresent(customMessageType, forKey: .customMessageType)
        if !files.isEmpty { try c.encode(files, forKey: .files) }
    }

    /// The shown text (``shownText``: the newest edit's, as the Chat SDK parses it) as elements:
    /// plain text, and the mentions, channel references and links the PubNub Chat SDK writes into
    /// it as `[text](pn-user://id)`, `[text](pn-channel://id)` and `[text](url)`
    /// (``MessageDraft/elements(parsing:)``).
    public var elements: [MessageElement] { MessageDraft.elements(parsing: shownText) }

    /// The users the text mentions, in order, each once.
    public var mentionedUserIds: [String] {
        var seen = Set<String>()
        return elements.compactMap { element in
            guard case .link(_, .user(let id)) = element, seen.insert(id).inserted else { return nil }
            return id
        }
    }

    /// The JSON payload this message publishes.
    public var payload: MessagePayload<Custom> {
        // The stored fields were validated when the message was made.
        MessagePayload(unchecked: id, text, contentType, content, custom, createdAt)
    }
}

extension MessagePayload {
    init(
        unchecked id: String, _ text: String, _ contentType: String?, _ content: JSONValue?, _ custom: Custom?,
        _ createdAt: ISOTimestamp
    ) {
        self.id = id
        self.text = text
        self.contentType = contentType
        self.content = content
        self.custom = custom
        self.createdAt = createdAt
    }
}
