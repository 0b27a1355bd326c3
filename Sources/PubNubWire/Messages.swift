import Foundation
import ReplicaModel

/// A message to publish.
public struct PublishRequest: Sendable, Hashable {
    /// How the message travels.
    public enum Method: Sendable, Hashable {
        /// JSON URL-encoded into the path (the classic form; limited by URL length).
        case get
        /// JSON in the body.
        case post
        /// JSON in a gzip-compressed body (`Content-Encoding: gzip`), for large messages.
        case postGzip
    }

    /// The channel.
    public var channel: String
    /// The message, any JSON.
    public var message: JSONValue
    /// GET, POST or gzip POST; default POST.
    public var method: Method = .post
    /// Store in history (`store=1/0`); nil leaves the keyset default.
    public var store: Bool?
    /// Per-message storage TTL in hours.
    public var ttl: Int?
    /// Publish metadata (a JSON object): the outbox puts its op id here.
    public var meta: JSONValue?
    /// `custom_message_type` (3-50 chars of `[A-Za-z0-9-_]`).
    public var customMessageType: String?

    /// A publish of `message` to `channel`.
    public init(channel: String, message: JSONValue, method: Method = .post, store: Bool? = nil, ttl: Int? = nil,
                meta: JSONValue? = nil, customMessageType: String? = nil) {
        self.channel = channel
        self.message = message
        self.method = method
        self.store = store
        self.ttl = ttl
        self.meta = meta
        self.customMessageType = customMessageType
    }
}

struct PublishResponse: Decodable {
    let timetoken: Timetoken

    init(from decoder: any Decoder) throws {
        var c = try decoder.unkeyedContainer()
        let code = try c.decode(Int.self)
        let text = try c.decode(String.self)
        guard code == 1 else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "publish answered [\(code),\"\(text)\"]")
        }
        timetoken = try c.decode(Timetoken.self)
    }
}

extension PubNubClient {
    /// The request ``publish(_:)`` sends, for inspection (dry runs) and tests.
    public func publishRequest(_ publish: PublishRequest) throws(WireError) -> WireRequest {
        guard !configuration.publishKey.isEmpty else { throw .invalidConfiguration("publishKey is empty") }
        var message = publish.message
        if let crypto {
            // Only the payload: meta, actions and App Context travel in the clear, as in the SDKs.
            do {
                message = try crypto.encrypt(message: message)
            } catch {
                throw .invalidArgument("publish: \(error)")
            }
        }
        let body = try Self.json(message)
        var query = commonQuery()
        if let store = publish.store { query.append(QueryItem("store", store ? "1" : "0")) }
        if let ttl = publish.ttl { query.append(QueryItem("ttl", String(ttl))) }
        if let meta = publish.meta {
            query.append(QueryItem("meta", String(decoding: try Self.json(meta), as: UTF8.self)))
        }
        if let type = publish.customMessageType { query.append(QueryItem("custom_message_type", type)) }
        var path = ["publish", configuration.publishKey, configuration.subscribeKey, "0", publish.channel, "0"]
        switch publish.method {
        case .get:
            path.append(String(decoding: body, as: UTF8.self))
            return WireRequest(method: .get, pathSegments: path, query: query, operation: "publish")
        case .post:
            return WireRequest(
                method: .post, pathSegments: path, query: query,
                headers: ["Content-Type": "application/json; charset=UTF-8"], body: body, operation: "publish")
        case .postGzip:
            return WireRequest(
                method: .post, pathSegments: path, query: query,
                headers: ["Content-Type": "application/json; charset=UTF-8", "Content-Encoding": "gzip"],
                body: try Gzip.compress(body), operation: "publish")
        }
    }

    /// Publishes a message and returns its server timetoken.
    public func publish(_ publish: PublishRequest) async throws(WireError) -> Timetoken {
        try Self.publishTimetoken(from: try await perform(try publishRequest(publish)))
    }

    /// Decodes a publish answer (`[1,"Sent","<timetoken>"]`) into its timetoken.
    public static func publishTimetoken(from response: WireResponse) throws(WireError) -> Timetoken {
        try decode(PublishResponse.self, from: response, operation: "publish").timetoken
    }

    /// `GET /time/0`: the server's current timetoken.
    public func time() async throws(WireError) -> Timetoken {
        let request = WireRequest(method: .get, pathSegments: ["time", "0"], query: commonQuery(auth: false), operation: "time")
        let values = try await perform(request, as: [Timetoken].self)
        guard let first = values.first else {
            throw .decoding(operation: "time", status: 200, message: "empty array")
        }
        return first
    }
}

// MARK: Message actions

/// A message action as the actions API returns it.
public struct WireMessageAction: Codable, Sendable, Hashable {
    /// Action type.
    public var type: String
    /// Action value.
    public var value: String
    /// Who added it.
    public var uuid: String
    /// When it was added.
    public var actionTimetoken: Timetoken
    /// The message it belongs to.
    public var messageTimetoken: Timetoken

    /// An action as the server describes it.
    public init(type: String, value: String, uuid: String, actionTimetoken: Timetoken, messageTimetoken: Timetoken) {
        self.type = type
        self.value = value
        self.uuid = uuid
        self.actionTimetoken = actionTimetoken
        self.messageTimetoken = messageTimetoken
    }

    /// This action as a model value on `channel`.
    public func model(channel: String) throws(ModelValidationError) -> ChatMessageAction {
        try ChatMessageAction(
            type: type, value: value, userId: uuid, channelId: channel, messageTimetoken: messageTimetoken,
            actionTimetoken: actionTimetoken)
    }
}

/// A page of message actions, oldest first.
public struct MessageActionsPage: Decodable, Sendable, Hashable {
    /// The actions.
    public var data: [WireMessageAction]
    /// Present when the server truncated the result: where the next page is.
    public var more: More?

    /// The continuation.
    public struct More: Decodable, Sendable, Hashable {
        /// Next `start`.
        public var start: Timetoken?
        /// Next `end`.
        public var end: Timetoken?
        /// Next `limit`.
        public var limit: Int?
    }
}

struct ActionResponse: Decodable {
    let data: WireMessageAction
}

/// Message actions through a client (`client.messageActions`): adding, removing and listing the
/// actions (reactions, edits, deletions) on a channel's messages.
///
/// ```swift
/// let page = try await client.messageActions.listMessageActions(channel: "general")
/// ```
public struct PubNubMessageActions: PubNubService {
    /// The client whose keys, origin, transport, token and crypto module are used.
    public let client: PubNubClient

    /// MessageActions through `client`.
    public init(client: PubNubClient) { self.client = client }

    /// The request ``addMessageAction(channel:messageTimetoken:type:value:)`` sends.
    public func addMessageActionRequest(
        channel: String, messageTimetoken: Timetoken, type: String, value: String
    ) throws(WireError) -> WireRequest {
        guard !type.isEmpty, !value.isEmpty else { throw .invalidArgument("action type and value must not be empty") }
        struct Body: Encodable { let type: String; let value: String }
        return WireRequest(
            method: .post,
            pathSegments: ["v1", "message-actions", configuration.subscribeKey, "channel", channel, "message", messageTimetoken.description],
            query: commonQuery(), headers: ["Content-Type": "application/json; charset=UTF-8"],
            body: try PubNubClient.json(Body(type: type, value: value)), operation: "addMessageAction")
    }

    /// Adds an action to a message. A 409 (`conflict`) means this user already added it.
    public func addMessageAction(
        channel: String, messageTimetoken: Timetoken, type: String, value: String
    ) async throws(WireError) -> WireMessageAction {
        let request = try addMessageActionRequest(channel: channel, messageTimetoken: messageTimetoken, type: type, value: value)
        return try Self.messageAction(from: try await perform(request), operation: request.operation)
    }

    /// Decodes the action an add answered with.
    public static func messageAction(from response: WireResponse, operation: String = "addMessageAction") throws(WireError)
        -> WireMessageAction
    {
        try PubNubClient.decode(ActionResponse.self, from: response, operation: operation).data
    }

    /// The request ``removeMessageAction(channel:messageTimetoken:actionTimetoken:)`` sends.
    public func removeMessageActionRequest(channel: String, messageTimetoken: Timetoken, actionTimetoken: Timetoken) -> WireRequest {
        WireRequest(
            method: .delete,
            pathSegments: [
                "v1", "message-actions", configuration.subscribeKey, "channel", channel, "message",
                messageTimetoken.description, "action", actionTimetoken.description,
            ],
            query: commonQuery(), operation: "removeMessageAction")
    }

    /// Removes this user's action. A 400 "No matching message actions to delete" means it is gone.
    public func removeMessageAction(channel: String, messageTimetoken: Timetoken, actionTimetoken: Timetoken) async throws(WireError) {
        _ = try await perform(
            removeMessageActionRequest(channel: channel, messageTimetoken: messageTimetoken, actionTimetoken: actionTimetoken))
    }

    /// Lists a channel's actions with `actionTimetoken < start` and `>= end`, at most `limit` (≤ 100).
    public func listMessageActions(
        channel: String, start: Timetoken? = nil, end: Timetoken? = nil, limit: Int? = nil
    ) async throws(WireError) -> MessageActionsPage {
        var items = commonQuery()
        if let start { items.append(QueryItem("start", start.description)) }
        if let end { items.append(QueryItem("end", end.description)) }
        if let limit {
            guard (1...100).contains(limit) else { throw .invalidArgument("limit must be 1-100") }
            items.append(QueryItem("limit", String(limit)))
        }
        let request = WireRequest(
            method: .get, pathSegments: ["v1", "message-actions", configuration.subscribeKey, "channel", channel],
            query: items, operation: "listMessageActions")
        return try await perform(request, as: MessageActionsPage.self)
    }
}

// The message action pager (the engine and the stop rule are in Pagers.swift).
extension PubNubMessageActions {
    /// Lists message actions with a ``MessageActionsQuery``.
    public func listMessageActions(_ query: MessageActionsQuery) async throws(WireError) -> MessageActionsPage {
        try await listMessageActions(channel: query.channel, start: query.start, end: query.end, limit: query.limit)
    }

    /// The message actions of `channel` back from `start` (exclusive; nil: now) to `end`
    /// (inclusive); see ``MessageActionPages``. No request is retried.
    public func messageActionPages(
        channel: String, start: Timetoken? = nil, end: Timetoken? = nil, limit: Int = 100
    ) -> MessageActionPages {
        MessageActionPages(channel: channel, start: start, end: end, limit: limit) { query in
            try await self.listMessageActions(query)
        }
    }
}
