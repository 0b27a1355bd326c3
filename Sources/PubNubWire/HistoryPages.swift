import Foundation
import ReplicaModel

// The history pager; the engine and the stop rule are in Pagers.swift.

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
/// for try await page in client.history.historyPages(channel: "general", end: floor) {
///     if let hit = page.messages.first(where: { $0.timetoken == wanted }) { return hit }
/// }
/// ```
///
/// Pass `fetch` to wrap each request (retries, deadlines) instead of
/// ``PubNubClient/historyPages(channel:pageSize:start:end:)``:
///
/// ```swift
/// let pages = HistoryPages(channel: "general", end: floor, scope: "history:general") { query in
///     try await withRetries { try await client.history.fetchHistory(query) }
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
    ///   - fetch: makes one request, e.g. `{ try await client.history.fetchHistory($0) }`; wrap it to
    ///     retry or to enforce a deadline. Its errors reach the caller unchanged.
    public init(
        channel: String, pageSize: Int = 100, start: Timetoken? = nil, end: Timetoken? = nil, scope: String? = nil,
        fetch: @escaping @Sendable (HistoryQuery) async throws -> HistoryPage
    ) {
        self.channel = channel
        self.pageSize = Swift.min(Swift.max(1, pageSize), PubNubHistory.historyCap(channelCount: 1, withActions: false))
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
            let next = StopRule.next(
                entries: messages.count, limit: pageSize, cursor: messages.map(\.timetoken).min(), floor: end)
            return (Page(messages: messages, isLast: next == nil), next)
        })
    }
}
