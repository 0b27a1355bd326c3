import Foundation
import GRDB
import ReplicaModel

/// A new outbox row, before it has a sequence number.
package struct NewOutboxRow: Sendable {
    package var operation: OutboxOperation {
        didSet { encodedPayload = nil }
    }
    /// The payload column's text, when ``encodePayload()`` wrote it before the transaction; nil:
    /// ``NewOpRows`` encodes it when the row is made.
    package private(set) var encodedPayload: String?
    package var lane: String
    package var target: String
    package var baseETag: String?
    package var baseUpdated: String?
    package var baseSnapshot: String?
    package var dependsOn: String?

    package init(
        _ operation: OutboxOperation, lane: String, target: String, baseETag: String? = nil,
        baseUpdated: String? = nil, baseSnapshot: String? = nil, dependsOn: String? = nil
    ) {
        self.operation = operation
        self.lane = lane
        self.target = target
        self.baseETag = baseETag
        self.baseUpdated = baseUpdated
        self.baseSnapshot = baseSnapshot
        self.dependsOn = dependsOn
    }

    /// Encodes the payload column now, outside any transaction (a batch prepares its rows before
    /// it writes them); a payload the fast writer leaves to `JSONEncoder` is encoded at insert.
    package mutating func encodePayload() {
        encodedPayload = StoreCoding.fastJSON(operation.payload(rebase: false))
    }
}

// Row access to the `outbox` table. Which state an op moves to, and when, is decided by the
// outbox in the Replicator module; these only read and write rows.
/// The outbox rows of one transaction (`outbox`): read ops by id, lane, state or target, insert, save and delete them.
///
/// Reached through the transaction (`tx.outbox`); lives only as long as it.
package struct OutboxTable<Custom: ChatCustomData>: TransactionTable {
    /// The transaction these rows are read and written in.
    package let tx: StoreTransaction<Custom>
}

extension OutboxTable {
    /// The op with `id`, or nil.
    package func op(id: String) throws -> OutboxEntry? {
        try OutboxEntry.fetchAll(db, where: "op_id = ?", arguments: [id]).first
    }

    /// The ops filed under `target`, in enqueue order.
    package func ops(target: String) throws -> [OutboxEntry] {
        try OutboxEntry.fetchAll(db, where: "target = ?", arguments: [target])
    }

    /// The targets of the queued ops whose target starts with `prefix` (one range read of the
    /// target index; e.g. every message with a hard delete queued).
    package func opTargets(prefix: String) throws -> Set<String> {
        guard let last = prefix.unicodeScalars.last, let after = Unicode.Scalar(last.value + 1) else { return [] }
        let upper = String(prefix.unicodeScalars.dropLast()) + String(after)
        return Set(try String.fetchAll(
            db.cachedStatement(sql: "SELECT DISTINCT target FROM outbox WHERE target >= ? AND target < ?"), arguments: [prefix, upper]))
    }

    /// Every op of `lane`, in queue order.
    package func ops(lane: String) throws -> [OutboxEntry] {
        try OutboxEntry.fetchAll(db, where: "lane = ?", arguments: [lane]).sorted { $0.seq < $1.seq }
    }

    /// The most recently enqueued op on `target`, or nil.
    package func latestOp(target: String) throws -> OutboxEntry? {
        try OutboxEntry.fetchAll(
            db, where: "seq = (SELECT max(seq) FROM outbox WHERE target = ?)", arguments: [target]
        ).first
    }

    /// The ops that name `id` as the op they depend on.
    package func ops(dependingOn id: String) throws -> [OutboxEntry] {
        try OutboxEntry.fetchAll(db, where: "depends_on = ?", arguments: [id])
    }

    /// The ops in one of `states`, in enqueue order.
    package func ops(states: Set<OutboxState>) throws -> [OutboxEntry] {
        try OutboxEntry.fetchAll(db, where: "state IN (\(Self.list(states)))")
    }

    /// The ops whose target starts with `prefix`, oldest first: one range of the target index
    /// (`outbox_target`), however many other ops wait.
    package func ops(targetPrefix prefix: String) throws -> [OutboxEntry] {
        guard let last = prefix.unicodeScalars.last, let next = Unicode.Scalar(last.value + 1) else { return [] }
        let end = String(prefix.unicodeScalars.dropLast()) + String(next)
        return try OutboxEntry.fetchAll(db, where: "target >= ? AND target < ?", arguments: [prefix, end])
    }

    /// The ops of the given kinds, in enqueue order.
    package func ops(kinds: Set<OutboxKind>) throws -> [OutboxEntry] {
        let list = kinds.map { "'\($0.rawValue)'" }.sorted().joined(separator: ", ")
        return try OutboxEntry.fetchAll(db, where: "kind IN (\(list))")
    }

    /// The first op (lowest `seq`) in one of `states` of every lane.
    package func laneHeads(states: Set<OutboxState>) throws -> [OutboxEntry] {
        try OutboxEntry.fetchAll(
            db, where: "seq IN (SELECT min(seq) FROM outbox WHERE state IN (\(Self.list(states))) GROUP BY lane)")
    }

    /// The first op in one of `states` of `lane`, or nil.
    package func laneHead(lane: String, states: Set<OutboxState>) throws -> OutboxEntry? {
        try OutboxEntry.fetchAll(
            db, where: "seq = (SELECT min(seq) FROM outbox WHERE lane = ? AND state IN (\(Self.list(states))))",
            arguments: [lane]
        ).first
    }

    /// The first op in one of `states` of `lane` after the op at `seq` (the one a drain marks in
    /// flight while the op before it is sent: docs/outbox.md, "The next request overlaps the commit"), or nil.
    package func laneOp(lane: String, after seq: Int64, states: Set<OutboxState>) throws -> OutboxEntry? {
        try OutboxEntry.fetchAll(
            db, where: "seq = (SELECT min(seq) FROM outbox WHERE lane = ? AND seq > ? AND state IN (\(Self.list(states))))",
            arguments: [lane, seq]
        ).first
    }

    /// The place in the outbox of the op at `seq` (1 = first): how many ops, in any state, were
    /// queued up to it.
    package func position(ofSeq seq: Int64) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM outbox WHERE seq <= ?"), arguments: [seq]) ?? 0
    }

    /// The state of the op with `id`, or nil when it is not in the outbox.
    package func opState(id: String) throws -> OutboxState? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT state FROM outbox WHERE op_id = ?"), arguments: [id])
            .flatMap(OutboxState.init(rawValue:))
    }

    /// Appends a pending op at the end of the outbox.
    package func insertOp(_ row: NewOutboxRow, id: String, now: Date) throws {
        try insertOps(NewOpRows([(row, id)], now: now, coding: coding))
    }

    /// Appends pending ops at the end of the outbox, in order, in multi-row inserts
    /// (``MultiRowInsert``), from rows made before the transaction (``NewOpRows``: a batch send's
    /// publishes): it only gives them their sequence numbers.
    package func insertOps(_ rows: NewOpRows) throws {
        guard rows.count > 0 else { return }
        // The stored maximum is read once per transaction (``StoreTransaction/nextOutboxSeq``).
        let first = try tx.nextOutboxSeq ?? Int64.fetchOne(db.cachedStatement(sql: "SELECT coalesce(max(seq), 0) + 1 FROM outbox")) ?? 1
        try MultiRowInsert.outboxOps.insert(rows.values, sequence: (NewOpRows.seqColumn, first), in: db)
        tx.nextOutboxSeq = first + Int64(rows.count)
    }

    /// Writes every column of an op row but its id, sequence and creation time, as `entry` holds
    /// them. The error text is stored capped (``StoredErrorText``).
    package func save(_ entry: OutboxEntry) throws {
        try db.cachedStatement(sql: """
                UPDATE outbox SET kind = ?, lane = ?, target = ?, payload = ?, base_etag = ?, base_updated = ?,
                    base_snapshot = ?, depends_on = ?, state = ?, attempts = ?, server_failures = ?,
                    next_attempt_at = ?, first_attempt_at = ?, last_error_class = ?, last_http_status = ?,
                    last_error = ?, coalesced = ?, updated_at = ?, last_error_token = ?
                WHERE op_id = ?
                """).execute(arguments: [
                entry.kind.rawValue, entry.lane, entry.target, try coding.json(entry.operation.payload(rebase: entry.rebase)),
                entry.baseETag,
                entry.baseUpdated, entry.baseSnapshot, entry.dependsOn, entry.state.rawValue, entry.attempts,
                entry.serverFailures, entry.nextAttemptAt?.milliseconds, entry.firstAttemptAt?.milliseconds,
                entry.lastFailure?.errorClass.rawValue, entry.lastFailure?.httpStatus,
                entry.lastFailure.map { StoredErrorText.capped($0.message) }, try coding.json(entry.coalesced),
                entry.updatedAt.milliseconds, entry.lastFailure?.token, entry.id,
            ])
    }

    /// Writes an op's state, attempt count, first attempt and update time as `entry` holds them:
    /// what marking it in flight changes (``save(_:)`` writes every column).
    package func saveAttempt(_ entry: OutboxEntry) throws {
        try db.cachedStatement(sql: "UPDATE outbox SET state = ?, attempts = ?, first_attempt_at = ?, updated_at = ? WHERE op_id = ?")
            .execute(arguments: [entry.state.rawValue, entry.attempts, entry.firstAttemptAt?.milliseconds, entry.updatedAt.milliseconds, entry.id])
    }

    /// Deletes an op row.
    package func deleteOp(id: String) throws {
        try db.cachedStatement(sql: "DELETE FROM outbox WHERE op_id = ?").execute(arguments: [id])
    }

    /// The newest timetoken among the channel's messages stored before this one in local order.
    package func newestEarlierTimetoken(messageId: String) throws -> Timetoken? {
        StoreCoding.timetoken(try Int64.fetchOne(
            db,
            sql: """
                SELECT max(m.timetoken) FROM messages m, messages mine
                WHERE mine.id = ? AND m.channel_id = mine.channel_id AND m.local_seq < mine.local_seq
                """, arguments: [messageId]))
    }

    static func list(_ states: Set<OutboxState>) -> String {
        states.map { "'\($0.rawValue)'" }.sorted().joined(separator: ", ")
    }
}

/// The one rule for error text the store keeps (an op's `last_error`): at most
/// ``maxBytes`` UTF-8 bytes, so a server answering with a 50 MB error body cannot grow the store
/// by 50 MB on every attempt.
public enum StoredErrorText {
    /// The most UTF-8 bytes of error text stored, truncation note included (4 KiB).
    public static let maxBytes = 4096

    /// `text` unchanged when it fits in ``maxBytes``; otherwise its longest prefix of whole
    /// characters that fits together with a note of the original size, e.g.
    /// `<prefix>…(truncated, 52428800 bytes)`. The result is always valid UTF-8 of at most
    /// ``maxBytes`` bytes.
    ///
    /// An Access Manager token or signature that a failure's text quoted from a URL
    /// (`auth=…`, `signature=…`) is replaced by `auth=REDACTED` first: tokens are never stored.
    public static func capped(_ text: String) -> String {
        let text = QuerySecrets.redacted(text)
        let size = text.utf8.count
        guard size > maxBytes else { return text }
        let note = "…(truncated, \(size) bytes)"
        let budget = maxBytes - note.utf8.count
        var kept = 0
        var end = text.startIndex
        for index in text.indices {
            let width = text[index].utf8.count
            if kept + width > budget { break }
            kept += width
            end = text.index(after: index)
        }
        return String(text[..<end]) + note
    }
}
