import Foundation
import GRDB
import ReplicaModel

/// One SQLite transaction on a ``ChatStore``, seen as typed rows: read an object, upsert it,
/// delete it, read or write an outbox row, write a checkpoint or a conflict-log entry.
///
/// The store decides nothing here: which row to write, and why, is the caller's rule (the outbox's
/// state machine, the read-your-writes overlay and the pulls live in the `Replicator` module).
/// Everything done through one transaction commits together or not at all.
///
/// A transaction exists only inside ``ChatStore/transaction(_:)`` or ``ChatStore/reading(_:)``;
/// it must not escape the closure.
package final class StoreTransaction<Custom: ChatCustomData> {
    package typealias User = ChatUser<Custom.User>
    package typealias Channel = ChatChannel<Custom.Channel>
    package typealias Member = ChatMember<Custom>
    package typealias Message = ChatMessage<Custom.Message>
    typealias Store = ChatStore<Custom>

    let db: Database
    let coding = StoreCoding()
    /// The next local send sequence; the stored maximum is read once per transaction.
    private var localSequence: Int64?
    /// The message upsert, looked up once per transaction (GRDB's cache hashes the SQL text on
    /// every lookup; a history page upserts a message per row). Dropped when it fails: GRDB
    /// evicts a failed statement, which cannot run again.
    private var messageUpsert: Statement?
    /// The next op's sequence number (`OutboxTable.insertOp`): the stored maximum is read once
    /// per transaction, then counted up (a batch send queues thousands of ops in one).
    var nextOutboxSeq: Int64?

    init(_ db: Database) { self.db = db }

    // MARK: Users and channels

    /// The stored user, or nil.
    package func user(id: String) throws -> User? { try EntityReads<Custom>.user(id: id, db: db, coding: coding) }

    /// The stored channel, or nil.
    package func channel(id: String) throws -> Channel? {
        try EntityReads<Custom>.channel(id: id, db: db, coding: coding)
    }

    /// Writes a user. Without `force` the store's version rule applies (an older `updated` or the
    /// same eTag changes nothing); with it the row is replaced whatever it holds.
    @discardableResult
    package func upsert(user: User, force: Bool = false) throws -> UpsertOutcome {
        try RowUpserts<Custom>.upsert(user: user, force: force, in: db, coding: coding)
    }

    /// Writes a channel, as ``upsert(user:force:)`` writes a user.
    @discardableResult
    package func upsert(channel: Channel, force: Bool = false) throws -> UpsertOutcome {
        try RowUpserts<Custom>.upsert(channel: channel, force: force, in: db, coding: coding)
    }

    /// Writes a user or channel, as ``upsert(user:force:)`` writes a user.
    @discardableResult
    package func upsert<Entity: StoredEntity>(_ entity: Entity, force: Bool = false) throws -> UpsertOutcome {
        try RowUpserts<Custom>.upsert(entity, force: force, in: db, coding: coding)
    }

    /// Deletes a user's or channel's row (its memberships go with it).
    package func delete<Entity: StoredEntity>(_: Entity.Type, id: String) throws {
        try db.cachedStatement(sql: "DELETE FROM \(Entity.rows.table) WHERE id = ?").execute(arguments: [id])
    }

    /// Deletes a user row (its memberships go with it).
    package func deleteUser(id: String) throws { try delete(User.self, id: id) }

    /// Deletes a channel row (its memberships go with it).
    package func deleteChannel(id: String) throws { try delete(Channel.self, id: id) }

    /// Whether any membership of the user or channel `id` is stored.
    package func hasMemberships(_ table: ObjectTable, id: String) throws -> Bool {
        let column = table == .users ? "user_id" : "channel_id"
        return try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM members WHERE \(column) = ?)"), arguments: [id]) ?? false
    }

    /// Makes a user's or channel's row a bare one (its fields, version and metadata cleared), so
    /// that its memberships stay (``MetadataColumns/demoteToBare(_:id:in:)``).
    package func demoteToBare(_ table: ObjectTable, id: String) throws {
        if table == .users { try MetadataColumns.demoteToBare(User.rows, id: id, in: db) } else {
            try MetadataColumns.demoteToBare(Channel.rows, id: id, in: db)
        }
    }

    /// The ids of the users or channels that came from the server (they have an eTag).
    package func serverObjectIds(_ table: ObjectTable) throws -> [String] {
        try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM \(table.rawValue) WHERE etag IS NOT NULL"))
    }

    // MARK: Memberships
    /// Every stored user, channel and membership whose `expiresAt` has passed at `now`.
    package func expiredObjects(at now: Date) throws -> [ExpiringObject] {
        try ExpiringObject.rows(db, sql: ExpiringObject.select(followedBy: nil), arguments: [ISOTimestamp(date: now).nanoseconds])
    }

    /// The (channel, user) of the stored membership whose own server id is `backendId`, if any.
    package func membership(backendId: String) throws -> (channel: String, user: String)? {
        guard let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT channel_id, user_id FROM members WHERE backend_id = ?"), arguments: [backendId])
        else { return nil }
        return (row[0], row[1])
    }


    /// The stored membership, or nil.
    package func member(channelId: String, userId: String) throws -> Member? {
        try EntityReads<Custom>.member(channelId: channelId, userId: userId, db: db, coding: coding)
    }

    /// Writes a membership; `force` as in ``upsert(user:force:)``.
    @discardableResult
    package func upsert(member: Member, force: Bool) throws -> UpsertOutcome {
        try RowUpserts<Custom>.upsert(member: member, force: force, in: db, coding: coding)
    }

    /// Deletes a membership row.
    package func deleteMember(channelId: String, userId: String) throws {
        if let channel = ChatModeration.restrictedChannel(ofModerationChannel: channelId) {
            try moderation.write(restriction: ChannelRestriction(userId: userId, channelId: channel, ban: false, mute: false))
            return
        }
        try db.cachedStatement(sql: "DELETE FROM members WHERE channel_id = ? AND user_id = ?").execute(arguments: [channelId, userId])
    }

    /// Sets the presence of one stored membership (`state` only while present; leaving clears
    /// it). Returns whether the row changed: nothing is written when it already says so, and a
    /// user without a membership row is not stored at all.
    @discardableResult
    package func setPresence(channelId: String, userId: String, isPresent: Bool, state: JSONValue?) throws -> Bool {
        let stateText = isPresent ? try coding.json(state) : nil
        try db.cachedStatement(sql: """
                UPDATE members SET is_present = ?1, presence_state = ?2
                WHERE channel_id = ?3 AND user_id = ?4 AND (is_present IS NOT ?1 OR presence_state IS NOT ?2)
                """).execute(arguments: [isPresent, stateText, channelId, userId])
        return db.changesCount > 0
    }

    /// Sets the presence of every stored member of a channel from a full list (a here-now):
    /// those in `present` are present with their state, every other member is absent. Returns
    /// how many rows changed.
    @discardableResult
    package func replacePresence(channelId: String, present: [String: JSONValue?]) throws -> Int {
        var changed = 0
        for (channel, userId) in try memberships(of: .channel(channelId)) {
            let state = present[userId]
            if try setPresence(channelId: channel, userId: userId, isPresent: state != nil, state: state ?? nil) { changed += 1 }
        }
        return changed
    }

    /// The (channel, user) pairs stored on one side: a user's channels or a channel's members.
    package func memberships(of side: MembershipSide) throws -> [(channelId: String, userId: String)] {
        switch side {
        case .user(let id):
            try String.fetchAll(db.cachedStatement(sql: "SELECT channel_id FROM members WHERE user_id = ?"), arguments: [id])
                .map { ($0, id) }
        case .channel(let id):
            try String.fetchAll(db.cachedStatement(sql: "SELECT user_id FROM members WHERE channel_id = ?"), arguments: [id])
                .map { (id, $0) }
        }
    }

    // MARK: Messages

    /// Inserts or updates a message by id, giving a new row the next local send sequence number.
    /// A pending message that comes back with a timetoken becomes `sent`, and the actions made on
    /// it while it was pending are re-keyed to the timetoken.
    @discardableResult
    package func upsert(message: Message) throws -> UpsertOutcome {
        let next = try localSequence.map { $0 + 1 } ?? BatchState.storedNextSequence(db)
        localSequence = next
        let statement = try messageUpsert ?? db.cachedStatement(sql: MessageColumn.upsertSQL)
        messageUpsert = statement
        do {
            return try RowUpserts<Custom>.upsert(message: message, localSequence: next, in: db, coding: coding, statement: statement)
        } catch {
            messageUpsert = nil
            throw error
        }
    }

    /// Stores a new message this device made (a pending send): a plain insert, no read first.
    /// Throws ``StoreError/invalidInput(_:)`` when a message with its id is already stored.
    package func insert(newMessage message: Message) throws {
        try insert(newMessages: [message])
    }

    /// Stores many new messages this device made (a batch of pending sends), in order, as
    /// ``insert(newMessage:)`` stores each, but in multi-row inserts (``MultiRowInsert``): a
    /// statement per row cost more than the rows.
    /// Throws ``StoreError/invalidInput(_:)`` naming a message whose id is already stored.
    package func insert(newMessages messages: [Message]) throws {
        try insert(newMessages: NewMessageRows<Custom>(messages, coding: coding))
    }

    /// ``insert(newMessages:)`` of rows made before the transaction (``NewMessageRows``): it only
    /// gives them their local send order.
    package func insert(newMessages rows: NewMessageRows<Custom>) throws {
        let first = try localSequence.map { $0 + 1 } ?? BatchState.storedNextSequence(db)
        do {
            try MultiRowInsert.messages.insert(rows.values, sequence: (MessageColumn.localSequence.rawValue, first), in: db)
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY {
            let ids = rows.ids
            let stored = try String.fetchOne(db, sql: "SELECT id FROM messages WHERE id IN (\(ids.map { _ in "?" }.joined(separator: ",")))", arguments: StatementArguments(ids))
            let repeated = Dictionary(grouping: ids, by: { $0 }).first { $0.value.count > 1 }?.key
            throw StoreError.invalidInput("a message with id \(stored ?? repeated ?? "?") is already stored")
        }
        if rows.count > 0 { localSequence = first + Int64(rows.count) - 1 }
    }

    // MARK: Tables

    /// The message rows (`tx.messages.message(id:)`); ``upsert(message:)`` stays here.
    package var messages: MessageTable<Custom> { MessageTable(tx: self) }
    /// The message-action rows; ``upsert(action:)`` stays here.
    package var messageActions: MessageActionTable<Custom> { MessageActionTable(tx: self) }
    /// The outbox rows.
    package var outbox: OutboxTable<Custom> { OutboxTable(tx: self) }
    /// The file rows.
    package var files: FileTable<Custom> { FileTable(tx: self) }
    /// The moderation rows.
    package var moderation: ModerationTable<Custom> { ModerationTable(tx: self) }

}

/// The message rows of one transaction (`messages`): where a message is, its delivery, its edits and deletion.
///
/// Reached through the transaction (`tx.messages`); lives only as long as it.
package struct MessageTable<Custom: ChatCustomData>: TransactionTable {
    /// The transaction these rows are read and written in.
    package let tx: StoreTransaction<Custom>
}

extension MessageTable {
    /// The channel and timetoken (nil while pending) of a stored message, or nil when it is not stored.
    package func messageLocation(id: String) throws -> (channel: String, timetoken: Timetoken?)? {
        try messagePlace(id: id).map { ($0.channel, $0.timetoken) }
    }

    /// The author of stored message `id` and whether `user` may change what it shows (the author,
    /// or a user the store's ``EditAuthority`` names), or nil when it is not stored.
    package func editPermission(messageId id: String, user: String) throws -> (author: String, allowed: Bool)? {
        try Row.fetchOne(
            db.cachedStatement(sql: """
                SELECT msg.user_id, \(ChatSemantics.authorized(actor: "?2", author: "msg.user_id"))
                FROM messages msg WHERE msg.id = ?1
                """), arguments: [id, user]
        ).map { ($0[0], $0[1]) }
    }

    /// Where the stored message `id` is and who wrote it (``ReplicaModel/MessageIdentity``), or nil.
    package func messagePlace(id: String) throws -> MessageIdentity.Place? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT channel_id, timetoken, user_id FROM messages WHERE id = ?"), arguments: [id])
            .map(Self.place)
    }

    /// Where each stored message of `ids` is, by id (ids not stored are left out): one read per
    /// 500 ids, for a whole history page.
    package func messagePlaces(ids: some Collection<String>) throws -> [String: MessageIdentity.Place] {
        var places: [String: MessageIdentity.Place] = [:]
        let unique = Array(Set(ids))
        for start in stride(from: 0, to: unique.count, by: 500) {
            let chunk = Array(unique[start..<min(start + 500, unique.count)])
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
            for row in try Row.fetchAll(
                db, sql: "SELECT channel_id, timetoken, user_id, id FROM messages WHERE id IN (\(marks))",
                arguments: StatementArguments(chunk))
            {
                places[row[3]] = Self.place(row)
            }
        }
        return places
    }

    private static func place(_ row: Row) -> MessageIdentity.Place {
        MessageIdentity.Place(channel: row[0], timetoken: StoreCoding.timetoken(row[1]), userId: row[2])
    }

    /// The id of another stored message of `channel` that holds `timetoken`, or nil.
    package func messageId(channel: String, timetoken: Timetoken, other id: String) throws -> String? {
        try String.fetchOne(
            db.cachedStatement(sql: "SELECT id FROM messages WHERE channel_id = ? AND timetoken = ? AND id <> ? LIMIT 1"),
            arguments: [channel, try StoreCoding.column(timetoken, field: "message.timetoken"), id])
    }

    /// Rewrites a pending message's text (an edit made before its publish went out).
    package func setPendingText(messageId: String, text: String) throws {
        try db.cachedStatement(sql: "UPDATE messages SET text = ? WHERE id = ? AND timetoken IS NULL").execute(arguments: [text, messageId])
    }

    /// Gives a pending message its timetoken and marks it `sent`; its pending actions are re-keyed.
    package func markSent(messageId: String, timetoken: Timetoken) throws {
        let value = try StoreCoding.column(timetoken, field: "message.timetoken")
        try db.cachedStatement(sql: "UPDATE messages SET timetoken = ?, delivery = 'sent' WHERE id = ?")
            .execute(arguments: [value, messageId])
        if db.changesCount > 0 {
            try db.cachedStatement(sql: MessageSQL.dropPendingDuplicateActions).execute(arguments: [messageId, value])
            try db.cachedStatement(sql: MessageSQL.rekeyPendingActions).execute(arguments: [value, messageId])
        }
    }

    /// Sets the delivery state of a message that has no timetoken yet (a sent one is left alone).
    package func setDelivery(messageId: String, to delivery: DeliveryState) throws {
        try db.cachedStatement(sql: "UPDATE messages SET delivery = ? WHERE id = ? AND timetoken IS NULL AND delivery IS NOT ?")
            .execute(arguments: [delivery.rawValue, messageId, delivery.rawValue])
    }

    /// Moves a message to the end of the local send order.
    package func moveToEndOfLocalOrder(messageId: String) throws {
        try db.cachedStatement(sql: "UPDATE messages SET local_seq = (SELECT max(local_seq) + 1 FROM messages) WHERE id = ?")
            .execute(arguments: [messageId])
    }

    /// The stored message with `id`, or nil.
    package func message(id: String) throws -> Message? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT \(Columns.message) FROM messages msg WHERE msg.id = ?"), arguments: [id])
            .map { try coding.message($0) }
    }

    /// Deletes a message, sent or not, with every action stored on it (a hard delete).
    package func deleteMessage(id: String) throws {
        try db.cachedStatement(sql: """
                DELETE FROM message_actions WHERE message_id = ?1
                   OR (channel_id, message_timetoken) = (SELECT channel_id, timetoken FROM messages WHERE id = ?1)
                """).execute(arguments: [id])
        try db.cachedStatement(sql: "DELETE FROM messages WHERE id = ?").execute(arguments: [id])
    }

    /// Deletes a message that has no timetoken, with every action stored on it.
    package func deleteUnsentMessage(id: String) throws {
        try db.cachedStatement(sql: "DELETE FROM message_actions WHERE message_id = ?").execute(arguments: [id])
        try db.cachedStatement(sql: "DELETE FROM messages WHERE id = ? AND timetoken IS NULL").execute(arguments: [id])
    }

    /// The messages of a channel whose timetokens are in `window`: timetoken, id and content type
    /// of each, in timetoken order (one range read of the `(channel_id, timetoken)` index).
    package func messageHolders(channel: String, window: ClosedRange<Int64>) throws
        -> [(timetoken: Int64, id: String, contentType: String?)]
    {
        try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT timetoken, id, content_type FROM messages
                    WHERE channel_id = ? AND timetoken BETWEEN ? AND ? ORDER BY timetoken
                    """),
            arguments: [channel, window.lowerBound, window.upperBound]
        ).map { ($0[0], $0[1], $0[2]) }
    }

    /// The ids of a channel's messages whose timetokens are in `window`, by timetoken.
    package func messageIds(channel: String, window: ClosedRange<Int64>) throws -> [Int64: String] {
        try Dictionary(
            Row.fetchAll(
                db.cachedStatement(sql: "SELECT timetoken, id FROM messages WHERE channel_id = ? AND timetoken BETWEEN ? AND ?"),
                arguments: [channel, window.lowerBound, window.upperBound]
            ).map { (row: Row) -> (Int64, String) in (row[0], row[1]) }, uniquingKeysWith: { a, _ in a })
    }

}

extension StoreTransaction {
    // MARK: Snapshots

    /// An object as op rows keep it (`base_snapshot`): compact JSON with sorted keys; nil for nil.
    package func snapshot<T: Encodable>(_ value: T?) throws -> String? { try coding.json(value) }

    /// Decodes an op's base snapshot; an unreadable one is ``StoreError/corruptValue(table:column:key:message:)``.
    package func decodeSnapshot<T: Decodable>(_ type: T.Type, of entry: OutboxEntry) throws -> T? {
        try coding.decode(T.self, entry.baseSnapshot, table: "outbox", column: "base_snapshot", key: entry.id)
    }

    // MARK: Checkpoints

    /// Writes a checkpoint (inserted or replaced by scope).
    package func write(_ checkpoint: SyncCheckpoint) throws { try checkpoint.write(db) }

    /// The stored checkpoint of `scope`, if any.
    package func checkpoint(_ scope: String) throws -> SyncCheckpoint? { try SyncCheckpoint.read(scope, db) }
}
