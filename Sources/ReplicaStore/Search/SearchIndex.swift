import Foundation
import GRDB

/// Keeps the full-text index of message text (`message_search`, migration 0016) true: the one
/// writer of that table besides the hard-delete trigger.
///
/// The migration's triggers note each message whose shown text may have changed in
/// `search_dirty` (an insert, a new text or timetoken, an edit added or removed, a change of who
/// may edit). Every write transaction of the store ends with ``flush(_:)``, which recomputes
/// those messages' rows from their shown text (``ChatSemantics``'s rule, folded by
/// ``SearchFolding``) before the commit: a search that sees a write sees its index rows too.
/// Messages stored before the migration are indexed by ``backfill(_:limit:)`` in batches.
package enum SearchIndex {
    /// Messages indexed per backfill transaction: short enough that a write waiting behind it
    /// waits tens of milliseconds.
    package static let backfillBatch = 2_000

    /// Recomputes the index rows of every message noted in `search_dirty`, then forgets them.
    /// Costs one indexed read when nothing changed.
    package static func flush(_ db: Database) throws {
        guard try hasDirty(db) else { return }
        let rowids = try Int64.fetchAll(db, sql: "SELECT message_rowid FROM search_dirty")
        try index(rowids, in: db)
        try db.execute(sql: "DELETE FROM search_dirty")
    }

    /// Runs `body` and then ``flush(_:)`` in the same transaction.
    package static func flushing<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        let result = try body()
        try flush(db)
        return result
    }

    private static func hasDirty(_ db: Database) throws -> Bool {
        // A store not migrated yet (a migration's own transaction, a read-only dry run) has no table.
        guard let statement = try? db.cachedStatement(sql: "SELECT 1 FROM search_dirty LIMIT 1") else { return false }
        return try Int.fetchOne(statement) != nil
    }

    /// Writes the index rows of the messages with these rowids (none for a message with no text
    /// to show: gone, an undecryptable payload, an empty text).
    static func index(_ rowids: [Int64], in db: Database) throws {
        let shown = try db.cachedStatement(sql: "SELECT \(ChatSemantics.shownTextColumn) FROM messages msg WHERE msg.rowid = ?")
        let delete = try db.cachedStatement(sql: "DELETE FROM message_search WHERE rowid = ?")
        let insert = try db.cachedStatement(sql: "INSERT INTO message_search (rowid, folded) VALUES (?, ?)")
        for rowid in rowids {
            try delete.execute(arguments: [rowid])
            guard let text = try String.fetchOne(shown, arguments: [rowid]), !text.isEmpty else { continue }
            try insert.execute(arguments: [rowid, SearchFolding.fold(text)])
        }
    }

    /// Merges the index's segments into one: a deleted row's entries stay in its segments (and
    /// take their space) until they merge. After the storage budget evicted messages.
    package static func merge(_ db: Database) throws {
        try db.execute(sql: "INSERT INTO message_search (message_search) VALUES ('optimize')")
    }

    /// How many of the messages stored before search existed are still to index (0 once done).
    package static func unindexed(_ db: Database) throws -> Int {
        try Int.fetchOne(
            db, sql: "SELECT count(*) FROM messages, search_backfill WHERE messages.rowid BETWEEN next_rowid AND end_rowid"
        ) ?? 0
    }

    /// Indexes up to `limit` of the messages stored before search existed, oldest rowid first;
    /// returns how many it indexed (0 when none is left). One call is one batch: call it in its
    /// own transaction, again until it returns 0.
    @discardableResult
    package static func backfill(_ db: Database, limit: Int = backfillBatch) throws -> Int {
        guard let row = try Row.fetchOne(db, sql: "SELECT next_rowid, end_rowid FROM search_backfill"),
            let next: Int64 = row[0], let end: Int64 = row[1], next <= end
        else { return 0 }
        let rowids = try Int64.fetchAll(
            db, sql: "SELECT rowid FROM messages WHERE rowid BETWEEN ? AND ? ORDER BY rowid LIMIT ?", arguments: [next, end, limit])
        try index(rowids, in: db)
        let after = rowids.count < limit ? end + 1 : rowids[rowids.count - 1] + 1
        try db.execute(sql: "UPDATE search_backfill SET next_rowid = ?", arguments: [after])
        return rowids.count
    }
}

extension ChatStore {
    /// Indexes for search every message stored before search existed (a store migrated to
    /// 0016), ``SearchIndex/backfillBatch`` messages per transaction, so that other writes get
    /// the writer between batches; returns at once when none is left. Stops between batches when
    /// the task is cancelled (what is indexed stays indexed). A replica runs it when its store
    /// opens, and every sync runs it (`docs/search.md`, "Existing stores").
    package func indexEarlierMessages() async throws {
        guard !isReadOnly else { return }
        // A read first: a store with nothing left to index (every sync after the first) takes no write lock.
        let pending = try await writer.read { db in
            try Row.fetchOne(db, sql: "SELECT next_rowid <= end_rowid FROM search_backfill").map { $0[0] as Bool } ?? false
        }
        guard pending else { return }
        while true {
            try Task.checkCancellation()
            let indexed = try await transaction { tx in try SearchIndex.backfill(tx.db) }
            if indexed == 0 { return }
        }
    }
}
