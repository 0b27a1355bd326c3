import Foundation
import GRDB
import ReplicaModel
import Testing

@testable import ReplicaStore

/// The storage budget (`docs/store.md`, "Storage budget"): what eviction may take, what it must
/// keep, the bound it records for scroll-back and search, and the space it gives back.
@Suite("Retention")
struct RetentionTests {
    /// A timetoken `hours` before now.
    static func hoursAgo(_ hours: Double) -> UInt64 {
        UInt64((Date().timeIntervalSince1970 - hours * 3600) * 10_000_000)
    }

    static func messageCount(_ store: Store) throws -> Int {
        try store.readingNow { tx in try Int.fetchOne(tx.db, sql: "SELECT count(*) FROM messages") ?? 0 }
    }

    @Test("a new store gives space back incrementally from its first page")
    func newStoreIsIncremental() throws {
        let path = Fixture.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try Store.open(at: path)
        #expect(try store.readingNow { tx in try Int.fetchOne(tx.db, sql: "PRAGMA auto_vacuum") } == 2)
        try store.close()
    }

    @Test("a channel keeps its newest messages; the evicted ones are below a recorded bound that scroll-back and search report")
    func perChannelRule() async throws {
        let store = try Fixture.store()
        try await store.load(messages: try (0..<100).map { i in try Fixture.message("m\(i)", text: "note \(i)", timetoken: UInt64(1_000 + i)) })
        let report = try await store.enforceRetention(RetentionPolicy(perChannel: .messages(30)), userId: "me")
        #expect(report.evicted == 70 && report.channels == ["general"])
        let left = try await store.fetch(store.queries.messages(inChannel: "general")).map(\.id)
        #expect(left == (70..<100).map { "m\($0)" })
        #expect(try await store.oldestTimetoken(channel: "general") == 1_070)
        let page = try store.fetchNow(store.queries.search(MessageSearch("note")))
        #expect(page.completeFrom == ["general": 1_070] && page.messages.count == 20)
        // Enforcing again takes nothing more.
        #expect(try await store.enforceRetention(RetentionPolicy(perChannel: .messages(30)), userId: "me").evicted == 0)
        // Scroll-back down to the start of the channel's history forgets the bound.
        try await store.lowerHistoryBound(channel: "general", to: 1_020, reachedStart: false)
        #expect(try await store.oldestTimetoken(channel: "general") == 1_020)
        try await store.lowerHistoryBound(channel: "general", to: nil, reachedStart: true)
        #expect(try await store.oldestTimetoken(channel: "general") == 1_070)
    }

    @Test("the days rule keeps the last days; read positions, hot channels and keepNewest keep more")
    func daysAndReadPositions() async throws {
        let store = try Fixture.store()
        var messages: [Message] = []
        for channel in ["read", "unread", "hot", "other"] {
            for day in 0..<30 {
                messages.append(try Fixture.message("\(channel)-\(day)", channel: channel, timetoken: Self.hoursAgo(Double(30 - day) * 24)))
            }
        }
        try await store.load(messages: messages)
        // "read" was read up to day 19; "unread" was never read (everything in it is unread).
        var read = try Fixture.member("read", "me")
        read.custom = [ChatSDKFormat.lastReadKey: .string(String(Self.hoursAgo(11 * 24) + 1))]
        try await store.load(members: [read, try Fixture.member("unread", "me")])
        var policy = RetentionPolicy(perChannel: .days(7))
        policy.keepNewest = 3
        try await store.enforceRetention(policy, userId: "me", protecting: ["hot"])
        func days(_ channel: String) async throws -> [Int] {
            try await store.fetch(store.queries.messages(inChannel: channel)).compactMap { Int($0.id.split(separator: "-")[1]) }
        }
        #expect(try await days("other") == Array(24..<30), "the last 7 days")
        #expect(try await days("read") == Array(20..<30), "nothing after the read position goes")
        let unread = try await days("unread")
        let hotDays = try await days("hot")
        #expect(unread.count == 30 && hotDays.count == 30)
    }

    @Test("property: random stores, writes and budgets never lose a pending, pinned, named, unread, hot, newest or thread-root message, a draft, or any message above a bound",
          arguments: 0..<40)
    func neverEvictsWhatIsKept(seed: UInt64) async throws {
        var random = Seeded(seed)
        let path = Fixture.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try Store.open(at: path)
        let channels = (0..<(1 + random.below(5))).map { "c\($0)" }
        var all: [Message] = []
        var kept: Set<String> = []
        var members: [Member] = []
        var pinned: [Channel] = []
        var hot: Set<String> = []
        var keepNewest = 1 + random.below(30)
        if random.below(4) == 0 { keepNewest = 20 }
        for channel in channels {
            let count = random.below(250)
            var sent: [Message] = []
            for i in 0..<count {
                let message = try Fixture.message(
                    "\(channel)-\(i)", channel: channel, text: String(repeating: "word\(i % 7) ", count: 1 + random.below(40)),
                    timetoken: Self.hoursAgo(Double(count - i) * Double(1 + random.below(30))) + UInt64(i))
                sent.append(message)
            }
            sent.sort { $0.timetoken! < $1.timetoken! }
            all += sent
            kept.formUnion(sent.suffix(keepNewest).map(\.id))
            for i in 0..<random.below(3) {
                let pending = try Fixture.message("\(channel)-pending-\(i)", channel: channel)
                all.append(pending)
                kept.insert(pending.id)
            }
            if random.below(3) == 0 { hot.insert(channel); kept.formUnion(sent.map(\.id)) }
            if !sent.isEmpty, random.below(2) == 0 {
                let pin = sent[random.below(sent.count)]
                var pinnedChannel = try Fixture.channel(channel)
                pinnedChannel.custom = [ChatSDKFormat.pinnedTimetokenKey: .string(String(pin.timetoken!.rawValue))]
                pinned.append(pinnedChannel)
                kept.insert(pin.id)
            }
            switch random.below(3) {
            case 0:
                members.append(try Fixture.member(channel, "me"))   // never read: all unread
                kept.formUnion(sent.map(\.id))
            case 1 where !sent.isEmpty:
                var member = try Fixture.member(channel, "me")
                let position = sent[random.below(sent.count)].timetoken!.rawValue
                member.custom = [ChatSDKFormat.lastReadKey: .string(String(position))]
                members.append(member)
                kept.formUnion(sent.filter { $0.timetoken!.rawValue > position }.map(\.id))
            default: break
            }
        }
        try await store.load(messages: all)
        try await store.load(channels: pinned)
        try await store.load(members: members)
        let sentMessages = all.filter { $0.timetoken != nil }
        for _ in 0..<random.below(4) where !sentMessages.isEmpty {
            let root = sentMessages[random.below(sentMessages.count)]
            try await store.load(messageActions: [try ChatMessageAction(
                type: ChatSDKFormat.threadRootType, value: ChatSDKFormat.threadChannel(of: root.channelId, root: root.timetoken!),
                userId: "me", channelId: root.channelId, messageTimetoken: root.timetoken!, actionTimetoken: 1)])
            kept.insert(root.id)
        }
        for i in 0..<random.below(4) where !sentMessages.isEmpty {
            let named = sentMessages[random.below(sentMessages.count)]
            try store.transactionNow { tx in
                try tx.db.execute(
                    sql: "INSERT INTO outbox (op_id, seq, kind, lane, payload, created_at, updated_at) VALUES (?, ?, 'edit', 'l', ?, 0, 0)",
                    arguments: ["op\(i)", i + 1, "{\"messageId\":\"\(named.id)\",\"text\":\"x\"}"])
            }
            kept.insert(named.id)
        }
        let draft = DraftKey(channelId: channels[0])
        try await store.drafts.save(try MessageDraft(text: "unfinished"), for: draft)

        var policy = RetentionPolicy()
        switch random.below(4) {
        case 0: policy.perChannel = .days(1 + random.below(60))
        case 1: policy.perChannel = .messages(1 + random.below(100))
        case 2: policy.maxBytes = 40_000 + random.below(600_000)
        default:
            policy.perChannel = .messages(1 + random.below(100))
            policy.maxBytes = 40_000 + random.below(600_000)
        }
        policy.keepNewest = keepNewest
        let report = try await store.enforceRetention(policy, userId: "me", protecting: hot)

        let stored = Set(try store.readingNow { tx in try String.fetchAll(tx.db, sql: "SELECT id FROM messages") })
        #expect(kept.subtracting(stored).isEmpty, "seed \(seed): evicted what is kept: \(kept.subtracting(stored).sorted().prefix(5))")
        #expect(all.count - stored.count == report.evicted, "seed \(seed)")
        // Every message at or above its channel's bound is stored: no gap is taken as complete.
        let bounds = try store.readingNow { tx in
            Dictionary(uniqueKeysWithValues: try Row.fetchAll(tx.db, sql: "SELECT channel_id, complete_from FROM history_bounds").map { ($0[0] as String, $0[1] as Int64) })
        }
        for message in all where !stored.contains(message.id) {
            let bound = try #require(bounds[message.channelId], "seed \(seed): \(message.id) evicted without a bound")
            #expect(Int64(message.timetoken!.rawValue) < bound, "seed \(seed): \(message.id) at or above its bound went")
        }
        #expect(try await store.fetch(store.queries.draft(draft))?.text == "unfinished", "seed \(seed)")
        // The search index lost exactly the evicted messages.
        #expect(try store.readingNow { tx in try Int.fetchOne(tx.db, sql: "SELECT count(*) FROM message_search") } == stored.count)
        // Within budget, or nothing more may go: enforcing again evicts nothing.
        let again = try await store.enforceRetention(policy, userId: "me", protecting: hot)
        #expect(again.evicted == 0, "seed \(seed)")
        try store.close()
    }

    @Test("past its size budget the store evicts the coldest channels first and the file shrinks")
    func sizeBudget() async throws {
        let path = Fixture.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try Store.open(at: path)
        var messages: [Message] = []
        // Channel c0 is the coldest (its newest message is the oldest), c5 the most recently active.
        for channel in 0..<6 {
            for i in 0..<800 {
                messages.append(try Fixture.message(
                    "c\(channel)-\(i)", channel: "c\(channel)", text: String(repeating: "payload text \(i) ", count: 25),
                    timetoken: UInt64(1_000_000 * channel + i + 1)))
            }
        }
        try await store.load(messages: messages)
        let before = try await store.maintenance.status()
        let budget = before.storage.usedBytes / 3
        let report = try await store.enforceRetention(RetentionPolicy(maxBytes: budget), userId: "me")
        #expect(report.withinBudget && report.bytesAfter <= budget, "\(report)")
        let status = try await store.maintenance.status()
        #expect(status.storage.usedBytes <= budget && status.storage.databaseBytes <= budget + 64 * 1024, "\(status.storage)")
        #expect(status.storage.retention?.maxBytes == budget && status.storage.evictedMessages == report.evicted)
        let fileBytes = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        #expect(fileBytes <= budget + 64 * 1024, "the file gave its pages back: \(fileBytes) of budget \(budget)")
        let counts = try await (0..<6).asyncMap { try await store.fetch(store.queries.messages(inChannel: "c\($0)")).count }
        #expect(counts == counts.sorted(), "colder channels lost more: \(counts)")
        #expect(counts[5] == 800, "the most active channel kept everything: \(counts)")
        try store.close()
    }

    @Test("a store from before the budget is switched to incremental vacuum by its first enforcement; its search still finds")
    func olderStoreSwitched() async throws {
        let path = Fixture.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        // An older store: made without incremental vacuum.
        try await DatabaseQueue(path: path).write { try $0.execute(sql: "CREATE TABLE placeholder (x)") }
        let store = try Store.open(at: path)
        try store.transactionNow { tx in try tx.db.execute(sql: "DROP TABLE placeholder") }
        #expect(try store.readingNow { tx in try Int.fetchOne(tx.db, sql: "PRAGMA auto_vacuum") } == 0)
        try await store.load(messages: try (0..<50).map { try Fixture.message("m\($0)", text: "kept words \($0)", timetoken: UInt64($0 + 1)) })
        try await store.enforceRetention(RetentionPolicy(perChannel: .messages(25)), userId: "me")
        #expect(try store.readingNow { tx in try Int.fetchOne(tx.db, sql: "PRAGMA auto_vacuum") } == 2)
        #expect(try store.fetchNow(store.queries.search(MessageSearch("words 40"))).messages.map(\.id) == ["m40"])
        try store.close()
    }
}

/// A small deterministic generator for the property test (SplitMix64).
struct Seeded {
    var state: UInt64
    init(_ seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 &+ 1 }
    mutating func below(_ n: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(max(n, 1)))
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
