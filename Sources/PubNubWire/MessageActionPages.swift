import Foundation
import ReplicaModel

// The message actions pager; the engine and the stop rule are in Pagers.swift.

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
/// for try await page in client.messageActions.messageActionPages(channel: "general", end: oldestMessage) {
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
    ///   - fetch: makes one request, e.g. `{ try await client.messageActions.listMessageActions($0) }`; wrap it
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
                truncatedAt: page.more?.start, floor: end)
            return (page, next)
        })
    }
}
