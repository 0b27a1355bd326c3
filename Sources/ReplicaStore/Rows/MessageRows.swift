import Foundation
import GRDB
import ReplicaModel

// MARK: Messages

extension ChatStore {
    /// Inserts or updates messages by id. A stored pending message that comes back with a
    /// timetoken becomes `sent`; a timetoken is never erased by a version without one.
    ///
    /// - Parameter processMessageActions: also store each message's embedded
    ///   ``ReplicaModel/ChatMessage/messageActions`` (history-with-actions) in the same batch.
    @discardableResult
    public func load(
        messages: [Message], processMessageActions: Bool = true, batchSize: Int = 256,
        onBatch: (@Sendable (LoadBatchResult) -> Void)? = nil
    ) async throws -> LoadReport {
        try await loadInBatches(messages, batchSize: batchSize, onBatch: onBatch) { db, coding, message, batch in
            let next = try batch.nextLocalSequence(db)
            batch.result.record(try RowUpserts<Custom>.upsert(message: message, localSequence: next, in: db, coding: coding))
            if processMessageActions {
                for action in message.messageActions {
                    _ = try RowUpserts<Custom>.upsert(action: action, in: db)
                }
            }
        }
    }

    /// Removes a message and its actions.
    @discardableResult
    public func removeMessage(id: String) async throws(StoreError) -> Bool {
        try await write { db in
            try db.execute(
                sql: """
                    DELETE FROM message_actions
                    WHERE message_id = ?1
                       OR (message_timetoken IS NOT NULL
                           AND (channel_id, message_timetoken) = (SELECT channel_id, timetoken FROM messages WHERE id = ?1))
                    """, arguments: [id])
            try db.execute(sql: "DELETE FROM messages WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }
}


/// The statements of these writes.
enum MessageSQL {
    static let dropPendingDuplicateActions = """
        DELETE FROM message_actions
        WHERE message_id = ?1 AND message_timetoken IS NULL
          AND EXISTS (SELECT 1 FROM message_actions t
                      WHERE t.channel_id = message_actions.channel_id AND t.message_timetoken = ?2
                        AND t.type = message_actions.type AND t.value = message_actions.value
                        AND t.user_id = message_actions.user_id)
        """

    static let rekeyPendingActions =
        "UPDATE message_actions SET message_timetoken = ? WHERE message_id = ? AND message_timetoken IS NULL"
}

// MARK: Message actions

extension ChatStore {
    /// Inserts message actions, or fills in the action timetoken of a pending one.
    @discardableResult
    public func load(
        messageActions: [ChatMessageAction], batchSize: Int = 256,
        onBatch: (@Sendable (LoadBatchResult) -> Void)? = nil
    ) async throws -> LoadReport {
        try await loadInBatches(messageActions, batchSize: batchSize, onBatch: onBatch) { db, _, action, batch in
            batch.result.record(try RowUpserts<Custom>.upsert(action: action, in: db))
        }
    }

    /// Removes the action (type, value) that `userId` made on a message, identified by its
    /// timetoken when it has one and by its local id otherwise.
    @discardableResult
    public func removeMessageAction(
        channelId: String, messageTimetoken: Timetoken?, messageId: String? = nil, type: String, value: String,
        userId: String
    ) async throws(StoreError) -> Bool {
        let messageTT = try StoreCoding.column(messageTimetoken, field: "action.messageTimetoken")
        return try await write { db in
            try db.execute(
                sql: """
                    DELETE FROM message_actions
                    WHERE type = ? AND value = ? AND user_id = ? AND channel_id = ?
                      AND ((message_timetoken IS NOT NULL AND message_timetoken = ?)
                           OR (message_id IS NOT NULL AND message_id = ?))
                    """,
                arguments: [type, value, userId, channelId, messageTT, messageId])
            return db.changesCount > 0
        }
    }
}

/// The statements of these writes.
enum ActionSQL {
    static let upsert = """
        INSERT INTO message_actions (channel_id, message_timetoken, message_id, type, value, user_id,
                                     action_timetoken)
        VALUES (?1, ?2, coalesce(?3, (SELECT id FROM messages WHERE channel_id = ?1 AND timetoken = ?2)), ?4, ?5, ?6, ?7)
        ON CONFLICT(channel_id, message_timetoken, type, value, user_id) WHERE message_timetoken IS NOT NULL
        DO UPDATE SET
            action_timetoken = coalesce(excluded.action_timetoken, message_actions.action_timetoken),
            message_id = coalesce(excluded.message_id, message_actions.message_id)
        WHERE message_actions.action_timetoken IS NOT coalesce(excluded.action_timetoken, message_actions.action_timetoken)
            OR message_actions.message_id IS NOT coalesce(excluded.message_id, message_actions.message_id)
        """

    static let upsertOnPendingParent = """
        INSERT INTO message_actions (channel_id, message_timetoken, message_id, type, value, user_id,
                                     action_timetoken)
        VALUES (?, NULL, ?, ?, ?, ?, ?)
        ON CONFLICT(message_id, type, value, user_id) WHERE message_timetoken IS NULL
        DO UPDATE SET action_timetoken = coalesce(excluded.action_timetoken, message_actions.action_timetoken)
        WHERE message_actions.action_timetoken IS NOT coalesce(excluded.action_timetoken, message_actions.action_timetoken)
        """
}
