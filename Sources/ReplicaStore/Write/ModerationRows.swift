import Foundation
import GRDB
import ReplicaModel

// Where the Chat SDK's hidden objects go (``ReplicaModel/ChatModeration`` names them): a
// membership of a moderation channel becomes a row of `restrictions`; any other hidden channel,
// user, membership or message is not stored at all. Every write of users, channels, memberships
// and messages passes here first, so no pull, live event or op completion can store one in the
// entity tables. The mute list has its own rows (`mute_lists`, `muted_users`), written only by
// the replicator's mute list code.

extension ModerationRows {
    /// What happens to a user or channel the Chat SDK hides: nil when it is not hidden (store it
    /// as usual), else the outcome of leaving it out (`unchanged`).
    static func hiddenOutcome<Entity: StoredEntity>(of entity: Entity) -> UpsertOutcome? {
        let hidden =
            Entity.rows.table == "users"
            ? ChatModeration.isHidden(user: entity.id, type: entity.type) : ChatModeration.isHidden(channel: entity.id, type: entity.type)
        return hidden ? .unchanged : nil
    }

    /// What happens to a membership the Chat SDK hides: nil when it is an ordinary one; for a
    /// moderation channel's member, the restriction it holds is written (`restrictions`); any
    /// other hidden membership is left out.
    static func hiddenOutcome<C: ChatCustomData>(of member: ChatMember<C>, in db: Database) throws -> UpsertOutcome? {
        if let channel = ChatModeration.restrictedChannel(ofModerationChannel: member.channelId) {
            let custom = try member.custom.map { try JSONValue(encoding: $0) }
            let restriction = ChatModeration.restriction(user: member.userId, channel: channel, custom: custom)
            return try write(restriction, updated: member.updated?.description, eTag: member.eTag, in: db)
        }
        let hidden =
            ChatModeration.isHidden(channel: member.channelId, type: member.channel.type)
            || ChatModeration.isHidden(user: member.userId, type: member.user.type)
        return hidden ? .unchanged : nil
    }
}

/// The rows of `restrictions`, `mute_lists` and `muted_users`.
enum ModerationRows {
    /// Writes a restriction (a lifted one deletes the row); `updated` and `eTag` are the
    /// membership's, when it came from one. An older membership (by `updated`) changes nothing.
    static func write(_ r: ChannelRestriction, updated: String?, eTag: String?, in db: Database) throws -> UpsertOutcome {
        guard r.isRestricting else {
            try db.execute(
                sql: "DELETE FROM restrictions WHERE user_id = ? AND channel_id = ?", arguments: [r.userId, r.channelId])
            return db.changesCount > 0 ? .updated : .unchanged
        }
        if let updated,
           let stored = try String.fetchOne(
               db, sql: "SELECT updated FROM restrictions WHERE user_id = ? AND channel_id = ?", arguments: [r.userId, r.channelId]),
           stored > updated
        {
            return .unchanged
        }
        let existed = try Bool.fetchOne(
            db, sql: "SELECT 1 FROM restrictions WHERE user_id = ? AND channel_id = ?", arguments: [r.userId, r.channelId]) ?? false
        try db.execute(
            sql: """
                INSERT INTO restrictions (user_id, channel_id, ban, mute, reason, updated, etag) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(user_id, channel_id) DO UPDATE SET
                    ban = excluded.ban, mute = excluded.mute, reason = excluded.reason,
                    updated = coalesce(excluded.updated, restrictions.updated), etag = coalesce(excluded.etag, restrictions.etag)
                WHERE restrictions.ban IS NOT excluded.ban OR restrictions.mute IS NOT excluded.mute
                   OR restrictions.reason IS NOT excluded.reason OR restrictions.etag IS NOT coalesce(excluded.etag, restrictions.etag)
                """, arguments: [r.userId, r.channelId, r.ban, r.mute, r.reason, updated, eTag])
        return !existed ? .inserted : db.changesCount > 0 ? .updated : .unchanged
    }

    static func read(_ row: Row) -> ChannelRestriction {
        ChannelRestriction(userId: row[0], channelId: row[1], ban: row[2], mute: row[3], reason: row[4])
    }

    static let select = "SELECT user_id, channel_id, ban, mute, reason FROM restrictions"
}

/// The server's version of a mute list.
package struct StoredMuteList: Sendable, Hashable {
    /// The muted ids, sorted.
    package var muted: [String]
    /// The object's `updated`, as the server wrote it.
    package var updated: String?
    /// The object's eTag.
    package var eTag: String?

    package init(muted: [String], updated: String?, eTag: String?) {
        self.muted = muted
        self.updated = updated
        self.eTag = eTag
    }
}

extension StoreTransaction {
    // MARK: Restrictions

    /// `user`'s restriction in `channel`, or nil when there is none.
    package func restriction(user: String, channel: String) throws -> ChannelRestriction? {
        try Row.fetchOne(db, sql: ModerationRows.select + " WHERE user_id = ? AND channel_id = ?", arguments: [user, channel])
            .map(ModerationRows.read)
    }

    /// Writes a restriction announced by a live `moderation` event (a lifted one deletes it).
    @discardableResult
    package func write(restriction: ChannelRestriction) throws -> UpsertOutcome {
        try ModerationRows.write(restriction, updated: nil, eTag: nil, in: db)
    }

    /// After a complete listing of `user`'s memberships: deletes the restrictions whose
    /// moderation membership it did not hold. Returns how many.
    @discardableResult
    package func pruneRestrictions(user: String, keeping channels: Set<String>) throws -> Int {
        var removed = 0
        for channel in try String.fetchAll(db, sql: "SELECT channel_id FROM restrictions WHERE user_id = ?", arguments: [user])
        where !channels.contains(channel) {
            try db.execute(sql: "DELETE FROM restrictions WHERE user_id = ? AND channel_id = ?", arguments: [user, channel])
            removed += 1
        }
        return removed
    }

    // MARK: The mute list

    /// The server's version of `owner`'s mute list, or nil when none was read.
    package func serverMuteList(owner: String) throws -> StoredMuteList? {
        try Row.fetchOne(db, sql: "SELECT muted, updated, etag FROM mute_lists WHERE user_id = ?", arguments: [owner]).map {
            StoredMuteList(
                muted: ($0[0] as String).split(separator: ",").map(String.init), updated: $0[1], eTag: $0[2])
        }
    }

    /// Writes the server's version of `owner`'s mute list (nil: the server has none).
    package func setServerMuteList(owner: String, _ list: StoredMuteList?) throws {
        if let list {
            try db.execute(
                sql: """
                    INSERT INTO mute_lists (user_id, muted, updated, etag) VALUES (?, ?, ?, ?)
                    ON CONFLICT(user_id) DO UPDATE SET muted = excluded.muted, updated = excluded.updated, etag = excluded.etag
                    """, arguments: [owner, list.muted.joined(separator: ","), list.updated, list.eTag])
        } else {
            try db.execute(sql: "DELETE FROM mute_lists WHERE user_id = ?", arguments: [owner])
        }
    }

    /// The users `owner` has muted, as the app sees them (sorted).
    package func shownMutes(owner: String) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT user_id FROM muted_users WHERE owner_id = ? ORDER BY user_id", arguments: [owner])
    }

    /// Replaces the users `owner` has muted, as the app sees them. Returns whether anything
    /// changed. The store keeps one user's list, its current user's (message queries hide whoever
    /// is in it): another user's list is dropped (a store opened by the CLI as another user).
    @discardableResult
    package func setShownMutes(owner: String, _ muted: [String]) throws -> Bool {
        try db.execute(sql: "DELETE FROM muted_users WHERE owner_id <> ?", arguments: [owner])
        let wanted = Set(muted)
        guard Set(try shownMutes(owner: owner)) != wanted else { return db.changesCount > 0 }
        try db.execute(sql: "DELETE FROM muted_users WHERE owner_id = ?", arguments: [owner])
        for user in wanted {
            try db.execute(sql: "INSERT INTO muted_users (owner_id, user_id) VALUES (?, ?)", arguments: [owner, user])
        }
        return true
    }
}
