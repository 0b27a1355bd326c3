import Foundation
import GRDB
import ReplicaModel

/// What applying one history page did.
public struct HistoryPageResult: Sendable, Hashable {
    /// Messages stored for the first time.
    public var inserted = 0
    /// Stored messages that changed (a pending message of ours that got its timetoken counts here).
    public var updated = 0
    /// Messages already stored as they are.
    public var unchanged = 0
    /// Messages left out because another stored message of the channel already has their
    /// timetoken (a server answer that mangled a message's payload, so its id changed): the
    /// stored row is kept rather than show one message twice.
    public var skipped = 0
    /// Our own unsent publishes the page showed had arrived: their outbox ops are finished.
    public var completedSends: [CompletedSend] = []

    /// An empty result.
    public init() {}
}

/// A publish op finished by a pull: the page held its message.
public struct CompletedSend: Sendable, Hashable {
    /// The outbox op that carried the publish.
    public var opId: String
    /// The message id.
    public var messageId: String
    /// The timetoken the server gave it.
    public var timetoken: Timetoken
}

extension ChatStore {
    /// Applies one history page and moves the channel's checkpoint, in one transaction: either both
    /// are stored or neither is, so a checkpoint never passes a page that was not applied. A nil
    /// checkpoint leaves the stored one alone (scroll-back pages below it).
    ///
    /// Messages are upserted by id. A message of ours still pending locally becomes `sent` with
    /// the server's timetoken, and its publish op leaves the outbox: the pull proved it arrived.
    ///
    /// - Parameter beforeCommit: runs inside the transaction after the writes (tests use it to
    ///   fail between applying a page and committing it).
    package func applyHistoryPage(
        _ messages: [Message], checkpoint: SyncCheckpoint?,
        beforeCommit: (@Sendable () throws -> Void)? = nil
    ) async throws(StoreError) -> HistoryPageResult {
        try await write { db in
            let coding = StoreCoding()
            var result = HistoryPageResult()
            var sequence = BatchState(result: LoadBatchResult(index: 0, count: messages.count))
            for message in messages {
                if let timetoken = message.timetoken,
                   let holder = try String.fetchOne(
                       db.cachedStatement(sql: "SELECT id FROM messages WHERE channel_id = ? AND timetoken = ? AND id <> ? LIMIT 1"),
                       arguments: [message.channelId, try StoreCoding.column(timetoken, field: "message.timetoken"), message.id])
                {
                    self.logger.warning("skipped a history message whose timetoken another stored message holds", metadata: [
                        "channel": "\(message.channelId)", "timetoken": "\(timetoken)", "stored": "\(holder)",
                    ])
                    result.skipped += 1
                    continue
                }
                let outcome = try Self.upsert(
                    message: message, localSequence: try sequence.nextLocalSequence(db), in: db, coding: coding)
                switch outcome {
                case .inserted: result.inserted += 1
                case .unchanged: result.unchanged += 1
                case .updated:
                    result.updated += 1
                    if let timetoken = message.timetoken,
                       let opId = try String.fetchOne(
                           db, sql: "SELECT op_id FROM outbox WHERE target = ? AND kind = 'send'",
                           arguments: [OutboxKeys.message(message.id)])
                    {
                        try Self.deleteOp(opId, db)
                        result.completedSends.append(CompletedSend(opId: opId, messageId: message.id, timetoken: timetoken))
                    }
                }
            }
            try checkpoint?.write(db)
            try beforeCommit?()
            return result
        }
    }

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
    /// The ids of the channels `userId` is a member of, and of every channel with stored messages.
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
