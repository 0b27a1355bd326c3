import Foundation
import GRDB
import ReplicaModel

/// One user, channel or membership read by its key: shared by the queries (``ChatQueries``) and
/// the writes that compare with what is stored (``StoreTransaction``), so that both read a row
/// the same way. Each read is a cached statement: a sync of thousands of memberships reads one
/// per row, and compiling the statement each time cost more than the read.
enum EntityReads<Custom: ChatCustomData> {
    typealias User = ChatQueries<Custom>.User
    typealias Channel = ChatQueries<Custom>.Channel
    typealias Member = ChatQueries<Custom>.Member

    static func user(id: String, db: Database, coding: StoreCoding) throws -> User? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT \(Columns.user("u")) FROM users u WHERE u.id = ?"), arguments: [id])
            .map { try coding.user($0, at: 0) }
    }

    static func channel(id: String, db: Database, coding: StoreCoding) throws -> Channel? {
        try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT \(Columns.channel("c")), (SELECT count(*) FROM members WHERE channel_id = c.id)
                    FROM channels c WHERE c.id = ?
                    """), arguments: [id]
        ).map { row in
            var channel: Channel = try coding.channel(row, at: 0)
            channel.memberCount = row[Columns.channelCount]
            return channel
        }
    }

    static func member(channelId: String, userId: String, db: Database, coding: StoreCoding) throws -> Member? {
        try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    \(Columns.memberSelect)
                    WHERE m.channel_id = ? AND m.user_id = ?
                    """), arguments: [channelId, userId]
        ).map { try coding.member($0) }
    }
}
