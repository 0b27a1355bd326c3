import Foundation
import GRDB
import ReplicaModel
@testable import ReplicaStore
import Testing

/// The unread count stays an index walk: these plans are what keeps it fast on large stores
/// (`swift run -c release --package-path Benchmarks --scratch-path .build ChatBenchmarks` measures it).
@Suite("Chat query plans")
struct ChatQueryPlanTests {
    @Test("unread counts read messages through (channel, timetoken, user) alone and deletions through their partial index")
    func unreadPlan() throws {
        let store = try Fixture.store()
        let sql = "EXPLAIN QUERY PLAN SELECT m.channel_id, \(ChatSemantics.unreadCountColumn) FROM members m WHERE m.user_id = ?1"
        let plan = try store.fetchNow(StoreQuery { db in
            try Row.fetchAll(db, sql: sql, arguments: ["me"]).map { $0["detail"] as String }
        })
        let text = plan.joined(separator: "\n")
        #expect(text.contains("USING COVERING INDEX messages_channel_timetoken_user"), "\(text)")
        #expect(text.contains("message_actions_deleted"), "\(text)")
        #expect(!text.contains("SCAN msg"), "no full scan of messages: \(text)")
    }

    /// The plan's lines of `sql` on a store.
    static func plan(_ sql: String, _ arguments: StatementArguments = []) throws -> String {
        let store = try Fixture.store()
        return try store.fetchNow(StoreQuery { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String }
        }).joined(separator: "\n")
    }

    @Test("the configuration problem the status reads at each outbox count walks its partial index, never the pending ops")
    func configurationProblemPlan() throws {
        let text = try Self.plan(OutboxReads.configurationProblem)
        #expect(text.contains("outbox_configuration") && !text.contains("outbox_ready"), "\(text)")
    }

    @Test("the expiry sweep after every object pull reads the expiry indexes alone (App Context stores leave them empty)")
    func expirySweepPlan() throws {
        let text = try Self.plan(ExpiringObject.select(followedBy: nil), [0])
        for index in ["users_expiry", "channels_expiry", "members_expiry"] { #expect(text.contains("USING INDEX \(index)"), "\(text)") }
        #expect(!text.contains("SCAN"), "no full scan: \(text)")
    }

    @Test("the outbox counts search the settled states through their index and take the pending ops as the rest, whatever their number")
    func outboxCounts() throws {
        let text = try Self.plan(settledCountsSQL)
        #expect(text.contains("SEARCH outbox USING COVERING INDEX outbox_ready (state=?)") && !text.contains("SCAN"), "\(text)")

        let store = try Fixture.store()
        let states: [OutboxState] = [.pending, .inflight, .pending, .ambiguous, .dead, .pending, .ambiguous]
        try store.transactionNow { tx in
            for (index, state) in states.enumerated() {
                try tx.db.execute(
                    sql: "INSERT INTO outbox (op_id, seq, kind, lane, payload, state, created_at, updated_at) VALUES (?, ?, 'send', 'l', '{}', ?, 0, 0)",
                    arguments: ["op\(index)", index + 1, state.rawValue])
            }
        }
        #expect(try store.fetchNow(store.queries.outboxCounts()) == [.pending: 3, .inflight: 1, .ambiguous: 2, .dead: 1])
        try store.transactionNow { tx in try tx.db.execute(sql: "UPDATE outbox SET state = 'conflict' WHERE state = 'pending'") }
        #expect(try store.fetchNow(store.queries.outboxCounts()) == [.conflict: 3, .inflight: 1, .ambiguous: 2, .dead: 1])
        try store.transactionNow { tx in try tx.db.execute(sql: "DELETE FROM outbox") }
        #expect(try store.fetchNow(store.queries.outboxCounts()).isEmpty)
    }
}
