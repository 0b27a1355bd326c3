import Foundation
import ReplicaModel
import Testing

/// An app's own user custom data, plugged in instead of FlatCustom.
struct TeamCustom: CustomData {
    var department: String
    var level: Int
    var remote: Bool?
}

/// An app's own channel custom data that carries the avatar in `profileUrl`.
struct BrandedCustom: CustomData {
    var profileUrl: String?
    var color: String
}

enum TeamChat: ChatCustomData {
    typealias User = TeamCustom
    typealias Channel = BrandedCustom
}

@Suite("Custom data")
struct CustomDataTests {
    @Test("flat scalars decode to the matching CustomScalar case")
    func flatScalars() throws {
        let custom = try decodeJSON(
            FlatCustom.self, from: #"{"s":"text","i":42,"neg":-7,"d":2.5,"b":true,"f":false,"n":null}"#)
        #expect(custom.values.count == 7)
        #expect(custom["s"] == .string("text"))
        #expect(custom["i"] == .int(42))
        #expect(custom["neg"] == .int(-7))
        #expect(custom["d"] == .double(2.5))
        #expect(custom["b"] == .bool(true))
        #expect(custom["f"] == .bool(false))
        #expect(custom["n"] == .null)
        #expect(custom["missing"] == nil)
    }

    @Test(
        "a CustomScalar decodes on its own to the matching case",
        arguments: [
            ("42", CustomScalar.int(42)), ("-1", .int(-1)), ("2.5", .double(2.5)), (#""x""#, .string("x")),
            ("true", .bool(true)), ("null", .null),
        ] as [(String, CustomScalar)])
    func scalarDecoding(text: String, expected: CustomScalar) throws {
        #expect(try decodeJSON([String: CustomScalar].self, from: #"{"k":\#(text)}"#) == ["k": expected])
    }

    @Test("a CustomScalar decoded from an object or array throws, naming its key")
    func scalarNested() {
        #expect(throws: ModelValidationError.nestedCustomValue(field: "custom", key: "deep")) {
            try decodeJSON([String: CustomScalar].self, from: #"{"ok":1,"deep":{"a":1}}"#)
        }
        #expect(throws: ModelValidationError.nestedCustomValue(field: "custom", key: "list")) {
            try decodeJSON([String: CustomScalar].self, from: #"{"list":[1]}"#)
        }
    }

    @Test("re-encoding keeps integers integers, doubles doubles and nulls")
    func reencoding() throws {
        let text = #"{"s":"text","i":42,"big":9007199254740993,"d":2.5,"b":true,"n":null}"#
        let custom = try decodeJSON(FlatCustom.self, from: text)
        let reencoded = try json(encodeJSON(custom))
        #expect(reencoded == (try json(text)))
        guard case .object(let members) = reencoded else {
            Issue.record("custom must encode as an object")
            return
        }
        #expect(members["i"] == .int(42))
        #expect(members["big"] == .int(9_007_199_254_740_993))
        #expect(members["d"] == .double(2.5))
        #expect(members["b"] == .bool(true))
        #expect(members["n"] == .null)
        #expect(String(decoding: try encodeJSON(FlatCustom(["i": 42])), as: UTF8.self) == #"{"i":42}"#)
    }

    @Test(
        "a nested object or array throws nestedCustomValue naming the key",
        arguments: [
            (#"{"ok":1,"address":{"city":"Berlin"}}"#, "address"),
            (#"{"tags":["a","b"],"ok":"yes"}"#, "tags"),
            (#"{"empty":[]}"#, "empty"),
            (#"{"blank":{}}"#, "blank"),
        ])
    func nestedThrows(text: String, key: String) {
        #expect(throws: ModelValidationError.nestedCustomValue(field: "custom", key: key)) {
            try decodeJSON(FlatCustom.self, from: text)
        }
    }

    @Test("a user whose custom data is nested fails to decode")
    func nestedInUser() {
        #expect(throws: ModelValidationError.nestedCustomValue(field: "custom", key: "prefs")) {
            try decodeJSON(ChatUser<FlatCustom>.self, from: #"{"id":"u","custom":{"prefs":{"theme":"dark"}}}"#)
        }
    }

    @Test("custom data that is not an object fails to decode", arguments: ["[]", "1", #""text""#])
    func notAnObject(text: String) {
        #expect(throws: (any Error).self) {
            try decodeJSON(ChatUser<FlatCustom>.self, from: #"{"id":"u","custom":"# + text + "}")
        }
    }

    @Test("init(validating:) accepts flat objects and rejects nested values by key")
    func validating() throws {
        let flat = try FlatCustom(validating: ["s": "x", "i": 1, "d": 1.5, "b": false, "n": nil])
        #expect(flat == ["s": "x", "i": 1, "d": 1.5, "b": false, "n": .null])
        #expect(throws: ModelValidationError.nestedCustomValue(field: "custom", key: "list")) {
            try FlatCustom(validating: ["fine": 1, "list": [1, 2]])
        }
        #expect(throws: ModelValidationError.nestedCustomValue(field: "custom", key: "obj")) {
            try FlatCustom(validating: ["obj": ["a": 1]])
        }
        #expect(try FlatCustom(validating: [:]).isEmpty)
    }

    @Test("FlatCustom.profileUrl reads and writes the profileUrl key")
    func flatProfileUrl() {
        var custom: FlatCustom = ["profileUrl": "https://example.com/a.png", "other": 1]
        #expect(custom.profileUrl == "https://example.com/a.png")
        custom.profileUrl = "https://example.com/b.png"
        #expect(custom["profileUrl"] == .string("https://example.com/b.png"))
        custom.profileUrl = nil
        #expect(custom["profileUrl"] == nil)
        #expect(custom == ["other": 1])
        let numeric: FlatCustom = ["profileUrl": 5]
        #expect(numeric.profileUrl == nil)
    }

    @Test("setting a channel's avatar writes custom.profileUrl")
    func channelAvatarSetter() throws {
        var channel = try decodeJSON(ChatChannel<FlatCustom>.self, from: Seed.offTopic.json)
        channel.avatarURLString = "https://example.com/new.png"
        #expect(channel.custom?["profileUrl"] == .string("https://example.com/new.png"))
        channel.avatarURLString = nil
        #expect(channel.custom == FlatCustom())
        #expect(channel.avatarURL == nil)
    }

    @Test("an app's own custom type decodes and encodes in ChatUser")
    func appTypeInUser() throws {
        let text = #"{"id":"some-user-id","name":"Jane Doe","custom":{"department":"Sales","level":3}}"#
        let user = try decodeJSON(ChatUser<TeamCustom>.self, from: text)
        #expect(user.custom == TeamCustom(department: "Sales", level: 3, remote: nil))
        #expect(try json(encodeJSON(user)) == json(text))
        let remote = try decodeJSON(
            ChatUser<TeamCustom>.self, from: #"{"id":"u","custom":{"department":"R&D","level":1,"remote":true}}"#)
        #expect(remote.custom?.remote == true)
    }

    @Test("an app's own custom type rejects JSON of the wrong shape")
    func appTypeWrongShape() {
        #expect(throws: DecodingError.self) {
            try decodeJSON(
                ChatUser<TeamCustom>.self, from: #"{"id":"u","custom":{"department":"Sales","level":"three"}}"#)
        }
        #expect(throws: DecodingError.self) {
            try decodeJSON(ChatUser<TeamCustom>.self, from: #"{"id":"u","custom":{"level":3}}"#)
        }
    }

    @Test("a channel's avatar comes from the custom type's profileUrl, or is nil without one")
    func appTypeAvatar() throws {
        let branded = try decodeJSON(
            ChatChannel<BrandedCustom>.self,
            from: #"{"id":"c","custom":{"profileUrl":"https://example.com/c.png","color":"red"}}"#)
        #expect(branded.avatarURLString == "https://example.com/c.png")
        #expect(branded.custom?.color == "red")

        // TeamCustom has no profileUrl: the default is always nil and setting it is a no-op.
        var team = try decodeJSON(
            ChatChannel<TeamCustom>.self,
            from: #"{"id":"c","custom":{"department":"Ops","level":2,"profileUrl":"https://example.com/x.png"}}"#)
        #expect(team.avatarURLString == nil)
        team.avatarURLString = "https://example.com/y.png"
        #expect(team.avatarURLString == nil)
        #expect(team.custom == TeamCustom(department: "Ops", level: 2, remote: nil))
    }

    @Test("a ChatCustomData set plugs app types into memberships")
    func appTypesInMember() throws {
        let text = #"""
            {"channel":{"id":"c","custom":{"color":"blue"}},
             "uuid":{"id":"u","custom":{"department":"Sales","level":2}},
             "custom":{"role":"admin"}}
            """#
        let member = try decodeJSON(ChatMember<TeamChat>.self, from: text)
        #expect(member.user.custom?.department == "Sales")
        #expect(member.channel.custom?.color == "blue")
        #expect(member.custom == ["role": "admin"])  // Member stays FlatCustom by default
    }
}
