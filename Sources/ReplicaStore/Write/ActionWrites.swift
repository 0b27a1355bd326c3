import Foundation
import GRDB
import ReplicaModel

extension ChatStore {
    // Actions on a message that has a timetoken are keyed by (channel, message timetoken, type,
    // value, user), PubNub's own uniqueness rule. Actions on a still-pending message are keyed by
    // the message's local id until the message gets its timetoken.
    static func upsert(action: ChatMessageAction, in db: Database) throws -> UpsertOutcome {
        try Validation.validateStoredIdentifier(action.channelId, field: "action.channelId")
        try Validation.validateStoredIdentifier(action.userId, field: "action.userId")
        let actionTimetoken = try StoreCoding.column(action.actionTimetoken, field: "action.actionTimetoken")
        if let messageTimetoken = try StoreCoding.column(action.messageTimetoken, field: "action.messageTimetoken") {
            let arguments: StatementArguments = [
                action.channelId, messageTimetoken, action.messageId, action.type, action.value, action.userId,
                actionTimetoken,
            ]
            return try db.upsert(try db.cachedStatement(sql: ActionSQL.upsert), arguments)
        }
        guard let messageId = action.messageId else {
            throw ModelValidationError.missingValue(field: "action.messageTimetoken")
        }
        // The parent may have been sent since the action was made: attach to its timetoken then.
        if let parentTimetoken = try Int64.fetchOne(
            db, sql: "SELECT timetoken FROM messages WHERE id = ? AND timetoken IS NOT NULL", arguments: [messageId])
        {
            var attached = action
            attached.messageTimetoken = StoreCoding.timetoken(parentTimetoken)
            return try upsert(action: attached, in: db)
        }
        let arguments: StatementArguments = [
            action.channelId, messageId, action.type, action.value, action.userId, actionTimetoken,
        ]
        return try db.upsert(try db.cachedStatement(sql: ActionSQL.upsertOnPendingParent), arguments)
    }

    /// Inserts message actions, or fills in the action timetoken of a pending one.
    @discardableResult
    public func load(
        messageActions: [ChatMessageAction], batchSize: Int = 256,
        onBatch: (@Sendable (LoadBatchResult) -> Void)? = nil
    ) async throws -> LoadReport {
        try await loadInBatches(messageActions, batchSize: batchSize, onBatch: onBatch) { db, _, action, batch in
            batch.result.record(try Self.upsert(action: action, in: db))
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
