import Foundation
@testable import ReplicaModel
import Testing

@Suite("Mention triggers (the Chat SDK's @ and # patterns)")
struct MentionTriggerTests {
    /// The Kotlin tests `test_user_mention_regexes` / `test_channel_mention_regexes`: input, first match.
    static let userCases: [(String, String)] = [
        ("@user", "@user"), ("@us()er", "@us"), ("@user @fsjdoif", "@user"), ("@,123aaa @user", "@user"),
        ("@user aaa", "@user"), ("aaa @user aaa", "@user"), ("aaa @user,", "@user"), ("aaa @user-user aaa", "@user-user"),
        ("@user-user", "@user-user"), ("@brzęczy", "@brzęczy"), ("@ąśćżć", "@ąśćżć"),
    ]

    @Test("the first @ trigger of each Kotlin case", arguments: userCases)
    func userTriggers(_ input: String, _ expected: String) {
        let first = MentionTrigger.all(in: input).first { $0.kind == .user }
        #expect(first?.text == expected)
    }

    @Test("the first # trigger of each Kotlin case", arguments: userCases.map { ($0.0.replacingOccurrences(of: "@", with: "#"), $0.1.replacingOccurrences(of: "@", with: "#")) }
          .map { $0.0 == "#,123aaa #user" ? ("#123aaa #user", "#123aaa") : $0 })
    func channelTriggers(_ input: String, _ expected: String) {
        let first = MentionTrigger.all(in: input).first { $0.kind == .channel }
        #expect(first?.text == expected)
    }

    @Test("offsets are UTF-16 code units; a sigil after a non-space is no trigger; digits and - count")
    func offsets() {
        let triggers = MentionTrigger.all(in: "👍 @al-1 x@no #ch\n@é")
        #expect(triggers == [
            MentionTrigger(offset: 3, text: "@al-1", kind: .user), MentionTrigger(offset: 14, text: "#ch", kind: .channel),
            MentionTrigger(offset: 18, text: "@é", kind: .user),
        ])
        #expect(triggers.first?.searchText == "al-1")
        #expect(MentionTrigger.all(in: "@ # @- a@b").map(\.text) == ["@-"])
    }

    @Test("a draft asks for suggestions only for triggers of 4 units or more that no mention of their kind starts at")
    func draftTriggers() throws {
        var draft = try MessageDraft(text: "@ab @abc #chan @alice")
        #expect(draft.mentionTriggers.map(\.text) == ["@abc", "#chan", "@alice"])
        try draft.addMention(offset: 15, length: 6, target: .user("alice"))
        try draft.addMention(offset: 9, length: 5, target: .user("chan-as-user"))
        // A user mention at a # trigger does not silence it (only a channel mention would).
        #expect(draft.mentionTriggers.map(\.text) == ["@abc", "#chan"])
    }
}
