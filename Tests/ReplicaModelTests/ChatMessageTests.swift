import Foundation
import ReplicaModel
import Testing

@Suite("Chat messages and actions")
struct ChatMessageTests {
    static let createdAt: ISOTimestamp = ISOTimestamp(nanoseconds: 1_652_194_080_000_000_000, fractionDigits: 3)

    @Test("a message without a timetoken is pending; with one it is sent")
    func deliveryState() throws {
        let pending = try ChatMessage<FlatCustom>(
            text: "hi", createdAt: Self.createdAt, userId: "some-user-id", channelId: "some-channel-id")
        #expect(pending.delivery == .pending)
        #expect(pending.timetoken == nil)

        let sent = try ChatMessage<FlatCustom>(
            text: "hi", createdAt: Self.createdAt, timetoken: 15_644_265_196_692_560, userId: "some-user-id",
            channelId: "some-channel-id")
        #expect(sent.delivery == .sent)

        let failed = try ChatMessage<FlatCustom>(
            text: "hi", createdAt: Self.createdAt, userId: "u", channelId: "c", delivery: .failed)
        #expect(failed.delivery == .failed)
    }

    @Test("a message gets a fresh lowercase UUID id by default")
    func defaultId() throws {
        let first = try ChatMessage<FlatCustom>(text: "a", createdAt: Self.createdAt, userId: "u", channelId: "c")
        let second = try ChatMessage<FlatCustom>(text: "a", createdAt: Self.createdAt, userId: "u", channelId: "c")
        #expect(UUID(uuidString: first.id) != nil)
        #expect(first.id == first.id.lowercased())
        #expect(first.id != second.id)
    }

    @Test("payload gives back the published JSON fields and round-trips")
    func payloadRoundTrip() throws {
        let seed = try decodeJSON(MessagePayload<FlatCustom>.self, from: Seed.message.json)
        let message = try ChatMessage(
            payload: seed, channelId: "some-channel-id", userId: "some-user-id", timetoken: 15_644_265_196_692_560)
        #expect(message.id == "6da72b98-e211-4724-aad4-e0fb9f08999f")
        #expect(message.text == seed.text)
        #expect(message.contentType == "none")
        #expect(message.createdAt.description == "2022-05-10T14:48:00.000Z")
        #expect(message.payload == seed)
        // The payload carries no envelope fields.
        #expect(try json(encodeJSON(message.payload)) == json(Seed.message.json))
    }

    @Test("a message built field by field exposes the same payload")
    func payloadFromFields() throws {
        let message = try ChatMessage<FlatCustom>(
            id: "m-1", text: "Look", contentType: "link", content: ["url": "https://example.com", "n": 1],
            custom: ["pinned": true], createdAt: Self.createdAt, userId: "u", channelId: "c")
        let expected = try MessagePayload<FlatCustom>(
            id: "m-1", text: "Look", contentType: "link", content: ["n": 1, "url": "https://example.com"],
            custom: ["pinned": true], createdAt: Self.createdAt)
        #expect(message.payload == expected)
        let decoded = try JSONDecoder().decode(MessagePayload<FlatCustom>.self, from: encodeJSON(message.payload))
        #expect(decoded == expected)
    }

    @Test("a message round-trips through JSON with its timetoken as a string")
    func messageCodable() throws {
        let message = try ChatMessage<FlatCustom>(
            id: "m-1", text: "hi", createdAt: Self.createdAt, timetoken: 9_007_199_254_740_993, userId: "u",
            channelId: "c")
        let data = try encodeJSON(message)
        guard case .object(let members) = try json(data) else {
            Issue.record("a message must encode as an object")
            return
        }
        #expect(members["timetoken"] == "9007199254740993")
        #expect(members["delivery"] == "sent")
        #expect(members["messageActions"] == nil)
        #expect(try JSONDecoder().decode(ChatMessage<FlatCustom>.self, from: data) == message)
    }

    @Test("decoding a message without delivery infers it from the timetoken")
    func inferredDelivery() throws {
        let base = #""id":"m","text":"t","createdAt":"2022-05-10T14:48:00.000Z","userId":"u","channelId":"c""#
        #expect(try decodeJSON(ChatMessage<FlatCustom>.self, from: "{\(base)}").delivery == .pending)
        #expect(try decodeJSON(ChatMessage<FlatCustom>.self, from: #"{\#(base),"timetoken":"1"}"#).delivery == .sent)
    }

    @Test("an empty message id throws emptyIdentifier(message.id)")
    func emptyMessageId() {
        #expect(throws: ModelValidationError.emptyIdentifier(field: "message.id")) {
            try ChatMessage<FlatCustom>(id: "", text: "t", createdAt: Self.createdAt, userId: "u", channelId: "c")
        }
        #expect(throws: ModelValidationError.emptyIdentifier(field: "message.id")) {
            try MessagePayload<FlatCustom>(id: "", text: "t", createdAt: Self.createdAt)
        }
    }

    // MARK: Actions

    @Test("an action needs a type and a value")
    func actionTypeAndValue() {
        #expect(throws: ModelValidationError.missingValue(field: "action.type")) {
            try ChatMessageAction(type: "", value: "👍", userId: "u", channelId: "c", messageTimetoken: 1)
        }
        #expect(throws: ModelValidationError.missingValue(field: "action.value")) {
            try ChatMessageAction(type: "reaction", value: "", userId: "u", channelId: "c", messageTimetoken: 1)
        }
    }

    @Test("an action needs a message timetoken or a message id")
    func actionTarget() throws {
        #expect(throws: ModelValidationError.missingValue(field: "action.messageTimetoken")) {
            try ChatMessageAction(type: "reaction", value: "👍", userId: "u", channelId: "c")
        }
        let byTimetoken = try ChatMessageAction(
            type: "reaction", value: "👍", userId: "u", channelId: "c", messageTimetoken: 15_644_265_196_692_560)
        #expect(byTimetoken.messageId == nil)
        let byId = try ChatMessageAction(type: "reaction", value: "👍", userId: "u", channelId: "c", messageId: "m-1")
        #expect(byId.messageTimetoken == nil)
        #expect(byId.isPending)
    }

    @Test("an action validates its user and channel ids")
    func actionIds() {
        #expect(throws: ModelValidationError.forbiddenCharacter(field: "action.userId", character: "','")) {
            try ChatMessageAction(type: "reaction", value: "👍", userId: "a,b", channelId: "c", messageTimetoken: 1)
        }
        #expect(throws: ModelValidationError.emptyIdentifier(field: "action.channelId")) {
            try ChatMessageAction(type: "reaction", value: "👍", userId: "u", channelId: "", messageTimetoken: 1)
        }
    }

    @Test("an action element decodes uuid as userId and round-trips")
    func actionCodable() throws {
        let text = #"{"type":"reaction","value":"👍","uuid":"some-user-id","channelId":"some-channel-id","messageTimetoken":"15644265196692560","actionTimetoken":"15644265196692561"}"#
        let action = try decodeJSON(ChatMessageAction.self, from: text)
        #expect(action.userId == "some-user-id")
        #expect(action.messageTimetoken == 15_644_265_196_692_560)
        #expect(action.actionTimetoken == 15_644_265_196_692_561)
        #expect(!action.isPending)
        #expect(try json(encodeJSON(action)) == json(text))
    }

    @Test("decoding an action without a message timetoken or id throws")
    func actionDecodingInvalid() {
        #expect(throws: ModelValidationError.missingValue(field: "action.messageTimetoken")) {
            try decodeJSON(ChatMessageAction.self, from: #"{"type":"reaction","value":"x","uuid":"u","channelId":"c"}"#)
        }
        #expect(throws: ModelValidationError.missingValue(field: "action.type")) {
            try decodeJSON(
                ChatMessageAction.self,
                from: #"{"type":"","value":"x","uuid":"u","channelId":"c","messageTimetoken":"1"}"#)
        }
    }

    @Test("message actions survive a message round trip")
    func actionsInMessage() throws {
        var message = try ChatMessage<FlatCustom>(
            id: "m-1", text: "hi", createdAt: Self.createdAt, timetoken: 10, userId: "u", channelId: "c")
        message.messageActions = [
            try ChatMessageAction(type: "reaction", value: "👍", userId: "v", channelId: "c", messageTimetoken: 10)
        ]
        let decoded = try JSONDecoder().decode(ChatMessage<FlatCustom>.self, from: encodeJSON(message))
        #expect(decoded.messageActions == message.messageActions)
        #expect(decoded == message)
    }
}

@Suite("MessagePayload from parsed JSON")
struct MessagePayloadJSONTests {
    // `JSONValue` is `ExpressibleByNilLiteral`: a `nil` written where a `JSONValue` fits is `.null`,
    // not a missing value. A `"content": null` must read as no content, as `Codable` reads it.
    @Test("content null is no content, as JSONDecoder reads it")
    func nullContent() throws {
        let json: JSONValue = ["id": "m1", "text": "t", "createdAt": "2026-01-01T00:00:00Z", "content": .null]
        let payload = try #require(MessagePayload<FlatCustom>(json: json))
        #expect(payload.content == nil)
        #expect(payload == (try JSONDecoder().decode(MessagePayload<FlatCustom>.self, from: json.jsonData())))
    }
}
