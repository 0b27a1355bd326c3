import Foundation
import Testing

@testable import ReplicaModel

// The PubNub Chat SDK's MessageDraft tests, ported to our value type `MessageDraft`.
//
// Sources (pubnub/kmp-chat):
// - pubnub-chat-impl/src/commonTest/kotlin/com/pubnub/kmp/MessageDraftTest.kt ("Kotlin" below),
// - js-chat/tests/message-draft-v2.test.ts ("JS v2"),
// - src/commonTest/kotlin/com/pubnub/integration/MessageDraftIntegrationTest.kt (text parts only),
// - the rules of pubnub-chat-impl/src/commonMain/kotlin/com/pubnub/chat/internal/MessageDraftImpl.kt
//   (insertTextInternal, removeTextInternal, addMentionInternal, removeMention, insertSuggestedMention),
//   for the boundary cases the Kotlin tests do not spell out.
//
// The Kotlin tests record what a `MessageDraftChangeListener` receives after each edit; we have no
// listener, so they record `draft.elements` after each edit instead (the listener's first argument).
//
// Not ported (no such behaviour in our value type): listeners_add_fire_remove (change listeners),
// isTypingIndicatorFired_true / _false (typing indicator), thread_channel_user_suggestions_come_from_parent_channel
// and channel_user_suggestions_come_from_this_channel (where the suggestion lookup goes), and the JS v2
// tests that publish, quote, upload or decrypt (only their text and mention parts are ported).
// test_user_mention_regexes / test_channel_mention_regexes are kept as comments at the end of this file.

@Suite("Message drafts (ported from the Chat SDK)")
struct MessageDraftTests {
    // MARK: Kotlin MessageDraftTest

    @Test("inserting text at a mention's start shifts it, and inserting inside it removes it (Kotlin insertText)")
    func insertText() throws {
        var draft = MessageDraft()
        var seen: [[MessageElement]] = []

        try draft.insertText(offset: 0, text: "aaaa")
        seen.append(draft.elements)
        try draft.addMention(offset: 2, length: 2, target: .user("abc"))
        seen.append(draft.elements)
        try draft.insertText(offset: 2, text: "bbb")
        seen.append(draft.elements)
        try draft.insertText(offset: 6, text: "ccc")
        seen.append(draft.elements)

        #expect(
            seen == [
                [.plainText("aaaa")],
                [.plainText("aa"), .link(text: "aa", target: .user("abc"))],
                [.plainText("aabbb"), .link(text: "aa", target: .user("abc"))],
                [.plainText("aabbbaccca")],
            ])
    }

    @Test("removing text before a mention shifts it, and removing text that touches it removes it (Kotlin removeText)")
    func removeText() throws {
        var draft = MessageDraft()
        var seen: [[MessageElement]] = []

        try draft.insertText(offset: 0, text: "aabbbaccc")
        seen.append(draft.elements)
        try draft.addMention(offset: 2, length: 2, target: .user("abc"))
        seen.append(draft.elements)
        try draft.removeText(offset: 0, length: 2)
        seen.append(draft.elements)
        try draft.removeText(offset: 1, length: 2)
        seen.append(draft.elements)

        #expect(
            seen == [
                [.plainText("aabbbaccc")],
                [.plainText("aa"), .link(text: "bb", target: .user("abc")), .plainText("baccc")],
                [.link(text: "bb", target: .user("abc")), .plainText("baccc")],
                [.plainText("baccc")],
            ])
    }

    @Test("update(text:) diffs the text, so a mention whose text was not touched survives (Kotlin update)")
    func update() throws {
        var draft = MessageDraft()
        var seen: [[MessageElement]] = []

        draft.update(text: "a bb")
        seen.append(draft.elements)
        try draft.addMention(offset: 2, length: 2, target: .user("abc"))
        seen.append(draft.elements)
        // diff-match-patch: insert "dd bb ", keep "a bb", insert " ba": the mention moves to the second "bb".
        draft.update(text: "dd bb a bb ba")
        seen.append(draft.elements)
        // diff-match-patch: delete "dd bb a ", insert "aa", keep "bb", delete " " (right after the
        // mention: touching it, so it goes), keep "ba", insert "ccc".
        draft.update(text: "aabbbaccc")
        seen.append(draft.elements)
        draft.update(text: "aaaccc")
        seen.append(draft.elements)

        #expect(
            seen == [
                [.plainText("a bb")],
                [.plainText("a "), .link(text: "bb", target: .user("abc"))],
                [.plainText("dd bb a "), .link(text: "bb", target: .user("abc")), .plainText(" ba")],
                [.plainText("aabbbaccc")],
                [.plainText("aaaccc")],
            ])
        #expect(draft.text == "aaaccc")
    }

    @Test("rendering writes each link as [text](target) with pn-user:// and pn-channel:// targets (Kotlin render)")
    func render() {
        // middle mention
        let elements1: [MessageElement] = [
            .plainText("abc "),
            .link(text: "example user 0", target: .user("example.user.0")),
            .plainText(" def 123 "),
        ]
        #expect(MessageDraft.render(elements1) == "abc [example user 0](pn-user://example.user.0) def 123 ")

        // last mention
        let elements2: [MessageElement] = [
            .plainText("abc "),
            .link(text: "example user 0", target: .user("example.user.0")),
            .plainText(" def 123 "),
            .link(text: "example chan 0", target: .channel("example.chan.0")),
        ]
        #expect(
            MessageDraft.render(elements2)
                == "abc [example user 0](pn-user://example.user.0) def 123 [example chan 0](pn-channel://example.chan.0)")

        // first mention
        let elements3: [MessageElement] = [
            .link(text: "link", target: .url("http://aaa")),
            .plainText(" abc "),
            .link(text: "example user 0", target: .user("example.user.0")),
            .plainText(" def 123 "),
            .link(text: "example chan 0", target: .channel("example.chan.0")),
        ]
        #expect(
            MessageDraft.render(elements3)
                == "[link](http://aaa) abc [example user 0](pn-user://example.user.0) def 123 [example chan 0](pn-channel://example.chan.0)"
        )
    }

    @Test("a received message's markdown text parses into plain text and links (Kotlin getMessageElements_from_text)")
    func elementsFromText() {
        // middle mention
        let text1 = "abc [example user 0](pn-user://example.user.0) def 123 "
        let elements1: [MessageElement] = [
            .plainText("abc "),
            .link(text: "example user 0", target: .user("example.user.0")),
            .plainText(" def 123 "),
        ]
        #expect(MessageDraft.elements(parsing: text1) == elements1)

        // last mention
        let text2 =
            "abc [example user 0](pn-user://example.user.0) def 123 [example chan 0](pn-channel://example.chan.0)"
        let elements2: [MessageElement] = [
            .plainText("abc "),
            .link(text: "example user 0", target: .user("example.user.0")),
            .plainText(" def 123 "),
            .link(text: "example chan 0", target: .channel("example.chan.0")),
        ]
        #expect(MessageDraft.elements(parsing: text2) == elements2)

        // first mention
        let text3 =
            "[link](http://aaa) abc [example user 0](pn-user://example.user.0) def 123 [example chan 0](pn-channel://example.chan.0)"
        let elements3: [MessageElement] = [
            .link(text: "link", target: .url("http://aaa")),
            .plainText(" abc "),
            .link(text: "example user 0", target: .user("example.user.0")),
            .plainText(" def 123 "),
            .link(text: "example chan 0", target: .channel("example.chan.0")),
        ]
        #expect(MessageDraft.elements(parsing: text3) == elements3)
    }

    @Test("a draft's text and mentions give plain text between the mentions and a link per mention (Kotlin getMessageElements_from_mentions)")
    func elementsFromMentions() throws {
        // middle mention
        let draft1 = try MessageDraft(
            text: "abc example user 0 def 123 ",
            mentions: [DraftMention(offset: 4, length: 14, target: .user("example.user.0"))])
        #expect(
            draft1.elements == [
                .plainText("abc "),
                .link(text: "example user 0", target: .user("example.user.0")),
                .plainText(" def 123 "),
            ])

        // last mention
        let draft2 = try MessageDraft(
            text: "abc example user 0 def 123 example chan 0",
            mentions: [
                DraftMention(offset: 4, length: 14, target: .user("example.user.0")),
                DraftMention(offset: 27, length: 14, target: .channel("example.chan.0")),
            ])
        #expect(
            draft2.elements == [
                .plainText("abc "),
                .link(text: "example user 0", target: .user("example.user.0")),
                .plainText(" def 123 "),
                .link(text: "example chan 0", target: .channel("example.chan.0")),
            ])
    }

    @Test(
        "a link's text escapes backslash and ] and parsing undoes it (Kotlin escaping_link_text)",
        arguments: [
            (#"http://www.example.com/abc\]fkdo"#, #"http://www.example.com/abc]fkdo"#),
            (#"http://www.example.com/[abc\]f)kdo\]"#, #"http://www.example.com/[abc]f)kdo]"#),
        ])
    func escapingLinkText(escaped: String, unescaped: String) {
        #expect(MessageDraft.escapeLinkText(unescaped) == escaped)
        // Kotlin's unEscapeLinkText has no counterpart of its own here: parsing a link undoes the escapes.
        #expect(MessageDraft.elements(parsing: "[" + escaped + "](x)") == [.link(text: unescaped, target: .url("x"))])
    }

    @Test(
        "a link's target escapes backslash and ) and parsing undoes it (Kotlin escaping_link_urls)",
        arguments: [
            (#"http://www.example.com/abc\)fkdo"#, #"http://www.example.com/abc)fkdo"#),
            (#"http://www.example.com/(abc\)f]kdo\)"#, #"http://www.example.com/(abc)f]kdo)"#),
        ])
    func escapingLinkTarget(escaped: String, unescaped: String) {
        #expect(MessageDraft.escapeLinkTarget(unescaped) == escaped)
        // Kotlin's unEscapeLinkUrl has no counterpart of its own here: parsing a link undoes the escapes.
        #expect(MessageDraft.elements(parsing: "[x](" + escaped + ")") == [.link(text: "x", target: .url(unescaped))])
    }

    @Test("inserting a suggested mention replaces its trigger with the name, linked (Kotlin testSuggestions)")
    func insertSuggestion() throws {
        var draft = MessageDraft()
        draft.update(text: "abc @exa def 123")
        // Kotlin gets the suggestion from a mocked lookup (chat.getUserSuggestions("exa")): the first
        // user whose name starts with "exa". We have no lookup: this is that suggestion, by hand.
        let suggestion = SuggestedMention(
            offset: 4, replaceFrom: "@exa", replaceWith: "example User 0", target: .user("example.user.0"))
        try draft.insertSuggestedMention(suggestion, text: suggestion.replaceWith)

        #expect(
            draft.elements == [
                .plainText("abc "),
                .link(text: "example User 0", target: .user("example.user.0")),
                .plainText(" def 123"),
            ])
        #expect(draft.render() == "abc [example User 0](pn-user://example.user.0) def 123")
    }

    // MARK: JS v2 (message-draft-v2.test.ts), text and mention parts

    @Test("two mentions added by offset give text, mention, text, mention (JS v2 should mention 2 users)")
    func twoMentions() throws {
        var draft = MessageDraft()
        draft.update(text: "Hello @user1 and @user2")
        try draft.addMention(offset: 6, length: 6, target: .user("user1"))
        try draft.addMention(offset: 17, length: 6, target: .user("user2"))

        #expect(
            draft.elements == [
                .plainText("Hello "),
                .link(text: "@user1", target: .user("user1")),
                .plainText(" and "),
                .link(text: "@user2", target: .user("user2")),
            ])
        #expect(draft.text == "Hello @user1 and @user2")
        #expect(draft.render() == "Hello [@user1](pn-user://user1) and [@user2](pn-user://user2)")
    }

    @Test("suggestions inserted one after the other each replace their trigger where it now is (JS v2 should mention 2 - 3 users next to each other)")
    func suggestionsNextToEachOther() throws {
        // JS: "@Te" is too short for a lookup (3 code units); "@Tes" and "@Test" get suggestions, and the
        // change listener inserts the first suggestion after each change. The lookups are by hand here.
        var draft = MessageDraft()
        draft.update(text: "Hello @Te @Tes @Test")
        let first = SuggestedMention(offset: 10, replaceFrom: "@Tes", replaceWith: "Test One", target: .user("test.one"))
        let staleSecond = SuggestedMention(offset: 15, replaceFrom: "@Test", replaceWith: "Test Two", target: .user("test.two"))

        try draft.insertSuggestedMention(first, text: first.replaceWith)
        #expect(draft.text == "Hello @Te Test One @Test")

        // The second suggestion was made before the first insertion: "@Test" has moved, so it is refused.
        let before = draft
        #expect(throws: MessageDraftError.suggestionOutdated(staleSecond)) {
            try draft.insertSuggestedMention(staleSecond, text: staleSecond.replaceWith)
        }
        #expect(draft == before)

        // The suggestion the listener gets after the first insertion has the new offset.
        let second = SuggestedMention(offset: 19, replaceFrom: "@Test", replaceWith: "Test Two", target: .user("test.two"))
        try draft.insertSuggestedMention(second, text: second.replaceWith)

        #expect(
            draft.elements == [
                .plainText("Hello @Te "),
                .link(text: "Test One", target: .user("test.one")),
                .plainText(" "),
                .link(text: "Test Two", target: .user("test.two")),
            ])
    }

    @Test("text links, channel references and user mentions mix in one draft (JS v2 should mix every type of message part)")
    func everyKindOfElement() throws {
        var draft = MessageDraft()
        draft.update(text: "Hello ")
        // JS addLinkedText({text, link, positionInInput}) is insertText + addMention(.url) (MessageDraftV2Js.kt).
        try draft.insertText(offset: draft.length, text: "pubnub")
        try draft.addMention(offset: 6, length: 6, target: .url("https://pubnub.com"))

        // Typing on after the link does not extend it.
        draft.update(text: "Hello pubnub at https://pubnub.com! Hello to ")
        #expect(draft.mentions == [DraftMention(offset: 6, length: 6, target: .url("https://pubnub.com"))])
        try draft.insertText(offset: draft.length, text: "google")
        try draft.addMention(offset: 45, length: 6, target: .url("https://google.com"))

        draft.update(
            text: "Hello pubnub at https://pubnub.com! Hello to google at https://google.com. Referencing "
                + "#Alphacha, #Betachan, #blankchannel, @Caroline, @Danielle, and mentioning @blankuser3 @Evangeli @Frederic")
        #expect(draft.mentions.count == 2)

        // JS inserts the first suggestion after each change, users' before channels'; "#blankchannel"
        // and "@blankuser3" find nothing and stay text. The lookups are by hand here.
        let lookups: [(trigger: String, name: String, target: MentionTarget)] = [
            ("@Caroline", "Caroline Ames", .user("caroline")),
            ("@Danielle", "Danielle Beck", .user("danielle")),
            ("@Evangeli", "Evangeline Cho", .user("evangeline")),
            ("@Frederic", "Frederick Diaz", .user("frederick")),
            ("#Alphacha", "Alphachannel", .channel("alpha")),
            ("#Betachan", "Betachannel", .channel("beta")),
        ]
        for lookup in lookups {
            let suggestion = try Self.suggestion(for: lookup.trigger, in: draft, name: lookup.name, target: lookup.target)
            try draft.insertSuggestedMention(suggestion, text: suggestion.replaceWith)
        }

        #expect(
            draft.text
                == "Hello pubnub at https://pubnub.com! Hello to google at https://google.com. Referencing "
                + "Alphachannel, Betachannel, #blankchannel, Caroline Ames, Danielle Beck, and mentioning @blankuser3 "
                + "Evangeline Cho Frederick Diaz")
        #expect(
            draft.elements == [
                .plainText("Hello "),
                .link(text: "pubnub", target: .url("https://pubnub.com")),
                .plainText(" at https://pubnub.com! Hello to "),
                .link(text: "google", target: .url("https://google.com")),
                .plainText(" at https://google.com. Referencing "),
                .link(text: "Alphachannel", target: .channel("alpha")),
                .plainText(", "),
                .link(text: "Betachannel", target: .channel("beta")),
                .plainText(", #blankchannel, "),
                .link(text: "Caroline Ames", target: .user("caroline")),
                .plainText(", "),
                .link(text: "Danielle Beck", target: .user("danielle")),
                .plainText(", and mentioning @blankuser3 "),
                .link(text: "Evangeline Cho", target: .user("evangeline")),
                .plainText(" "),
                .link(text: "Frederick Diaz", target: .user("frederick")),
            ])
        #expect(MessageDraft.elements(parsing: draft.render()) == draft.elements)
    }

    @Test("a sent draft's text parses back into the same elements on the receiving side (JS v2 send with quotedMessage; Kotlin integration messageDraft_send, createMessageDraft_customParams)")
    func sentTextParsesBack() throws {
        let cases: [(text: String, offset: Int, rendered: String)] = [
            ("Some text with a mention", 17, "Some text with a [mention](pn-user://someUser)"),
            ("Custom params mention", 14, "Custom params [mention](pn-user://someUser)"),
        ]
        for sent in cases {
            var draft = MessageDraft()
            draft.update(text: sent.text)
            try draft.addMention(offset: sent.offset, length: 7, target: .user("someUser"))

            #expect(draft.render() == sent.rendered)
            #expect(
                MessageDraft.elements(parsing: draft.render()) == [
                    .plainText(String(sent.text.dropLast(7))),
                    .link(text: "mention", target: .user("someUser")),
                ])
        }
    }

    // MARK: Mention boundaries (the rules of MessageDraftImpl.insertTextInternal / removeTextInternal)

    @Test("typing at a mention's start shifts it, and typing right after its end does not extend it")
    func insertAtBoundaries() throws {
        var draft = try MessageDraft(text: "Hi Alice!", mentions: [DraftMention(offset: 3, length: 5, target: .user("alice"))])

        try draft.insertText(offset: 3, text: "@")
        #expect(draft.mentions == [DraftMention(offset: 4, length: 5, target: .user("alice"))])

        try draft.insertText(offset: 9, text: "x")
        #expect(draft.text == "Hi @Alicex!")
        #expect(draft.mentions == [DraftMention(offset: 4, length: 5, target: .user("alice"))])
        #expect(draft.elements == [.plainText("Hi @"), .link(text: "Alice", target: .user("alice")), .plainText("x!")])

        // Typing after the text shifts nothing.
        try draft.insertText(offset: draft.length, text: " Bye")
        #expect(draft.mentions == [DraftMention(offset: 4, length: 5, target: .user("alice"))])
    }

    @Test("typing strictly inside a mention removes the mention and keeps its text as plain text")
    func insertInside() throws {
        var draft = try MessageDraft(text: "Hi Alice!", mentions: [DraftMention(offset: 3, length: 5, target: .user("alice"))])
        try draft.insertText(offset: 5, text: "-")
        #expect(draft.text == "Hi Al-ice!")
        #expect(draft.mentions.isEmpty)
        #expect(draft.elements == [.plainText("Hi Al-ice!")])

        // As in the Chat SDK, the offset alone decides: even an empty insertion inside a mention removes it.
        var empty = try MessageDraft(text: "Hi Alice!", mentions: [DraftMention(offset: 3, length: 5, target: .user("alice"))])
        try empty.insertText(offset: 4, text: "")
        #expect(empty.text == "Hi Alice!")
        #expect(empty.mentions.isEmpty)
    }

    @Test("removing text that ends at a mention's start keeps the mention and shifts it left")
    func removeEndingAtStart() throws {
        var draft = try MessageDraft(text: "Hi Alice!", mentions: [DraftMention(offset: 3, length: 5, target: .user("alice"))])
        try draft.removeText(offset: 0, length: 3)
        #expect(draft.text == "Alice!")
        #expect(draft.mentions == [DraftMention(offset: 0, length: 5, target: .user("alice"))])
    }

    @Test("removing text well before a mention shifts it left by the length removed")
    func removeBefore() throws {
        var draft = try MessageDraft(
            text: "Hi there Alice", mentions: [DraftMention(offset: 9, length: 5, target: .user("alice"))])
        try draft.removeText(offset: 2, length: 6)
        #expect(draft.text == "Hi Alice")
        #expect(draft.mentions == [DraftMention(offset: 3, length: 5, target: .user("alice"))])
    }

    @Test("removing the character right after a mention removes the mention")
    func removeStartingAtEnd() throws {
        var draft = try MessageDraft(text: "Hi Alice!", mentions: [DraftMention(offset: 3, length: 5, target: .user("alice"))])
        try draft.removeText(offset: 8, length: 1)
        #expect(draft.text == "Hi Alice")
        #expect(draft.mentions.isEmpty)
    }

    @Test("removing a range that overlaps a mention, or lies inside it, removes the mention")
    func removeOverlapping() throws {
        let start = try MessageDraft(text: "Hi Alice!", mentions: [DraftMention(offset: 3, length: 5, target: .user("alice"))])

        var acrossStart = start
        try acrossStart.removeText(offset: 2, length: 2)
        #expect(acrossStart.text == "Hilice!")
        #expect(acrossStart.mentions.isEmpty)

        var inside = start
        try inside.removeText(offset: 4, length: 2)
        #expect(inside.text == "Hi Ace!")
        #expect(inside.mentions.isEmpty)

        var acrossEnd = start
        try acrossEnd.removeText(offset: 7, length: 2)
        #expect(acrossEnd.text == "Hi Alic")
        #expect(acrossEnd.mentions.isEmpty)
    }

    @Test("removing nothing right after a mention removes it, and removing nothing at its start does not (the Chat SDK's touching rule)")
    func removeNothingAtBoundaries() throws {
        // removeTextInternal: removed when offset <= end && offset + length > start.
        let start = try MessageDraft(text: "Hi Alice!", mentions: [DraftMention(offset: 3, length: 5, target: .user("alice"))])

        var atEnd = start
        try atEnd.removeText(offset: 8, length: 0)
        #expect(atEnd.text == "Hi Alice!")
        #expect(atEnd.mentions.isEmpty)

        var atStart = start
        try atStart.removeText(offset: 3, length: 0)
        #expect(atStart == start)
    }

    // MARK: addMention and removeMention

    @Test("a mention overlapping another is refused with the mention it overlaps, and the draft is unchanged")
    func overlapRefused() throws {
        let alice = DraftMention(offset: 6, length: 5, target: .user("alice"))
        var draft = try MessageDraft(text: "Hello Alice and Bob", mentions: [alice])
        let before = draft

        #expect(throws: MessageDraftError.mentionOverlaps(alice)) {
            try draft.addMention(offset: 8, length: 5, target: .user("x"))
        }
        #expect(throws: MessageDraftError.mentionOverlaps(alice)) {
            try draft.addMention(offset: 4, length: 3, target: .user("x"))
        }
        #expect(throws: MessageDraftError.mentionOverlaps(alice)) {
            try draft.addMention(offset: 6, length: 5, target: .user("alice2"))
        }
        #expect(throws: MessageDraftError.mentionOverlaps(alice)) {
            try draft.addMention(offset: 7, length: 1, target: .user("x"))
        }
        #expect(throws: MessageDraftError.mentionOverlaps(alice)) {
            try draft.addMention(offset: 0, length: 19, target: .url("https://example.com"))
        }
        #expect(draft == before)
    }

    @Test("mentions that only touch are allowed, and the mentions stay sorted whatever the order they were added in")
    func touchingMentions() throws {
        var draft = MessageDraft()
        try draft.insertText(offset: 0, text: "Hello Alice and Bob")
        try draft.addMention(offset: 16, length: 3, target: .user("bob"))
        try draft.addMention(offset: 6, length: 5, target: .user("alice"))
        try draft.addMention(offset: 11, length: 4, target: .channel("and"))
        try draft.addMention(offset: 0, length: 6, target: .url("https://hello.example"))

        #expect(draft.mentions.map(\.offset) == [0, 6, 11, 16])
        #expect(
            draft.elements == [
                .link(text: "Hello ", target: .url("https://hello.example")),
                .link(text: "Alice", target: .user("alice")),
                .link(text: " and", target: .channel("and")),
                .plainText(" "),
                .link(text: "Bob", target: .user("bob")),
            ])
    }

    @Test("removeMention removes the mention containing the offset and keeps its text; its end offset is outside it")
    func removeMention() throws {
        let alice = DraftMention(offset: 3, length: 5, target: .user("alice"))
        let bob = DraftMention(offset: 13, length: 3, target: .user("bob"))
        var draft = try MessageDraft(text: "Hi Alice and Bob", mentions: [alice, bob])

        draft.removeMention(offset: 8)  // one past "Alice": not in it
        draft.removeMention(offset: 0)  // no mention there
        #expect(draft.mentions == [alice, bob])

        draft.removeMention(offset: 5)  // inside "Alice"
        #expect(draft.mentions == [bob])
        draft.removeMention(offset: 13)  // the start of "Bob"
        #expect(draft.mentions.isEmpty)
        #expect(draft.text == "Hi Alice and Bob")
        #expect(draft.elements == [.plainText("Hi Alice and Bob")])
    }

    // MARK: insertSuggestedMention

    @Test("a suggested mention is refused once the text at its offset is no longer its trigger, and the draft is unchanged")
    func suggestionOutdated() throws {
        let suggestion = SuggestedMention(
            offset: 4, replaceFrom: "@exa", replaceWith: "example User 0", target: .user("example.user.0"))

        var edited = MessageDraft()
        edited.update(text: "abc @exa def")
        edited.update(text: "abc @ex def")  // the user deleted a letter after the suggestion came
        let before = edited
        #expect(throws: MessageDraftError.suggestionOutdated(suggestion)) {
            try edited.insertSuggestedMention(suggestion, text: suggestion.replaceWith)
        }
        #expect(edited == before)

        // Kotlin reads the substring at the offset and would throw StringIndexOutOfBoundsException;
        // the trigger is simply gone here.
        var shortened = MessageDraft()
        shortened.update(text: "abc @e")
        #expect(throws: MessageDraftError.suggestionOutdated(suggestion)) {
            try shortened.insertSuggestedMention(suggestion, text: suggestion.replaceWith)
        }
        #expect(shortened.text == "abc @e")
    }

    @Test("a suggested mention still applies while its trigger is unchanged at its offset, even if more was typed after it")
    func suggestionWithMoreTyped() throws {
        // MessageDraftImpl.insertSuggestedMention compares only the replaceFrom.length characters at
        // the offset: "@exa" is still there in "@exam", so the suggestion replaces it and "m" stays.
        let suggestion = SuggestedMention(
            offset: 4, replaceFrom: "@exa", replaceWith: "example User 0", target: .user("example.user.0"))
        var draft = MessageDraft()
        draft.update(text: "abc @exa def")
        draft.update(text: "abc @exam def")
        try draft.insertSuggestedMention(suggestion, text: suggestion.replaceWith)
        #expect(draft.text == "abc example User 0m def")
        #expect(draft.mentions == [DraftMention(offset: 4, length: 14, target: .user("example.user.0"))])
    }

    @Test("a suggested mention can be inserted with text other than its replaceWith")
    func suggestionWithOtherText() throws {
        let suggestion = SuggestedMention(offset: 0, replaceFrom: "#gen", replaceWith: "General", target: .channel("general"))
        var draft = MessageDraft()
        draft.update(text: "#gen is open")
        try draft.insertSuggestedMention(suggestion, text: "#general")
        #expect(draft.elements == [.link(text: "#general", target: .channel("general")), .plainText(" is open")])
        #expect(draft.render() == "[#general](pn-channel://general) is open")
    }

    // MARK: UTF-16 offsets (ours: the Chat SDK counts Kotlin chars, UTF-16 code units, too)

    @Test("offsets count UTF-16 code units: an emoji is two, and an offset between its two units is refused")
    func utf16Offsets() throws {
        var draft = MessageDraft()
        try draft.insertText(offset: 0, text: "👍 Alice")
        #expect(draft.length == 8)
        try draft.addMention(offset: 3, length: 5, target: .user("alice"))
        #expect(draft.elements == [.plainText("👍 "), .link(text: "Alice", target: .user("alice"))])

        let before = draft
        #expect(throws: MessageDraftError.splitsCharacter(offset: 1)) { try draft.insertText(offset: 1, text: "x") }
        #expect(throws: MessageDraftError.splitsCharacter(offset: 1)) { try draft.removeText(offset: 0, length: 1) }
        #expect(throws: MessageDraftError.splitsCharacter(offset: 1)) { try draft.removeText(offset: 1, length: 2) }
        #expect(throws: MessageDraftError.splitsCharacter(offset: 1)) {
            try draft.addMention(offset: 0, length: 1, target: .user("thumb"))
        }
        #expect(draft == before)

        try draft.removeText(offset: 0, length: 2)
        #expect(draft.text == " Alice")
        #expect(draft.mentions == [DraftMention(offset: 1, length: 5, target: .user("alice"))])
    }

    @Test("an offset between a letter and its combining mark is allowed: only surrogate pairs are indivisible")
    func combiningMarks() throws {
        var draft = MessageDraft()
        try draft.insertText(offset: 0, text: "e\u{301}a")
        #expect(draft.length == 3)
        try draft.addMention(offset: 0, length: 1, target: .user("e"))
        #expect(draft.elements == [.link(text: "e", target: .user("e")), .plainText("\u{301}a")])
        #expect(MessageDraft.elements(parsing: draft.render()) == draft.elements)
    }

    @Test("offsets and ranges outside the text are refused with outOfRange, and empty mentions with emptyMention")
    func outOfRange() throws {
        // Stricter than the Chat SDK, whose addMention checks neither (an out-of-range mention fails
        // later in getMessageElements, an empty one renders as "[](target)").
        var draft = MessageDraft()
        try draft.insertText(offset: 0, text: "👍 Alice")
        let before = draft

        #expect(throws: MessageDraftError.outOfRange(offset: 9, length: 0, textLength: 8)) {
            try draft.insertText(offset: 9, text: "x")
        }
        #expect(throws: MessageDraftError.outOfRange(offset: -1, length: 0, textLength: 8)) {
            try draft.insertText(offset: -1, text: "x")
        }
        #expect(throws: MessageDraftError.outOfRange(offset: 6, length: 3, textLength: 8)) {
            try draft.removeText(offset: 6, length: 3)
        }
        #expect(throws: MessageDraftError.outOfRange(offset: 6, length: 3, textLength: 8)) {
            try draft.addMention(offset: 6, length: 3, target: .user("x"))
        }
        #expect(throws: MessageDraftError.emptyMention) { try draft.addMention(offset: 3, length: 0, target: .user("x")) }
        #expect(draft == before)
    }

    // MARK: Rendering and parsing

    @Test("a link whose text holds ] and backslash and whose target holds ) renders escaped and parses back")
    func escapingRoundTrip() {
        let elements: [MessageElement] = [
            .plainText("see "),
            .link(text: #"a]b\c"#, target: .url("http://x/(y)")),
            .plainText(" ok"),
        ]
        let rendered = MessageDraft.render(elements)
        #expect(rendered == #"see [a\]b\\c](http://x/(y\)) ok"#)
        #expect(MessageDraft.elements(parsing: rendered) == elements)
    }

    @Test("text without a complete [text](target) is one plain-text element", arguments: ["a [b c", "[b] c", "a ] (b)", "[b](c", ""])
    func noLink(text: String) {
        let expected: [MessageElement] = text.isEmpty ? [] : [.plainText(text)]
        #expect(MessageDraft.elements(parsing: text) == expected)
    }

    /// The suggestion the Chat SDK's lookup would offer for `trigger` (as typed, sigil included) at
    /// the place it now has in `draft`.
    static func suggestion(
        for trigger: String, in draft: MessageDraft, name: String, target: MentionTarget
    ) throws -> SuggestedMention {
        let text = draft.text
        let range = try #require(text.range(of: trigger), "no \(trigger) in \(text)")
        let offset = text.utf16.distance(from: text.startIndex, to: range.lowerBound)
        return SuggestedMention(offset: offset, replaceFrom: trigger, replaceWith: name, target: target)
    }
}

// MARK: Suggestion triggers (not ported yet: kept for the trigger API)
//
// Kotlin test_user_mention_regexes and test_channel_mention_regexes check the first match of
// findUserMentionMatches / findChannelMentionMatches (MessageDraftImpl.jvm.kt, .ios.kt, .js.kt):
//   JVM: Regex("""(?U)(?<=^|\p{Space})(@[\p{Alpha}\-\d]+)""")   (and "#" for channels)
//   iOS: NSRegularExpression("""(?<=^|\p{Space})(@[\p{Alpha}\-\d]+)""")
//   JS:  Regex("""(?<=^|\p{space})(@[\p{Alpha}\-\d]+)""")
// and MessageDraftImpl.getSuggestedMentions asks for suggestions only for a match longer than 3
// UTF-16 code units (sigil included) that does not start where a mention of the same kind starts.
//
// Input -> first user match ("@"):
//   "@user"              -> "@user"
//   "@us()er"            -> "@us"
//   "@user @fsjdoif"     -> "@user"
//   "@,123aaa @user"     -> "@user"       ("@," is no trigger; "123aaa" follows ",", not a space)
//   "@user aaa"          -> "@user"
//   "aaa @user aaa"      -> "@user"
//   "aaa @user,"         -> "@user"
//   "aaa @user-user aaa" -> "@user-user"
//   "@user-user"         -> "@user-user"
//   "@brzęczy"           -> "@brzęczy"
//   "@ąśćżć"             -> "@ąśćżć"
//
// Input -> first channel match ("#"):
//   "#user"              -> "#user"
//   "#us()er"            -> "#us"
//   "#user #fsjdoif"     -> "#user"
//   "#123aaa #user"      -> "#123aaa"     (digits count)
//   "#user aaa"          -> "#user"
//   "aaa #user aaa"      -> "#user"
//   "aaa #user,"         -> "#user"
//   "aaa #user-user aaa" -> "#user-user"
//   "#user-user"         -> "#user-user"
//   "#brzęczy"           -> "#brzęczy"
//   "#ąśćżć"             -> "#ąśćżć"
