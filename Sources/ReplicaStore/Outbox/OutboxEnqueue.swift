import Foundation
import GRDB
import ReplicaModel

/// A new outbox row, before it has a sequence number.
struct NewOutboxOp {
    var kind: OutboxKind
    var lane: String
    var target: String
    var payload: OutboxPayload
    var baseETag: String?
    var baseUpdated: String?
    var baseSnapshot: String?
    var dependsOn: String?
}

/// How user and channel ops read, write and edit their object: the one place the two kinds differ.
struct ObjectAccess<Object: Sendable>: Sendable {
    /// "user" or "channel", for messages.
    let name: String
    /// The table (a fixed name from code, never input).
    let table: String
    let setKind: OutboxKind
    let removeKind: OutboxKind
    let target: @Sendable (String) -> String
    let read: @Sendable (String, Database, StoreCoding) throws -> Object?
    let write: @Sendable (Object, Database, StoreCoding) throws -> Void
    let create: @Sendable (String) throws -> Object
    let apply: @Sendable ([String: JSONValue], Object) throws -> Object
    /// An empty payload naming the object.
    let payload: @Sendable (String) -> OutboxPayload
}

/// The lanes and targets ops are filed under.
package enum OutboxKeys {
    /// Sends to one channel share a lane: they reach PubNub in local send order.
    package static func sendLane(_ channel: String) -> String { "send:\(channel)" }
    package static func message(_ id: String) -> String { "message:\(id)" }
    package static func reactionLane(_ messageId: String) -> String { "reactions:\(messageId)" }
    package static func reaction(_ messageId: String, _ type: String, _ value: String) -> String {
        "reaction:\(messageId)/\(type)/\(value)"
    }
    package static func member(_ channel: String, _ user: String) -> String { "member:\(channel)/\(user)" }
    package static func user(_ id: String) -> String { "user:\(id)" }
    package static func channel(_ id: String) -> String { "channel:\(id)" }
}

// Each enqueue is one write transaction: the optimistic local change and its outbox row commit
// together or not at all. Coalescing only touches the latest op on the same target, and only
// while that op certainly has not reached PubNub (`OutboxEntry.isCertainlyUnsent`).
extension ChatStore {
    /// Stores a new pending message and its publish op.
    package func enqueueSend(opId: String, message: Message, meta: JSONValue?, now: Date) async throws
        -> OutboxReceipt<Message>
    {
        var publishMeta: [String: JSONValue] = [:]
        switch meta {
        case .none, .null?: break
        case .object(let object)?: publishMeta = object
        case .some: throw OutboxError.metaNotAnObject
        }
        publishMeta["pnr_op"] = .string(opId)
        let payload = try MessagePayload(
            id: message.id, text: message.text, contentType: message.contentType, content: message.content,
            custom: message.custom, createdAt: message.createdAt)
        var body = OutboxPayload()
        body.channel = message.channelId
        body.messageId = message.id
        body.message = try JSONValue(encoding: payload)
        body.meta = .object(publishMeta)
        try Validation.validatePublishSize(message: body.message ?? .null, channel: message.channelId, meta: body.meta)
        var pending = message
        pending.timetoken = nil
        pending.delivery = .pending
        let stored = pending
        let publish = body
        try await writer.write { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM messages WHERE id = ?", arguments: [stored.id]) == true {
                throw StoreError.invalidInput("a message with id \(stored.id) is already stored")
            }
            _ = try Self.upsert(
                message: stored, localSequence: try BatchState.storedNextSequence(db), in: db, coding: StoreCoding())
            try Self.insert(
                NewOutboxOp(kind: .send, lane: OutboxKeys.sendLane(stored.channelId), target: OutboxKeys.message(stored.id),
                            payload: publish),
                id: opId, now: now, in: db)
        }
        return OutboxReceipt(value: stored, opId: opId, disposition: .enqueued)
    }

    /// Adds `userId`'s reaction locally and queues it; on a pending message it waits for the publish.
    package func enqueueAddReaction(
        opId: String, messageId: String, type: String, value: String, userId: String, now: Date
    ) async throws -> OutboxReceipt<ChatMessageAction> {
        try await writer.write { db in
            let message = try Self.messageRef(messageId, db)
            let target = OutboxKeys.reaction(messageId, type, value)
            let action = try ChatMessageAction(
                type: type, value: value, userId: userId, channelId: message.channel, messageTimetoken: message.timetoken,
                messageId: messageId)
            if let latest = try Self.latestOp(target: target, db), latest.isCertainlyUnsent, latest.kind == .removeReaction {
                // Remove then add, neither sent: drop the removal and bring the stored action back.
                try Self.deleteOp(latest.id, db)
                try Self.restoreSnapshot(of: latest, db)
                return OutboxReceipt(value: action, opId: nil, disposition: .cancelled([latest.id]))
            }
            if try Self.storedAction(messageId: messageId, type: type, value: value, userId: userId, db) != nil {
                return OutboxReceipt(value: action, opId: nil, disposition: .unchanged)
            }
            _ = try Self.upsert(action: action, in: db)
            var payload = OutboxPayload()
            payload.channel = message.channel
            payload.messageId = messageId
            payload.messageTimetoken = message.timetoken
            payload.actionType = type
            payload.actionValue = value
            try Self.insert(
                NewOutboxOp(kind: .addReaction, lane: OutboxKeys.reactionLane(messageId), target: target, payload: payload,
                            dependsOn: message.timetoken == nil ? message.sendOp : nil),
                id: opId, now: now, in: db)
            return OutboxReceipt(value: action, opId: opId, disposition: .enqueued)
        }
    }

    /// Removes `userId`'s reaction locally and queues the removal (or cancels an unsent add).
    package func enqueueRemoveReaction(
        opId: String, messageId: String, type: String, value: String, userId: String, now: Date
    ) async throws -> OutboxReceipt<ChatMessageAction> {
        try await writer.write { db in
            let message = try Self.messageRef(messageId, db)
            let target = OutboxKeys.reaction(messageId, type, value)
            if let latest = try Self.latestOp(target: target, db), latest.isCertainlyUnsent, latest.kind == .addReaction {
                try Self.deleteOp(latest.id, db)
                try Self.deleteAction(messageId: messageId, type: type, value: value, userId: userId, db)
                return OutboxReceipt(value: nil, opId: nil, disposition: .cancelled([latest.id]))
            }
            guard let stored = try Self.storedAction(messageId: messageId, type: type, value: value, userId: userId, db)
            else { return OutboxReceipt(value: nil, opId: nil, disposition: .unchanged) }
            try Self.deleteAction(messageId: messageId, type: type, value: value, userId: userId, db)
            var payload = OutboxPayload()
            payload.channel = message.channel
            payload.messageId = messageId
            payload.messageTimetoken = message.timetoken
            payload.actionTimetoken = stored.actionTimetoken
            payload.actionType = type
            payload.actionValue = value
            try Self.insert(
                NewOutboxOp(kind: .removeReaction, lane: OutboxKeys.reactionLane(messageId), target: target,
                            payload: payload, baseSnapshot: try StoreCoding().json(stored),
                            dependsOn: message.timetoken == nil ? message.sendOp : nil),
                id: opId, now: now, in: db)
            return OutboxReceipt(value: nil, opId: opId, disposition: .enqueued)
        }
    }

    /// Sets a membership locally (creating it if needed) and queues the PATCH.
    package func enqueueSetMembership(
        opId: String, channelId: String, userId: String, edit: MemberEdit<Custom.Member>, now: Date
    ) async throws -> OutboxReceipt<Member> {
        let fields = try edit.fields()
        if fields.isEmpty { throw OutboxError.emptyEdit("membership \(channelId)/\(userId)") }
        return try await writer.write { db in
            let coding = StoreCoding()
            let stored = try ChatQueries<Custom>.member(channelId: channelId, userId: userId, db: db, coding: coding)
            let local = try MemberEdit.apply(fields, to: try stored ?? Member(channelId: channelId, userId: userId))
            _ = try Self.upsert(member: local, force: true, in: db, coding: coding)
            let target = OutboxKeys.member(channelId, userId)
            var payload = OutboxPayload()
            payload.channel = channelId
            payload.user = userId
            payload.fields = fields
            let op = NewOutboxOp(
                kind: .setMembership, lane: target, target: target, payload: payload, baseETag: stored?.eTag,
                baseUpdated: stored?.updated?.description, baseSnapshot: try coding.json(stored))
            let (id, disposition) = try Self.insertOrMerge(op, id: opId, now: now, db)
            return OutboxReceipt(value: local, opId: id, disposition: disposition)
        }
    }

    /// Removes a membership locally and queues the removal (or cancels an unsent set of one never synced).
    package func enqueueRemoveMembership(opId: String, channelId: String, userId: String, now: Date) async throws
        -> OutboxReceipt<Member>
    {
        try await writer.write { db in
            let coding = StoreCoding()
            let stored = try ChatQueries<Custom>.member(channelId: channelId, userId: userId, db: db, coding: coding)
            let target = OutboxKeys.member(channelId, userId)
            try db.execute(
                sql: "DELETE FROM members WHERE channel_id = ? AND user_id = ?", arguments: [channelId, userId])
            var payload = OutboxPayload()
            payload.channel = channelId
            payload.user = userId
            let op = NewOutboxOp(
                kind: .removeMembership, lane: target, target: target, payload: payload, baseETag: stored?.eTag,
                baseUpdated: stored?.updated?.description, baseSnapshot: try coding.json(stored))
            let (id, disposition) = try Self.insertOrReplace(op, id: opId, now: now, db)
            return OutboxReceipt(value: nil, opId: id, disposition: disposition)
        }
    }

    /// Edits a user locally (creating it if needed) and queues the PATCH with the stored eTag as `If-Match`.
    package func enqueueSetUser(opId: String, id: String, edit: UserEdit<Custom.User>, now: Date) async throws
        -> OutboxReceipt<User>
    {
        try await enqueueSet(Self.users, opId: opId, id: id, fields: try edit.fields(), now: now)
    }

    /// Removes a user locally (with its memberships) and queues the DELETE.
    package func enqueueRemoveUser(opId: String, id: String, now: Date) async throws -> OutboxReceipt<User> {
        try await enqueueRemove(Self.users, opId: opId, id: id, now: now)
    }

    /// Edits a channel locally (creating it if needed) and queues the PATCH with the stored eTag as `If-Match`.
    package func enqueueSetChannel(opId: String, id: String, edit: ChannelEdit<Custom.Channel>, now: Date) async throws
        -> OutboxReceipt<Channel>
    {
        try await enqueueSet(Self.channels, opId: opId, id: id, fields: try edit.fields(), now: now)
    }

    /// Removes a channel locally (with its memberships) and queues the DELETE.
    package func enqueueRemoveChannel(opId: String, id: String, now: Date) async throws -> OutboxReceipt<Channel> {
        try await enqueueRemove(Self.channels, opId: opId, id: id, now: now)
    }

    private func enqueueSet<Object: VersionedObject & Codable & Sendable>(
        _ access: ObjectAccess<Object>, opId: String, id: String, fields: [String: JSONValue], now: Date
    ) async throws -> OutboxReceipt<Object> {
        if fields.isEmpty { throw OutboxError.emptyEdit("\(access.name) \(id)") }
        return try await writer.write { db in
            let coding = StoreCoding()
            let stored = try access.read(id, db, coding)
            let local = try access.apply(fields, try stored ?? access.create(id))
            try access.write(local, db, coding)
            var payload = access.payload(id)
            payload.fields = fields
            let target = access.target(id)
            let op = NewOutboxOp(
                kind: access.setKind, lane: target, target: target, payload: payload, baseETag: stored?.eTag,
                baseUpdated: stored?.updated?.description, baseSnapshot: try coding.json(stored))
            let (opId, disposition) = try Self.insertOrMerge(op, id: opId, now: now, db)
            return OutboxReceipt(value: local, opId: opId, disposition: disposition)
        }
    }

    private func enqueueRemove<Object: VersionedObject & Codable & Sendable>(
        _ access: ObjectAccess<Object>, opId: String, id: String, now: Date
    ) async throws -> OutboxReceipt<Object> {
        try await writer.write { db in
            let coding = StoreCoding()
            let stored = try access.read(id, db, coding)
            try db.execute(sql: "DELETE FROM \(access.table) WHERE id = ?", arguments: [id])
            let target = access.target(id)
            let op = NewOutboxOp(
                kind: access.removeKind, lane: target, target: target, payload: access.payload(id),
                baseETag: stored?.eTag, baseUpdated: stored?.updated?.description, baseSnapshot: try coding.json(stored))
            let (opId, disposition) = try Self.insertOrReplace(op, id: opId, now: now, db)
            return OutboxReceipt(value: nil, opId: opId, disposition: disposition)
        }
    }

    static var users: ObjectAccess<User> {
        ObjectAccess(
            name: "user", table: "users", setKind: .setUser, removeKind: .removeUser, target: OutboxKeys.user,
            read: { id, db, coding in try ChatQueries<Custom>.user(id: id, db: db, coding: coding) },
            write: { user, db, coding in _ = try upsert(user: user, force: true, in: db, coding: coding) },
            create: { try User(id: $0) }, apply: { try UserEdit.apply($0, to: $1) },
            payload: { id in
                var payload = OutboxPayload()
                payload.user = id
                return payload
            })
    }

    static var channels: ObjectAccess<Channel> {
        ObjectAccess(
            name: "channel", table: "channels", setKind: .setChannel, removeKind: .removeChannel,
            target: OutboxKeys.channel,
            read: { id, db, coding in try ChatQueries<Custom>.channel(id: id, db: db, coding: coding) },
            write: { channel, db, coding in _ = try upsert(channel: channel, force: true, in: db, coding: coding) },
            create: { try Channel(id: $0) }, apply: { try ChannelEdit.apply($0, to: $1) },
            payload: { id in
                var payload = OutboxPayload()
                payload.channel = id
                return payload
            })
    }

    // MARK: Coalescing

    /// A set after an unsent set of the same object: one op with the union of fields, the latest
    /// values and the first op's base.
    static func insertOrMerge(_ op: NewOutboxOp, id: String, now: Date, _ db: Database) throws
        -> (String?, OutboxDisposition)
    {
        if let latest = try latestOp(target: op.target, db), latest.isCertainlyUnsent, latest.kind == op.kind {
            var payload = latest.payload
            payload.fields = (payload.fields ?? [:]).merging(op.payload.fields ?? [:]) { _, new in new }
            let note = "merged edit \(id): \((op.payload.fields ?? [:]).keys.sorted().joined(separator: ", "))"
            try update(latest, payload: payload, kind: latest.kind, note: note, now: now, db)
            return (latest.id, .merged(into: latest.id))
        }
        try insert(op, id: id, now: now, in: db)
        return (id, .enqueued)
    }

    /// A removal after an unsent set: nothing at all when the object never reached the server,
    /// otherwise the set becomes the removal.
    static func insertOrReplace(_ op: NewOutboxOp, id: String, now: Date, _ db: Database) throws
        -> (String?, OutboxDisposition)
    {
        let setKind: OutboxKind = switch op.kind {
        case .removeMembership: .setMembership
        case .removeUser: .setUser
        default: .setChannel
        }
        if let latest = try latestOp(target: op.target, db), latest.isCertainlyUnsent, latest.kind == setKind {
            if latest.baseETag == nil {
                try deleteOp(latest.id, db)
                return (nil, .cancelled([latest.id]))
            }
            try update(latest, payload: op.payload, kind: op.kind, note: "replaced by removal \(id)", now: now, db)
            return (latest.id, .merged(into: latest.id))
        }
        try insert(op, id: id, now: now, in: db)
        return (id, .enqueued)
    }

    // MARK: Rows

    static func insert(_ op: NewOutboxOp, id: String, now: Date, in db: Database) throws {
        let seq = try Int64.fetchOne(db, sql: "SELECT coalesce(max(seq), 0) + 1 FROM outbox") ?? 1
        try db.execute(
            sql: """
                INSERT INTO outbox (op_id, seq, kind, lane, target, payload, base_etag, base_updated, base_snapshot,
                                    depends_on, state, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)
                """,
            arguments: [
                id, seq, op.kind.rawValue, op.lane, op.target, try StoreCoding().json(op.payload), op.baseETag,
                op.baseUpdated, op.baseSnapshot, op.dependsOn, now.milliseconds, now.milliseconds,
            ])
    }

    static func update(
        _ entry: OutboxEntry, payload: OutboxPayload, kind: OutboxKind, note: String, now: Date, _ db: Database
    ) throws {
        let coding = StoreCoding()
        try db.execute(
            sql: "UPDATE outbox SET kind = ?, payload = ?, coalesced = ?, updated_at = ? WHERE op_id = ?",
            arguments: [
                kind.rawValue, try coding.json(payload), try coding.json(entry.coalesced + [note]), now.milliseconds,
                entry.id,
            ])
    }

    static func latestOp(target: String, _ db: Database) throws -> OutboxEntry? {
        try OutboxEntry.fetchAll(
            db, where: "seq = (SELECT max(seq) FROM outbox WHERE target = ?)", arguments: [target]
        ).first
    }

    static func deleteOp(_ id: String, _ db: Database) throws {
        try db.execute(sql: "DELETE FROM outbox WHERE op_id = ?", arguments: [id])
    }

    /// The channel, timetoken and unsent publish op of a stored message.
    static func messageRef(_ id: String, _ db: Database) throws -> (channel: String, timetoken: Timetoken?, sendOp: String?) {
        guard let row = try Row.fetchOne(
            db, sql: "SELECT channel_id, timetoken FROM messages WHERE id = ?", arguments: [id])
        else { throw OutboxError.messageNotFound(id) }
        let timetoken = StoreCoding.timetoken(row[1])
        let sendOp = try String.fetchOne(
            db, sql: "SELECT op_id FROM outbox WHERE target = ? AND kind = 'send'", arguments: [OutboxKeys.message(id)])
        if timetoken == nil, sendOp == nil {
            throw StoreError.invalidInput("message \(id) was never sent and has no publish op")
        }
        return (row[0], timetoken, sendOp)
    }

    static func storedAction(messageId: String, type: String, value: String, userId: String, _ db: Database) throws
        -> ChatMessageAction?
    {
        try Row.fetchOne(
            db,
            sql: """
                SELECT a.channel_id, a.message_timetoken, a.action_timetoken
                FROM message_actions a
                WHERE a.type = ?2 AND a.value = ?3 AND a.user_id = ?4
                  AND (a.message_id = ?1
                       OR (a.channel_id, a.message_timetoken) = (SELECT channel_id, timetoken FROM messages WHERE id = ?1))
                """, arguments: [messageId, type, value, userId]
        ).map { row in
            try ChatMessageAction(
                type: type, value: value, userId: userId, channelId: row[0],
                messageTimetoken: StoreCoding.timetoken(row[1]), actionTimetoken: StoreCoding.timetoken(row[2]),
                messageId: messageId)
        }
    }

    static func deleteAction(messageId: String, type: String, value: String, userId: String, _ db: Database) throws {
        try db.execute(
            sql: """
                DELETE FROM message_actions
                WHERE type = ?2 AND value = ?3 AND user_id = ?4
                  AND (message_id = ?1
                       OR (channel_id, message_timetoken) = (SELECT channel_id, timetoken FROM messages WHERE id = ?1))
                """, arguments: [messageId, type, value, userId])
    }
}
