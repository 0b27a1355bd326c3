import Foundation
import ReplicaModel
@testable import ReplicaStore
import Testing

@Suite("Drafts in the store")
struct DraftStoreTests {
    @Test("each edit is saved in its own transaction; the draft, its mentions and its quote survive reopening the store")
    func persistence() async throws {
        let path = Fixture.temporaryPath()
        let key = DraftKey(channelId: "general")
        let thread = DraftKey(channelId: "general", threadRoot: 17_900_000_000_000_001)
        do {
            let store = try Store.open(at: path)
            try await store.drafts.edit(key) { try $0.insertText(offset: 0, text: "Hi Alice 👋") }
            try await store.drafts.edit(key) { try $0.addMention(offset: 3, length: 5, target: .user("alice")) }
            try await store.drafts.edit(key) { $0.quotedMessage = QuotedMessage(timetoken: 17_900_000_000_000_002, text: "q", userId: "bob") }
            try await store.drafts.edit(thread) { try $0.insertText(offset: 0, text: "in the thread") }
        }
        let reopened = try Store.open(at: path)
        let draft = try #require(try await reopened.fetch(reopened.queries.draft(key)))
        #expect(draft.text == "Hi Alice 👋" && draft.render() == "Hi [Alice](pn-user://alice) 👋")
        #expect(draft.quotedMessage?.userId == "bob")
        #expect(try await reopened.fetch(reopened.queries.draft(thread))?.text == "in the thread")
        #expect(try await reopened.fetch(reopened.queries.drafts()).map(\.key).sorted { $0.description < $1.description } == [key, thread])
    }

    @Test("a refused edit changes nothing; an edit that empties the draft deletes it; removeDraft removes it")
    func refusalAndEmpty() async throws {
        let store = try Fixture.store()
        let key = DraftKey(channelId: "c")
        try await store.drafts.edit(key) { try $0.insertText(offset: 0, text: "abc") }
        await #expect(throws: MessageDraftError.self) {
            try await store.drafts.edit(key) { draft in
                try draft.insertText(offset: 3, text: "def")
                try draft.addMention(offset: 10, length: 1, target: .user("x"))   // out of range: the whole edit is refused
            }
        }
        #expect(try await store.fetch(store.queries.draft(key))?.text == "abc")
        try await store.drafts.edit(key) { try $0.removeText(offset: 0, length: 3) }
        #expect(try await store.fetch(store.queries.draft(key)) == nil)
        #expect(try await store.fetch(store.queries.drafts()).isEmpty)
        try await store.drafts.save(try MessageDraft(text: "x"), for: key)
        #expect(try await store.drafts.remove(key))
        #expect(try await !store.drafts.remove(key))
    }

    @Test("an observation of a draft sees every saved edit")
    func observation() async throws {
        let store = try Fixture.store()
        let key = DraftKey(channelId: "c")
        var values = store.observe(store.queries.draft(key)).makeAsyncIterator()
        #expect(try await values.next() == .some(nil))
        try await store.drafts.edit(key) { try $0.insertText(offset: 0, text: "h") }
        #expect(try await values.next()??.text == "h")
        try await store.drafts.edit(key) { try $0.insertText(offset: 1, text: "i") }
        #expect(try await values.next()??.text == "hi")
    }

    @Test("a draft row that is not a draft is a typed error, not a crash")
    func corruptRow() async throws {
        let store = try Fixture.store()
        try await store.write { db in
            try db.execute(sql: "INSERT INTO drafts (channel_id, thread_root, text, draft, updated_at) VALUES ('c', 0, 'x', '{\"text\":\"ab\",\"mentions\":[{\"offset\":5,\"length\":1,\"target\":{\"user\":{\"_0\":\"u\"}}}]}', 0)")
        }
        await #expect(throws: StoreError.self) { _ = try await store.fetch(store.queries.draft(DraftKey(channelId: "c"))) }
    }
}

@Suite("Mention suggestions from the store")
struct MentionSuggestionTests {
    @Test("@ suggests the channel's members (or all users) by name prefix, then id; # suggests channels; limits apply; offline")
    func suggestions() async throws {
        let store = try Fixture.store()
        _ = try await store.load(users: [
            try Fixture.user("alice", name: "Alice"), try Fixture.user("alfred", name: "Alfred"),
            try Fixture.user("al_x", name: "Zed"), try Fixture.user("alan", name: "Alan"), try Fixture.user("alicia", name: "Alicia"),
            try Fixture.user("zoe", name: "Ali Zoe"), try Fixture.user("alix", name: "Xavier"),
        ])
        _ = try await store.load(channels: [try Fixture.channel("general", name: "General"), try Fixture.channel("gen-z")])
        _ = try await store.load(members: [
            try Fixture.member("general", "alice"), try Fixture.member("general", "alfred"), try Fixture.member("general", "al_x"),
        ])
        let draft = try MessageDraft(text: "hi @ali and @alf, see #gen")
        let suggestions = try await store.fetch(store.queries.mentionSuggestions(for: draft, inChannel: "general"))
        #expect(suggestions.map(\.replaceWith) == ["Alice", "Alfred", "General", "gen-z"])
        #expect(suggestions.first == SuggestedMention(offset: 3, replaceFrom: "@ali", replaceWith: "Alice", target: .user("alice")))

        var options = SuggestionOptions()
        options.userSource = .global
        let global = try await store.fetch(store.queries.mentionSuggestions(
            for: try MessageDraft(text: "@ali"), inChannel: "general", options: options))
        // Name matches first (by name), then id matches: alix's name is Xavier.
        #expect(global.map(\.target) == [.user("zoe"), .user("alice"), .user("alicia"), .user("alix")])
        options.userLimit = 2
        #expect(try await store.fetch(store.queries.mentionSuggestions(
            for: try MessageDraft(text: "@ali"), inChannel: "general", options: options)).count == 2)
        let all = try await store.fetch(store.queries.mentionSuggestions(for: try MessageDraft(text: "@ala"), inChannel: "general"))
        #expect(all.isEmpty)   // alan is no member of general

        var picked = draft
        try picked.insertSuggestedMention(suggestions[0], text: suggestions[0].replaceWith)
        #expect(picked.render() == "hi [Alice](pn-user://alice) and @alf, see #gen")
    }
}
