import Foundation
import ReplicaModel

// Every paged PubNub read (history back in time, message actions back in time, App Context
// cursor listings) goes through one of the pagers below. They share one engine (`PageWalk`), so
// the stop rule, the no-progress guard and cancellation are written once, here:
//
// - A page is requested only when the caller asks for it (`next()`): nothing is prefetched.
// - The stop rule (`StopRule.next`): a page is the last when it holds fewer entries than the
//   limit (entries the client could not read count: the server counted them) or when it has no
//   continuation. App Context hands out `next` even on its last page, so `next` alone never
//   continues a short page. A continuation the server gives only when it cut a page short
//   (message actions' `more.start`) is followed even on a short page.
// - Before each request after the first, the position is checked with `PageProgress`: a
//   timetoken must be strictly older than the previous page's start, a cursor must be new. The
//   check runs when the caller asks for the next page, so a caller that stops early (it found
//   what it looked for) never meets it; the page whose continuation fails it was delivered.
// - Each request is preceded by `Task.checkCancellation()`.
// - After an error (from the fetch, the guard or cancellation) the pager is finished.

/// The stop rule of every pager, written once.
enum StopRule {
    /// Where the page after this one starts, or nil when this page is the last.
    ///
    /// - Parameters:
    ///   - entries: what the page held, counting entries left out because they could not be read.
    ///   - limit: the page size asked for.
    ///   - cursor: the continuation of a full page: App Context's `next`, or the oldest timetoken
    ///     of a page read back through time.
    ///   - truncatedAt: a continuation the server sends only when it cut the page short (message
    ///     actions' `more.start`); followed whatever the page's size.
    static func next<Position>(entries: Int, limit: Int, cursor: Position?, truncatedAt: Position? = nil) -> Position? {
        if let truncatedAt { return truncatedAt }
        return entries >= limit ? cursor : nil
    }
}

/// A position a pager requests from: a timetoken when paging back through time (each page must
/// start strictly older than the one before) or an opaque cursor (each must be new).
protocol PagePosition: Sendable, Hashable {
    /// Checks that requesting `self` after a page that started at `previous` moves on.
    func checkProgress(after previous: Self?, in progress: inout PageProgress) throws(PagingError)
}

extension Timetoken: PagePosition {
    func checkProgress(after previous: Timetoken?, in progress: inout PageProgress) throws(PagingError) {
        try progress.older(self, than: previous)
    }
}

extension String: PagePosition {
    func checkProgress(after previous: String?, in progress: inout PageProgress) throws(PagingError) {
        try progress.advance(to: self)
    }
}

/// The engine of every pager: one request per `next()`, the stop rule, the progress guard and
/// cancellation. `fetch` makes the request that starts at a position and returns the page with
/// its continuation (computed with ``StopRule``), nil when the page is the last.
struct PageWalk<Position: PagePosition, Page: Sendable>: Sendable {
    private enum State: Sendable {
        /// Nothing requested yet; the first request starts here.
        case ready(Position?)
        /// A page that started at `start` was delivered; the next one starts at `continuation`.
        case delivered(start: Position?, continuation: Position?)
        /// The last page was delivered, or an error was thrown.
        case finished
    }

    private var state: State
    private var progress: PageProgress
    private let fetch: @Sendable (Position?) async throws -> (page: Page, continuation: Position?)

    init(
        scope: String, start: Position?,
        fetch: @escaping @Sendable (Position?) async throws -> (page: Page, continuation: Position?)
    ) {
        var progress = PageProgress(scope: scope)
        // A listing that starts at a cursor must not be sent back to it.
        if let start { try? start.checkProgress(after: nil, in: &progress) }
        self.progress = progress
        self.state = .ready(start)
        self.fetch = fetch
    }

    mutating func next() async throws -> Page? {
        let request: Position?
        switch state {
        case .finished:
            return nil
        case .ready(let start):
            request = start
        case .delivered(let start, let continuation):
            guard let continuation else {
                state = .finished
                return nil
            }
            do {
                try continuation.checkProgress(after: start, in: &progress)
            } catch {
                state = .finished
                throw error
            }
            request = continuation
        }
        // Finished unless the request below succeeds: an error ends the listing.
        state = .finished
        try Task.checkCancellation()
        let (page, continuation) = try await fetch(request)
        state = .delivered(start: request, continuation: continuation)
        return page
    }
}

// MARK: - History

/// The history of one channel, paged back in time from `start` (exclusive; nil: now) down to
/// `end` (inclusive; nil: the channel's first message), one History v3 request per page.
///
/// Each page is the newest `pageSize` messages older than the previous page (oldest first in the
/// page, as history answers). The next page starts at the oldest timetoken of this one. A page
/// with fewer than `pageSize` messages is the last (``Page/isLast``); an empty page is delivered
/// too and ends the listing. Messages older than `end`, which a conforming server never sends,
/// are dropped before the page is measured.
///
/// Throws what `fetch` throws, unchanged; ``PagingError/noProgress(scope:cursor:)`` when the
/// server answers a page that does not reach older messages (it ignored `start`); and
/// `CancellationError` when the task is cancelled before a request. Nothing is prefetched.
///
/// ```swift
/// // Look for a message published since `floor`, newest page first; stop as soon as it is found.
/// for try await page in client.historyPages(channel: "general", end: floor) {
///     if let hit = page.messages.first(where: { $0.timetoken == wanted }) { return hit }
/// }
/// ```
///
/// Pass `fetch` to wrap each request (retries, deadlines) instead of
/// ``PubNubClient/historyPages(channel:pageSize:start:end:)``:
///
/// ```swift
/// let pages = HistoryPages(channel: "general", end: floor, scope: "history:general") { query in
///     try await withRetries { try await client.fetchHistory(query) }
/// }
/// ```
public struct HistoryPages: AsyncSequence, Sendable {
    /// One page of a channel's history.
    public struct Page: Sendable, Hashable {
        /// The channel's messages in this page, oldest first, none older than the listing's `end`.
        public var messages: [HistoryMessage]
        /// Whether this is the last page: it held fewer than `pageSize` messages. A caller that
        /// keeps a resume point can close it here (nothing older is left in the window).
        public var isLast: Bool

        /// A page (tests).
        public init(messages: [HistoryMessage], isLast: Bool) {
            self.messages = messages
            self.isLast = isLast
        }
    }

    /// The channel.
    public let channel: String
    /// Messages per request, 1-100 (a single channel's History v3 cap).
    public let pageSize: Int
    /// Where the first page starts (exclusive upper bound); nil: the newest messages.
    public let start: Timetoken?
    /// The floor (inclusive lower bound) of every request; nil: no floor.
    public let end: Timetoken?
    /// Names the listing in ``PagingError``.
    public let scope: String
    private let fetch: @Sendable (HistoryQuery) async throws -> HistoryPage

    /// Pages `channel` back from `start` to `end` with `fetch` making each request.
    ///
    /// - Parameters:
    ///   - pageSize: messages per request, clamped to 1-100.
    ///   - scope: names the listing in ``PagingError``; default `history:<channel>`.
    ///   - fetch: makes one request, e.g. `{ try await client.fetchHistory($0) }`; wrap it to
    ///     retry or to enforce a deadline. Its errors reach the caller unchanged.
    public init(
        channel: String, pageSize: Int = 100, start: Timetoken? = nil, end: Timetoken? = nil, scope: String? = nil,
        fetch: @escaping @Sendable (HistoryQuery) async throws -> HistoryPage
    ) {
        self.channel = channel
        self.pageSize = Swift.min(Swift.max(1, pageSize), PubNubClient.historyCap(channelCount: 1, withActions: false))
        self.start = start
        self.end = end
        self.scope = scope ?? "history:\(channel)"
        self.fetch = fetch
    }

    /// The iterator; each ``next()`` makes at most one request.
    public struct AsyncIterator: AsyncIteratorProtocol, Sendable {
        var walk: PageWalk<Timetoken, Page>

        /// The next page, or nil after the last one.
        public mutating func next() async throws -> Page? { try await walk.next() }
    }

    /// Starts the listing (no request is made until the first ``AsyncIterator/next()``).
    public func makeAsyncIterator() -> AsyncIterator {
        let (channel, pageSize, end, fetch) = (channel, pageSize, end, fetch)
        return AsyncIterator(walk: PageWalk(scope: scope, start: start) { start in
            let answer = try await fetch(HistoryQuery(channels: [channel], max: pageSize, start: start, end: end))
            var messages = answer.channels[channel] ?? []
            if let end { messages.removeAll { $0.timetoken < end } }
            let next = StopRule.next(entries: messages.count, limit: pageSize, cursor: messages.first?.timetoken)
            return (Page(messages: messages, isLast: next == nil), next)
        })
    }
}

// MARK: - Message actions

/// A message actions query (`listMessageActions`): actions with `end ≤ actionTimetoken < start`,
/// at most `limit` (1-100) of them, the newest in that window.
public struct MessageActionsQuery: Sendable, Hashable {
    /// The channel.
    public var channel: String
    /// Exclusive upper bound (nil: now).
    public var start: Timetoken?
    /// Inclusive lower bound (nil: none).
    public var end: Timetoken?
    /// 1-100; nil: the server's default (100).
    public var limit: Int?

    /// A query.
    public init(channel: String, start: Timetoken? = nil, end: Timetoken? = nil, limit: Int? = nil) {
        self.channel = channel
        self.start = start
        self.end = end
        self.limit = limit
    }
}

/// A channel's message actions, paged back in time from `start` (exclusive; nil: now) down to
/// `end` (inclusive), one `listMessageActions` request per page.
///
/// The next page starts at the answer's `more.start` when the server sent one (it cut the page
/// short), else at the smallest action timetoken of a full page. A page with fewer than `limit`
/// actions and no `more` is the last; an empty page is delivered too and ends the listing.
///
/// Throws what `fetch` throws, unchanged; ``PagingError/noProgress(scope:cursor:)`` when a page's
/// continuation is not older than its own start; `CancellationError` when the task is cancelled
/// before a request. Nothing is prefetched.
///
/// ```swift
/// var actions: [WireMessageAction] = []
/// for try await page in client.messageActionPages(channel: "general", end: oldestMessage) {
///     actions += page.data
/// }
/// ```
public struct MessageActionPages: AsyncSequence, Sendable {
    /// The channel.
    public let channel: String
    /// Where the first page starts (exclusive); nil: now.
    public let start: Timetoken?
    /// The floor (inclusive) of every request.
    public let end: Timetoken?
    /// Actions per request (1-100; the client refuses other values with `WireError.invalidArgument`).
    public let limit: Int
    /// Names the listing in ``PagingError``.
    public let scope: String
    private let fetch: @Sendable (MessageActionsQuery) async throws -> MessageActionsPage

    /// Pages `channel`'s actions back from `start` to `end` with `fetch` making each request.
    ///
    /// - Parameters:
    ///   - scope: names the listing in ``PagingError``; default `actions:<channel>`.
    ///   - fetch: makes one request, e.g. `{ try await client.listMessageActions($0) }`; wrap it
    ///     to retry. Its errors reach the caller unchanged.
    public init(
        channel: String, start: Timetoken? = nil, end: Timetoken? = nil, limit: Int = 100, scope: String? = nil,
        fetch: @escaping @Sendable (MessageActionsQuery) async throws -> MessageActionsPage
    ) {
        self.channel = channel
        self.start = start
        self.end = end
        self.limit = limit
        self.scope = scope ?? "actions:\(channel)"
        self.fetch = fetch
    }

    /// The iterator; each ``next()`` makes at most one request.
    public struct AsyncIterator: AsyncIteratorProtocol, Sendable {
        var walk: PageWalk<Timetoken, MessageActionsPage>

        /// The next page, or nil after the last one.
        public mutating func next() async throws -> MessageActionsPage? { try await walk.next() }
    }

    /// Starts the listing (no request is made until the first ``AsyncIterator/next()``).
    public func makeAsyncIterator() -> AsyncIterator {
        let (channel, end, limit, fetch) = (channel, end, limit, fetch)
        return AsyncIterator(walk: PageWalk(scope: scope, start: start) { start in
            let page = try await fetch(MessageActionsQuery(channel: channel, start: start, end: end, limit: limit))
            let next = StopRule.next(
                entries: page.data.count, limit: limit, cursor: page.data.map(\.actionTimetoken).min(),
                truncatedAt: page.more?.start)
            return (page, next)
        })
    }
}

// MARK: - App Context

/// An App Context listing (users, channels, a user's memberships, a channel's members) followed
/// through its `next` cursors, one request per page.
///
/// The first request is `query` as given; each next one is `query` with `start` set to the
/// previous page's `next`. A page is the last when it holds fewer than `query.limit` elements,
/// counting those left out as unreadable (``ObjectPage/skipped``), or has no `next`: App Context
/// sends `next` even on its last page. An empty page is delivered too and ends the listing.
///
/// Throws what `fetch` throws, unchanged; ``PagingError/noProgress(scope:cursor:)`` when a `next`
/// cursor repeats; `CancellationError` when the task is cancelled before a request. Nothing is
/// prefetched.
///
/// ```swift
/// for try await page in client.membershipPages(userId: "alice", as: DefaultChatCustom.self) {
///     if let membership = page.data.first(where: { $0.channel.id == "general" }) { return membership }
/// }
/// ```
public struct ObjectPages<Item: Decodable & Sendable & Hashable>: AsyncSequence, Sendable {
    /// The first request's query; later ones change only `start`.
    public let query: ObjectListQuery
    /// Names the listing in ``PagingError``.
    public let scope: String
    private let fetch: @Sendable (ObjectListQuery) async throws -> ObjectPage<Item>

    /// Follows the listing that `fetch` reads, starting with `query`.
    ///
    /// - Parameters:
    ///   - scope: names the listing in ``PagingError`` (e.g. `objects:users`, `members:general`).
    ///   - fetch: makes one request, e.g. `{ try await client.listUsers($0) }`; wrap it to retry.
    ///     Its errors reach the caller unchanged.
    public init(
        scope: String, query: ObjectListQuery = ObjectListQuery(),
        fetch: @escaping @Sendable (ObjectListQuery) async throws -> ObjectPage<Item>
    ) {
        self.query = query
        self.scope = scope
        self.fetch = fetch
    }

    /// The iterator; each ``next()`` makes at most one request.
    public struct AsyncIterator: AsyncIteratorProtocol, Sendable {
        var walk: PageWalk<String, ObjectPage<Item>>

        /// The next page, or nil after the last one.
        public mutating func next() async throws -> ObjectPage<Item>? { try await walk.next() }
    }

    /// Starts the listing (no request is made until the first ``AsyncIterator/next()``).
    public func makeAsyncIterator() -> AsyncIterator {
        let (query, fetch) = (query, fetch)
        return AsyncIterator(walk: PageWalk(scope: scope, start: query.start) { start in
            var current = query
            current.start = start
            let page = try await fetch(current)
            let next = StopRule.next(entries: page.data.count + page.skipped.count, limit: query.limit, cursor: page.next)
            return (page, next)
        })
    }
}

// MARK: - Pagers on the client

extension PubNubClient {
    /// Lists message actions with a ``MessageActionsQuery``.
    public func listMessageActions(_ query: MessageActionsQuery) async throws(WireError) -> MessageActionsPage {
        try await listMessageActions(channel: query.channel, start: query.start, end: query.end, limit: query.limit)
    }

    /// The history of `channel` back from `start` (exclusive; nil: now) to `end` (inclusive),
    /// `pageSize` messages per request; see ``HistoryPages``. Errors are `WireError`,
    /// ``PagingError`` and `CancellationError`; no request is retried.
    public func historyPages(
        channel: String, pageSize: Int = 100, start: Timetoken? = nil, end: Timetoken? = nil
    ) -> HistoryPages {
        HistoryPages(channel: channel, pageSize: pageSize, start: start, end: end) { query in
            try await self.fetchHistory(query)
        }
    }

    /// The message actions of `channel` back from `start` (exclusive; nil: now) to `end`
    /// (inclusive); see ``MessageActionPages``. No request is retried.
    public func messageActionPages(
        channel: String, start: Timetoken? = nil, end: Timetoken? = nil, limit: Int = 100
    ) -> MessageActionPages {
        MessageActionPages(channel: channel, start: start, end: end, limit: limit) { query in
            try await self.listMessageActions(query)
        }
    }

    /// Every user of the keyset matching `query` (scope `users`); see ``ObjectPages``.
    public func userPages<C: CustomData>(_ query: ObjectListQuery = ObjectListQuery(), as custom: C.Type = FlatCustom.self)
        -> ObjectPages<ChatUser<C>>
    {
        ObjectPages(scope: "users", query: query) { query in try await self.listUsers(query, as: C.self) }
    }

    /// Every channel of the keyset matching `query` (scope `channels`); see ``ObjectPages``.
    public func channelPages<C: CustomData>(_ query: ObjectListQuery = ObjectListQuery(), as custom: C.Type = FlatCustom.self)
        -> ObjectPages<ChatChannel<C>>
    {
        ObjectPages(scope: "channels", query: query) { query in try await self.listChannels(query, as: C.self) }
    }

    /// Every membership of `userId` (scope `memberships:<userId>`); see ``ObjectPages``.
    public func membershipPages<C: ChatCustomData>(
        userId: String, _ query: ObjectListQuery = ObjectListQuery(), as custom: C.Type
    ) -> ObjectPages<WireMembership<C>> {
        ObjectPages(scope: "memberships:\(userId)", query: query) { query in
            try await self.getMemberships(userId: userId, query, as: C.self)
        }
    }

    /// Every member of `channelId` (scope `members:<channelId>`); see ``ObjectPages``.
    public func memberPages<C: ChatCustomData>(
        channelId: String, _ query: ObjectListQuery = ObjectListQuery(), as custom: C.Type
    ) -> ObjectPages<WireChannelMember<C>> {
        ObjectPages(scope: "members:\(channelId)", query: query) { query in
            try await self.getMembers(channelId: channelId, query, as: C.self)
        }
    }
}
