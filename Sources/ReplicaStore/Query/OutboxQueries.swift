import Foundation
import GRDB
import ReplicaModel

extension ChatQueries {
    /// Every outbox op in enqueue order, with its state and last failure (dead letters and
    /// conflicts included: they stay until the app retries or discards them).
    public func outbox() -> StoreQuery<[OutboxEntry]> {
        StoreQuery { db in try OutboxEntry.fetchAll(db) }
    }

    /// How many ops are in each state (states with none are absent): what a sync status shows.
    ///
    /// Read without visiting the pending ops, which can be most of a large outbox (a bulk send
    /// queues 100,000): the other states are counted through the `outbox_ready` index, and the
    /// pending ops are the rest of the table's row count (the schema allows no other state). A
    /// grouped count over every op cost 7.5 ms at 100,000 ops, after every write.
    public func outboxCounts() -> StoreQuery<[OutboxState: Int]> {
        StoreQuery { db in
            var counts: [OutboxState: Int] = [:]
            for row in try Row.fetchAll(db.cachedStatement(sql: settledCountsSQL)) {
                if let state = OutboxState(rawValue: row[0]) { counts[state] = row[1] }
            }
            let total = try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM outbox")) ?? 0
            let pending = total - counts.values.reduce(0, +)
            if pending > 0 { counts[.pending] = pending }
            return counts
        }
    }

    /// The kinds of the ops in the outbox, whatever their state, sorted by name: what a warning
    /// before discarding them names ("2 messages and a reaction were not sent").
    package func outboxKinds() -> StoreQuery<[OutboxKind]> {
        StoreQuery { db in
            try String.fetchAll(db, sql: "SELECT DISTINCT kind FROM outbox ORDER BY kind").compactMap(OutboxKind.init(rawValue:))
        }
    }

    /// One page of the outbox in enqueue order: at most `limit` ops after sequence number
    /// `afterSeq` (nil: from the first). Pass the last op's ``OutboxEntry/seq`` for the next page;
    /// a page shorter than `limit` is the last. Reads a large outbox in bounded memory.
    public func outbox(afterSeq: Int64?, limit: Int) -> StoreQuery<[OutboxEntry]> {
        StoreQuery { db in try OutboxEntry.fetchAll(db, where: "seq > ?", arguments: [afterSeq ?? Int64.min], limit: max(1, limit)) }
    }

    /// The newest failure of an op waiting on the keyset's configuration (error class
    /// ``OutboxErrorClass/configuration``: DataSync not enabled, Access Manager off, no
    /// credential), or nil when none waits so. Such ops stay pending and are tried again every
    /// few minutes; this is what a status shows meanwhile. Read through a partial index
    /// (migration 0013): cheap whatever the outbox's size.
    public func outboxConfigurationProblem() -> StoreQuery<String?> {
        StoreQuery { db in try String.fetchOne(db.cachedStatement(sql: OutboxReads.configurationProblem)) }
    }

    /// How many ops the outbox holds, whatever their state.
    public func outboxCount() -> StoreQuery<Int> {
        StoreQuery { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM outbox") ?? 0 }
    }

    /// The states of the ops among `ids` that are still in the outbox.
    public func outboxStates(ids: some Collection<String>) -> StoreQuery<[String: OutboxState]> {
        let ids = Array(ids)
        return StoreQuery { db in
            guard !ids.isEmpty else { return [:] }
            let rows = try Row.fetchAll(
                db, sql: "SELECT op_id, state FROM outbox WHERE op_id IN (\(databaseQuestionMarks(count: ids.count)))",
                arguments: StatementArguments(ids))
            let states = rows.compactMap { row in OutboxState(rawValue: row[1]).map { (row[0] as String, $0) } }
            return Dictionary(states, uniquingKeysWith: { a, _ in a })
        }
    }

    /// The outbox op with `id`, or nil.
    public func outboxEntry(id: String) -> StoreQuery<OutboxEntry?> {
        StoreQuery { db in try OutboxEntry.fetchAll(db, where: "op_id = ?", arguments: [id]).first }
    }
}

/// SQL of the outbox's reads whose plan matters (`ChatQueryPlanTests` explains them).
enum OutboxReads {
    /// The newest failure of an op waiting on the configuration. `INDEXED BY` the partial index:
    /// left to itself, SQLite's planner walks `outbox_ready` through every pending op (21 ms at
    /// 20,000 ops, read at each outbox count; `pnreplicate --dry-run`'s first line came 50 ms
    /// later at 100,000).
    static let configurationProblem = """
        SELECT last_error FROM outbox INDEXED BY outbox_configuration
        WHERE last_error_class = 'configuration' AND state IN ('pending', 'ambiguous', 'inflight')
        ORDER BY updated_at DESC LIMIT 1
        """
}

/// The counts of every outbox state but pending (``ChatQueries/outboxCounts()``).
let settledCountsSQL: String = {
    let states = OutboxState.allCases.filter { $0 != .pending }.map { "'\($0.rawValue)'" }.joined(separator: ", ")
    return "SELECT state, count(*) FROM outbox WHERE state IN (\(states)) GROUP BY state"
}()
