import Foundation
import ReplicaModel

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

extension PubNubClient {
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
            body: try Self.json(Body(type: type, value: value)), operation: "addMessageAction")
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
        try decode(ActionResponse.self, from: response, operation: operation).data
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
