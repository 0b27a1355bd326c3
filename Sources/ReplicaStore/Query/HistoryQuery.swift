import Foundation
import GRDB
import ReplicaModel

extension ChatQueries {
    /// A channel's stored history read the way PubNub reads its own: the local twin of
    /// `Reconciler.remoteHistory(channel:start:end:reverse:limit:)`, so that a page can be compared
    /// with the server's.
    ///
    /// - Only messages with a timetoken count (pending sends have none yet).
    /// - `start` is an exclusive upper bound, `end` an inclusive lower bound: `end ≤ tt < start`.
    /// - At most `limit` messages (1-100, else ``StoreError/invalidInput(_:)`` when the query runs):
    ///   the newest ones in the window, or with `reverse` the oldest ones.
    /// - Like PubNub's v2 history, `reverse` is ignored when both `start` and `end` are given.
    /// - The result is always oldest first.
    public func history(
        channel: String, start: Timetoken?, end: Timetoken?, reverse: Bool, limit: Int
    ) -> StoreQuery<[Message]> {
        StoreQuery { db in
            guard (1...100).contains(limit) else {
                throw StoreError.invalidInput("history limit must be 1-100, got \(limit)")
            }
            // A bound above the largest storable timetoken: an `end` there excludes every stored
            // message, a `start` there excludes none.
            let lower: Int64?
            if let end {
                guard let value = Int64(exactly: end.rawValue) else { return [] }
                lower = value
            } else {
                lower = nil
            }
            let upper = start.flatMap { Int64(exactly: $0.rawValue) }
            let oldestSlice = reverse && !(start != nil && end != nil)
            let rows = try Row.fetchAll(
                db, sql: oldestSlice ? Self.historyOldestSQL : Self.historyNewestSQL,
                arguments: [channel, upper, lower, limit])
            let coding = StoreCoding()
            let messages: [Message] = try rows.map { try coding.message($0) }
            return oldestSlice ? messages : messages.reversed()
        }
    }

    private static var historyWindow: String {
        """
        SELECT \(Columns.message) FROM messages msg
        WHERE msg.channel_id = ?1 AND msg.timetoken IS NOT NULL
          AND (?2 IS NULL OR msg.timetoken < ?2)
          AND (?3 IS NULL OR msg.timetoken >= ?3)
        """
    }

    /// The oldest `limit` of the window, already oldest first.
    private static var historyOldestSQL: String { historyWindow + " ORDER BY msg.timetoken, msg.id LIMIT ?4" }

    /// The newest `limit` of the window, newest first (reversed by the caller).
    private static var historyNewestSQL: String { historyWindow + " ORDER BY msg.timetoken DESC, msg.id DESC LIMIT ?4" }
}
