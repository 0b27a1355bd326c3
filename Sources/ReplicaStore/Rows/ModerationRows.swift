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
            // An event that changed only the membership's status or type says nothing of the
            // restriction: the row stays (the next listing settles it).
            guard let custom = try member.custom.map({ try JSONValue(encoding: $0) }) else { return .unchanged }
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
    /// Writes a restriction announced by an event (a live `moderation` event, a membership event,
    /// an op's answer), after everything written before it (`seq`). A lifted one stays as a row
    /// with neither flag, so that a listing read before the lift does not bring the restriction
    /// back; `updated` and `eTag` are the membership's, when one said it.
    static func write(_ r: ChannelRestriction, updated: String?, eTag: String?, in db: Database) throws -> UpsertOutcome {
        let before = try Row.fetchOne(
            db, sql: "SELECT ban, mute, reason FROM restrictions WHERE user_id = ? AND channel_id = ?", arguments: [r.userId, r.channelId])
        try db.execute(
            sql: """
                INSERT INTO restrictions (user_id, channel_id, ban, mute, reason, updated, etag, seq)
                VALUES (?, ?, ?, ?, ?, ?, ?, (SELECT coalesce(max(seq), 0) + 1 FROM restrictions))
                ON CONFLICT(user_id, channel_id) DO UPDATE SET
                    ban = excluded.ban, mute = excluded.mute, reason = excluded.reason,
                    updated = excluded.updated, etag = excluded.etag, seq = excluded.seq
                """, arguments: [r.userId, r.channelId, r.ban, r.mute, r.reason, updated, eTag])
        guard let before else { return r.isRestricting ? .inserted : .unchanged }
        let wasRestricting = (before[0] as Bool) || (before[1] as Bool)
        if !wasRestricting, !r.isRestricting { return .unchanged }
        return before[0] == r.ban && before[1] == r.mute && before[2] == r.reason ? .unchanged : .updated
    }

    static func read(_ row: Row) -> ChannelRestriction {
        ChannelRestriction(userId: row[0], channelId: row[1], ban: row[2], mute: row[3], reason: row[4])
    }

    /// The restrictions in force (a lifted one's row has neither flag).
    static let select = "SELECT user_id, channel_id, ban, mute, reason FROM restrictions"
    /// The condition of a restriction in force.
    static let inForce = "(ban OR mute)"
    /// A user's restriction in force in a channel (user, channel).
    static let restrictionInForce = select + " WHERE user_id = ? AND channel_id = ? AND \(inForce)"
}

/// A restriction as a memberships listing holds it.
package struct ListedRestriction: Sendable {
    /// The restriction (neither flag: the membership holds no restriction).
    package var restriction: ChannelRestriction
    /// The membership's `updated`.
    package var updated: String?
    /// The membership's eTag.
    package var eTag: String?

    package init(_ restriction: ChannelRestriction, updated: String?, eTag: String?) {
        self.restriction = restriction
        self.updated = updated
        self.eTag = eTag
    }
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

/// The moderation rows of one transaction: restrictions (`restrictions`) and mute lists (`mute_lists`).
///
/// Reached through the transaction (`tx.moderation`); lives only as long as it.
package struct ModerationTable<Custom: ChatCustomData>: TransactionTable {
    /// The transaction these rows are read and written in.
    package let tx: StoreTransaction<Custom>
}

extension ModerationTable {
    // MARK: Restrictions

    /// `user`'s restriction in force in `channel`, or nil when there is none.
    package func restriction(user: String, channel: String) throws -> ChannelRestriction? {
        // Cached: every queued op reads it (a batch send once per message).
        try Row.fetchOne(
            db.cachedStatement(sql: ModerationRows.restrictionInForce),
            arguments: [user, channel]
        ).map(ModerationRows.read)
    }

    /// The channels `user` has a stored restriction row in (in force or lifted and not yet settled).
    package func restrictedChannels(user: String) throws -> Set<String> {
        Set(try String.fetchAll(db, sql: "SELECT channel_id FROM restrictions WHERE user_id = ?", arguments: [user]))
    }

    /// Writes a restriction announced by a live `moderation` event (a lifted one is kept as lifted).
    @discardableResult
    package func write(restriction: ChannelRestriction) throws -> UpsertOutcome {
        try ModerationRows.write(restriction, updated: nil, eTag: nil, in: db)
    }

    /// The newest write of the restrictions so far: taken before a memberships listing is read,
    /// it tells the rows events wrote meanwhile (``replaceRestrictions(user:listed:since:complete:)``).
    package func restrictionMark() throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT coalesce(max(seq), 0) FROM restrictions") ?? 0
    }

    /// Makes `user`'s restrictions those of a memberships listing read after `mark`
    /// (``restrictionMark()``). A row an event wrote after the mark is newer than the listing and
    /// stays as it is; with `complete` (no membership was unreadable) a restriction the listing
    /// lacks is lifted, and lifted rows are settled. The store keeps its current user's
    /// restrictions only: other users' rows leave. Returns how many restrictions changed.
    @discardableResult
    package func replaceRestrictions(user: String, listed: [ListedRestriction], since mark: Int64, complete: Bool) throws -> Int {
        try db.execute(sql: "DELETE FROM restrictions WHERE user_id <> ?", arguments: [user])
        var newer: Set<String> = []
        for row in try Row.fetchAll(db, sql: "SELECT channel_id FROM restrictions WHERE user_id = ? AND seq > ?", arguments: [user, mark]) {
            newer.insert(row[0])
        }
        var changed = 0
        for entry in listed where entry.restriction.userId == user && !newer.contains(entry.restriction.channelId) {
            if try ModerationRows.write(entry.restriction, updated: entry.updated, eTag: entry.eTag, in: db) != .unchanged {
                changed += 1
            }
        }
        guard complete else { return changed }
        let kept = Set(listed.map(\.restriction.channelId)).union(newer)
        for row in try Row.fetchAll(
            db, sql: "SELECT channel_id, \(ModerationRows.inForce) FROM restrictions WHERE user_id = ?", arguments: [user])
        where !kept.contains(row[0]) {
            try db.execute(sql: "DELETE FROM restrictions WHERE user_id = ? AND channel_id = ?", arguments: [user, row[0] as String])
            if row[1] as Bool { changed += 1 }
        }
        // Lifted rows the listing settled (not newer than it) are no longer needed.
        try db.execute(
            sql: "DELETE FROM restrictions WHERE user_id = ? AND NOT \(ModerationRows.inForce) AND seq <= ?", arguments: [user, mark])
        return changed
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
