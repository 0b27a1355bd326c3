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
        try store.searchIndexer?.indexPendingNow()
        return try store.readingNow { tx in try Int.fetchOne(tx.db, sql: "SELECT count(*) FROM message_search") ?? 0 }
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
        // Nothing fetches the search: the store's indexer, scheduled by the commit, indexes the
        // message and its commit gives the observation its next value (before it, the value
        // may say the message is not indexed yet).
        try await store.load(messages: [try Fixture.message("i", text: "Invoice #42 attached", timetoken: 10)])
        var value = try await values.next()
        while value?.messages.isEmpty == true {
            #expect(value?.unindexed == 1)
            value = try await values.next()
        }
        #expect(value?.messages.map(\.id) == ["i"] && value?.unindexed == 0)
        try store.transactionNow { tx in try tx.messages.deleteMessage(id: "i") }
        #expect(try await values.next()?.messages.isEmpty == true)
    }

    @Test("the index is read from its newest key down and each hit's message found by its key; no sort of all matches")
    func queryPlan() async throws {
        let store = try Fixture.store()
        try await store.load(messages: [try Fixture.message("m", text: "hello", timetoken: 1)])
        // Each step with its parent (0: the query's top level), so that the sorts inside the
        // shown-text column's subqueries do not count.
        func plan(_ sql: String, window: Int? = nil) throws -> [(id: Int, parent: Int, detail: String)] {
            var arguments: StatementArguments = [
                SearchSQL.match("\"hello\"", channels: ["general"]), "[\"general\"]", nil, nil, nil, 21, 0, Int64.min, Int64.max,
            ]
            if let window { arguments += [window] }
            return try store.readingNow { tx in
                try Row.fetchAll(tx.db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { ($0["id"], $0["parent"], $0["detail"]) }
            }
        }
        let newest = try plan(SearchSQL.byNewest).filter { $0.parent == 0 }.map(\.detail)
        #expect(newest.first?.hasPrefix("SCAN message_search VIRTUAL TABLE") == true, "\(newest)")
        #expect(newest.contains { $0.contains("SEARCH k USING INTEGER PRIMARY KEY (rowid=?)") }, "\(newest)")
        #expect(newest.contains { $0.contains("SEARCH msg USING INTEGER PRIMARY KEY (rowid=?)") }, "\(newest)")
        #expect(!newest.contains { $0.contains("TEMP B-TREE") }, "\(newest)")
        // Relevance reads the window newest first, unsorted, and sorts only the window.
        let ranked = try plan(SearchSQL.byRelevance, window: 500)
        let hits = try #require(ranked.first { $0.detail == "CO-ROUTINE hits" })
        let window = ranked.filter { $0.parent == hits.id }.map(\.detail)
        #expect(window.first?.hasPrefix("SCAN message_search VIRTUAL TABLE") == true, "\(window)")
        #expect(!window.contains { $0.contains("TEMP B-TREE") }, "\(window)")
        #expect(ranked.filter { $0.parent == 0 && $0.detail.contains("TEMP B-TREE FOR ORDER BY") }.count == 1, "\(ranked)")
    }

    @Test("newest first is time order even when older history is stored after newer (a catch-up pages backwards)")
    func newestIsTimeOrder() async throws {
        let store = try Fixture.store()
        try await store.load(messages: [try Fixture.message("new", text: "release notes", timetoken: 300)])
        try await store.load(messages: [try Fixture.message("old", text: "release plan", timetoken: 100)])
        try await store.load(messages: [try Fixture.message("mid", text: "release date", timetoken: 200)])
        try await store.load(messages: [try Fixture.message("pending", text: "release party")])
        #expect(try ids(store, "release") { $0.order = .newest } == ["pending", "new", "mid", "old"])
        #expect(try ids(store, "release") { $0.order = .newest; $0.since = Timetoken(rawValue: 150) } == ["new", "mid"])
        #expect(try ids(store, "release") { $0.order = .newest; $0.before = Timetoken(rawValue: 300) } == ["mid", "old"])
        // The pending message sent: it sorts by its timetoken now.
        try await store.load(messages: [try Fixture.message("pending", text: "release party", timetoken: 250)])
        #expect(try ids(store, "release") { $0.order = .newest } == ["new", "pending", "mid", "old"])
        #expect(try indexRows(store) == 4)
    }

    @Test("messages of different channels with one timetoken each get a key; a channel's search reads its own")
    func sharedTimetokenAndScope() async throws {
        let store = try Fixture.store()
        let channels = (0..<20).map { "room-\($0)" }
        try await store.load(messages: try channels.map { try Fixture.message("m-\($0)", channel: $0, text: "standup at nine", timetoken: 777) })
        #expect(Set(try ids(store, "standup") { $0.limit = 100 }) == Set(channels.map { "m-\($0)" }))
        #expect(try ids(store, "standup") { $0.channels = ["room-7"] } == ["m-room-7"])
        #expect(try ids(store, "standup") { $0.channels = ["room-7", "room-12"]; $0.order = .newest }.sorted() == ["m-room-12", "m-room-7"])
        // More channels than the index is asked about: each hit's channel is still compared.
        let many = (0..<40).map { "room-\($0 * 2)" } + ["elsewhere"]
        #expect(Set(try ids(store, "standup") { $0.channels = many; $0.limit = 100 }) == Set(stride(from: 0, to: 20, by: 2).map { "m-room-\($0)" }))
        // A channel's scope token is one token, whatever its id holds.
        #expect(SearchIndex.scopeToken("a b/c:d") != SearchIndex.scopeToken("a b/c:e"))
        #expect(SearchIndex.scopeToken("x").count == 17)
        // A word is never matched against the scope column.
        #expect(try ids(store, "c").isEmpty)
    }

    @Test("relevance ranks the newest matches; a page past that window still finds the older ones")
    func rankedWindow() async throws {
        let store = try Fixture.store()
        let count = MessageSearch.rankedWindow + 30
        try await store.load(messages: try (1...count).map { try Fixture.message("m\($0)", text: "ping number \($0)", timetoken: UInt64($0)) })
        var seen = Set<String>()
        var search = MessageSearch("ping")
        search.limit = 100
        while true {
            let page = try store.fetchNow(store.queries.search(search))
            seen.formUnion(page.messages.map(\.id))
            if !page.hasMore { break }
            search = search.nextPage
        }
        #expect(seen.count == count)
    }

    @Test("when the newest message is hard-deleted and its rowid given to the next one, that one is indexed too")
    func reusedRowid() async throws {
        let store = try Fixture.store()
        try await store.load(messages: [try Fixture.message("a", text: "alpha", timetoken: 1), try Fixture.message("b", text: "bravo", timetoken: 2)])
        #expect(try indexRows(store) == 2)
        let rowid = try store.readingNow { tx in try Int64.fetchOne(tx.db, sql: "SELECT rowid FROM messages WHERE id = 'b'") }
        try store.transactionNow { tx in try tx.messages.deleteMessage(id: "b") }
        try await store.load(messages: [try Fixture.message("c", text: "charlie", timetoken: 3)])
        #expect(try store.readingNow { tx in try Int64.fetchOne(tx.db, sql: "SELECT rowid FROM messages WHERE id = 'c'") } == rowid)
        #expect(try ids(store, "charlie") == ["c"])
        #expect(try ids(store, "bravo").isEmpty)
        #expect(try indexRows(store) == 2)
    }

    @Test("a store short of space indexes nothing (searches say so); once space is back, the next write indexes what waited")
    func shortOfSpace() async throws {
        let path = Fixture.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try Store.open(at: path)
        let free = FreeSpace(bytes: 1 << 20)
        store.maintenance.setFreeSpace { free.bytes }
        try await store.load(messages: [try Fixture.message("a", text: "quarterly report", timetoken: 1)])
        let short = try await store.fetch(store.queries.search(MessageSearch("quarterly")))
        #expect(short.messages.isEmpty && short.unindexed == 1)
        free.bytes = 1 << 30
        try await store.load(messages: [try Fixture.message("b", text: "quarterly plan", timetoken: 2)])
        #expect(try await store.fetch(store.queries.search(MessageSearch("quarterly"))).messages.map(\.id).sorted() == ["a", "b"])
        try store.close()
    }

    private final class FreeSpace: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Int
        init(bytes: Int) { value = bytes }
        var bytes: Int {
            get { lock.withLock { value } }
            set { lock.withLock { value = newValue } }
        }
    }

    // MARK: Existing stores

    @Test("a store from before search, or from the first index, is indexed in batches after the migration; its backup keeps the index", arguments: [16, 18])
    func backfill(before version: Int) async throws {
        let path = Fixture.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        var old = StoreOptions()
        old.migrations = try Migration.bundled().filter { $0.version < version }
        do {
            let store = try Store.open(at: path, options: old)
            try await store.load(messages: (1...5).map { try Fixture.message("m\($0)", text: "archived note \($0)", timetoken: UInt64($0)) })
            try store.close()
        }
        var manual = StoreOptions()
        manual.migration = .manual
        let store = try Store.open(at: path, options: manual)
        store.searchIndexer?.close()  // this test runs the batches itself
        _ = try store.maintenance.migrate()
        let before = try store.readingNow { tx in try SearchIndex.unindexed(tx.db) }
        #expect(before == 5)
        let first = try store.transactionNow { tx in try SearchIndex.indexBatch(tx.db, limit: 2) }
        #expect(first == 2)
        #expect(try store.readingNow { tx in try SearchIndex.unindexed(tx.db) } == 3)
        while try store.transactionNow({ tx in try SearchIndex.indexBatch(tx.db, limit: 2) }) > 0 {}
        let after = try store.readingNow { tx in
            try Row.fetchAll(tx.db, sql: SearchSQL.byNewest, arguments: [
                SearchSQL.match("\"archived\"", channels: nil), nil, nil, nil, nil, 10, 0, Int64.min, Int64.max,
            ]).map { $0["id"] as String }
        }
        #expect(after == ["m5", "m4", "m3", "m2", "m1"])
        #expect(try store.readingNow { tx in try SearchIndex.unindexed(tx.db) } == 0)
        // A backup (VACUUM INTO) keeps each message's rowid, so its index still finds the messages.
        let backup = path + ".backup"
        try store.maintenance.backup(to: backup)
        let copy = try Store.open(at: backup)
        #expect(try copy.fetchNow(copy.queries.search(MessageSearch("note 3"))).messages.map(\.id) == ["m3"])
        try copy.close()
        try store.close()
    }
}
