import Foundation
import GRDB
import ReplicaModel

extension ChatStore {
    /// - Parameter statement: ``MessageSQL/upsert`` prepared on `db` (nil: from GRDB's cache).
    static func upsert(
        message: Message, localSequence: Int64, in db: Database, coding: StoreCoding, statement: Statement? = nil
    ) throws -> UpsertOutcome {
        try Validation.validateStoredIdentifier(message.channelId, field: "message.channelId")
        try Validation.validateStoredIdentifier(message.userId, field: "message.userId")
        try Validation.validateMessageId(message.id)
        let timetoken = try StoreCoding.column(message.timetoken, field: "message.timetoken")
        let delivery: DeliveryState = timetoken != nil ? .sent : message.delivery
        let values: [DatabaseValue] = [
            message.id.databaseValue, message.channelId.databaseValue, message.userId.databaseValue,
            message.text.databaseValue, message.contentType.databaseValue, try coding.json(message.content).databaseValue,
            try coding.json(message.custom).databaseValue, message.createdAt.description.databaseValue,
            timetoken.databaseValue, delivery.rawValue.databaseValue, localSequence.databaseValue,
            try coding.json(message.meta).databaseValue, message.customMessageType.databaseValue,
        ]
        let outcome = try db.upsert(try statement ?? db.cachedStatement(sql: MessageSQL.upsert), values: values)
        if outcome == .updated, timetoken != nil {
            // A pending message just got its timetoken: so do the actions made on it while it was
            // pending. Where the server's copy of an action is already stored under the timetoken,
            // the pending copy is dropped instead (re-keying it would break the unique index).
            try db.cachedStatement(sql: MessageSQL.dropPendingDuplicateActions).execute(arguments: [values[0], values[8]])
            try db.cachedStatement(sql: MessageSQL.rekeyPendingActions).execute(arguments: [values[8], values[0]])
        }
        return outcome
    }

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
            batch.result.record(try Self.upsert(message: message, localSequence: next, in: db, coding: coding))
            if processMessageActions {
                for action in message.messageActions {
                    _ = try Self.upsert(action: action, in: db)
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

    static let upsert = """
        INSERT INTO messages (id, channel_id, user_id, text, content_type, content, custom, created_at, timetoken,
                              delivery, local_seq, meta, custom_message_type)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
        ON CONFLICT(id) DO UPDATE SET
            text = excluded.text, content_type = excluded.content_type, content = excluded.content,
            custom = excluded.custom, created_at = excluded.created_at,
            meta = coalesce(excluded.meta, messages.meta),
            custom_message_type = coalesce(excluded.custom_message_type, messages.custom_message_type),
            timetoken = coalesce(excluded.timetoken, messages.timetoken),
            delivery = CASE WHEN coalesce(excluded.timetoken, messages.timetoken) IS NOT NULL THEN 'sent'
                            ELSE excluded.delivery END
        WHERE messages.timetoken IS NOT coalesce(excluded.timetoken, messages.timetoken)
            OR messages.delivery IS NOT (CASE WHEN coalesce(excluded.timetoken, messages.timetoken) IS NOT NULL
                                              THEN 'sent' ELSE excluded.delivery END)
            OR messages.text IS NOT excluded.text
            OR messages.content_type IS NOT excluded.content_type
            OR messages.content IS NOT excluded.content
            OR messages.custom IS NOT excluded.custom
            OR messages.created_at IS NOT excluded.created_at
            OR messages.meta IS NOT coalesce(excluded.meta, messages.meta)
            OR messages.custom_message_type IS NOT coalesce(excluded.custom_message_type, messages.custom_message_type)
        """
}
