import Foundation
import GRDB
import ReplicaModel

/// A group of memberships that share a channel type.
public struct MembershipSection<Custom: ChatCustomData>: Hashable, Sendable {
    /// The channel type of this section.
    public var type: String
    /// The memberships, sorted by channel name.
    public var members: [ChatMember<Custom>]
}

/// The queries a chat UI needs, mirroring the seed's fetch requests. Each returns a
/// ``StoreQuery`` to run once with `ChatStore.fetch(_:)` or live with `ChatStore.observe(_:)`.
public struct ChatQueries<Custom: ChatCustomData>: Sendable {
    /// A user with this store's custom type.
    public typealias User = ChatUser<Custom.User>
    /// A channel with this store's custom type.
    public typealias Channel = ChatChannel<Custom.Channel>
    /// A membership with this store's custom types.
    public typealias Member = ChatMember<Custom>

    /// The queries of a store with `Custom` data. They hold no store: the same value reads any
    /// store of that type (`store.queries` and `Replica.queries` are this).
    public init() {}
    /// A message with this store's custom type.
    public typealias Message = ChatMessage<Custom.Message>

    /// The channel with `id` (with its local member count), or nil.
    public func channel(id: String) -> StoreQuery<Channel?> {
        StoreQuery { db in try EntityReads<Custom>.channel(id: id, db: db, coding: StoreCoding()) }
    }

    /// The user with `id`, or nil.
    public func user(id: String) -> StoreQuery<User?> {
        StoreQuery { db in try EntityReads<Custom>.user(id: id, db: db, coding: StoreCoding()) }
    }

    /// Every user, sorted by name then id.
    public func users() -> StoreQuery<[User]> {
        StoreQuery { db in
            let coding = StoreCoding()
            return try Row.fetchAll(db, sql: "SELECT \(Columns.user("u")) FROM users u ORDER BY u.name, u.id")
                .map { try coding.user($0, at: 0) }
        }
    }

    /// Every channel, sorted by type descending then name, with local member counts.
    public func channels() -> StoreQuery<[Channel]> {
        StoreQuery { db in
            let coding = StoreCoding()
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Columns.channel("c")), (SELECT count(*) FROM members WHERE channel_id = c.id)
                    FROM channels c ORDER BY c.type DESC, c.name, c.id
                    """
            ).map { row in
                var channel: Channel = try coding.channel(row, at: 0)
                channel.memberCount = row[Columns.channelCount]
                return channel
            }
        }
    }

    /// The memberships of a user, sorted by channel type descending, then channel name.
    public func memberships(ofUser userId: String) -> StoreQuery<[Member]> {
        StoreQuery { db in
            let coding = StoreCoding()
            return try Row.fetchAll(
                db,
                sql: """
                    \(Columns.memberSelect)
                    WHERE m.user_id = ?
                    ORDER BY c.type DESC, c.name, c.id
                    """, arguments: [userId]
            ).map { try coding.member($0) }
        }
    }

    /// The memberships of a user in sections by channel type (descending), each sorted by channel name.
    public func membershipSections(ofUser userId: String) -> StoreQuery<[MembershipSection<Custom>]> {
        memberships(ofUser: userId).map { members in
            var sections: [MembershipSection<Custom>] = []
            for member in members {
                if sections.last?.type == member.channel.type {
                    sections[sections.count - 1].members.append(member)
                } else {
                    sections.append(MembershipSection(type: member.channel.type, members: [member]))
                }
            }
            return sections
        }
    }

    /// The members of a channel sorted by user name (then id), optionally without one user
    /// (typically the current one) and/or only those present. With `presentFirst`, the present
    /// ones come first (a member list "sorted by presence status and name").
    ///
    /// ```swift
    /// let online = store.queries.members(ofChannel: "general", onlyPresent: true)
    /// for try await members in store.observe(online) { render(members) }   // live as presence changes
    /// ```
    public func members(
        ofChannel channelId: String, excludingUser excludedUserId: String? = nil, onlyPresent: Bool = false,
        presentFirst: Bool = false
    ) -> StoreQuery<[Member]> {
        StoreQuery { db in
            let coding = StoreCoding()
            return try Row.fetchAll(
                db,
                sql: """
                    \(Columns.memberSelect)
                    WHERE m.channel_id = ?
                      AND (?2 IS NULL OR m.user_id <> ?2)
                      AND (?3 = 0 OR m.is_present = 1)
                    ORDER BY CASE WHEN ?4 = 1 AND m.is_present = 1 THEN 0 ELSE 1 END, u.name, u.id
                    """, arguments: [channelId, excludedUserId, onlyPresent, presentFirst]
            ).map { try coding.member($0) }
        }
    }

    /// One membership, or nil.
    public func member(channelId: String, userId: String) -> StoreQuery<Member?> {
        StoreQuery { db in try EntityReads<Custom>.member(channelId: channelId, userId: userId, db: db, coding: StoreCoding()) }
    }

    /// The messages of a channel: those with a timetoken ascending, then the still-pending ones
    /// in local send order. Each shows its newest edit (`ReplicaModel.ChatMessage.shownText`).
    ///
    /// - Parameter includeDeleted: whether soft-deleted messages are listed too (with
    ///   `ReplicaModel.ChatMessage.isDeleted` set), for a "message deleted" placeholder or a
    ///   restore; by default they are left out.
    /// - Parameter includeMuted: whether the messages of users the current user muted
    ///   (`ReplicaModel.ChatMessage.isFromMutedUser`) are listed too; by default they are left
    ///   out, as the Chat SDK drops muted users' events.
    public func messages(inChannel channelId: String, includeDeleted: Bool = false, includeMuted: Bool = false)
        -> StoreQuery<[Message]>
    {
        let visible = (includeDeleted ? "" : "AND \(ChatSemantics.notDeleted)")
            + (includeMuted ? "" : " AND \(ChatSemantics.notMuted)")
        return StoreQuery { db in
            let coding = StoreCoding()
            let sent = try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Columns.message) FROM messages msg
                    WHERE msg.channel_id = ? AND msg.timetoken IS NOT NULL \(visible) ORDER BY msg.timetoken
                    """, arguments: [channelId])
            let pending = try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Columns.message) FROM messages msg
                    WHERE msg.channel_id = ? AND msg.timetoken IS NULL \(visible) ORDER BY msg.local_seq
                    """, arguments: [channelId])
            return try (sent + pending).map { try coding.message($0) }
        }
    }

    /// The messages whose shown text (the newest edit's, else the published one) mentions
    /// `userId` (a `[…](pn-user://userId)` link, as the PubNub Chat SDK writes mentions), oldest
    /// first; pending ones last, in send order; soft-deleted ones and muted users' left out. The texts are
    /// narrowed with `LIKE` and each candidate is checked by parsing its elements, so an id that
    /// is the prefix of another never matches it.
    public func messages(mentioning userId: String) -> StoreQuery<[Message]> {
        let target = MessageDraft.render([.link(text: "x", target: .user(userId))]).dropFirst(3)   // "(pn-user://id)"
        let like = "%" + Self.likeEscaped(String(target)) + "%"
        return StoreQuery { db in
            let coding = StoreCoding()
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Columns.message) FROM messages msg
                    WHERE (msg.text LIKE ?1 ESCAPE '\\'
                           OR EXISTS (SELECT 1 FROM message_actions a
                                      WHERE a.type = '\(ChatSDKFormat.editedType)' AND a.value LIKE ?1 ESCAPE '\\'
                                        AND (a.message_id = msg.id
                                             OR (a.channel_id = msg.channel_id AND a.message_timetoken = msg.timetoken))))
                      AND \(ChatSemantics.notDeleted) AND \(ChatSemantics.notMuted)
                    ORDER BY msg.timetoken IS NULL, msg.timetoken, msg.local_seq
                    """, arguments: [like]
            ).map { try coding.message($0) }.filter { $0.mentionedUserIds.contains(userId) }
        }
    }

    /// The messages a user published, oldest first; pending ones last, in send order.
    public func messages(byUser userId: String) -> StoreQuery<[Message]> {
        messages(whereColumn: "user_id", is: userId)
    }

    /// The messages of `contentType` (`pubnub/undecryptable`, say), oldest first.
    public func messages(withContentType contentType: String) -> StoreQuery<[Message]> {
        messages(whereColumn: "content_type", is: contentType)
    }

    /// The messages whose `column` (a fixed column name, never user input) is `value`, oldest
    /// first; pending ones last, in send order.
    private func messages(whereColumn column: StaticString, is value: String) -> StoreQuery<[Message]> {
        StoreQuery { db in
            let coding = StoreCoding()
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Columns.message) FROM messages msg WHERE msg.\(column) = ?
                    ORDER BY msg.timetoken IS NULL, msg.timetoken, msg.local_seq
                    """, arguments: [value]
            ).map { try coding.message($0) }
        }
    }

    /// The message with `id`, or nil.
    public func message(id: String) -> StoreQuery<Message?> {
        StoreQuery { db in
            try Row.fetchOne(db, sql: "SELECT \(Columns.message) FROM messages msg WHERE msg.id = ?", arguments: [id])
                .map { try StoreCoding().message($0) }
        }
    }

    /// The file `fileId` as the first stored message of `channelId` naming it names it (the
    /// oldest: the message it was uploaded for, never a later copy or forward), or nil: how a
    /// file's name is found from its id (`pnreplicate files get|delete`).
    public func file(id fileId: String, inChannel channelId: String) -> StoreQuery<ChatFile?> {
        StoreQuery { db in
            try FirstNaming.fetch(db, fileId: fileId, channel: channelId)?.file
        }
    }

    /// The reactions of a message grouped by (type, value): how many, who, and whether
    /// `currentUserId` is among them. Groups are ordered by their first reaction (pending last).
    public func reactions(ofMessage messageId: String, currentUserId: String) -> StoreQuery<[ReactionSummary]> {
        StoreQuery { db in
            try Row.fetchAll(
                db,
                sql: """
                    WITH target AS (SELECT channel_id, timetoken FROM messages WHERE id = ?1)
                    SELECT a.type, a.value, count(*), group_concat(a.user_id, char(31)), max(a.user_id = ?2),
                           min(coalesce(a.action_timetoken, 9223372036854775807)) AS first
                    FROM message_actions a
                    WHERE a.message_id = ?1
                       OR (a.message_timetoken IS NOT NULL
                           AND EXISTS (SELECT 1 FROM target t
                                       WHERE t.channel_id = a.channel_id AND t.timetoken = a.message_timetoken))
                    GROUP BY a.type, a.value
                    ORDER BY first, a.type, a.value
                    """, arguments: [messageId, currentUserId]
            ).map { row in
                let users: String = row[3]
                return ReactionSummary(
                    type: row[0], value: row[1], count: row[2],
                    userIds: users.split(separator: "\u{1F}").map(String.init).sorted(),
                    reactedByCurrentUser: row[4])
            }
        }
    }

    /// The actions stored for a message (all types), oldest first.
    public func actions(ofMessage messageId: String) -> StoreQuery<[ChatMessageAction]> {
        StoreQuery { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT a.type, a.value, a.user_id, a.channel_id, a.message_timetoken, a.action_timetoken,
                           coalesce(a.message_id, ?1)
                    FROM message_actions a
                    WHERE a.message_id = ?1
                       OR a.message_timetoken = (SELECT timetoken FROM messages m
                                                 WHERE m.id = ?1 AND m.channel_id = a.channel_id)
                    ORDER BY a.action_timetoken IS NULL, a.action_timetoken, a.id
                    """, arguments: [messageId]
            ).map { row in
                try ChatMessageAction(
                    type: row[0], value: row[1], userId: row[2], channelId: row[3],
                    messageTimetoken: StoreCoding.timetoken(row[4]), actionTimetoken: StoreCoding.timetoken(row[5]),
                    messageId: row[6])
            }
        }
    }
}

// MARK: Channels of a user

extension ChatQueries {
    /// The ids of the channels `userId` is a member of, sorted (an index lookup: cheap to ask often).
    public func channelIds(memberOf userId: String) -> StoreQuery<[String]> {
        StoreQuery { db in
            try String.fetchAll(db, sql: "SELECT channel_id FROM members WHERE user_id = ? ORDER BY 1", arguments: [userId])
        }
    }

    /// The channels `userId` is a member of, or that hold stored messages, the thread channels
    /// of stored messages (named by their `threadRootId` actions, as the Chat SDK derives them;
    /// an action on a message the store does not hold names none),
    /// and the user's own channel (the Chat SDK's mentions and invitations arrive there), sorted
    /// (a scan of the messages index: callers that ask often cache it).
    public func channelIds(memberOrWithMessages userId: String) -> StoreQuery<[String]> {
        StoreQuery { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT channel_id FROM members WHERE user_id = ?1
                    UNION SELECT DISTINCT channel_id FROM messages
                    UNION SELECT DISTINCT a.value FROM message_actions a
                          WHERE a.type = '\(ChatSDKFormat.threadRootType)' AND a.message_timetoken IS NOT NULL
                            AND a.value = '\(ChatSDKFormat.threadChannelPrefix)' || a.channel_id || '_' || a.message_timetoken
                            AND EXISTS (SELECT 1 FROM messages m WHERE m.channel_id = a.channel_id AND m.timetoken = a.message_timetoken)
                    UNION SELECT ?1 ORDER BY 1
                    """, arguments: [userId])
        }
    }
}

// MARK: Checkpoints

extension ChatQueries {
    /// Every stored checkpoint, by scope; those of the Chat SDK's hidden channels (live sync
    /// follows the user's moderation events and mute list) are bookkeeping and left out.
    public func checkpoints() -> StoreQuery<[SyncCheckpoint]> {
        StoreQuery { db in
            try Row.fetchAll(db, sql: SyncCheckpoint.selectSQL + " ORDER BY scope").map(SyncCheckpoint.init(row:))
                .filter { checkpoint in
                    guard let colon = checkpoint.scope.firstIndex(of: ":") else { return true }
                    return !ChatModeration.isHidden(channel: String(checkpoint.scope[checkpoint.scope.index(after: colon)...]))
                }
        }
    }

    /// The checkpoint of `scope`, or nil when that pull never stored anything.
    public func checkpoint(_ scope: String) -> StoreQuery<SyncCheckpoint?> {
        StoreQuery { db in try SyncCheckpoint.read(scope, db) }
    }

    /// The checkpoints of `scopes` in one read, by scope (a scope never stored is absent): a
    /// pull over thousands of channels reads them together, not one read transaction each.
    package func checkpoints(_ scopes: some Sequence<String> & Sendable) -> StoreQuery<[String: SyncCheckpoint]> {
        StoreQuery { db in
            var found: [String: SyncCheckpoint] = [:]
            for scope in scopes { found[scope] = try SyncCheckpoint.read(scope, db) }
            return found
        }
    }

    /// How fresh a channel's messages, reactions and members are: a cold channel's reactions and
    /// members lag after a gap (docs/reconciler.md, "Hot and cold channels"); the app can show
    /// that, or mark the channel hot (`Replica.markHot(_:)`) to have it listed.
    ///
    /// ```swift
    /// let freshness = try await replica.fetch(replica.queries.freshness(ofChannel: "general"))
    /// if freshness.reactions.lag(at: Date()) > 60 { showStaleBadge() }
    /// ```
    public func freshness(ofChannel channel: String) -> StoreQuery<ChannelFreshness> {
        StoreQuery { db in
            let live = try SyncCheckpoint.read(SyncCheckpoint.live(channel), db)
            let history = try SyncCheckpoint.read(SyncCheckpoint.history(channel), db)
            let messages = [history?.applied, live?.applied].compactMap { $0 }.max()
            return ChannelFreshness(
                channel: channel, messagesThrough: messages,
                reactions: ListingFreshness(listing: try SyncCheckpoint.read(SyncCheckpoint.reactions(channel), db), live: live),
                members: ListingFreshness(listing: try SyncCheckpoint.read(SyncCheckpoint.members(channel), db), live: live))
        }
    }
}

extension ChatQueries {
    /// The objects `userId` follows that expire before `date`, soonest first: the user, their
    /// memberships, and the channels of those memberships (`docs/datasync.md`, "Expiry"). Index
    /// reads only; a store on App Context answers an empty list.
    ///
    /// ```swift
    /// let soon = Date().addingTimeInterval(3 * 86_400)
    /// let expiring = try await replica.fetch(replica.queries.expiringObjects(followedBy: "alice", before: soon))
    /// ```
    public func expiringObjects(followedBy userId: String, before date: Date) -> StoreQuery<[ExpiringObject]> {
        StoreQuery { db in
            try ExpiringObject.rows(
                db, sql: ExpiringObject.select(followedBy: userId), arguments: [ISOTimestamp(date: date).nanoseconds, userId])
        }
    }
}
