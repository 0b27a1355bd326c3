import Foundation
import GRDB
import ReplicaModel

extension ChatStore {
    /// The stored messages of a channel between two timetokens (both inclusive), for reconciling
    /// their reactions: the window's bounds, or nil when the channel has no sent message.
    package func timetokenWindow(channel: String) async throws(StoreError) -> ClosedRange<Timetoken>? {
        try await read { db in
            guard let row = try Row.fetchOne(
                db, sql: "SELECT min(timetoken), max(timetoken) FROM messages WHERE channel_id = ? AND timetoken IS NOT NULL",
                arguments: [channel]),
                let low = StoreCoding.timetoken(row[0]), let high = StoreCoding.timetoken(row[1])
            else { return nil }
            return low...high
        }
    }

    /// The oldest stored timetoken of a channel (where "load older" continues), or nil.
    public func oldestTimetoken(channel: String) async throws(StoreError) -> Timetoken? {
        try await timetokenWindow(channel: channel)?.lowerBound
    }
}

extension ChatQueries {
    /// The ids of the channels `userId` is a member of, sorted (an index lookup: cheap to ask often).
    public func channelIds(memberOf userId: String) -> StoreQuery<[String]> {
        StoreQuery { db in
            try String.fetchAll(db, sql: "SELECT channel_id FROM members WHERE user_id = ? ORDER BY 1", arguments: [userId])
        }
    }

    /// The channels `userId` is a member of, or that hold stored messages, sorted (a scan of
    /// the messages index: callers that ask often cache it).
    public func channelIds(memberOrWithMessages userId: String) -> StoreQuery<[String]> {
        StoreQuery { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT channel_id FROM members WHERE user_id = ?
                    UNION SELECT DISTINCT channel_id FROM messages ORDER BY 1
                    """, arguments: [userId])
        }
    }
}
