import Foundation
import ReplicaModel
import Testing

/// The seed documents, verbatim.
enum Seed: String, CaseIterable, Sendable {
    case janeDoe
    case offTopic
    case directChannel
    case message
    case minimalMessage
    case membership

    var json: String {
        switch self {
        case .janeDoe:
            #"{"id":"some-user-id","name":"Jane Doe","email":"jane.doe@example.com","externalId":"some-external-user-id","profileUrl":"https://randomuser.me/api/portraits/men/1.jpg","custom":{"description":"Office Assistant"},"eTag":"AYGyoY3gre71eA","updated":"2020-09-23T09:23:34.598494Z"}"#
        case .offTopic:
            #"{"id":"some-channel-id","name":"Off-topic","description":"Off-topic channel for random chatter and fun","custom":{"profileUrl":"https://www.gravatar.com/avatar/149e60f311749f2a7c6515f7b34?s=256&d=identicon"},"eTag":"AbOx6N+6vu3zoAE","updated":"2020-09-23T09:23:37.175764Z"}"#
        case .directChannel:
            #"{"id":"direct.jane-joe","name":"Jane & Joe","type":"direct","status":"active","eTag":"AZO/t53al7m8fw","updated":"2020-09-23T09:23:37.5Z"}"#
        case .message:
            #"{"id":"6da72b98-e211-4724-aad4-e0fb9f08999f","text":"Lorem ipsum dolor sit amet, consectetur adipiscing elit.","contentType":"none","content":{},"custom":{},"createdAt":"2022-05-10T14:48:00.000Z"}"#
        case .minimalMessage:
            #"{"id":"6da72b98-e211-4724-aad4-e0fb9f08999f","text":"Lorem ipsum dolor sit amet, consectetur adipiscing elit.","createdAt":"2022-05-10T14:48:00.000Z"}"#
        case .membership:
            #"{"channel":{"id":"some-channel-id"},"uuid":{"id":"some-user-id"},"status":"active","custom":{"role":"moderator","muted":false},"updated":"2020-09-23T09:23:40.1Z","eTag":"AZK3l4nQsrWG9gE"}"#
        }
    }

    /// Decodes the document as its model type and encodes it back; also checks that decoding
    /// the re-encoded form gives the same value.
    func reencoded() throws -> Data {
        switch self {
        case .janeDoe: try Self.cycle(ChatUser<FlatCustom>.self, json)
        case .offTopic, .directChannel: try Self.cycle(ChatChannel<FlatCustom>.self, json)
        case .message, .minimalMessage: try Self.cycle(MessagePayload<FlatCustom>.self, json)
        case .membership: try Self.cycle(ChatMember<DefaultChatCustom>.self, json)
        }
    }

    private static func cycle<T: Codable & Equatable>(_ type: T.Type, _ json: String) throws -> Data {
        let first = try decodeJSON(T.self, from: json)
        let data = try encodeJSON(first)
        let second = try JSONDecoder().decode(T.self, from: data)
        guard first == second else { throw SeedMismatch(first: "\(first)", second: "\(second)") }
        return data
    }
}

struct SeedMismatch: Error, CustomStringConvertible {
    var first: String
    var second: String
    var description: String { "decoding the re-encoded JSON gave \(second), expected \(first)" }
}

@Suite("Seed payloads")
struct SeedPayloadTests {
    @Test("each seed document re-encodes to equivalent JSON", arguments: Seed.allCases)
    func roundTrip(seed: Seed) throws {
        let reencoded = try seed.reencoded()
        #expect(try json(reencoded) == json(seed.json))
        // The Foundation view agrees (key order and number spelling aside).
        let original = try JSONSerialization.jsonObject(with: Data(seed.json.utf8)) as? NSDictionary
        let again = try JSONSerialization.jsonObject(with: reencoded) as? NSDictionary
        #expect(original != nil)
        #expect(original?.isEqual(again) == true)
    }

    @Test("the Jane Doe user decodes every field")
    func janeDoeFields() throws {
        let user = try decodeJSON(ChatUser<FlatCustom>.self, from: Seed.janeDoe.json)
        #expect(user.id == "some-user-id")
        #expect(user.name == "Jane Doe")
        #expect(user.email == "jane.doe@example.com")
        #expect(user.externalId == "some-external-user-id")
        #expect(user.profileUrl == "https://randomuser.me/api/portraits/men/1.jpg")
        #expect(user.avatarURL?.host == "randomuser.me")
        #expect(user.custom == ["description": "Office Assistant"])
        #expect(user.eTag == "AYGyoY3gre71eA")
        #expect(user.updated?.description == "2020-09-23T09:23:34.598494Z")
        #expect(user.updated?.nanoseconds == 1_600_853_014_598_494_000)
        #expect(user.status == nil)
    }

    @Test("a user without a type decodes as \"default\" and encodes without a type key")
    func defaultUserType() throws {
        let user = try decodeJSON(ChatUser<FlatCustom>.self, from: Seed.janeDoe.json)
        #expect(user.type == "default")
        let keys = try #require(try objectKeys(encodeJSON(user)))
        #expect(!keys.contains("type"))
        #expect(keys == ["id", "name", "email", "externalId", "profileUrl", "custom", "eTag", "updated"])
    }

    @Test("a user with a non-default type keeps it in JSON")
    func explicitUserType() throws {
        let user = try ChatUser<FlatCustom>(id: "bot-1", type: "bot")
        #expect(try json(encodeJSON(user)) == ["id": "bot-1", "type": "bot"])
        #expect(try decodeJSON(ChatUser<FlatCustom>.self, from: #"{"id":"bot-1","type":"bot"}"#).type == "bot")
    }

    @Test("the Off-topic channel decodes every field; description becomes details")
    func offTopicFields() throws {
        let channel = try decodeJSON(ChatChannel<FlatCustom>.self, from: Seed.offTopic.json)
        #expect(channel.id == "some-channel-id")
        #expect(channel.name == "Off-topic")
        #expect(channel.details == "Off-topic channel for random chatter and fun")
        #expect(channel.type == "default")
        #expect(channel.status == nil)
        #expect(
            channel.avatarURLString
                == "https://www.gravatar.com/avatar/149e60f311749f2a7c6515f7b34?s=256&d=identicon")
        #expect(channel.avatarURL?.query == "s=256&d=identicon")
        #expect(channel.eTag == "AbOx6N+6vu3zoAE")
        #expect(channel.updated?.description == "2020-09-23T09:23:37.175764Z")
        #expect(channel.updated?.nanoseconds == 1_600_853_017_175_764_000)
        #expect(channel.memberCount == nil)
    }

    @Test("a direct channel keeps its type through decode and encode")
    func directChannelType() throws {
        let channel = try decodeJSON(ChatChannel<FlatCustom>.self, from: Seed.directChannel.json)
        #expect(channel.type == "direct")
        #expect(channel.status == "active")
        guard case .object(let encoded) = try json(encodeJSON(channel)) else {
            Issue.record("a channel must encode as a JSON object")
            return
        }
        #expect(encoded["type"] == "direct")
        #expect(encoded["description"] == nil)
    }

    @Test("memberCount is local and never encoded")
    func memberCountNotEncoded() throws {
        var channel = try decodeJSON(ChatChannel<FlatCustom>.self, from: Seed.offTopic.json)
        channel.memberCount = 12
        #expect(try json(encodeJSON(channel)) == json(Seed.offTopic.json))
    }

    @Test("the seed message payload decodes every field")
    func messageFields() throws {
        let payload = try decodeJSON(MessagePayload<FlatCustom>.self, from: Seed.message.json)
        #expect(payload.id == "6da72b98-e211-4724-aad4-e0fb9f08999f")
        #expect(payload.text == "Lorem ipsum dolor sit amet, consectetur adipiscing elit.")
        #expect(payload.contentType == "none")
        #expect(payload.content == .object([:]))
        #expect(payload.custom == FlatCustom())
        #expect(payload.createdAt.description == "2022-05-10T14:48:00.000Z")
        #expect(payload.createdAt.fractionDigits == 3)
        #expect(payload.createdAt.nanoseconds == 1_652_194_080_000_000_000)
    }

    @Test("the minimal message payload round-trips without gaining keys")
    func minimalMessage() throws {
        let payload = try decodeJSON(MessagePayload<FlatCustom>.self, from: Seed.minimalMessage.json)
        #expect(payload.contentType == nil)
        #expect(payload.content == nil)
        #expect(payload.custom == nil)
        #expect(try objectKeys(encodeJSON(payload)) == ["id", "text", "createdAt"])
    }

    @Test("a membership element with id-only channel and user decodes")
    func membershipFields() throws {
        let member = try decodeJSON(ChatMember<DefaultChatCustom>.self, from: Seed.membership.json)
        #expect(member.channelId == "some-channel-id")
        #expect(member.userId == "some-user-id")
        #expect(member.channel.name == nil)
        #expect(member.status == "active")
        #expect(member.type == nil)
        #expect(member.custom == ["role": "moderator", "muted": false])
        #expect(member.updated?.description == "2020-09-23T09:23:40.1Z")
        #expect(member.eTag == "AZK3l4nQsrWG9gE")
    }

    @Test("local presence fields of a membership are never encoded")
    func presenceNotEncoded() throws {
        var member = try decodeJSON(ChatMember<DefaultChatCustom>.self, from: Seed.membership.json)
        member.isPresent = true
        member.presenceState = ["mood": "busy"]
        #expect(try json(encodeJSON(member)) == json(Seed.membership.json))
    }

    @Test("a payload missing a required key fails to decode", arguments: ["id", "text", "createdAt"])
    func payloadRequiredKeys(key: String) throws {
        guard case .object(var members) = try json(Seed.message.json) else {
            Issue.record("seed message must be an object")
            return
        }
        members[key] = nil
        let data = try JSONValue.object(members).jsonData()
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(MessagePayload<FlatCustom>.self, from: data)
        }
    }
}
