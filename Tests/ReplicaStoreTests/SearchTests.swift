import Foundation
import GRDB
import ReplicaModel
import Testing

@testable import ReplicaStore

/// Message search (`docs/search.md`): the folding, the match expression, and the index kept true
/// by every write path of the store.
@Suite("Search")
struct SearchTests {
    // MARK: Folding

    @Test("unspaced scripts become overlapping pairs and the last letter; other text is left to the tokenizer")
    func folding() {
        func words(_ text: String) -> [String] {
            SearchFolding.fold(text).unicodeScalars.split(separator: " ").map { String(String.UnicodeScalarView($0)) }
        }
        #expect(words("我住在東京都") == ["我住", "住在", "在東", "東京", "京都", "都"])
        #expect(words("Tokyo 東京 trip") == ["Tokyo", "東京", "京", "trip"])
        #expect(words("猫") == ["猫"])
        #expect(SearchFolding.fold("plain ASCII, unchanged!") == "plain ASCII, unchanged!")
        #expect(words("ＡＢＣ café") == ["ABC", "café"])
        #expect(words("สวัสดี").prefix(3) == ["สว", "วั", "ัส"])
    }

    @Test("a query is quoted word by word, its last word a prefix; operators are only text")
    func matchExpression() {
        #expect(SearchFolding.matchExpression(for: "reco") == "\"reco\"*")
        #expect(SearchFolding.matchExpression(for: "invoice march") == "\"invoice\" \"march\"*")
        #expect(SearchFolding.matchExpression(for: "a") == "\"a\"")
        #expect(SearchFolding.matchExpression(for: "東京都") == "\"東京 京都\"")
        #expect(SearchFolding.matchExpression(for: "都") == "\"都\"*")
        #expect(SearchFolding.matchExpression(for: "NEAR(a b) \"x\" OR y*") == "\"NEAR\" \"a\" \"b\" \"x\" \"OR\" \"y\"")
        #expect(SearchFolding.matchExpression(for: " ?!... ") == nil)
        #expect(SearchFolding.matchExpression(for: "") == nil)
    }

    // MARK: Finding

    private func ids(_ store: Store, _ text: String, _ configure: (inout MessageSearch) -> Void = { _ in }) throws -> [String] {
        var search = MessageSearch(text)
        configure(&search)
        return try store.fetchNow(store.queries.search(search)).messages.map(\.id)
    }

    private func indexRows(_ store: Store) throws -> Int {
        try store.readingNow { tx in try Int.fetchOne(tx.db, sql: "SELECT count(*) FROM message_search") ?? 0 }
    }

    @Test("case, diacritics, prefixes, a 2-character Chinese word and one character")
    func finds() async throws {
        let store = try Fixture.store()
        try await store.load(messages: [
            try Fixture.message("cafe", text: "Meet at the Café Ångström", timetoken: 10),
            try Fixture.message("reco", text: "the client will reconnect soon", timetoken: 20),
            try Fixture.message("tokyo", text: "我住在東京都", timetoken: 30),
            try Fixture.message("other", text: "nothing to see", timetoken: 40),
        ])
        #expect(try ids(store, "cafe") == ["cafe"])
        #expect(try ids(store, "ANGSTROM") == ["cafe"])
        #expect(try ids(store, "reco") == ["reco"])
        #expect(try ids(store, "東京") == ["tokyo"])
        #expect(try ids(store, "京都") == ["tokyo"])
        #expect(try ids(store, "都") == ["tokyo"])
        #expect(try ids(store, "東都").isEmpty)
        #expect(try ids(store, "the").sorted() == ["cafe", "reco"])
        #expect(try ids(store, "the zebra").isEmpty)
        #expect(try ids(store, "...").isEmpty)
    }

    @Test("channel, author and date filters; relevance or newest order; pages")
    func filtersAndPages() async throws {
        let store = try Fixture.store()
        var messages: [Message] = []
        for i in 1...7 {
            let channel = i % 2 == 0 ? "even" : "odd"
            let user = i <= 3 ? "alice" : "bob"
            let text = i == 5 ? "deploy" : "deploy the release number \(i) today"
            messages.append(try Fixture.message("m\(i)", channel: channel, user: user, text: text, timetoken: UInt64(i * 10)))
        }
        messages.append(try Fixture.message("pending", channel: "odd", text: "deploy pending"))
        try await store.load(messages: messages)
        #expect(try ids(store, "deploy") { $0.channels = ["even"]; $0.order = .newest } == ["m6", "m4", "m2"])
        #expect(try ids(store, "deploy") { $0.authors = ["alice"]; $0.order = .newest } == ["pending", "m3", "m2", "m1"])
        #expect(try ids(store, "deploy") { $0.since = 30; $0.before = 60; $0.order = .newest } == ["m5", "m4", "m3"])
        // Newest: the pending message first; relevance: the shortest text first (bm25).
        #expect(try ids(store, "deploy") { $0.order = .newest }.prefix(2) == ["pending", "m7"])
        #expect(try ids(store, "deploy").first == "m5")
        let first = try store.fetchNow(store.queries.search({ var s = MessageSearch("deploy"); s.limit = 3; s.order = .newest; return s }()))
        #expect(first.messages.map(\.id) == ["pending", "m7", "m6"] && first.hasMore)
        var last = MessageSearch("deploy")
        last.order = .newest
        last.limit = 3
        last = last.nextPage.nextPage
        let page = try store.fetchNow(store.queries.search(last))
        #expect(page.messages.map(\.id) == ["m2", "m1"] && !page.hasMore)
        #expect(try ids(store, "deploy") { $0 = $0.inThread(of: "odd", root: 10) }.isEmpty)
        var bad = MessageSearch("deploy")
        bad.limit = 0
        #expect(throws: StoreError.self) { try store.fetchNow(store.queries.search(bad)) }
    }

    // MARK: Every write path

    @Test("an edit is searched by its new text; removing it brings the old text back")
    func edits() async throws {
        let store = try Fixture.store()
        try await store.load(messages: [try Fixture.message("m", user: "alice", text: "original wording", timetoken: 100)])
        let edit = try ChatMessageAction(
            type: ChatSDKFormat.editedType, value: "corrected phrasing", userId: "alice", channelId: "general",
            messageTimetoken: 100, actionTimetoken: 110)
        try await store.load(messageActions: [edit])
        #expect(try ids(store, "corrected") == ["m"])
        #expect(try ids(store, "original").isEmpty)
        // An edit by someone who may not edit alice's message does not count, so it is not searched.
        let forged = try ChatMessageAction(
            type: ChatSDKFormat.editedType, value: "forged words", userId: "mallory", channelId: "general",
            messageTimetoken: 100, actionTimetoken: 120)
        try await store.load(messageActions: [forged])
        #expect(try ids(store, "forged").isEmpty)
        #expect(try ids(store, "corrected") == ["m"])
        // Once mallory may edit (a moderator), the newest counted edit is hers.
        try store.transactionNow { tx in try tx.db.execute(sql: "INSERT INTO message_editors (user_id) VALUES ('mallory')") }
        #expect(try ids(store, "forged") == ["m"])
        try store.transactionNow { tx in try tx.db.execute(sql: "DELETE FROM message_editors") }
        #expect(try ids(store, "forged").isEmpty)
        #expect(try await store.removeMessageAction(
            channelId: "general", messageTimetoken: 100, type: ChatSDKFormat.editedType, value: "corrected phrasing", userId: "alice"))
        #expect(try ids(store, "original") == ["m"])
        #expect(try ids(store, "corrected").isEmpty)
    }

    @Test("a soft-deleted message is not found, a restored one is again; a hard-deleted one leaves the index")
    func deletes() async throws {
        let store = try Fixture.store()
        try await store.load(messages: [try Fixture.message("m", user: "alice", text: "secret plans", timetoken: 100)])
        let deleted = try ChatMessageAction(
            type: ChatSDKFormat.deletedType, value: ChatSDKFormat.deletedValue, userId: "alice", channelId: "general",
            messageTimetoken: 100, actionTimetoken: 110)
        try await store.load(messageActions: [deleted])
        #expect(try ids(store, "secret").isEmpty)
        #expect(try await store.removeMessageAction(
            channelId: "general", messageTimetoken: 100, type: ChatSDKFormat.deletedType, value: ChatSDKFormat.deletedValue,
            userId: "alice"))
        #expect(try ids(store, "secret") == ["m"])
        #expect(try indexRows(store) == 1)
        try store.transactionNow { tx in try tx.messages.deleteMessage(id: "m") }
        #expect(try ids(store, "secret").isEmpty)
        #expect(try indexRows(store) == 0)
    }

    @Test("a muted user's messages are not found")
    func muted() async throws {
        let store = try Fixture.store()
        try await store.load(messages: [
            try Fixture.message("a", user: "alice", text: "lunch today?", timetoken: 1),
            try Fixture.message("s", user: "spammer", text: "cheap lunch deals", timetoken: 2),
        ])
        _ = try store.transactionNow { tx in try tx.moderation.setShownMutes(owner: "me", ["spammer"]) }
        #expect(try ids(store, "lunch") == ["a"])
    }

    @Test("a pending send is found, once, before and after it gets its timetoken; a resend's new order keeps it")
    func sends() async throws {
        let store = try Fixture.store()
        try await store.load(messages: [try Fixture.message("p", text: "draft of the memo")])
        #expect(try ids(store, "memo") == ["p"])
        try await store.load(messages: [try Fixture.message("p", text: "draft of the memo", timetoken: 500)])
        #expect(try ids(store, "memo") == ["p"])
        #expect(try indexRows(store) == 1)
    }

    @Test("a message written twice in one transaction (a page that repeats it, an upsert after an insert) is noted once and indexed by its last text")
    func twiceInOneTransaction() async throws {
        let store = try Fixture.store()
        try await store.load(messages: [
            try Fixture.message("m", text: "first words", timetoken: 10), try Fixture.message("m", text: "second words", timetoken: 10),
        ])
        #expect(try ids(store, "second") == ["m"] && (try ids(store, "first")).isEmpty)
        // An upsert of a stored message (its own send coming back in a history page) with an edit
        // added in the same transaction.
        try store.transactionNow { tx in
            _ = try tx.upsert(message: try Fixture.message("m", text: "third words", timetoken: 10))
            _ = try tx.upsert(message: try Fixture.message("m", text: "fourth words", timetoken: 10))
        }
        #expect(try ids(store, "fourth") == ["m"])
        #expect(try indexRows(store) == 1)
    }

    @Test("a message stored undecryptable is found only once it is decrypted")
    func decryptedLater() async throws {
        let store = try Fixture.store()
        var locked = try Fixture.message("x", text: "", timetoken: 100)
        locked.contentType = "pubnub/undecryptable"
        try await store.load(messages: [locked])
        #expect(try indexRows(store) == 0)
        var opened = try Fixture.message("x", text: "the launch code", timetoken: 100)
        opened.contentType = ChatSDKFormat.textContentType
        try await store.load(messages: [opened])
        #expect(try ids(store, "launch") == ["x"])
    }

    @Test("a search observed is given again when a matching message arrives or is deleted")
    func observed() async throws {
        let store = try Fixture.store()
        var values = store.observe(store.queries.search(MessageSearch("invoice"))).makeAsyncIterator()
        #expect(try await values.next()?.messages.isEmpty == true)
        try await store.load(messages: [try Fixture.message("i", text: "Invoice #42 attached", timetoken: 10)])
        #expect(try await values.next()?.messages.map(\.id) == ["i"])
        try store.transactionNow { tx in try tx.messages.deleteMessage(id: "i") }
        #expect(try await values.next()?.messages.isEmpty == true)
    }

    @Test("the index is read first and each hit's message found by its rowid")
    func queryPlan() async throws {
        let store = try Fixture.store()
        try await store.load(messages: [try Fixture.message("m", text: "hello", timetoken: 1)])
        // The planner may not read a channel's messages first and ask the index about each.
        let plan = try store.readingNow { tx in
            try Row.fetchAll(
                tx.db, sql: """
                    EXPLAIN QUERY PLAN SELECT msg.id FROM message_search CROSS JOIN messages msg ON msg.rowid = message_search.rowid
                    WHERE message_search MATCH '"hello"' AND msg.channel_id IN (SELECT value FROM json_each('["general"]'))
                    """
            ).map { $0["detail"] as String? ?? "" }
        }
        #expect(plan.first?.hasPrefix("SCAN message_search VIRTUAL TABLE") == true)
        #expect(plan.contains { $0.contains("SEARCH msg USING INTEGER PRIMARY KEY (rowid=?)") })
    }

    // MARK: Existing stores

    @Test("a store from before search is indexed in batches after the migration, and its backup keeps the index")
    func backfill() async throws {
        let path = Fixture.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        var old = StoreOptions()
        old.migrations = try Migration.bundled().filter { $0.version < 16 }
        do {
            let store = try Store.open(at: path, options: old)
            try await store.load(messages: (1...5).map { try Fixture.message("m\($0)", text: "archived note \($0)", timetoken: UInt64($0)) })
            try store.close()
        }
        let store = try Store.open(at: path)
        let before = try store.fetchNow(store.queries.search(MessageSearch("archived")))
        #expect(before.unindexed == 5 && before.messages.isEmpty)
        // A message written meanwhile is indexed by its own write.
        try await store.load(messages: [try Fixture.message("new", text: "archived today", timetoken: 9)])
        #expect(try ids(store, "archived") == ["new"])
        let first = try store.transactionNow { tx in try SearchIndex.backfill(tx.db, limit: 2) }
        #expect(first == 2)
        #expect(try store.fetchNow(store.queries.search(MessageSearch("archived"))).unindexed == 3)
        try await store.indexEarlierMessages()
        let after = try store.fetchNow(store.queries.search({ var s = MessageSearch("archived"); s.order = .newest; return s }()))
        #expect(after.unindexed == 0)
        #expect(after.messages.map(\.id) == ["new", "m5", "m4", "m3", "m2", "m1"])
        #expect(try indexRows(store) == 6)
        // A backup (VACUUM INTO) keeps each message's rowid, so its index still finds the messages.
        let backup = path + ".backup"
        try store.maintenance.backup(to: backup)
        let copy = try Store.open(at: backup)
        #expect(try copy.fetchNow(copy.queries.search(MessageSearch("note 3"))).messages.map(\.id) == ["m3"])
        try copy.close()
        try store.close()
    }
}
