import Foundation
import GRDB
import ReplicaModel

/// The store's writes under the version rule (`VersionDecision.sqlApplies`): one upsert per
/// entity table, used by every writer (bulk loads, real-time patches, the replicator's
/// transactions), so that the rule is written once.
enum RowUpserts<Custom: ChatCustomData> {
    typealias User = ChatUser<Custom.User>
    typealias Channel = ChatChannel<Custom.Channel>
    typealias Member = ChatMember<Custom>
    typealias Message = ChatMessage<Custom.Message>
}

extension RowUpserts {
    /// Writes a user or channel row under the version rule; with `force` the row is written even
    /// when it is not newer (local optimistic edits and reverts).
    static func upsert<Entity: StoredEntity>(_ entity: Entity, force: Bool = false, in db: Database, coding: StoreCoding)
        throws -> UpsertOutcome
    {
        let rows = Entity.rows
        try Validation.validateStoredIdentifier(entity.id, field: rows.idField)
        if let hidden = ModerationRows.hiddenOutcome(of: entity) { return hidden }
        let outcome = try db.upsert(
            try db.cachedStatement(sql: force ? Entity.forceUpsertSQL : Entity.upsertSQL), try rows.arguments(entity, coding: coding))
        if outcome == .unchanged, let metadata = entity.metadata {
            try MetadataColumns.refresh(metadata, table: rows.table, key: ["id": entity.id], eTag: entity.eTag, in: db)
        }
        return outcome
    }

    /// Writes a user; `force` as in ``upsert(_:force:in:coding:)``.
    static func upsert(user: User, force: Bool = false, in db: Database, coding: StoreCoding) throws -> UpsertOutcome {
        try upsert(user, force: force, in: db, coding: coding)
    }

    /// Writes a channel; `force` as in ``upsert(_:force:in:coding:)``.
    static func upsert(channel: Channel, force: Bool = false, in db: Database, coding: StoreCoding) throws -> UpsertOutcome {
        try upsert(channel, force: force, in: db, coding: coding)
    }

    /// Makes sure a row exists for a user or channel known only by id (memberships, messages),
    /// without replacing a fuller stored version.
    static func ensure<Entity: StoredEntity>(_ entity: Entity, in db: Database, coding: StoreCoding) throws {
        if ModerationRows.hiddenOutcome(of: entity) != nil { return }
        if entity.eTag == nil, entity.updated == nil {
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO \(Entity.rows.table) (id, type) VALUES (?, ?)")
                .execute(arguments: [entity.id, entity.type])
        } else {
            _ = try upsert(entity, in: db, coding: coding)
        }
    }

    static func upsert(member: Member, force: Bool, in db: Database, coding: StoreCoding) throws -> UpsertOutcome {
        if let hidden = try ModerationRows.hiddenOutcome(of: member, in: db) { return hidden }
        try ensure(member.channel, in: db, coding: coding)
        try ensure(member.user, in: db, coding: coding)
        var values: [(any DatabaseValueConvertible)?] = [member.channelId, member.userId]
        values += try member.columnValues(coding: coding)
        values += [member.updated?.description, member.updated?.nanoseconds, member.eTag]
        values += MetadataColumns.values(member.metadata)
        values += [member.isPresent, try coding.json(member.presenceState)]
        let arguments = StatementArguments(values)
        let outcome = try db.upsert(try db.cachedStatement(sql: force ? MemberSQL.forceUpsert : MemberSQL.upsert), arguments)
        if outcome == .unchanged, let metadata = member.metadata {
            try MetadataColumns.refresh(
                metadata, table: "members", key: ["channel_id": member.channelId, "user_id": member.userId], eTag: member.eTag, in: db)
        }
        return outcome
    }
}

extension RowUpserts {
    /// - Parameter statement: ``MessageColumn/upsertSQL`` prepared on `db` (nil: from GRDB's cache).
    static func upsert(
        message: Message, localSequence: Int64, in db: Database, coding: StoreCoding, statement: Statement? = nil
    ) throws -> UpsertOutcome {
        guard let values = try row(of: message, localSequence: localSequence, coding: coding) else { return .unchanged }
        let timetoken = values[MessageColumn.timetoken.rawValue]
        let outcome = try db.upsert(try statement ?? db.cachedStatement(sql: MessageColumn.upsertSQL), values: values)
        if outcome == .updated, !timetoken.isNull {
            // A pending message just got its timetoken: so do the actions made on it while it was
            // pending. Where the server's copy of an action is already stored under the timetoken,
            // the pending copy is dropped instead (re-keying it would break the unique index).
            let id = values[MessageColumn.id.rawValue], timetoken = values[MessageColumn.timetoken.rawValue]
            try db.cachedStatement(sql: MessageSQL.dropPendingDuplicateActions).execute(arguments: [id, timetoken])
            try db.cachedStatement(sql: MessageSQL.rekeyPendingActions).execute(arguments: [timetoken, id])
        }
        return outcome
    }

    /// A message's column values (``MessageColumn/values(of:timetoken:delivery:localSequence:coding:)``),
    /// once its ids pass the store's rules; nil for a message the store never keeps (one of a
    /// hidden channel: reports, moderation events). Every message write goes through here or
    /// ``appendRow(of:localSequence:coding:to:)``.
    static func row(of message: Message, localSequence: Int64, coding: StoreCoding) throws -> [DatabaseValue]? {
        var values: [DatabaseValue] = []
        values.reserveCapacity(MessageColumn.all.count)
        return try appendRow(of: message, localSequence: localSequence, coding: coding, to: &values) ? values : nil
    }

    /// ``row(of:localSequence:coding:)`` appended to `values` (a batch's rows: ``NewMessageRows``);
    /// false, and nothing appended, for a message the store never keeps.
    static func appendRow(of message: Message, localSequence: Int64, coding: StoreCoding, to values: inout [DatabaseValue]) throws -> Bool {
        try Validation.validateStoredIdentifier(message.channelId, field: "message.channelId")
        try Validation.validateStoredIdentifier(message.userId, field: "message.userId")
        try Validation.validateMessageId(message.id)
        // A hidden channel's messages (reports, moderation events) are never stored as messages.
        if ChatModeration.isHidden(channel: message.channelId) { return false }
        let timetoken = try StoreCoding.column(message.timetoken, field: "message.timetoken")
        let delivery: DeliveryState = timetoken != nil ? .sent : message.delivery
        try MessageColumn.append(message, timetoken: timetoken, delivery: delivery, localSequence: localSequence, coding: coding, to: &values)
        return true
    }

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
}
