import Foundation
import GRDB
import ReplicaModel

/// What replacing a channel's reactions did.
public struct ReactionSyncResult: Sendable, Hashable {
    /// Actions the server has that were missing locally.
    public var added = 0
    /// Local actions the server no longer has.
    public var removed = 0
    /// Differences left alone because a local op is pending on them (read-your-writes), or the
    /// local action is newer than the listing.
    public var keptPending = 0

    /// An empty result.
    public init() {}
}

/// PubNub's identity of an action: (message timetoken, type, value, user).
private struct ReactionKey: Hashable {
    var messageTimetoken: Int64
    var type: String
    var value: String
    var user: String
}

extension ChatStore {
    /// Makes the stored actions on a channel's messages in `window` (message timetokens,
    /// inclusive) equal to `server`, the complete listing taken just before `snapshot`, in one
    /// transaction.
    ///
    /// Local changes still in the outbox win over the listing: an unsent add keeps its action, an
    /// unsent removal keeps it away. A stored action whose timetoken is at or after `snapshot`
    /// arrived after the listing was taken and is kept.
    package func replaceReactions(
        channel: String, window: ClosedRange<Timetoken>, server: [ChatMessageAction], snapshot: Timetoken,
        currentUser: String
    ) async throws(StoreError) -> ReactionSyncResult {
        let low = try StoreCoding.column(window.lowerBound, field: "window.lowerBound") ?? 0
        let high = try StoreCoding.column(window.upperBound, field: "window.upperBound") ?? 0
        let snapshotValue = try StoreCoding.column(snapshot, field: "snapshot") ?? 0
        return try await write { db in
            var result = ReactionSyncResult()
            // The reaction targets with an op in the outbox, by (message id, type, value) of the current user.
            var pendingAdds = Set<String>(), pendingRemoves = Set<String>()
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT kind, target FROM outbox
                    WHERE kind IN ('addReaction', 'removeReaction') AND json_extract(payload, '$.channel') = ?
                    """, arguments: [channel])
            {
                let kind: String = row[0]
                if kind == OutboxKind.addReaction.rawValue { pendingAdds.insert(row[1]) } else { pendingRemoves.insert(row[1]) }
            }
            let ids = try Dictionary(
                Row.fetchAll(
                    db, sql: "SELECT timetoken, id FROM messages WHERE channel_id = ? AND timetoken BETWEEN ? AND ?",
                    arguments: [channel, low, high]
                ).map { (row: Row) -> (Int64, String) in (row[0], row[1]) }, uniquingKeysWith: { a, _ in a })
            func target(_ key: ReactionKey) -> String? {
                guard key.user == currentUser, let id = ids[key.messageTimetoken] else { return nil }
                return OutboxKeys.reaction(id, key.type, key.value)
            }
            var remote: [ReactionKey: ChatMessageAction] = [:]
            for action in server {
                guard let tt = action.messageTimetoken, let value = Int64(exactly: tt.rawValue), (low...high).contains(value)
                else { continue }
                remote[ReactionKey(messageTimetoken: value, type: action.type, value: action.value, user: action.userId)] = action
            }
            var local: [ReactionKey: (rowId: Int64, actionTimetoken: Int64?)] = [:]
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT id, message_timetoken, type, value, user_id, action_timetoken FROM message_actions
                    WHERE channel_id = ? AND message_timetoken BETWEEN ? AND ?
                    """, arguments: [channel, low, high])
            {
                local[ReactionKey(messageTimetoken: row[1], type: row[2], value: row[3], user: row[4])] = (row[0], row[5])
            }
            for (key, stored) in local where remote[key] == nil {
                if let t = target(key), pendingAdds.contains(t) { result.keptPending += 1; continue }
                if let tt = stored.actionTimetoken, tt >= snapshotValue { result.keptPending += 1; continue }
                try db.execute(sql: "DELETE FROM message_actions WHERE id = ?", arguments: [stored.rowId])
                result.removed += 1
            }
            for (key, action) in remote {
                if let t = target(key), pendingRemoves.contains(t) { result.keptPending += 1; continue }
                var attached = action
                attached.messageId = ids[key.messageTimetoken]
                if try Self.upsert(action: attached, in: db) == .inserted { result.added += 1 }
            }
            return result
        }
    }
}
