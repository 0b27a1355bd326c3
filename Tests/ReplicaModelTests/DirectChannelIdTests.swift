import Foundation
import Testing
@testable import ReplicaModel

/// The Chat SDK's direct conversation id and its hash (`pubnub/kmp-chat`, `ChatImpl.createDirectConversation`,
/// `internal/utils/hashes.kt`), checked against kmp-chat's own test vectors (`HashTest.kt`) and the
/// reference's worked ids (`files-access-chat.md` §3.2).
@Suite("The Chat SDK's direct channel id")
struct DirectChannelIdTests {
    @Test("cyrb53a gives kmp-chat's test vectors", arguments: [
        ("mo3k2 ok", UInt64(5_914_255_141_804_885)),
        ("Ąž< 4ó", UInt64(5_904_620_407_185_594)),
        ("jio jeroiew mn\nmrie rmw\n!$:@\"", UInt64(4_876_630_631_559_622)),
    ])
    func vectors(input: String, hash: UInt64) {
        #expect(ChatSDKFormat.cyrb53a(input) == hash)
        #expect(hash < 1 << 53)
    }

    @Test("the worked ids, in either order", arguments: [
        ("user-a", "user-b", "direct.471133248750172"),
        ("bob", "alice", "direct.6290047293405539"),
        ("test-user-1", "test-user-2", "direct.6490125275294876"),
        ("Łukasz", "Zoë", "direct.4265565744781141"),
    ])
    func workedIds(first: String, second: String, id: String) {
        #expect(ChatSDKFormat.directChannelId(first, second) == id)
        #expect(ChatSDKFormat.directChannelId(second, first) == id)
    }

    @Test("ids are sorted by UTF-16 code unit as Kotlin sorts them, not by Unicode scalar as Swift's < does")
    func utf16Order() {
        let astral = "\u{1F600}x", privateUse = "\u{E000}x"   // UTF-16: D83D DE00 … < E000 …
        #expect(privateUse < astral, "Swift orders by scalar: U+E000 first")
        let expected = ChatSDKFormat.directChannelPrefix + String(ChatSDKFormat.cyrb53a(astral + "&" + privateUse))
        #expect(ChatSDKFormat.directChannelId(privateUse, astral) == expected)
        #expect(ChatSDKFormat.directChannelId(astral, privateUse) == expected)
    }
}
