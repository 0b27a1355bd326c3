import Foundation
import GRDB
import ReplicaModel

// The Chat SDK's moderation, as the store holds it (`docs/chat.md`, "Moderation"): the current
// user's restrictions and mute list. The hidden objects behind them never appear in the other
// queries.
extension ChatQueries {
    /// The restrictions of `userId` (every user the store holds restrictions of, when nil), by
    /// channel. The store holds the current user's: read from their memberships listing on each
    /// sync and from live `moderation` events.
    ///
    /// ```swift
    /// for try await list in replica.observe(replica.queries.restrictions(of: replica.userId)) {
    ///     bannedChannels = Set(list.filter(\.ban).map(\.channelId))
    /// }
    /// ```
    public func restrictions(of userId: String? = nil) -> StoreQuery<[ChannelRestriction]> {
        StoreQuery { db in
            try Row.fetchAll(
                db, sql: ModerationRows.select + " WHERE ?1 IS NULL OR user_id = ?1 ORDER BY channel_id, user_id",
                arguments: [userId]
            ).map(ModerationRows.read)
        }
    }

    /// `userId`'s restriction in `channelId`, or nil when they have none there: the channel's
    /// moderation status (a composer greys out when it says `ban` or `mute`).
    public func restriction(inChannel channelId: String, for userId: String) -> StoreQuery<ChannelRestriction?> {
        StoreQuery { db in
            try Row.fetchOne(
                db, sql: ModerationRows.select + " WHERE user_id = ? AND channel_id = ?", arguments: [userId, channelId]
            ).map(ModerationRows.read)
        }
    }

    /// The users `userId` has muted (sorted), as the app sees them: the server's list with the
    /// unsent mute and unmute ops laid over it.
    public func mutedUsers(by userId: String) -> StoreQuery<[String]> {
        StoreQuery { db in
            try String.fetchAll(
                db, sql: "SELECT user_id FROM muted_users WHERE owner_id = ? ORDER BY user_id", arguments: [userId])
        }
    }
}
