import Foundation
import ReplicaModel
import Testing

@Suite("Changesets")
struct ChangesetTests {
    private func jane() throws -> ChatUser<FlatCustom> {
        try decodeJSON(ChatUser<FlatCustom>.self, from: Seed.janeDoe.json)
    }

    private func offTopic() throws -> ChatChannel<FlatCustom> {
        try decodeJSON(ChatChannel<FlatCustom>.self, from: Seed.offTopic.json)
    }

    // MARK: Users

    @Test("a user changeset with only some keys changes only those fields")
    func userPartial() throws {
        let changeset = try decodeJSON(
            UserChangeset<FlatCustom>.self,
            from: #"{"id":"some-user-id","updated":"2020-09-24T10:00:00.123456Z","eTag":"NEW","name":"Jane Q. Doe"}"#)
        #expect(changeset.name == .set("Jane Q. Doe"))
        #expect(changeset.email == .unchanged)
        #expect(changeset.custom == .unchanged)

        let before = try jane()
        let after = try #require(changeset.apply(to: before))
        #expect(after.name == "Jane Q. Doe")
        #expect(after.email == before.email)
        #expect(after.externalId == before.externalId)
        #expect(after.profileUrl == before.profileUrl)
        #expect(after.custom == before.custom)
        #expect(after.type == "default")
        #expect(after.status == nil)
        #expect(after.updated?.description == "2020-09-24T10:00:00.123456Z")
        #expect(after.eTag == "NEW")
    }

    @Test("an explicit null clears a user field; an absent key keeps it")
    func userNull() throws {
        let changeset = try decodeJSON(
            UserChangeset<FlatCustom>.self,
            from: #"{"id":"some-user-id","updated":"2020-09-24T10:00:00Z","eTag":"NEW","email":null,"custom":null,"type":null}"#
        )
        #expect(changeset.email == .set(nil))
        let after = try #require(changeset.apply(to: jane()))
        #expect(after.email == nil)
        #expect(after.custom == nil)
        #expect(after.type == "default")
        #expect(after.name == "Jane Doe")
        #expect(after.externalId == "some-external-user-id")
    }

    @Test("a null type resets a user's type to \"default\"")
    func userTypeReset() throws {
        let admin = try ChatUser<FlatCustom>(id: "u", type: "admin", updated: ts("2020-09-23T09:23:34Z"))
        let reset = try decodeJSON(
            UserChangeset<FlatCustom>.self, from: #"{"id":"u","updated":"2020-09-24T00:00:00Z","eTag":"E","type":null}"#)
        #expect(reset.apply(to: admin)?.type == "default")
        let untouched = try decodeJSON(
            UserChangeset<FlatCustom>.self, from: #"{"id":"u","updated":"2020-09-24T00:00:00Z","eTag":"E"}"#)
        #expect(untouched.apply(to: admin)?.type == "admin")
    }

    @Test("a user changeset replaces custom data whole and can set a type")
    func userCustomReplaced() throws {
        let changeset = try decodeJSON(
            UserChangeset<FlatCustom>.self,
            from: #"{"id":"some-user-id","updated":"2020-09-24T10:00:00Z","eTag":"NEW","custom":{"title":"CEO"},"type":"admin","status":"away"}"#
        )
        let after = try #require(changeset.apply(to: jane()))
        #expect(after.custom == ["title": "CEO"])
        #expect(after.type == "admin")
        #expect(after.status == "away")
    }

    @Test("a user changeset older than the stored user is ignored; the same instant applies")
    func userStale() throws {
        let stored = try jane()  // updated 2020-09-23T09:23:34.598494Z
        var changeset = UserChangeset<FlatCustom>(
            id: "some-user-id", updated: try ts("2020-09-23T09:23:34.598493Z"), eTag: "OLD")
        changeset.name = .set("Old Name")
        #expect(changeset.apply(to: stored) == nil)

        changeset.updated = try ts("2020-09-23T09:23:34.598494Z")
        #expect(changeset.apply(to: stored)?.name == "Old Name")
    }

    @Test("a user changeset for another id is ignored")
    func userOtherId() throws {
        var changeset = UserChangeset<FlatCustom>(id: "other-user", updated: try ts("2030-01-01T00:00:00Z"), eTag: "X")
        changeset.name = .set("Someone Else")
        #expect(changeset.apply(to: try jane()) == nil)
    }

    @Test("a changeset applies to a stored user that has no updated")
    func userUnversioned() throws {
        var changeset = UserChangeset<FlatCustom>(id: "u", updated: try ts("2000-01-01T00:00:00Z"), eTag: "E")
        changeset.email = .set("u@example.com")
        let after = try #require(changeset.apply(to: ChatUser<FlatCustom>(id: "u", name: "U")))
        #expect(after.email == "u@example.com")
        #expect(after.name == "U")
        #expect(after.eTag == "E")
    }

    @Test("a user changeset encodes only its keys, with null for cleared ones")
    func userEncoding() throws {
        let text = #"{"id":"some-user-id","updated":"2020-09-24T10:00:00.5Z","eTag":"NEW","name":"N","email":null,"custom":{"k":1}}"#
        let changeset = try decodeJSON(UserChangeset<FlatCustom>.self, from: text)
        #expect(try json(encodeJSON(changeset)) == json(text))
    }

    @Test("a user changeset without id, updated or eTag fails to decode")
    func userRequiredKeys() {
        for text in [
            #"{"updated":"2020-09-24T10:00:00Z","eTag":"E"}"#, #"{"id":"u","eTag":"E"}"#,
            #"{"id":"u","updated":"2020-09-24T10:00:00Z"}"#,
        ] {
            #expect(throws: DecodingError.self) { try decodeJSON(UserChangeset<FlatCustom>.self, from: text) }
        }
    }

    // MARK: Channels

    @Test("a channel changeset reads \"description\" into details and changes only its keys")
    func channelDescription() throws {
        let changeset = try decodeJSON(
            ChannelChangeset<FlatCustom>.self,
            from: #"{"id":"some-channel-id","updated":"2020-09-24T00:00:00Z","eTag":"C2","description":"New topic","details":"ignored"}"#
        )
        #expect(changeset.details == .set("New topic"))
        #expect(changeset.name == .unchanged)
        let before = try offTopic()
        let after = try #require(changeset.apply(to: before))
        #expect(after.details == "New topic")
        #expect(after.name == "Off-topic")
        #expect(after.avatarURLString == before.avatarURLString)
        #expect(after.eTag == "C2")
        #expect(after.updated?.description == "2020-09-24T00:00:00Z")
        #expect(try objectKeys(encodeJSON(changeset)) == ["id", "updated", "eTag", "description"])
    }

    @Test("an explicit null clears channel fields")
    func channelNull() throws {
        let changeset = try decodeJSON(
            ChannelChangeset<FlatCustom>.self,
            from: #"{"id":"some-channel-id","updated":"2020-09-24T00:00:00Z","eTag":"C2","description":null,"custom":null,"type":"direct"}"#
        )
        let after = try #require(changeset.apply(to: offTopic()))
        #expect(after.details == nil)
        #expect(after.custom == nil)
        #expect(after.avatarURLString == nil)
        #expect(after.type == "direct")
        #expect(after.name == "Off-topic")
    }

    @Test("a null type resets a channel's type to \"default\"")
    func channelTypeReset() throws {
        let direct = try decodeJSON(ChatChannel<FlatCustom>.self, from: Seed.directChannel.json)
        let reset = try decodeJSON(
            ChannelChangeset<FlatCustom>.self,
            from: #"{"id":"direct.jane-joe","updated":"2020-09-24T00:00:00Z","eTag":"E","type":null}"#)
        #expect(reset.apply(to: direct)?.type == "default")
    }

    @Test("a channel changeset that is older or for another channel is ignored")
    func channelIgnored() throws {
        let stored = try offTopic()  // updated 2020-09-23T09:23:37.175764Z
        var older = ChannelChangeset<FlatCustom>(
            id: "some-channel-id", updated: try ts("2020-09-23T09:23:37.175763Z"), eTag: "OLD")
        older.name = .set("Old")
        #expect(older.apply(to: stored) == nil)

        var other = ChannelChangeset<FlatCustom>(
            id: "another-channel", updated: try ts("2030-01-01T00:00:00Z"), eTag: "X")
        other.name = .set("Other")
        #expect(other.apply(to: stored) == nil)
    }

    // MARK: Memberships

    @Test("a member changeset changes only its fields and the version")
    func memberApply() throws {
        let stored = try ChatMember<DefaultChatCustom>(
            channelId: "some-channel-id", userId: "some-user-id", status: "active", type: "regular",
            custom: ["role": "moderator"], updated: ts("2020-09-23T09:23:40Z"), eTag: "M1")
        var changeset = MemberChangeset<DefaultChatCustom>(
            channelId: "some-channel-id", userId: "some-user-id", updated: try ts("2020-09-23T09:23:41Z"), eTag: "M2")
        changeset.status = .set("away")
        changeset.type = .set(nil)

        let after = try #require(changeset.apply(to: stored))
        #expect(after.status == "away")
        #expect(after.type == nil)
        #expect(after.custom == ["role": "moderator"])
        #expect(after.eTag == "M2")
        #expect(after.updated?.description == "2020-09-23T09:23:41Z")
        #expect(after.channelId == "some-channel-id")
        #expect(after.userId == "some-user-id")

        changeset.custom = .set(["role": "owner"])
        #expect(changeset.apply(to: stored)?.custom == ["role": "owner"])
    }

    @Test("a member changeset for another pair or older than the stored membership is ignored")
    func memberIgnored() throws {
        let stored = try ChatMember<DefaultChatCustom>(
            channelId: "c", userId: "u", status: "active", updated: ts("2020-09-23T09:23:40Z"), eTag: "M1")
        let newer = try ts("2020-09-23T09:23:41Z")
        var otherUser = MemberChangeset<DefaultChatCustom>(channelId: "c", userId: "v", updated: newer, eTag: "M2")
        otherUser.status = .set("away")
        var otherChannel = MemberChangeset<DefaultChatCustom>(channelId: "d", userId: "u", updated: newer, eTag: "M2")
        otherChannel.status = .set("away")
        var older = MemberChangeset<DefaultChatCustom>(
            channelId: "c", userId: "u", updated: try ts("2020-09-23T09:23:39Z"), eTag: "M0")
        older.status = .set("away")
        #expect(otherUser.apply(to: stored) == nil)
        #expect(otherChannel.apply(to: stored) == nil)
        #expect(older.apply(to: stored) == nil)
    }

    // MARK: FieldUpdate

    @Test("FieldUpdate.applied keeps, replaces or clears")
    func fieldUpdate() {
        #expect(FieldUpdate<String>.unchanged.applied(to: "old") == "old")
        #expect(FieldUpdate<String>.unchanged.applied(to: nil) == nil)
        #expect(FieldUpdate<String>.set("new").applied(to: "old") == "new")
        #expect(FieldUpdate<String>.set(nil).applied(to: "old") == nil)
    }
}
