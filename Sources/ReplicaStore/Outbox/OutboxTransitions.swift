import Foundation
import GRDB
import ReplicaModel

// State changes made by the drain engine and by the app's retry / discard. A success writes the
// server's answer into the local object and deletes the op in one transaction.
extension ChatStore {
    /// Marks an op in flight (one more attempt); nil when the op is gone (discarded meanwhile).
    package func markInflight(_ id: String, now: Date) async throws -> OutboxEntry? {
        try await writer.write { db in
            try db.execute(
                sql: """
                    UPDATE outbox SET state = 'inflight', attempts = attempts + 1,
                        first_attempt_at = coalesce(first_attempt_at, ?1), updated_at = ?1
                    WHERE op_id = ?2 AND state IN ('pending', 'ambiguous')
                    """, arguments: [now.milliseconds, id])
            guard db.changesCount > 0 else { return nil }
            return try OutboxEntry.fetchAll(db, where: "op_id = ?", arguments: [id]).first
        }
    }

    /// Records a failed attempt: the new state, when to try again (nil for dead and conflict) and why.
    package func recordFailure(
        _ id: String, state: OutboxState, retryAt: Date?, failure: OutboxFailure, serverFailure: Bool, now: Date
    ) async throws {
        try await writer.write { db in
            try db.execute(
                sql: """
                    UPDATE outbox SET state = ?, next_attempt_at = ?, last_error_class = ?, last_http_status = ?,
                        last_error = ?, server_failures = server_failures + ?, updated_at = ?
                    WHERE op_id = ?
                    """,
                arguments: [
                    state.rawValue, retryAt?.milliseconds, failure.errorClass.rawValue, failure.httpStatus,
                    StoredErrorText.capped(failure.message), serverFailure ? 1 : 0, now.milliseconds, id,
                ])
            // The message queries show a dead publish as `failed` (and a retried one as pending again).
            try Self.setDelivery(ofSendOp: id, to: state == .dead ? .failed : .pending, db)
        }
    }

    static func setDelivery(ofSendOp id: String, to delivery: DeliveryState, _ db: Database) throws {
        try db.execute(
            sql: """
                UPDATE messages SET delivery = ?
                WHERE id = (SELECT json_extract(payload, '$.messageId') FROM outbox WHERE op_id = ? AND kind = 'send')
                  AND timetoken IS NULL AND delivery IS NOT ?
                """, arguments: [delivery.rawValue, id, delivery.rawValue])
    }

    /// Rebases a conflicted edit on the server's version: a new base eTag and the `rebase` flag
    /// cleared. The fields are left alone (an enqueue may have merged more into them meanwhile).
    package func rebase(_ id: String, baseETag: String?, now: Date) async throws {
        try await writer.write { db in
            try db.execute(
                sql: """
                    UPDATE outbox SET payload = json_remove(payload, '$.rebase'), base_etag = ?, updated_at = ?
                    WHERE op_id = ?
                    """, arguments: [baseETag, now.milliseconds, id])
        }
    }

    /// Ops left `inflight` by a process that died become `ambiguous`: they are probed before any resend.
    @discardableResult
    package func recoverInflight() throws -> Int {
        // Read first: a store with nothing in flight (the usual case) is not written to.
        let inflight = try writer.read { db in
            try db.tableExists("outbox") ? try Int.fetchOne(db, sql: "SELECT count(*) FROM outbox WHERE state = 'inflight'") ?? 0 : 0
        }
        guard inflight > 0 else { return 0 }
        return try writer.write { db in
            try db.execute(sql: "UPDATE outbox SET state = 'ambiguous' WHERE state = 'inflight'")
            return db.changesCount
        }
    }

    /// A publish succeeded (or a probe found it): the message gets its timetoken and becomes `sent`.
    package func completeSend(_ id: String, messageId: String, timetoken: Timetoken) async throws {
        let value = try StoreCoding.column(timetoken, field: "message.timetoken")
        try await writer.write { db in
            try db.execute(
                sql: "UPDATE messages SET timetoken = ?, delivery = 'sent' WHERE id = ?", arguments: [value, messageId])
            if db.changesCount > 0 {
                try db.cachedStatement(sql: MessageSQL.dropPendingDuplicateActions).execute(arguments: [messageId, value])
                try db.cachedStatement(sql: MessageSQL.rekeyPendingActions).execute(arguments: [value, messageId])
            }
            try Self.deleteOp(id, db)
        }
    }

    /// A reaction add succeeded: the local action gets its timetoken (when known).
    package func completeReaction(
        _ id: String, messageId: String, type: String, value: String, userId: String, actionTimetoken: Timetoken?
    ) async throws {
        let actionTT = try StoreCoding.column(actionTimetoken, field: "action.actionTimetoken")
        try await writer.write { db in
            if let actionTT {
                try db.execute(
                    sql: """
                        UPDATE message_actions SET action_timetoken = ?5
                        WHERE type = ?2 AND value = ?3 AND user_id = ?4
                          AND (message_id = ?1
                               OR (channel_id, message_timetoken) = (SELECT channel_id, timetoken FROM messages WHERE id = ?1))
                        """, arguments: [messageId, type, value, userId, actionTT])
            }
            try Self.deleteOp(id, db)
        }
    }

    /// An op whose success changes nothing more locally (removals) is done.
    package func completeOp(_ id: String) async throws {
        try await writer.write { db in try Self.deleteOp(id, db) }
    }

    /// A user edit succeeded: store the server's user (new eTag), then re-apply later unsent edits.
    package func completeUser(_ id: String, server: User) async throws {
        try await writer.write { db in
            let coding = StoreCoding()
            try Self.deleteOp(id, db)
            _ = try Self.upsert(user: server, in: db, coding: coding)
            try Self.rebaseLaterOps(target: OutboxKeys.user(server.id), on: server, coding: coding, db)
            try Self.overlayPendingOps(target: OutboxKeys.user(server.id), db)
        }
    }

    /// A channel edit succeeded: store the server's channel, then re-apply later unsent edits.
    package func completeChannel(_ id: String, server: Channel) async throws {
        try await writer.write { db in
            let coding = StoreCoding()
            try Self.deleteOp(id, db)
            _ = try Self.upsert(channel: server, in: db, coding: coding)
            try Self.rebaseLaterOps(target: OutboxKeys.channel(server.id), on: server, coding: coding, db)
            try Self.overlayPendingOps(target: OutboxKeys.channel(server.id), db)
        }
    }

    /// A membership set succeeded: store the server's membership when the answer carried it.
    package func completeMembership(_ id: String, server: Member?) async throws {
        try await writer.write { db in
            let coding = StoreCoding()
            try Self.deleteOp(id, db)
            guard let server else { return }
            // The answer's channel and user objects may be partial: keep the stored ones.
            let stored = try ChatQueries<Custom>.member(
                channelId: server.channelId, userId: server.userId, db: db, coding: coding)
            var member = server
            if let stored {
                member.channel = stored.channel
                member.user = stored.user
            }
            _ = try Self.upsert(member: member, force: false, in: db, coding: coding)
            try Self.rebaseLaterOps(target: OutboxKeys.member(server.channelId, server.userId), on: member, coding: coding, db)
            try Self.overlayPendingOps(target: OutboxKeys.member(server.channelId, server.userId), db)
        }
    }

    /// Edits of the same object made while this one was in flight were based on the version it
    /// replaced; their base becomes the version it produced, so they do not conflict with it.
    static func rebaseLaterOps<Object: VersionedObject & Encodable>(
        target: String, on server: Object, coding: StoreCoding, _ db: Database
    ) throws {
        try db.execute(
            sql: "UPDATE outbox SET base_etag = ?, base_updated = ?, base_snapshot = ? WHERE target = ?",
            arguments: [server.eTag, server.updated?.description, try coding.json(server), target])
    }

    /// Puts a dead or conflicted op back in the queue. A send that may have arrived is probed first.
    package func retryOp(_ id: String, now: Date) async throws -> OutboxEntry {
        try await writer.write { db in
            guard var entry = try OutboxEntry.fetchAll(db, where: "op_id = ?", arguments: [id]).first else {
                throw OutboxError.opNotFound(id)
            }
            guard entry.state == .dead || entry.state == .conflict else {
                throw OutboxError.notRetryable(opId: id, state: entry.state)
            }
            // Any publish that was handed to the transport before is probed first: some failures
            // (a 5xx, a failed probe) do not prove it did not arrive.
            let mayHaveArrived = entry.kind == .send && entry.firstAttemptAt != nil
            if entry.state == .conflict {
                entry.payload.rebase = true
            }
            entry.state = mayHaveArrived ? .ambiguous : .pending
            if entry.kind == .send, let messageId = entry.payload.messageId {
                // It is sent again now, after later messages of its channel may have gone: its
                // place in the local order moves to the end, so a later message's probe floor
                // (earlier local order) never includes it.
                try db.execute(
                    sql: "UPDATE messages SET local_seq = (SELECT max(local_seq) + 1 FROM messages) WHERE id = ?",
                    arguments: [messageId])
            }
            try db.execute(
                sql: """
                    UPDATE outbox SET state = ?, payload = ?, next_attempt_at = NULL, server_failures = 0, updated_at = ?
                    WHERE op_id = ?
                    """, arguments: [entry.state.rawValue, try StoreCoding().json(entry.payload), now.milliseconds, id])
            try Self.setDelivery(ofSendOp: id, to: .pending, db)
            // A person chose the local edit: an open conflict entry of this op is closed with it.
            try db.execute(
                sql: "UPDATE conflict_log SET result = coalesce(local, 'null'), policy = 'outbox retry' WHERE op_id = ? AND result IS NULL",
                arguments: [id])
            return entry
        }
    }

    /// Withdraws an op that has not reached PubNub and reverts its local change; a discarded send
    /// takes the reactions waiting on it along. Returns the ids of every op removed.
    package func discardOp(_ id: String) async throws -> [String] {
        try await writer.write { db in
            guard let entry = try OutboxEntry.fetchAll(db, where: "op_id = ?", arguments: [id]).first else {
                throw OutboxError.opNotFound(id)
            }
            guard entry.state != .inflight, entry.state != .ambiguous else {
                throw OutboxError.mayHaveBeenApplied(opId: id, state: entry.state)
            }
            var removed = [id]
            let dependents = try OutboxEntry.fetchAll(db, where: "depends_on = ?", arguments: [id])
            for dependent in dependents {
                try Self.deleteOp(dependent.id, db)
                removed.append(dependent.id)
            }
            try Self.deleteOp(id, db)
            // A person dropped the local edit: an open conflict entry of this op is closed with the server's side.
            try db.execute(
                sql: "UPDATE conflict_log SET result = coalesce(remote, 'null'), policy = 'outbox discard' WHERE op_id = ? AND result IS NULL",
                arguments: [id])
            try Self.restoreSnapshot(of: entry, db)
            try Self.overlayPendingOps(target: entry.target, db)
            return removed
        }
    }

    /// The unsent publish op of a message, for discarding it.
    package func sendOp(ofMessage messageId: String) async throws -> OutboxEntry? {
        try await writer.read { db in
            try OutboxEntry.fetchAll(
                db, where: "target = ? AND kind = 'send'", arguments: [OutboxKeys.message(messageId)]
            ).first
        }
    }

    // MARK: Local reverts

    /// Undoes an op's optimistic local change.
    static func restoreSnapshot(of entry: OutboxEntry, _ db: Database) throws {
        let coding = StoreCoding()
        let p = entry.payload
        func snapshot<T: Decodable>(_ type: T.Type) throws -> T? {
            try coding.decode(T.self, entry.baseSnapshot, table: "outbox", column: "base_snapshot", key: entry.id)
        }
        switch entry.kind {
        case .send:
            if let messageId = p.messageId {
                try db.execute(sql: "DELETE FROM message_actions WHERE message_id = ?", arguments: [messageId])
                try db.execute(sql: "DELETE FROM messages WHERE id = ? AND timetoken IS NULL", arguments: [messageId])
            }
        case .addReaction:
            if let messageId = p.messageId, let type = p.actionType, let value = p.actionValue {
                try db.execute(
                    sql: "DELETE FROM message_actions WHERE message_id = ? AND type = ? AND value = ? AND action_timetoken IS NULL",
                    arguments: [messageId, type, value])
            }
        case .removeReaction:
            if let action = try snapshot(ChatMessageAction.self) { _ = try upsert(action: action, in: db) }
        case .setMembership, .removeMembership:
            if let member = try snapshot(Member.self) {
                _ = try upsert(member: member, force: true, in: db, coding: coding)
            } else if let channel = p.channel, let user = p.user {
                try db.execute(
                    sql: "DELETE FROM members WHERE channel_id = ? AND user_id = ?", arguments: [channel, user])
            }
        case .setUser, .removeUser:
            if let user = try snapshot(User.self) {
                _ = try upsert(user: user, force: true, in: db, coding: coding)
            } else if let id = p.user {
                try db.execute(sql: "DELETE FROM users WHERE id = ?", arguments: [id])
            }
        case .setChannel, .removeChannel:
            if let channel = try snapshot(Channel.self) {
                _ = try upsert(channel: channel, force: true, in: db, coding: coding)
            } else if let id = p.channel {
                try db.execute(sql: "DELETE FROM channels WHERE id = ?", arguments: [id])
            }
        }
    }

    /// Re-applies the optimistic changes of the ops still queued on `target`, oldest first, so the
    /// local object keeps showing the user's own unsent edits (read-your-writes).
    static func overlayPendingOps(target: String, _ db: Database) throws {
        let coding = StoreCoding()
        for op in try OutboxEntry.fetchAll(db, where: "target = ?", arguments: [target]) {
            let p = op.payload
            switch op.kind {
            case .setUser:
                guard let id = p.user else { continue }
                let stored = try ChatQueries<Custom>.user(id: id, db: db, coding: coding) ?? User(id: id)
                _ = try upsert(user: try UserEdit.apply(p.fields ?? [:], to: stored), force: true, in: db, coding: coding)
            case .removeUser:
                try db.execute(sql: "DELETE FROM users WHERE id = ?", arguments: [p.user])
            case .setChannel:
                guard let id = p.channel else { continue }
                let stored = try ChatQueries<Custom>.channel(id: id, db: db, coding: coding) ?? Channel(id: id)
                _ = try upsert(
                    channel: try ChannelEdit.apply(p.fields ?? [:], to: stored), force: true, in: db, coding: coding)
            case .removeChannel:
                try db.execute(sql: "DELETE FROM channels WHERE id = ?", arguments: [p.channel])
            case .setMembership:
                guard let channel = p.channel, let user = p.user else { continue }
                let stored = try ChatQueries<Custom>.member(channelId: channel, userId: user, db: db, coding: coding)
                let member = try MemberEdit.apply(p.fields ?? [:], to: try stored ?? Member(channelId: channel, userId: user))
                _ = try upsert(member: member, force: true, in: db, coding: coding)
            case .removeMembership:
                try db.execute(
                    sql: "DELETE FROM members WHERE channel_id = ? AND user_id = ?", arguments: [p.channel, p.user])
            case .send, .addReaction, .removeReaction:
                continue
            }
        }
    }
}

/// The one rule for error text the store keeps (an op's `last_error`): at most
/// ``maxBytes`` UTF-8 bytes, so a server answering with a 50 MB error body cannot grow the store
/// by 50 MB on every attempt.
public enum StoredErrorText {
    /// The most UTF-8 bytes of error text stored, truncation note included (4 KiB).
    public static let maxBytes = 4096

    /// `text` unchanged when it fits in ``maxBytes``; otherwise its longest prefix of whole
    /// characters that fits together with a note of the original size, e.g.
    /// `<prefix>…(truncated, 52428800 bytes)`. The result is always valid UTF-8 of at most
    /// ``maxBytes`` bytes.
    public static func capped(_ text: String) -> String {
        let size = text.utf8.count
        guard size > maxBytes else { return text }
        let note = "…(truncated, \(size) bytes)"
        let budget = maxBytes - note.utf8.count
        var kept = 0
        var end = text.startIndex
        for index in text.indices {
            let width = text[index].utf8.count
            if kept + width > budget { break }
            kept += width
            end = text.index(after: index)
        }
        return String(text[..<end]) + note
    }
}

/// The first unfinished op of a lane, with the state of the op it waits on (if any).
package struct LaneHead: Sendable {
    /// The op.
    package var entry: OutboxEntry
    /// The state of ``OutboxEntry/dependsOn`` while that op is still in the outbox.
    package var parentState: OutboxState?

    package init(entry: OutboxEntry, parentState: OutboxState?) {
        self.entry = entry
        self.parentState = parentState
    }
}

extension ChatStore {
    static var liveStates: String { "('pending', 'ambiguous', 'inflight')" }

    /// The head (first pending, ambiguous or in-flight op) of every lane.
    package func outboxHeads() async throws -> [LaneHead] {
        try await writer.read { db in
            try OutboxEntry.fetchAll(
                db,
                where: "seq IN (SELECT min(seq) FROM outbox WHERE state IN \(Self.liveStates) GROUP BY lane)"
            ).map { LaneHead(entry: $0, parentState: try Self.parentState(of: $0, db)) }
        }
    }

    /// The head of one lane.
    package func outboxHead(lane: String) async throws -> LaneHead? {
        try await writer.read { db in
            try OutboxEntry.fetchAll(
                db, where: "seq = (SELECT min(seq) FROM outbox WHERE lane = ? AND state IN \(Self.liveStates))",
                arguments: [lane]
            ).first.map { LaneHead(entry: $0, parentState: try Self.parentState(of: $0, db)) }
        }
    }

    /// The stored timetoken of a message (nil while it is pending or when it is unknown).
    package func messageTimetoken(id: String) async throws -> Timetoken? {
        try await writer.read { db in
            StoreCoding.timetoken(try Int64.fetchOne(db, sql: "SELECT timetoken FROM messages WHERE id = ?", arguments: [id]))
        }
    }

    /// The newest timetoken among the channel's messages stored before this one. They all reached
    /// PubNub before this message was first sent, so if it arrived, its timetoken is larger: a
    /// publish probe need not look further back.
    package func probeFloor(messageId: String) async throws -> Timetoken? {
        try await writer.read { db in
            StoreCoding.timetoken(try Int64.fetchOne(
                db,
                sql: """
                    SELECT max(m.timetoken) FROM messages m, messages mine
                    WHERE mine.id = ? AND m.channel_id = mine.channel_id AND m.local_seq < mine.local_seq
                    """, arguments: [messageId]))
        }
    }

    static func parentState(of entry: OutboxEntry, _ db: Database) throws -> OutboxState? {
        guard let parent = entry.dependsOn else { return nil }
        return try String.fetchOne(db, sql: "SELECT state FROM outbox WHERE op_id = ?", arguments: [parent])
            .flatMap(OutboxState.init(rawValue:))
    }
}
