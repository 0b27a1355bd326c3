import Foundation
import ReplicaModel
import Testing

@Suite("the publish size PubNub's 32 KiB limit is checked against")
struct PublishByteCountTests {
    @Test("body as compact sorted JSON, plus channel and meta percent-encoded")
    func counts() {
        // `{"a":"hi","b":1}` is 16 bytes; `a b` is 5 encoded (the space takes 3); `{"k":"v"}` as a
        // query value escapes 6 characters (`{`, `}` and the quotes, 3 bytes each) and keeps 3: 21.
        let bytes = Validation.publishedByteCount(
            message: ["b": 1, "a": "hi"], channel: "a b", meta: ["k": "v"])
        #expect(bytes == 16 + 5 + 21)
        #expect(Validation.publishedByteCount(message: "hi", channel: "c", meta: nil) == 4 + 1)
    }

    @Test("the encoded lengths equal the encodings' lengths, for every byte and for random text")
    func encodedLengths() {
        var random = SystemRandomNumberGenerator()
        let samples = (0..<200).map { _ in
            String((0..<Int.random(in: 0...40, using: &random)).map { _ in
                Character(UnicodeScalar(UInt32.random(in: 0x20...0x2FF, using: &random)) ?? "x")
            })
        } + (0...127).map { String(UnicodeScalar(UInt8($0))) } + ["a/b c+d?e=f&g%h", "日本🎉"]
        for text in samples {
            #expect(PercentEncoding.pathSegmentLength(text) == PercentEncoding.pathSegment(text).utf8.count, "\(text)")
            #expect(PercentEncoding.queryComponentLength(text.utf8) == PercentEncoding.queryComponent(text).utf8.count, "\(text)")
            #expect(PercentEncoding.decode(PercentEncoding.pathSegment(text)) == text)
        }
        #expect(PercentEncoding.pathSegment("a/b c+é") == "a%2Fb%20c+%C3%A9")
        #expect(PercentEncoding.queryComponent("1+1=2&x") == "1%2B1%3D2%26x")
    }

    @Test("non-ASCII text counts its UTF-8 bytes in the body and three per byte in the channel")
    func nonASCII() {
        #expect(Validation.publishedByteCount(message: "é", channel: "é", meta: nil) == 4 + 6)
    }

    @Test("the limit is inclusive: 32,768 bytes pass, 32,769 are refused with size and limit")
    func limit() throws {
        // `"…"` JSON string of n ASCII letters is n + 2 bytes; channel `c` adds 1.
        let fits = JSONValue.string(String(repeating: "a", count: 32_768 - 3))
        try Validation.validatePublishSize(message: fits, channel: "c", meta: nil)
        let over = JSONValue.string(String(repeating: "a", count: 32_768 - 2))
        #expect(throws: ModelValidationError.messageTooLarge(field: "message", bytes: 32_769, limit: 32_768)) {
            try Validation.validatePublishSize(message: over, channel: "c", meta: nil)
        }
    }

    @Test("a text the text-only check accepts can still be too large as a message")
    func textAloneIsNotEnough() throws {
        let text = String(repeating: "a", count: 32_766)
        try Validation.validateMessageText(text)
        let message: JSONValue = [
            "id": "6da72b98-e211-4724-aad4-e0fb9f08999f", "text": .string(text), "createdAt": "2026-01-01T00:00:00.000Z",
        ]
        #expect(throws: ModelValidationError.self) {
            try Validation.validatePublishSize(message: message, channel: "general", meta: nil)
        }
    }
}
