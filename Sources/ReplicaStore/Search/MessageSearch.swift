import Foundation
import GRDB
import ReplicaModel

/// A search of the stored messages' text (`docs/search.md`): what the user typed, and where and
/// when to look. Run it with `queries.search(_:)`, once or observed.
///
/// Every word must occur in a message's shown text (its newest edit), in any case and with or
/// without diacritics (`cafe` finds `Café`); the last word is also a prefix (`reco` finds
/// `reconnect`, as the user types). Chinese, Japanese, Korean and Thai words are found inside
/// unspaced text (`東京` in `我住在東京都`). Soft-deleted messages and the messages of muted users
/// are never found, as ``ChatQueries/messages(inChannel:includeDeleted:includeMuted:)`` leaves
/// them out; pending messages (not sent yet) are.
///
/// ```swift
/// var search = MessageSearch("invoice march", channels: ["support"])
/// search.order = .newest
/// for try await page in replica.observe(replica.queries.search(search)) {
///     results = page.messages
/// }
/// ```
public struct MessageSearch: Sendable, Hashable {
    /// How hits are ordered.
    public enum Order: Sendable, Hashable {
        /// The best matches first (SQLite FTS5's bm25: rarer words and shorter messages weigh
        /// more), newest first among equals. Only the newest ``MessageSearch/rankedWindow``
        /// matches are ranked (more when a page reaches past them), so that a common word in a
        /// large store is answered in milliseconds: in a chat, a recent good match beats an old
        /// better one.
        case relevance
        /// The newest first; messages not sent yet before every sent one.
        case newest
    }

    /// What the user typed. Text with no letter or digit finds nothing.
    public var text: String
    /// Only these channels (a thread is its channel: ``inThread(of:root:)``); nil: every channel.
    public var channels: [String]?
    /// Only messages by these users; nil: anyone's.
    public var authors: [String]?
    /// Only messages published at or after this timetoken (pending messages are left out when set).
    public var since: Timetoken?
    /// Only messages published before this timetoken (pending messages are left out when set).
    public var before: Timetoken?
    /// The order of hits; default ``Order/relevance``.
    public var order: Order = .relevance
    /// Hits per page, 1-100; default 20.
    public var limit = 20
    /// Hits skipped: the next page starts at `offset + limit`.
    public var offset = 0

    /// How many of the newest matches ``Order/relevance`` ranks: 500.
    public static let rankedWindow = 500

    /// A search for `text`, optionally in some channels, by some authors, between two timetokens.
    public init(
        _ text: String, channels: [String]? = nil, authors: [String]? = nil, since: Timetoken? = nil, before: Timetoken? = nil
    ) {
        self.text = text
        self.channels = channels
        self.authors = authors
        self.since = since
        self.before = before
    }

    /// The same search restricted to the thread under message `root` of `channel` (its thread
    /// channel, as the Chat SDK names it).
    public func inThread(of channel: String, root: Timetoken) -> MessageSearch {
        var search = self
        search.channels = [ChatSDKFormat.threadChannel(of: channel, root: root)]
        return search
    }

    /// The same search one page further on.
    public var nextPage: MessageSearch {
        var search = self
        search.offset += limit
        return search
    }
}

/// One page of a ``MessageSearch``'s hits.
public struct MessageSearchResults<Custom: CustomData>: Sendable, Hashable {
    /// The messages found, each whole (its shown text, reactions and files as the other queries
    /// give them), in the search's order.
    public var messages: [ChatMessage<Custom>]
    /// Whether a next page has more hits (``MessageSearch/nextPage``).
    public var hasMore: Bool
    /// How many messages are not indexed yet: 0 once the index is current. The store indexes
    /// after each write, in the background, and a whole store once after the upgrade that made
    /// the index (`docs/search.md`, "How the index is kept"); a search read once waits for the
    /// last writes, so this is not 0 only on a store opened read-only, or for an observed search
    /// while the index catches up. While it is not 0, say so ("still indexing").
    public var unindexed: Int
    /// The searched channels (every channel, without a channel filter) whose older history the
    /// storage budget evicted, each with the timetoken from which its history is stored whole
    /// (`docs/store.md`, "Storage budget"): older messages of the channel are not searched, so
    /// say "searched from …" rather than "not found". Empty when nothing was evicted.
    public var completeFrom: [String: Timetoken] = [:]
}

extension ChatQueries {
    /// The messages whose shown text matches `search` (``MessageSearch``), one page of them.
    /// Observe it to keep a results list current as messages arrive, are edited or deleted.
    ///
    /// Fails with ``StoreError/invalidInput(_:)`` when the limit is not 1-100 or the offset is
    /// negative.
    public func search(_ search: MessageSearch) -> StoreQuery<MessageSearchResults<Custom.Message>> {
        var query = StoreQuery<MessageSearchResults<Custom.Message>> { db in
            guard (1...100).contains(search.limit) else {
                throw StoreError.invalidInput("search limit must be 1-100, got \(search.limit)")
            }
            guard search.offset >= 0 else { throw StoreError.invalidInput("search offset must be 0 or more, got \(search.offset)") }
            let unindexed = try SearchIndex.unindexed(db)
            var completeFrom: [String: Timetoken] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT channel_id, complete_from FROM history_bounds WHERE ?1 IS NULL OR channel_id IN (SELECT value FROM json_each(?1))",
                arguments: [search.channels.map(SearchSQL.jsonArray)])
            {
                let bound: Int64 = row[1]
                completeFrom[row[0]] = Timetoken(rawValue: UInt64(max(0, bound)))
            }
            guard let words = SearchFolding.matchExpression(for: search.text) else {
                return MessageSearchResults(messages: [], hasMore: false, unindexed: unindexed, completeFrom: completeFrom)
            }
            var arguments: StatementArguments = [
                SearchSQL.match(words, channels: search.channels), search.channels.map(SearchSQL.jsonArray),
                search.authors.map(SearchSQL.jsonArray),
                search.since.map { Int64(clamping: $0.rawValue) }, search.before.map { Int64(clamping: $0.rawValue) },
                search.limit + 1, search.offset,
                search.since.map { SearchIndex.firstKey(publishedAt: Int64(clamping: $0.rawValue)) } ?? Int64.min,
                search.before.map { SearchIndex.firstKey(publishedAt: Int64(clamping: $0.rawValue)) } ?? Int64.max,
            ]
            if search.order == .relevance { arguments += [max(MessageSearch.rankedWindow, search.offset + search.limit + 1)] }
            let rows = try Row.fetchAll(db, sql: search.order == .relevance ? SearchSQL.byRelevance : SearchSQL.byNewest, arguments: arguments)
            let coding = StoreCoding()
            let messages: [Message] = try rows.prefix(search.limit).map { try coding.message($0) }
            return MessageSearchResults(messages: messages, hasMore: rows.count > search.limit, unindexed: unindexed, completeFrom: completeFrom)
        }
        query.readsSearchIndex = true
        return query
    }
}

/// The SQL of ``ChatQueries/search(_:)``, made once.
enum SearchSQL {
    static func jsonArray(_ values: [String]) -> String {
        (try? String(decoding: JSONEncoder().encode(values), as: UTF8.self)) ?? "[]"
    }

    /// At most this many channels are looked up in the index's `scope` column (their postings
    /// intersected with the words'); a search in more channels only compares each hit's channel.
    static let scopedChannels = 32

    /// The FTS5 query: the words in the text column, and the channels' scope tokens.
    static func match(_ words: String, channels: [String]?) -> String {
        var match = "{folded} : (\(words))"
        if let channels, !channels.isEmpty, channels.count <= scopedChannels {
            match += " AND {scope} : (" + channels.map(SearchIndex.scopeToken).joined(separator: " OR ") + ")"
        }
        return match
    }

    /// The index is read first, from its highest key (the newest message) down (`CROSS JOIN`
    /// keeps SQLite from walking a channel's messages and asking the index about each); each
    /// hit's message is found through `search_keys`. `?8`/`?9` bound the keys by date.
    private static let matches = """
        FROM message_search
        CROSS JOIN search_keys k ON k.key = message_search.rowid
        CROSS JOIN messages msg ON msg.rowid = k.message_rowid
        WHERE message_search MATCH ?1
          AND message_search.rowid >= ?8 AND message_search.rowid < ?9
          AND (?2 IS NULL OR msg.channel_id IN (SELECT value FROM json_each(?2)))
          AND (?3 IS NULL OR msg.user_id IN (SELECT value FROM json_each(?3)))
          AND (?4 IS NULL OR msg.timetoken >= ?4)
          AND (?5 IS NULL OR msg.timetoken < ?5)
          AND \(ChatSemantics.notDeleted) AND \(ChatSemantics.notMuted)
        """

    /// Newest first: the index's key order (pending messages first, then by timetoken).
    static let byNewest = "SELECT \(Columns.message) " + matches + " ORDER BY message_search.rowid DESC LIMIT ?6 OFFSET ?7"

    /// The best of the newest `?10` matches (bm25 over the text column only), newest first among equals.
    static let byRelevance = """
        SELECT \(Columns.message) FROM (
            SELECT message_search.rowid AS hit_key, bm25(message_search, 1.0, 0.0) AS score \(matches)
            ORDER BY message_search.rowid DESC LIMIT ?10
        ) hits
        CROSS JOIN search_keys k ON k.key = hits.hit_key
        CROSS JOIN messages msg ON msg.rowid = k.message_rowid
        ORDER BY hits.score, hits.hit_key DESC LIMIT ?6 OFFSET ?7
        """
}
