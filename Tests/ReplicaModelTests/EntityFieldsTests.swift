import Foundation
import ReplicaModel
import Testing

/// The field tables of users, channels and memberships (``ReplicatedFields/fields``): the one declaration
/// that edits, change sets and ``FieldSchema`` derive from must agree with the entities' own JSON.
@Suite("Entity field tables")
struct EntityFieldsTests {
    /// The wire keys the entity's own encoding writes for `entity`.
    private func encodedKeys<E: Encodable>(_ entity: E) throws -> [String: JSONValue] {
        try JSONValue(jsonData: JSONEncoder().encode(entity)).objectValue ?? [:]
    }

    @Test("each user field set by its wire name lands where the user's own JSON has that name")
    func userTableMatchesCoding() throws {
        let base = try ChatUser<FlatCustom>(id: "u")
        for name in ChatUser<FlatCustom>.wireNames where name != "custom" {
            let value = "value-of-\(name)"
            let user = try base.applying([name: .string(value)])
            #expect(try encodedKeys(user)[name] == .string(value), "field \(name)")
        }
        let custom = try base.applying(["custom": ["tier": "gold"]])
        #expect(try encodedKeys(custom)["custom"] == ["tier": "gold"])
    }

    @Test("each channel field set by its wire name lands where the channel's own JSON has that name")
    func channelTableMatchesCoding() throws {
        let base = try ChatChannel<FlatCustom>(id: "c")
        for name in ChatChannel<FlatCustom>.wireNames where name != "custom" {
            let value = "value-of-\(name)"
            let channel = try base.applying([name: .string(value)])
            #expect(try encodedKeys(channel)[name] == .string(value), "field \(name)")
        }
        #expect(FieldSchema.channel.contains("description") && !FieldSchema.channel.contains("details"))
    }

    @Test("an edit names fields as the entity does and writes them by wire name")
    func editByPropertyName() throws {
        var edit = ChannelEdit<FlatCustom>()
        #expect(edit.isEmpty)
        edit.details = .set("about")
        edit.name = .set(nil)
        edit.type = .set("public")
        #expect(edit.details == .set("about"))
        #expect(edit.status == .unchanged)
        #expect(try edit.fields() == ["description": "about", "name": .null, "type": "public"])
        edit.details = .unchanged
        #expect(try edit.fields() == ["name": .null, "type": "public"])

        let channel = edit.applied(to: try ChatChannel<FlatCustom>(id: "c", name: "old", details: "kept"))
        #expect(channel.name == nil && channel.details == "kept" && channel.type == "public")
    }

    @Test("type cleared is PubNub's default type, other fields cleared are nil")
    func clearedType() throws {
        let user = try ChatUser<FlatCustom>(id: "u", type: "admin", email: "a@b.c")
        let cleared = try user.applying(["type": .null, "email": .null, "unknown": "ignored"])
        #expect(cleared.type == FieldSchema.defaultType)
        #expect(cleared.email == nil)
    }

    @Test("a change set decodes strictly: a field of the wrong JSON type is an error")
    func strictChangeset() throws {
        let bad = #"{"id":"u","updated":"2020-09-24T10:00:00.123456Z","eTag":"E","name":5}"#
        #expect(throws: DecodingError.self) { try decodeJSON(UserChangeset<FlatCustom>.self, from: bad) }
        let good = #"{"id":"c","updated":"2020-09-24T10:00:00.123456Z","eTag":"E","description":null}"#
        let changeset = try decodeJSON(ChannelChangeset<FlatCustom>.self, from: good)
        #expect(changeset.details == .set(nil))
        #expect(changeset.name == .unchanged)
        let again = try decodeJSON(ChannelChangeset<FlatCustom>.self, from: String(decoding: JSONEncoder().encode(changeset), as: UTF8.self))
        #expect(again == changeset)
    }

    @Test("each membership field set by its wire name lands where the membership's own JSON has that name")
    func memberTableMatchesCoding() throws {
        let base = try ChatMember<DefaultChatCustom>(channelId: "c", userId: "u")
        #expect(FieldSchema.membership == ["status", "type", "custom"])
        for name in FieldSchema.membership where name != "custom" {
            let member = try base.applying([name: .string("value-of-\(name)")])
            #expect(try encodedKeys(member)[name] == .string("value-of-\(name)"), "field \(name)")
        }
        // A membership's type has no default: "default" is written, and cleared is absent.
        let typed = try base.applying(["type": "default", "custom": ["role": "mod"]])
        #expect(try encodedKeys(typed)["type"] == "default")
        #expect(try typed.applying(["type": .null]).type == nil)
        #expect(try typed.wireFields == ["status": .null, "type": "default", "custom": ["role": "mod"]])
        let json = try JSONEncoder().encode(typed)
        #expect(try JSONDecoder().decode(ChatMember<DefaultChatCustom>.self, from: json) == typed)
    }

    @Test("a membership edit sets only what it is given, and can clear")
    func memberEdit() throws {
        var edit = MemberEdit<DefaultChatCustom>(status: "joined")
        #expect(try edit.fields() == ["status": "joined"])
        edit.custom = .set(nil)
        edit.type = .set("admin")
        #expect(try edit.fields() == ["status": "joined", "type": "admin", "custom": .null])
        let member = try ChatMember<DefaultChatCustom>(channelId: "c", userId: "u", status: "away", custom: ["k": "v"])
        let after = edit.applied(to: member)
        #expect(after.status == "joined" && after.type == "admin" && after.custom == nil)
    }
}
