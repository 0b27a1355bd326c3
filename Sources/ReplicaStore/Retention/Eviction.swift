import Foundation
import GRDB
import ReplicaModel

/// Enforces a ``RetentionPolicy``: the one place that decides which stored messages may go
/// (`docs/store.md`, "Storage budget").
///
/// A channel's evictable messages are its sent messages older than all three of: the policy's
/// rule for the channel, its newest ``RetentionPolicy/keepNewest``, and the current user's read
/// position there; less the ones kept whatever their age (pinned, thread roots, named by an op).
/// A channel a screen keeps hot, or whose catch-up is still filling a gap, loses nothing.
/// Evicting records the channel's `history_bounds` (from where it is complete), so that
/// scroll-back fetches the evicted messages again.
struct Eviction {
    let policy: RetentionPolicy
    let userId: String
    let protectedChannels: Set<String>
    let now: Date

    /// Messages evicted per transaction.
    static let chunk = 2_000
    /// Rounds of the size budget (evict, merge, measure) at most per enforcement.
    static let maxRounds = 20
    /// The `replica_settings` key of the policy last enforced (JSON), for `pnreplicate status`.
    static let policySetting = "retention.policy"

    /// What keeps messages whatever their age: read for every channel in the one read that finds
    /// the channels with anything to evict, then again, for the channel alone, in each
    /// transaction that evicts (an op queued meanwhile is honoured).
    struct Keep {
        /// (channel, timetoken) of each pinned message.
        var pinned: Set<String> = []
        /// Every string and integer an outbox op's payload holds (message ids, timetokens).
        var named: Set<String> = []
        /// The read position of each channel the user is a member of (0: none read).
        var readPositions: [String: Int64] = [:]
        /// Channels whose history catch-up is filling a gap.
        var filling: Set<String> = []

        func keeps(channel: String, id: String, timetoken: Int64) -> Bool {
            pinned.contains("\(channel)\u{1F}\(timetoken)") || named.contains(id) || named.contains(String(timetoken))
        }
    }

    /// The keep rules for `channel`, or for every channel when nil.
    static func keep(userId: String, channel: String? = nil, in db: Database) throws -> Keep {
        var keep = Keep()
        let pinnedChannel = "coalesce(json_extract(custom, '$.\(ChatSDKFormat.pinnedChannelKey)'), id)"
        for row in try Row.fetchAll(
            db, sql: """
                SELECT \(pinnedChannel), CAST(json_extract(custom, '$.\(ChatSDKFormat.pinnedTimetokenKey)') AS INTEGER)
                FROM channels WHERE json_extract(custom, '$.\(ChatSDKFormat.pinnedTimetokenKey)') IS NOT NULL
                  AND (?1 IS NULL OR \(pinnedChannel) = ?1)
                """, arguments: [channel])
        {
            let pinnedIn: String = row[0]
            let timetoken: Int64 = row[1]
            keep.pinned.insert("\(pinnedIn)\u{1F}\(timetoken)")
        }
        for payload in try String.fetchAll(db, sql: "SELECT payload FROM outbox") {
            collect(try? JSONValue(jsonData: Data(payload.utf8)), into: &keep.named)
        }
        for row in try Row.fetchAll(
            db, sql: "SELECT m.channel_id, \(ChatSemantics.readPosition) FROM members m WHERE m.user_id = ?1 AND (?2 IS NULL OR m.channel_id = ?2)",
            arguments: [userId, channel])
        {
            keep.readPositions[row[0]] = row[1]
        }
        let scopes = try String.fetchAll(
            db, sql: "SELECT scope FROM sync_checkpoints WHERE scope LIKE 'history:%' AND range_end IS NOT NULL AND (?1 IS NULL OR scope = ?1)",
            arguments: [channel.map(SyncCheckpoint.history)])
        for scope in scopes { keep.filling.insert(String(scope.dropFirst("history:".count))) }
        return keep
    }

    /// The channels (coldest first) with a message `rule` would let go: one read, for every
    /// channel, before the transactions that evict.
    func channelsToEvict(rule: RetentionPolicy.ChannelRule?, in db: Database) throws -> [String] {
        let keep = try Self.keep(userId: userId, in: db)
        let candidates = try db.cachedStatement(
            sql: "SELECT 1 FROM messages WHERE channel_id = ? AND timetoken IS NOT NULL AND timetoken < ? AND delivery = 'sent' LIMIT 1")
        return try Self.channelsColdestFirst(db).filter { channel in
            guard let bound = try limit(channel: channel, keep: keep, rule: rule, in: db) else { return false }
            return try Int.fetchOne(candidates, arguments: [channel, bound]) != nil
        }
    }

    /// Evicts up to `max` of `channel`'s messages `rule` lets go, in the caller's transaction, with
    /// the keep rules read again for the channel.
    func evict(channel: String, rule: RetentionPolicy.ChannelRule?, max: Int, in db: Database) throws -> Int {
        let keep = try Self.keep(userId: userId, channel: channel, in: db)
        guard let bound = try limit(channel: channel, keep: keep, rule: rule, in: db) else { return 0 }
        return try evict(channel: channel, below: bound, max: max, keep: keep, in: db)
    }

    private static func collect(_ value: JSONValue?, into names: inout Set<String>) {
        switch value {
        case .string(let text)?: names.insert(text)
        case .int(let number)?: names.insert(String(number))
        case .double(let number)?: if let exact = Int64(exactly: number) { names.insert(String(exact)) }
        case .array(let items)?: for item in items { collect(item, into: &names) }
        case .object(let fields)?: for item in fields.values { collect(item, into: &names) }
        default: break
        }
    }

    /// The timetoken below which `channel`'s messages may go (exclusive), or nil when none may.
    func limit(channel: String, keep: Keep, rule: RetentionPolicy.ChannelRule?, in db: Database) throws -> Int64? {
        if protectedChannels.contains(channel) || keep.filling.contains(channel) { return nil }
        // The newest `keepNewest` (and the rule's count) stay.
        let kept = max(policy.keepNewest, { if case .messages(let n)? = rule { return n } else { return 0 } }())
        var bound: Int64
        if let oldestKept = try Int64.fetchOne(
            db, sql: "SELECT timetoken FROM messages WHERE channel_id = ? AND timetoken IS NOT NULL ORDER BY timetoken DESC LIMIT 1 OFFSET ?",
            arguments: [channel, max(kept - 1, 0)])
        {
            bound = oldestKept
        } else {
            return nil   // fewer than that many: nothing goes
        }
        if case .days(let days)? = rule {
            let cutoff = now.addingTimeInterval(-Double(days) * 86_400).timeIntervalSince1970 * 10_000_000
            bound = min(bound, Int64(max(0, cutoff)))
        }
        // Nothing after the read position (a member channel); everything is unread without one.
        if let position = keep.readPositions[channel] {
            bound = min(bound, position == Int64.max ? position : position + 1)
        }
        return bound > 0 ? bound : nil
    }

    /// Evicts up to `max` of `channel`'s evictable messages below `limit`, oldest first, in the
    /// caller's transaction; returns how many went.
    func evict(channel: String, below limit: Int64, max: Int, keep: Keep, in db: Database) throws -> Int {
        let roots = Set(try Int64.fetchAll(
            db, sql: "SELECT message_timetoken FROM message_actions WHERE channel_id = ? AND type = '\(ChatSDKFormat.threadRootType)' AND value <> '' AND message_timetoken < ?",
            arguments: [channel, limit]))
        let rows = try Row.fetchAll(
            db, sql: """
                SELECT rowid, id, timetoken FROM messages
                WHERE channel_id = ? AND timetoken IS NOT NULL AND timetoken < ? AND delivery = 'sent'
                ORDER BY timetoken LIMIT ?
                """, arguments: [channel, limit, max + 500])
        let deleteActions = try db.cachedStatement(sql: "DELETE FROM message_actions WHERE channel_id = ? AND message_timetoken = ?")
        let deleteMessage = try db.cachedStatement(sql: "DELETE FROM messages WHERE rowid = ?")
        var evicted = 0
        var newest: Int64?
        for row in rows where evicted < max {
            let id: String = row[1]
            let timetoken: Int64 = row[2]
            if roots.contains(timetoken) || keep.keeps(channel: channel, id: id, timetoken: timetoken) { continue }
            try deleteActions.execute(arguments: [channel, timetoken])
            try deleteMessage.execute(arguments: [row[0] as Int64])
            evicted += 1
            newest = timetoken
        }
        if let newest {
            try db.execute(
                sql: """
                    INSERT INTO history_bounds (channel_id, complete_from, evicted, evicted_at) VALUES (?1, ?2, ?3, ?4)
                    ON CONFLICT (channel_id) DO UPDATE SET complete_from = max(complete_from, ?2), evicted = evicted + ?3, evicted_at = ?4
                    """, arguments: [channel, newest + 1, evicted, Int64(now.timeIntervalSince1970 * 1000)])
        }
        return evicted
    }

    /// The bytes the store's pages hold (pages in use, not the free list).
    static func usedBytes(_ db: Database) throws -> Int {
        let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
        let free = try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
        let size = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
        return (pages - free) * size
    }

    /// The channels with stored sent messages, the coldest (longest without a new message) first.
    static func channelsColdestFirst(_ db: Database) throws -> [String] {
        try String.fetchAll(
            db, sql: "SELECT channel_id FROM messages WHERE timetoken IS NOT NULL GROUP BY channel_id ORDER BY max(timetoken), channel_id")
    }
}

extension ChatStore {
    /// Enforces `policy` (``RetentionPolicy``; by default the store's own ``retention``): first each
    /// channel's rule, then the size budget from the coldest channel on; then gives the freed
    /// pages back to the file system (incremental vacuum; an older store is switched to it once,
    /// by a `VACUUM`). A sync calls it after it pulled; `userId` is whose read positions keep
    /// messages, `protecting` the channels a screen keeps hot.
    @discardableResult
    package func enforceRetention(
        _ policy: RetentionPolicy, userId: String, protecting: Set<String> = []
    ) async throws -> RetentionReport {
        guard !isReadOnly else { return RetentionReport() }
        let eviction = Eviction(policy: policy, userId: userId, protectedChannels: protecting, now: clock.now)
        try await writer.writeWithoutTransaction { db in
            if try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") != 2 {
                try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
                try db.execute(sql: "VACUUM")
            }
        }
        var report = RetentionReport()
        report.bytesBefore = try await writer.read { try Eviction.usedBytes($0) }
        var touched: Set<String> = []
        // 1. Each channel's rule.
        if let rule = policy.perChannel {
            let channels = try await writer.read { try eviction.channelsToEvict(rule: rule, in: $0) }
            for channel in channels {
                while true {
                    let evicted = try await transaction { tx in
                        try eviction.evict(channel: channel, rule: rule, max: Eviction.chunk, in: tx.db)
                    }
                    if evicted > 0 { touched.insert(channel) }
                    report.evicted += evicted
                    if evicted < Eviction.chunk { break }
                }
            }
        }
        // 2. The size budget: the coldest channels' oldest evictable history. A deleted message
        // frees its pages only partly until the search index merges its segments, so each round
        // evicts what the average message takes times the excess, then merges and measures.
        if let budget = policy.maxBytes {
            var exhausted: Set<String> = []
            for _ in 0..<Eviction.maxRounds {
                if report.evicted > 0 { try await compact() }
                let skipped = exhausted
                let (used, stored) = try await writer.read { db -> (Int, Int) in
                    (try Eviction.usedBytes(db), try Int.fetchOne(db, sql: "SELECT count(*) FROM messages") ?? 0)
                }
                guard used > budget, stored > 0 else { break }
                let channels = try await writer.read { db in
                    try eviction.channelsToEvict(rule: nil, in: db).filter { !skipped.contains($0) }
                }
                guard !channels.isEmpty else { break }
                let bytesPerMessage: Double = Double(used) / Double(stored)
                let over: Double = Double(used - budget) / bytesPerMessage * 1.1
                var wanted: Int = Int(over.rounded(.up)) + 1
                var evictedThisRound = 0
                for channel in channels where wanted > 0 {
                    let most = min(wanted, Eviction.chunk)
                    let evicted = try await transaction { tx in
                        try eviction.evict(channel: channel, rule: nil, max: most, in: tx.db)
                    }
                    if evicted > 0 { touched.insert(channel) }
                    if evicted < most { exhausted.insert(channel) }
                    wanted -= evicted
                    evictedThisRound += evicted
                    report.evicted += evicted
                }
                if evictedThisRound == 0 { break }
            }
        }
        if report.evicted > 0 { try await compact() }
        let policyJSON = String(decoding: try JSONEncoder().encode(policy), as: UTF8.self)
        try await writer.writeWithoutTransaction { db in
            try db.execute(
                sql: "INSERT INTO replica_settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                arguments: [Eviction.policySetting, policyJSON])
        }
        await walBudget.truncateIfLarge(writer)
        report.bytesAfter = try await writer.read { try Eviction.usedBytes($0) }
        report.withinBudget = policy.maxBytes.map { report.bytesAfter <= $0 } ?? true
        report.channels = touched.sorted()
        if report.evicted > 0 {
            logger.info("retention: evicted messages", metadata: ["evicted": "\(report.evicted)", "channels": "\(report.channels.count)"])
        }
        return report
    }

    /// Gives the space of evicted messages back: the search index merged (a deleted row stays in
    /// its segments until they merge), then the free pages returned to the file system.
    private func compact() async throws {
        try await writer.writeWithoutTransaction { db in
            try SearchIndex.merge(db)
            try db.execute(sql: "PRAGMA incremental_vacuum")
        }
    }
}
