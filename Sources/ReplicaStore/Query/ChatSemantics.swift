import Foundation
import GRDB
import ReplicaModel

/// How the store reads the PubNub Chat SDK's message actions into a message: the one place the
/// SQL of "shown text" and "soft-deleted" is written.
///
/// - **Who counts**: an action changes a message only when its author added it, or a user the
///   store's ``EditAuthority`` names (moderators, or anyone: the Chat SDK's rule, which has no
///   author check). Actions of anybody else are stored but do not count (``actionAuthorized``).
/// - **Edited text**: the value of the counted `edited` action with the largest action
///   timetoken. An edit still in the outbox (no action timetoken yet) counts as the newest.
/// - **Deleted**: the message has a counted `deleted` action with the value `deleted`.
///
/// An action is found by the message's timetoken once it has one, and by the message's id while
/// both are pending; both arms use an index (`message_actions_by_timetoken`,
/// `message_actions_message_id`).
enum ChatSemantics {
    /// Whether `actor` (a SQL expression) may change a message written by `author`: the author,
    /// a user `message_editors` lists, or anyone when it lists `*` (``EditAuthority``). The one
    /// place this rule is written; the outbox asks it too (`StoreTransaction.editPermission`).
    static func authorized(actor: String, author: String) -> String {
        """
        (\(actor) = \(author) OR \(actor) IN (SELECT user_id FROM message_editors)
         OR EXISTS (SELECT 1 FROM message_editors WHERE user_id = '\(EditAuthority.anyoneRow)'))
        """
    }

    /// Whether action `a` may change message `msg` (``authorized(actor:author:)``).
    static let actionAuthorized = authorized(actor: "a.user_id", author: "msg.user_id")

    static let editedTextColumn = """
        (SELECT e.value FROM (
            SELECT a.value, a.action_timetoken FROM message_actions a
            WHERE a.channel_id = msg.channel_id AND a.message_timetoken = msg.timetoken AND a.type = '\(ChatSDKFormat.editedType)'
              AND \(actionAuthorized)
            UNION ALL
            SELECT a.value, a.action_timetoken FROM message_actions a
            WHERE a.message_id = msg.id AND a.message_timetoken IS NULL AND a.type = '\(ChatSDKFormat.editedType)'
              AND \(actionAuthorized)
        ) e ORDER BY e.action_timetoken IS NULL DESC, e.action_timetoken DESC LIMIT 1)
        """

    /// The text a message shows (for `msg`): its newest counted edit, else its published text
    /// (`ReplicaModel.ChatMessage.shownText`). The search index holds this text (``SearchIndex``).
    static let shownTextColumn = "coalesce(\(editedTextColumn), msg.text)"

    static let isDeletedColumn = """
        (EXISTS (SELECT 1 FROM message_actions a
                 WHERE a.channel_id = msg.channel_id AND a.message_timetoken = msg.timetoken
                   AND a.type = '\(ChatSDKFormat.deletedType)' AND a.value = '\(ChatSDKFormat.deletedValue)'
                   AND \(actionAuthorized))
         OR EXISTS (SELECT 1 FROM message_actions a
                    WHERE a.message_id = msg.id AND a.message_timetoken IS NULL
                      AND a.type = '\(ChatSDKFormat.deletedType)' AND a.value = '\(ChatSDKFormat.deletedValue)'
                      AND \(actionAuthorized)))
        """

    /// A condition that leaves out soft-deleted messages (for `msg`).
    static let notDeleted = "NOT \(isDeletedColumn)"

    /// Whether the message's author is muted (`muted_users`: only the store's own user's mute
    /// list is kept there) (for `msg`).
    static let isFromMutedUserColumn = "(EXISTS (SELECT 1 FROM muted_users mu WHERE mu.user_id = msg.user_id))"

    /// A condition that leaves out the messages of muted users (for `msg`).
    static let notMuted = "NOT \(isFromMutedUserColumn)"

    /// Whether the message has a thread (for `msg`): a `threadRootId` action with a value, whoever
    /// added it, as the Chat SDK's `hasThread` reads the message's actions.
    static let hasThreadColumn = """
        (msg.timetoken IS NOT NULL AND EXISTS (SELECT 1 FROM message_actions a
                 WHERE a.channel_id = msg.channel_id AND a.message_timetoken = msg.timetoken
                   AND a.type = '\(ChatSDKFormat.threadRootType)' AND a.value <> ''))
        """
}

/// A member's read position in a channel (the Chat SDK's `lastReadMessageTimetoken`).
public struct ReadReceipt: Sendable, Hashable {
    /// The member.
    public var userId: String
    /// The newest message they have read, or nil when they never marked the channel read.
    public var lastRead: Timetoken?

    /// A read position.
    public init(userId: String, lastRead: Timetoken?) {
        self.userId = userId
        self.lastRead = lastRead
    }
}

extension ChatQueries {
    /// Every member's read position in `channelId`, by user id: what read receipts show. Works on
    /// whatever the store holds (members pulled with their custom data, or updated live).
    public func readReceipts(inChannel channelId: String) -> StoreQuery<[ReadReceipt]> {
        StoreQuery { db in
            try Row.fetchAll(db, sql: "SELECT user_id, custom FROM members WHERE channel_id = ? ORDER BY user_id", arguments: [channelId])
                .map { row in
                    let custom: String? = row[1]
                    let json = custom.flatMap { try? JSONValue(jsonData: Data($0.utf8)) }
                    return ReadReceipt(userId: row[0], lastRead: ReadPosition.timetoken(in: json))
                }
        }
    }

    /// How many messages of `channelId` that `userId` has not read: messages with a timetoken
    /// after the read position (all of them when there is none), not by the user, not
    /// soft-deleted. Nil when the user is not a member in the store. Observe it to keep a badge
    /// current.
    public func unreadCount(inChannel channelId: String, for userId: String) -> StoreQuery<Int?> {
        StoreQuery { db in
            try Int.fetchOne(db, sql: "\(ChatSemantics.unreadSelect) AND m.channel_id = ?2", arguments: [userId, channelId])
        }
    }

    /// The unread counts of every channel `userId` is a member of, by channel id (channels with
    /// nothing unread included, as 0): a channel list's badges.
    public func unreadCounts(for userId: String) -> StoreQuery<[String: Int]> {
        StoreQuery { db in
            let sql = "SELECT m.channel_id, \(ChatSemantics.unreadCountColumn) FROM members m WHERE m.user_id = ?1"
            var counts: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: sql, arguments: [userId]) { counts[row[0]] = row[1] }
            return counts
        }
    }
}

extension ChatSemantics {
    /// The read position of membership `m` (0 when it has none).
    static let readPosition = "coalesce(CAST(json_extract(m.custom, '$.\(ChatSDKFormat.lastReadKey)') AS INTEGER), 0)"

    /// The unread count of membership `m` (user `?1`): the messages after the read position by
    /// others, counted on `messages_channel_timetoken_user` alone, less the soft-deleted ones
    /// (by a counted `deleted` action, ``actionAuthorized``)
    /// among them, found through `message_actions_deleted` (migration 0005). The type and value
    /// are written as literals: SQLite uses a partial index only for the terms of its own `WHERE`.
    /// `INDEXED BY` keeps the planner off the wider action index, which would walk every reaction
    /// and edit after the read position.
    static let unreadCountColumn = """
        ((SELECT count(*) FROM messages msg
          WHERE msg.channel_id = m.channel_id AND msg.timetoken > \(readPosition) AND msg.user_id <> ?1)
         - (SELECT count(*) FROM messages msg
            WHERE msg.channel_id = m.channel_id AND msg.user_id <> ?1
              AND msg.timetoken IN (SELECT a.message_timetoken FROM message_actions a INDEXED BY message_actions_deleted
                                    WHERE a.channel_id = m.channel_id AND a.message_timetoken > \(readPosition)
                                      AND a.type = 'deleted' AND a.value = 'deleted' AND a.message_timetoken IS NOT NULL
                                      AND \(actionAuthorized))))
        """

    static let unreadSelect = "SELECT \(unreadCountColumn) FROM members m WHERE m.user_id = ?1"
}

extension ChatQueries {
    /// The message pinned in `channelId` (the channel's custom `pinnedMessageTimetoken` and
    /// `pinnedMessageChannelID`, as the Chat SDK writes them), or nil when none is pinned or the
    /// pinned message is not in the store (load older history to find it).
    public func pinnedMessage(inChannel channelId: String) -> StoreQuery<Message?> {
        StoreQuery { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT \(Columns.message) FROM channels c JOIN messages msg
                      ON msg.channel_id = coalesce(json_extract(c.custom, '$.\(ChatSDKFormat.pinnedChannelKey)'), c.id)
                     AND msg.timetoken = CAST(json_extract(c.custom, '$.\(ChatSDKFormat.pinnedTimetokenKey)') AS INTEGER)
                    WHERE c.id = ?
                    """, arguments: [channelId]
            ).map { try StoreCoding().message($0) }
        }
    }
}

extension ChatQueries {
    /// `userId`'s read position in each channel they are a member of (nil where they never
    /// marked it read), by channel id.
    public func readPositions(of userId: String) -> StoreQuery<[String: Timetoken?]> {
        StoreQuery { db in
            var positions: [String: Timetoken?] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT channel_id, custom FROM members WHERE user_id = ?", arguments: [userId]) {
                let custom: String? = row[1]
                positions[row[0]] = ReadPosition.timetoken(in: custom.flatMap { try? JSONValue(jsonData: Data($0.utf8)) })
            }
            return positions
        }
    }
}

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
                db, sql: ModerationRows.select + " WHERE (?1 IS NULL OR user_id = ?1) AND \(ModerationRows.inForce) ORDER BY channel_id, user_id",
                arguments: [userId]
            ).map(ModerationRows.read)
        }
    }

    /// `userId`'s restriction in `channelId`, or nil when they have none there: the channel's
    /// moderation status (a composer greys out when it says `ban` or `mute`).
    public func restriction(inChannel channelId: String, for userId: String) -> StoreQuery<ChannelRestriction?> {
        StoreQuery { db in
            try Row.fetchOne(
                db, sql: ModerationRows.select + " WHERE user_id = ? AND channel_id = ? AND \(ModerationRows.inForce)",
                arguments: [userId, channelId]
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

// The Chat SDK's conversations, as the store holds them (`docs/conversations.md`): the events on
// a user's own channel (`user_events`: mentions and invitations), pending memberships, threads.
extension ChatQueries {
    /// `userId`'s mentions feed, newest first (the Chat SDK's `getCurrentUserMentions`): each
    /// `mention` event on their channel with the message it names. As in the Chat SDK, an event
    /// whose message cannot be had is left out (here: the store does not hold it, a channel this
    /// device does not pull), and so is one published by anyone but the message's author (anyone
    /// with the publish key can publish to a user's channel). A mention in a thread reply names
    /// the thread's channel and carries its `parentChannel`. `limit` counts the events read.
    ///
    /// ```swift
    /// for try await feed in replica.observe(replica.queries.mentions(of: replica.userId)) {
    ///     badge = feed.count
    /// }
    /// ```
    public func mentions(of userId: String, limit: Int = 100) -> StoreQuery<[MentionFeedItem<Custom.Message>]> {
        StoreQuery { db in
            let coding = StoreCoding()
            let events = try Row.fetchAll(
                db, sql: UserEventRows.select + " WHERE user_id = ? AND kind = 'mention' ORDER BY timetoken DESC LIMIT ?",
                arguments: [userId, max(0, limit)]
            ).compactMap(UserEventRows.read)
            return try events.compactMap { event in
                guard case .mention(let timetoken, let channel, _) = event.kind, let tt = Int64(exactly: timetoken.rawValue) else {
                    return nil
                }
                let message = try Row.fetchOne(
                    db, sql: "SELECT \(Columns.message) FROM messages msg WHERE msg.channel_id = ? AND msg.timetoken = ?",
                    arguments: [channel, tt]
                ).map { try coding.message($0) as Message }
                guard let message, message.userId == event.publisher else { return nil }
                return MentionFeedItem(event: event, message: message)
            }
        }
    }

    /// `userId`'s open invitations, newest first: their memberships with status `pending` (the
    /// Chat SDK's invitation), each with the `invite` event that announced it when the store
    /// holds one (who invited them, and when). Joining the channel accepts one.
    public func invitations(for userId: String) -> StoreQuery<[ChatInvitation<Custom>]> {
        StoreQuery { db in
            let coding = StoreCoding()
            let pending = try Row.fetchAll(
                db, sql: "\(Columns.memberSelect) WHERE m.user_id = ? AND m.status = ? ORDER BY m.updated DESC, c.id",
                arguments: [userId, ChatSDKFormat.pendingStatus]
            ).map { try coding.member($0) as Member }
            return try pending.map { member in
                let event = try Row.fetchOne(
                    db, sql: UserEventRows.select + " WHERE user_id = ? AND kind = 'invite' AND channel_id = ? ORDER BY timetoken DESC LIMIT 1",
                    arguments: [userId, member.channelId]
                ).flatMap(UserEventRows.read)
                return ChatInvitation(membership: member, event: event)
            }
        }
    }

    /// The threads of `channelId`'s messages, oldest root first: each message with a thread
    /// (``ReplicaModel/ChatMessage/hasThread``), its thread channel, and the replies the store
    /// holds (count and newest), soft-deleted replies left out.
    public func threads(inChannel channelId: String) -> StoreQuery<[ChatThread<Custom.Message>]> {
        StoreQuery { db in
            let coding = StoreCoding()
            let roots = try Row.fetchAll(
                db,
                sql: "SELECT \(Columns.message) FROM messages msg WHERE msg.channel_id = ? AND \(ChatSemantics.hasThreadColumn) ORDER BY msg.timetoken",
                arguments: [channelId]
            ).map { try coding.message($0) as Message }
            return try roots.map { root in
                let thread = ChatSDKFormat.threadChannel(of: channelId, root: root.timetoken ?? Timetoken(rawValue: 0))
                // The replies shown: soft deletion read by its one owner (`ChatSemantics.notDeleted`).
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT count(*), max(msg.timetoken) FROM messages msg
                        WHERE msg.channel_id = ? AND msg.timetoken IS NOT NULL AND \(ChatSemantics.notDeleted)
                        """, arguments: [thread])
                let newest: Int64? = row?[1]
                return ChatThread(
                    root: root, channelId: thread, replyCount: row?[0] ?? 0,
                    newestReply: newest.flatMap { UInt64(exactly: $0) }.map(Timetoken.init(rawValue:)))
            }
        }
    }

    /// The replies in the thread of the message at `root` of `channelId`, oldest first: the
    /// messages of its thread channel (``messages(inChannel:includeDeleted:includeMuted:)``).
    public func replies(inChannel channelId: String, root: Timetoken) -> StoreQuery<[Message]> {
        messages(inChannel: ChatSDKFormat.threadChannel(of: channelId, root: root))
    }
}

/// One entry of a user's mentions feed: the `mention` event, and the message it names.
public struct MentionFeedItem<Custom: CustomData>: Sendable, Hashable {
    /// The event (its `kind` is `ReplicaModel.ChatUserEvent.Kind.mention(messageTimetoken:channel:parentChannel:)`).
    public var event: ChatUserEvent
    /// The message mentioning the user (its author published the event).
    public var message: ChatMessage<Custom>
}

/// An open invitation: the invitee's `pending` membership, and the `invite` event that announced
/// it (nil when the store holds none: another device's pull, or an invitation made without one).
public struct ChatInvitation<Custom: ChatCustomData>: Sendable, Hashable {
    /// The pending membership (its channel as the store holds it).
    public var membership: ChatMember<Custom>
    /// The invitation event; its `publisher` is who invited.
    public var event: ChatUserEvent?
    /// The channel invited to.
    public var channelId: String { membership.channelId }
}

/// A thread: its root message, the thread channel, and the replies the store holds.
public struct ChatThread<Custom: CustomData>: Sendable, Hashable {
    /// The message the thread hangs on.
    public var root: ChatMessage<Custom>
    /// The thread channel (`PUBNUB_INTERNAL_THREAD_<channel>_<root timetoken>`).
    public var channelId: String
    /// The replies stored (soft-deleted ones left out). The Chat SDK keeps no count: this is
    /// what this device pulled of the thread channel.
    public var replyCount: Int
    /// The newest reply's timetoken, if any.
    public var newestReply: Timetoken?
}
