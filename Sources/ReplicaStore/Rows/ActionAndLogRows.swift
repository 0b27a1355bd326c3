import Foundation
import GRDB
import ReplicaModel

// Row access to `message_actions` and `conflict_log`.
extension StoreTransaction {
    /// Writes an action (keyed by PubNub's identity when the message has a timetoken, by the
    /// message's local id while it is pending).
    @discardableResult
    package func upsert(action: ChatMessageAction) throws -> UpsertOutcome {
        try RowUpserts<Custom>.upsert(action: action, in: db)
    }

}

/// The message-action rows of one transaction (`message_actions`): reactions and the other actions, sent or waiting to be.
///
/// Reached through the transaction (`tx.messageActions`); lives only as long as it.
package struct MessageActionTable<Custom: ChatCustomData>: TransactionTable {
    /// The transaction these rows are read and written in.
    package let tx: StoreTransaction<Custom>
}

extension MessageActionTable {
    /// `userId`'s (type, value) action on a message, found by the message's id or its timetoken.
    package func action(messageId: String, type: String, value: String, userId: String) throws -> ChatMessageAction? {
        try Row.fetchOne(db.cachedStatement(sql: """
                SELECT a.channel_id, a.message_timetoken, a.action_timetoken
                FROM message_actions a
                WHERE a.type = ?2 AND a.value = ?3 AND a.user_id = ?4
                  AND (a.message_id = ?1
                       OR (a.channel_id, a.message_timetoken) = (SELECT channel_id, timetoken FROM messages WHERE id = ?1))
                """), arguments: [messageId, type, value, userId]).map { row in
            try ChatMessageAction(
                type: type, value: value, userId: userId, channelId: row[0],
                messageTimetoken: StoreCoding.timetoken(row[1]), actionTimetoken: StoreCoding.timetoken(row[2]),
                messageId: messageId)
        }
    }

    /// Every user's (type, value) actions on a message, found by its id or its timetoken.
    package func actions(messageId: String, type: String, value: String) throws -> [ChatMessageAction] {
        try Row.fetchAll(db.cachedStatement(sql: """
                SELECT a.channel_id, a.message_timetoken, a.action_timetoken, a.user_id
                FROM message_actions a
                WHERE a.type = ?2 AND a.value = ?3
                  AND (a.message_id = ?1
                       OR (a.channel_id, a.message_timetoken) = (SELECT channel_id, timetoken FROM messages WHERE id = ?1))
                ORDER BY a.action_timetoken IS NULL, a.action_timetoken
                """), arguments: [messageId, type, value]).map { row in
            try ChatMessageAction(
                type: type, value: value, userId: row[3], channelId: row[0],
                messageTimetoken: StoreCoding.timetoken(row[1]), actionTimetoken: StoreCoding.timetoken(row[2]),
                messageId: messageId)
        }
    }

    /// Whether any user's action of `type` is stored on the message (channel, timetoken).
    package func hasAction(channel: String, messageTimetoken: Timetoken, type: String) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(
                sql: "SELECT EXISTS (SELECT 1 FROM message_actions WHERE channel_id = ? AND message_timetoken = ? AND type = ?)"),
            arguments: [channel, try StoreCoding.column(messageTimetoken, field: "message.timetoken"), type]) ?? false
    }

    /// Deletes `userId`'s (type, value) action on a message.
    package func deleteAction(messageId: String, type: String, value: String, userId: String) throws {
        try db.cachedStatement(sql: """
                DELETE FROM message_actions
                WHERE type = ?2 AND value = ?3 AND user_id = ?4
                  AND (message_id = ?1
                       OR (channel_id, message_timetoken) = (SELECT channel_id, timetoken FROM messages WHERE id = ?1))
                """).execute(arguments: [messageId, type, value, userId])
    }

    /// Deletes the (type, value) actions on a message that have no action timetoken yet.
    package func deleteUnsentActions(messageId: String, type: String, value: String) throws {
        try db.cachedStatement(
            sql: "DELETE FROM message_actions WHERE message_id = ? AND type = ? AND value = ? AND action_timetoken IS NULL"
        ).execute(arguments: [messageId, type, value])
    }

    /// Sets the action timetoken of `userId`'s (type, value) action on a message.
    package func setActionTimetoken(
        messageId: String, type: String, value: String, userId: String, actionTimetoken: Timetoken
    ) throws {
        let actionTT = try StoreCoding.column(actionTimetoken, field: "action.actionTimetoken")
        try db.cachedStatement(sql: """
                UPDATE message_actions SET action_timetoken = ?5
                WHERE type = ?2 AND value = ?3 AND user_id = ?4
                  AND (message_id = ?1
                       OR (channel_id, message_timetoken) = (SELECT channel_id, timetoken FROM messages WHERE id = ?1))
                """).execute(arguments: [messageId, type, value, userId, actionTT])
    }

    /// One stored action row of a channel, keyed as PubNub keys it.
    package struct StoredAction {
        package var rowId: Int64
        package var messageTimetoken: Int64
        package var type: String
        package var value: String
        package var userId: String
        package var actionTimetoken: Int64?
    }

    /// The actions stored on a channel's messages whose timetokens are in `window`.
    package func actions(channel: String, window: ClosedRange<Int64>) throws -> [StoredAction] {
        try Row.fetchAll(db.cachedStatement(sql: """
                SELECT id, message_timetoken, type, value, user_id, action_timetoken FROM message_actions
                WHERE channel_id = ? AND message_timetoken BETWEEN ? AND ?
                """), arguments: [channel, window.lowerBound, window.upperBound]).map {
            StoredAction(rowId: $0[0], messageTimetoken: $0[1], type: $0[2], value: $0[3], userId: $0[4], actionTimetoken: $0[5])
        }
    }

    /// Deletes `userId`'s (type, value) action on the message at `messageTimetoken` of
    /// `channel`, PubNub's identity of an action; returns whether a row was deleted.
    @discardableResult
    package func deleteAction(
        channel: String, messageTimetoken: Timetoken, type: String, value: String, userId: String
    ) throws -> Bool {
        let messageTT = try StoreCoding.column(messageTimetoken, field: "action.messageTimetoken")
        try db.cachedStatement(sql: """
                DELETE FROM message_actions
                WHERE channel_id = ? AND message_timetoken = ? AND type = ? AND value = ? AND user_id = ?
                """).execute(arguments: [channel, messageTT, type, value, userId])
        return db.changesCount > 0
    }

    /// Deletes one action row.
    package func deleteAction(rowId: Int64) throws {
        try db.cachedStatement(sql: "DELETE FROM message_actions WHERE id = ?").execute(arguments: [rowId])
    }

}

extension StoreTransaction {
    // MARK: Conflict log

    /// Appends a conflict-log entry; returns its id.
    package func insertConflict(_ record: NewConflictRecord) throws -> Int64 { try record.insert(db) }

    /// Rewrites a log entry with `record`'s sides, result and policy (a person's decision closing it).
    package func updateConflict(id: Int64, with record: NewConflictRecord) throws {
        try db.cachedStatement(
            sql: "UPDATE conflict_log SET base = ?, local = ?, remote = ?, result = ?, policy = ?, automatic = ? WHERE id = ?"
        ).execute(arguments: [record.base, record.local, record.remote, record.result, record.policy, record.automatic, id])
    }

    /// Which side closes an open log entry.
    package enum ConflictSide { case local, remote }

    /// Closes the open log entries of an op with one of their own sides as the result.
    package func closeOpenConflicts(opId: String, with side: ConflictSide, policy: String) throws {
        let column = side == .local ? "local" : "remote"
        try db.cachedStatement(
            sql: "UPDATE conflict_log SET result = coalesce(\(column), 'null'), policy = ? WHERE op_id = ? AND result IS NULL"
        ).execute(arguments: [policy, opId])
    }
}
