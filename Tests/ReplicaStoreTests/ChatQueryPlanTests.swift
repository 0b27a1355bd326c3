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
}
