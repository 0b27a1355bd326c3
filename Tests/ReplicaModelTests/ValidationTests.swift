import Foundation
import Testing

@testable import ReplicaModel

@Suite("Validation")
struct ValidationTests {
    // MARK: Ids

    @Test("ids . and .. are refused: a URL would drop them as path segments", arguments: [".", ".."])
    func dotIds(id: String) {
        #expect(throws: ModelValidationError.reservedIdentifier(field: "user.id", id: id)) { try ChatUser<FlatCustom>(id: id) }
        #expect(throws: ModelValidationError.reservedIdentifier(field: "channel.id", id: id)) {
            try ChatChannel<FlatCustom>(id: id)
        }
        #expect(throws: Never.self) { try ChatUser<FlatCustom>(id: "...") }
        #expect(throws: Never.self) { try ChatUser<FlatCustom>(id: ".hidden") }
    }

    @Test("an empty id throws emptyIdentifier naming the field")
    func emptyId() {
        #expect(throws: ModelValidationError.emptyIdentifier(field: "user.id")) { try ChatUser<FlatCustom>(id: "") }
        #expect(throws: ModelValidationError.emptyIdentifier(field: "channel.id")) {
            try ChatChannel<FlatCustom>(id: "")
        }
    }

    @Test(
        "ids up to 92 UTF-8 bytes are accepted",
        arguments: [
            String(repeating: "a", count: 92),
            String(repeating: "\u{E9}", count: 46),  // é, 2 bytes each
            String(repeating: "\u{20AC}", count: 30) + "ab",  // €, 3 bytes each
            String(repeating: "\u{1F600}", count: 23),  // 😀, 4 bytes each
            "some-user-id", "jane.doe@example.com", "with space", "a_b-c.d~e+f=g!h#i",
        ])
    func acceptedIds(id: String) throws {
        #expect(try ChatUser<FlatCustom>(id: id).id == id)
        #expect(try ChatChannel<FlatCustom>(id: id).id == id)
    }

    @Test(
        "ids over 92 UTF-8 bytes throw identifierTooLong with the byte count",
        arguments: [
            String(repeating: "a", count: 93),
            String(repeating: "\u{E9}", count: 46) + "a",
            String(repeating: "\u{20AC}", count: 31),
            String(repeating: "\u{1F600}", count: 23) + "a",
            String(repeating: "\u{E9}", count: 47),
        ])
    func tooLongIds(id: String) {
        let bytes = id.utf8.count
        #expect(throws: ModelValidationError.identifierTooLong(field: "user.id", bytes: bytes, limit: 92)) {
            try ChatUser<FlatCustom>(id: id)
        }
        #expect(throws: ModelValidationError.identifierTooLong(field: "channel.id", bytes: bytes, limit: 92)) {
            try ChatChannel<FlatCustom>(id: id)
        }
    }

    @Test(
        "ids this device writes with , / \\ * : throw forbiddenCharacter naming the character; the model keeps all but , as a server gave them",
        arguments: [",", "/", "\\", "*", ":"])
    func forbiddenPunctuation(character: String) throws {
        for id in ["a\(character)b", character, "\(character)lead", "trail\(character)"] {
            #expect(throws: ModelValidationError.forbiddenCharacter(field: "user.id", character: "'\(character)'")) {
                try Validation.validateIdentifier(id, field: "user.id")
            }
            if character == "," {
                // A list separator in PubNub's paths: never an id, whoever gave it.
                #expect(throws: ModelValidationError.forbiddenCharacter(field: "channel.id", character: "','")) {
                    try ChatChannel<FlatCustom>(id: id)
                }
            } else {
                #expect(try ChatUser<FlatCustom>(id: id).id == id)
                #expect(try ChatChannel<FlatCustom>(id: id).id == id)
            }
        }
    }

    @Test("an id the real service gave (channel|encoded::1) is kept as given")
    func serverIds() throws {
        #expect(try ChatChannel<FlatCustom>(id: "channel|encoded::1").id == "channel|encoded::1")
        #expect(try ChatMember<DefaultChatCustom>(channelId: "channel|encoded::1", userId: "u").channelId == "channel|encoded::1")
        #expect(throws: ModelValidationError.forbiddenCharacter(field: "channel.id", character: "':'")) {
            try Validation.validateIdentifier("channel|encoded::1", field: "channel.id")
        }
    }

    @Test(
        "ids with control characters throw forbiddenCharacter with the code point",
        arguments: [
            ("a\nb", "U+A"), ("\u{7}", "U+7"), ("tab\there", "U+9"), ("nul\u{0}", "U+0"), ("del\u{7F}", "U+7F"),
            ("c1\u{85}", "U+85"), ("cr\r", "U+D"),
        ])
    func controlCharacters(id: String, codePoint: String) {
        #expect(throws: ModelValidationError.forbiddenCharacter(field: "user.id", character: codePoint)) {
            try ChatUser<FlatCustom>(id: id)
        }
        #expect(throws: ModelValidationError.forbiddenCharacter(field: "channel.id", character: codePoint)) {
            try ChatChannel<FlatCustom>(id: id)
        }
    }

    @Test("decoding a user or channel with a bad id throws the validation error")
    func decodingBadIds() {
        #expect(throws: ModelValidationError.forbiddenCharacter(field: "user.id", character: "','")) {
            try decodeJSON(ChatUser<FlatCustom>.self, from: #"{"id":"bad,id","name":"Jane Doe"}"#)
        }
        #expect(throws: ModelValidationError.emptyIdentifier(field: "user.id")) {
            try decodeJSON(ChatUser<FlatCustom>.self, from: #"{"id":""}"#)
        }
        #expect(throws: ModelValidationError.forbiddenCharacter(field: "user.id", character: "U+A")) {
            try decodeJSON(ChatUser<FlatCustom>.self, from: #"{"id":"line\nbreak"}"#)
        }
        let long = String(repeating: "x", count: 93)
        #expect(throws: ModelValidationError.identifierTooLong(field: "channel.id", bytes: 93, limit: 92)) {
            try decodeJSON(ChatChannel<FlatCustom>.self, from: #"{"id":""# + long + #""}"#)
        }
        #expect(throws: ModelValidationError.forbiddenCharacter(field: "user.id", character: "','")) {
            try decodeJSON(
                ChatMember<DefaultChatCustom>.self, from: #"{"channel":{"id":"ok"},"uuid":{"id":"no,pe"}}"#)
        }
    }

    @Test("message and membership ids are validated with their own field names")
    func otherFieldNames() {
        let createdAt = ISOTimestamp(nanoseconds: 0)
        #expect(throws: ModelValidationError.forbiddenCharacter(field: "message.channelId", character: "','")) {
            try ChatMessage<FlatCustom>(text: "hi", createdAt: createdAt, userId: "u", channelId: "a,b")
        }
        #expect(throws: ModelValidationError.emptyIdentifier(field: "message.userId")) {
            try ChatMessage<FlatCustom>(text: "hi", createdAt: createdAt, userId: "", channelId: "c")
        }
        #expect(throws: ModelValidationError.emptyIdentifier(field: "user.id")) {
            try ChatMember<DefaultChatCustom>(channelId: "c", userId: "")
        }
        #expect(throws: ModelValidationError.forbiddenCharacter(field: "channel.id", character: "','")) {
            try ChatMember<DefaultChatCustom>(channelId: "a,b", userId: "u")
        }
    }

    @Test("errors name their field in .field and in the description")
    func errorNamesField() {
        let errors: [ModelValidationError] = [
            .emptyIdentifier(field: "user.id"),
            .identifierTooLong(field: "user.id", bytes: 93, limit: 92),
            .forbiddenCharacter(field: "user.id", character: "','"),
            .messageTooLarge(field: "user.id", bytes: 32_769, limit: 32_768),
            .nestedCustomValue(field: "user.id", key: "k"),
            .missingValue(field: "user.id"),
        ]
        for error in errors {
            #expect(error.field == "user.id")
            #expect(error.description.hasPrefix("user.id: "))
        }
        #expect(ModelValidationError.identifierTooLong(field: "f", bytes: 93, limit: 92).description.contains("93"))
    }

    // MARK: Message text

    @Test(
        "message text at exactly 32 KiB encoded passes; one byte over throws messageTooLarge",
        arguments: [
            // (repeated unit, count that encodes to exactly 32768 bytes with the two quotes)
            ("a", 32_766),
            ("\"", 16_383),  // a quote is escaped: 2 bytes
            ("\\", 16_383),  // so is a backslash
            ("\n", 16_383),  // and a newline
            ("\u{E9}", 16_383),  // é: 2 UTF-8 bytes
            ("\u{20AC}", 10_922),  // €: 3 bytes, 32766 = 3 × 10922
        ])
    func messageLimit(unit: String, count: Int) throws {
        let atLimit = String(repeating: unit, count: count)
        try Validation.validateMessageText(atLimit)
        let over = atLimit + "a"
        let overBytes = 32_768 + 1
        #expect(throws: ModelValidationError.messageTooLarge(field: "text", bytes: overBytes, limit: 32_768)) {
            try Validation.validateMessageText(over)
        }
    }

    @Test("a quote counts as two bytes at the limit")
    func quoteCountsDouble() throws {
        let base = String(repeating: "a", count: 32_765)
        try Validation.validateMessageText(base + "a")
        #expect(throws: ModelValidationError.messageTooLarge(field: "text", bytes: 32_769, limit: 32_768)) {
            try Validation.validateMessageText(base + "\"")
        }
    }

    @Test("a control character counts as its six-byte \\u escape")
    func controlCountsSix() throws {
        let base = String(repeating: "a", count: 32_760)
        try Validation.validateMessageText(base + "\u{1}")  // 2 + 32760 + 6 = 32768
        #expect(throws: ModelValidationError.messageTooLarge(field: "text", bytes: 32_769, limit: 32_768)) {
            try Validation.validateMessageText(base + "a\u{1}")
        }
    }

    @Test("the byte count matches what JSONEncoder writes (slashes unescaped, as the wire encoder does)")
    func countMatchesEncoder() throws {
        let samples = [
            "", "plain", "quote \" backslash \\ slash /", "tab\tnewline\ncr\rbs\u{8}ff\u{C}",
            "nul\u{0} bell\u{7} esc\u{1B} unit\u{1F} del\u{7F}", "é € 😀 \u{2028}", "👩‍👩‍👧‍👦",
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        for sample in samples {
            let encoded = try encoder.encode([sample])  // [ ... ]: two bytes more than the string
            #expect(Validation.jsonEncodedByteCount(sample) == encoded.count - 2, "\(sample.debugDescription)")
        }
    }

    @Test("a message payload over the limit names message.text")
    func payloadTooLarge() {
        let text = String(repeating: "a", count: 32_767)
        #expect(throws: ModelValidationError.messageTooLarge(field: "message.text", bytes: 32_769, limit: 32_768)) {
            try MessagePayload<FlatCustom>(id: "m", text: text, createdAt: ISOTimestamp(nanoseconds: 0))
        }
        #expect(throws: ModelValidationError.messageTooLarge(field: "message.text", bytes: 32_769, limit: 32_768)) {
            try ChatMessage<FlatCustom>(
                text: text, createdAt: ISOTimestamp(nanoseconds: 0), userId: "u", channelId: "c")
        }
    }

    @Test("decoding an oversized message payload throws")
    func decodingOversized() {
        let text = String(repeating: "a", count: 32_767)
        let document = #"{"id":"m","text":""# + text + #"","createdAt":"2022-05-10T14:48:00.000Z"}"#
        #expect(throws: ModelValidationError.messageTooLarge(field: "message.text", bytes: 32_769, limit: 32_768)) {
            try decodeJSON(MessagePayload<FlatCustom>.self, from: document)
        }
    }
}
