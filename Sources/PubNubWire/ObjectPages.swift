import Foundation
import ReplicaModel

// The App Context pager; the engine and the stop rule are in Pagers.swift.

/// An App Context listing (users, channels, a user's memberships, a channel's members) followed
/// through its `next` cursors, one request per page.
///
/// The first request is `query` as given; each next one is `query` with `start` set to the
/// previous page's `next`. A page is the last when it holds fewer than `query.limit` elements,
/// counting those left out as unreadable (``ObjectPage/skipped``), or has no `next`: App Context
/// sends `next` even on its last page. An empty page is delivered too and ends the listing. With
/// `query.count` set, a page is also the last when the pages so far hold the page's `totalCount`
/// elements and every page said the same total: a listing of exactly 200 then costs two requests,
/// not three (a total that changed while paging, an object added or removed meanwhile, is not
/// trusted: the listing goes on by the rule above).
///
/// Throws what `fetch` throws, unchanged; ``PagingError/noProgress(scope:cursor:)`` when a `next`
/// cursor repeats; `CancellationError` when the task is cancelled before a request. Nothing is
/// prefetched.
///
/// ```swift
/// for try await page in client.appContext.membershipPages(userId: "alice", as: DefaultChatCustom.self) {
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
    ///   - fetch: makes one request, e.g. `{ try await client.appContext.listUsers($0) }`; wrap it to retry.
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
        let seen = Tally()
        return AsyncIterator(walk: PageWalk(scope: scope, start: query.start) { start in
            var current = query
            current.start = start
            let page = try await fetch(current)
            let entries = page.data.count + page.skipped.count
            let (total, steady) = seen.add(entries, totalCount: page.totalCount)
            if query.count, steady, let expected = page.totalCount, total == expected { return (page, nil) }
            return (page, StopRule.next(entries: entries, limit: query.limit, cursor: page.next))
        })
    }
}

/// The elements one listing has delivered so far (its pages are fetched one after another), and
/// whether every page gave the same `totalCount`.
private final class Tally: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    private var totals: Set<Int?> = []

    func add(_ entries: Int, totalCount: Int?) -> (count: Int, steady: Bool) {
        lock.withLock {
            count += entries
            totals.insert(totalCount)
            return (count, totals.count == 1)
        }
    }
}
