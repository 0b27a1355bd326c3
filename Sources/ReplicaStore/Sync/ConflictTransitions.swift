import Foundation
import GRDB
import ReplicaModel

/// How a conflicted op is settled.
package enum ConflictSettlement: Sendable, Hashable {
    /// Drop the local edit and store the server's version (none: the server deleted the object).
    case takeRemote
    /// Send again over the server's version (its eTag becomes the op's base and `If-Match`); for
    /// an edit, `fields` become the op's fields.
    case resend(fields: [String: JSONValue]?)
    /// Leave the op in `conflict` for a person; only the log entry is written.
    case wait
}

extension ChatStore {
    /// Settles a conflicted op and logs it, in one transaction: the op, the local object and the
    /// log entry change together or not at all.
    ///
    /// - Parameters:
    ///   - remote: the server's current version as wire JSON, or nil when it has none.
    ///   - closing: an open log entry that this decision closes (a person's decision), instead of
    ///     writing a new one.
    /// - Returns: the log entry's id.
    package func settleConflict(
        opId: String, remote: JSONValue?, settlement: ConflictSettlement, record: NewConflictRecord,
        closing: Int64? = nil, now: Date
    ) async throws -> Int64 {
        try await writer.write { db in
            guard let entry = try OutboxEntry.fetchAll(db, where: "op_id = ?", arguments: [opId]).first else {
                throw OutboxError.opNotFound(opId)
            }
            guard entry.state == .conflict else { throw OutboxError.notRetryable(opId: opId, state: entry.state) }
            let coding = StoreCoding()
            let logId: Int64
            if let closing {
                try db.execute(
                    sql: """
                        UPDATE conflict_log SET base = ?, local = ?, remote = ?, result = ?, policy = ?, automatic = ?
                        WHERE id = ?
                        """,
                    arguments: [record.base, record.local, record.remote, record.result, record.policy, record.automatic, closing])
                logId = closing
            } else {
                logId = try record.insert(db)
            }
            switch settlement {
            case .wait:
                return logId
            case .takeRemote:
                try Self.deleteOp(opId, db)
                try Self.storeRemote(remote, of: entry, coding: coding, db)
                try Self.overlayPendingOps(target: entry.target, db)
            case .resend(let fields):
                var payload = entry.payload
                payload.rebase = nil
                if let fields, entry.kind == .setUser || entry.kind == .setChannel || entry.kind == .setMembership {
                    payload.fields = fields
                }
                let snapshot = try Self.storeRemote(remote, of: entry, coding: coding, db)
                try db.execute(
                    sql: """
                        UPDATE outbox SET state = 'pending', payload = ?, base_etag = ?, base_updated = ?, base_snapshot = ?,
                            next_attempt_at = NULL, server_failures = 0, updated_at = ?
                        WHERE op_id = ?
                        """,
                    arguments: [
                        try coding.json(payload), remote?.objectValue?["eTag"]?.stringValue,
                        remote?.objectValue?["updated"]?.stringValue, snapshot, now.milliseconds, opId,
                    ])
                try Self.overlayPendingOps(target: entry.target, db)
            }
            return logId
        }
    }

    /// Writes the server's version of the op's object (or removes the local one when the server
    /// has none); returns it as a base snapshot.
    @discardableResult
    static func storeRemote(_ remote: JSONValue?, of entry: OutboxEntry, coding: StoreCoding, _ db: Database) throws
        -> String?
    {
        let p = entry.payload
        func replace<Object: Codable & Sendable>(_ access: ObjectAccess<Object>, id: String?) throws -> String? {
            guard let remote else {
                try db.execute(sql: "DELETE FROM \(access.table) WHERE id = ?", arguments: [id])
                return nil
            }
            let object = try remote.decode(as: Object.self)
            try access.write(object, db, coding)
            return try coding.json(object)
        }
        switch entry.kind {
        case .setUser, .removeUser:
            return try replace(users, id: p.user)
        case .setChannel, .removeChannel:
            return try replace(channels, id: p.channel)
        case .setMembership, .removeMembership:
            guard let channelId = p.channel, let userId = p.user else { return nil }
            guard let remote else {
                try db.execute(
                    sql: "DELETE FROM members WHERE channel_id = ? AND user_id = ?", arguments: [channelId, userId])
                return nil
            }
            let stored = try ChatQueries<Custom>.member(channelId: channelId, userId: userId, db: db, coding: coding)
            var member = try MemberEdit.apply(
                remote.objectValue ?? [:], to: Member(channelId: channelId, userId: userId))
            if let stored {
                member.channel = stored.channel
                member.user = stored.user
            }
            member.updated = try remote.objectValue?["updated"]?.stringValue.map { try ISOTimestamp(parsing: $0) }
            member.eTag = remote.objectValue?["eTag"]?.stringValue
            _ = try upsert(member: member, force: true, in: db, coding: coding)
            return try coding.json(member)
        case .send, .addReaction, .removeReaction:
            return nil
        }
    }
}
