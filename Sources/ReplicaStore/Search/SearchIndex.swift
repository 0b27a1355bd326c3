import Foundation
import GRDB

/// Keeps the full-text index of message text (`message_search`, migrations 0016 and 0018) true:
/// the one writer of that table and of `search_keys` besides the hard-delete trigger.
///
/// A write transaction only stores its messages. Afterwards the store's ``SearchIndexer`` calls
/// ``indexBatch(_:limit:)`` in transactions of its own until nothing is left: first the messages
/// the triggers noted in `search_dirty` (an indexed message whose text, timetoken or send order
/// changed, an edit added or removed, a change of who may edit), then every message above the
/// watermark `search_state.indexed_through` (the new ones, and a whole store after the migration).
/// Each index row holds the message's shown text (``ChatSemantics``'s rule, folded by
/// ``SearchFolding``) and its channel's ``scopeToken(_:)``; its rowid is the message's
/// ``key(timetoken:localSequence:)``, in time order.
package enum SearchIndex {
    /// Messages indexed per transaction: a write waiting behind one waits some 30 ms; fewer
    /// would cost FTS5 more (each commit writes a segment that must be merged later).
    package static let batch = 1_000

    /// Where pending messages' keys start: above every sent message's (a timetoken below 2^58,
    /// the year 2883, times 16).
    static let pendingKeys: Int64 = 1 << 62

    /// The first key of a message: a sent one's timetoken × 16, a pending one's `pendingKeys` +
    /// its send order × 16; the next 15 keys are its slots, for messages of other channels with
    /// the same timetoken.
    static func key(timetoken: Int64?, localSequence: Int64) -> Int64 {
        if let timetoken { return min(max(timetoken, 0), (1 << 58) - 1) << 4 }
        return pendingKeys + (min(max(localSequence, 0), (1 << 57) - 1) << 4)
    }

    /// The lowest key a message published at `timetoken` can have (for a search's date range).
    static func firstKey(publishedAt timetoken: Int64) -> Int64 { key(timetoken: timetoken, localSequence: 0) }

    /// The token that names `channel` in the index's `scope` column: `c` and 16 hexadecimal
    /// digits of its FNV-1a hash, one token to the tokenizer whatever the id holds. Two channels
    /// with the same token (a 2^-64 chance) only cost a search the other's candidates: the query
    /// still compares the channel itself.
    package static func scopeToken(_ channel: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in channel.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let digits = String(hash, radix: 16)
        return "c" + String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Whether anything is waiting to be indexed. False on a store without the index's tables (a
    /// migration still to run, an older store opened read-only).
    package static func hasWork(_ db: Database) throws -> Bool {
        guard
            let statement = try? db.cachedStatement(sql: """
                SELECT EXISTS (SELECT 1 FROM search_dirty)
                    OR coalesce((SELECT max(rowid) FROM messages), 0) > (SELECT indexed_through FROM search_state)
                """)
        else { return false }
        return try Bool.fetchOne(statement) ?? false
    }

    /// How many messages are not indexed yet (0 when the index is current).
    package static func unindexed(_ db: Database) throws -> Int {
        guard
            let statement = try? db.cachedStatement(sql: """
                SELECT (SELECT count(*) FROM messages WHERE rowid > (SELECT indexed_through FROM search_state))
                     + (SELECT count(*) FROM search_dirty)
                """)
        else { return 0 }
        return try Int.fetchOne(statement) ?? 0
    }

    /// Indexes up to `limit` waiting messages: the noted ones first, then the new ones in rowid
    /// order, moving the watermark past them; returns how many it handled (0 when none is left).
    /// One call is one batch: call it in its own transaction, again until it returns 0.
    @discardableResult
    package static func indexBatch(_ db: Database, limit: Int = batch) throws -> Int {
        guard let watermark = try Int64.fetchOne(db, sql: "SELECT indexed_through FROM search_state") else { return 0 }
        let noted = try Int64.fetchAll(db, sql: "SELECT message_rowid FROM search_dirty ORDER BY message_rowid LIMIT ?", arguments: [limit])
        if !noted.isEmpty {
            // One above the watermark is indexed with the new ones (with what it shows by then).
            try index(noted.filter { $0 <= watermark }, in: db)
            let forget = try db.cachedStatement(sql: "DELETE FROM search_dirty WHERE message_rowid = ?")
            for rowid in noted { try forget.execute(arguments: [rowid]) }
            return noted.count
        }
        let fresh = try Row.fetchAll(
            db, sql: "SELECT msg.rowid, \(shownColumns) FROM messages msg WHERE msg.rowid > ? ORDER BY msg.rowid LIMIT ?",
            arguments: [watermark, limit])
        guard let last: Int64 = fresh.last?[0] else { return 0 }
        let writer = try Writer(db)
        for row in fresh { try writer.write(rowid: row[0], shown: row, from: 1) }
        try db.execute(sql: "UPDATE search_state SET indexed_through = ?", arguments: [last])
        return fresh.count
    }

    /// What an index row is made of, for `msg`: the shown text, the channel, the timetoken, the send order.
    private static let shownColumns = "\(ChatSemantics.shownTextColumn), msg.channel_id, msg.timetoken, msg.local_seq"

    /// Writes the index rows of the messages with these rowids, replacing any they had (none for
    /// a message with no text to show: gone, an undecryptable payload, an empty text).
    static func index(_ rowids: [Int64], in db: Database) throws {
        guard !rowids.isEmpty else { return }
        let message = try db.cachedStatement(sql: "SELECT \(shownColumns) FROM messages msg WHERE msg.rowid = ?")
        let writer = try Writer(db)
        for rowid in rowids {
            try writer.write(rowid: rowid, shown: try Row.fetchOne(message, arguments: [rowid]), from: 0)
        }
    }

    /// The statements that replace one message's index row, prepared once per batch.
    private struct Writer {
        let oldKey, removeRow, removeKey, taken, addKey, addRow: Statement

        init(_ db: Database) throws {
            oldKey = try db.cachedStatement(sql: "SELECT key FROM search_keys WHERE message_rowid = ?")
            removeRow = try db.cachedStatement(sql: "DELETE FROM message_search WHERE rowid = ?")
            removeKey = try db.cachedStatement(sql: "DELETE FROM search_keys WHERE key = ?")
            taken = try db.cachedStatement(sql: "SELECT key FROM search_keys WHERE key >= ? AND key < ? ORDER BY key")
            addKey = try db.cachedStatement(sql: "INSERT INTO search_keys (key, message_rowid) VALUES (?, ?)")
            addRow = try db.cachedStatement(sql: "INSERT INTO message_search (rowid, folded, scope) VALUES (?, ?, ?)")
        }

        /// Replaces the row of message `rowid`, whose ``shownColumns`` start at `column` of
        /// `shown` (nil: the message is gone).
        func write(rowid: Int64, shown: Row?, from column: Int) throws {
            if let key = try Int64.fetchOne(oldKey, arguments: [rowid]) {
                try removeRow.execute(arguments: [key])
                try removeKey.execute(arguments: [key])
            }
            guard let shown, let text: String = shown[column], !text.isEmpty, let channel: String = shown[column + 1] else { return }
            let key = try SearchIndex.freeKey(from: SearchIndex.key(timetoken: shown[column + 2], localSequence: shown[column + 3] ?? 0), taken: taken)
            try addKey.execute(arguments: [key, rowid])
            try addRow.execute(arguments: [key, SearchFolding.fold(text), SearchIndex.scopeToken(channel)])
        }
    }

    /// The first free slot at or after `first` (another message's slots are skipped: order among
    /// 17 or more messages sharing one timetoken is off by a few keys, never lost).
    fileprivate static func freeKey(from first: Int64, taken: Statement) throws -> Int64 {
        var start = first
        while true {
            let used = try Int64.fetchAll(taken, arguments: [start, start + 16])
            if used.isEmpty { return start }
            var candidate = start
            for key in used where key == candidate { candidate += 1 }
            if candidate < start + 16 { return candidate }
            start += 16
        }
    }

    /// Merges the index's segments into one: a deleted row's entries stay in its segments (and
    /// take their space) until they merge. After the storage budget evicted messages.
    package static func merge(_ db: Database) throws {
        try db.execute(sql: "INSERT INTO message_search (message_search) VALUES ('optimize')")
    }
}
