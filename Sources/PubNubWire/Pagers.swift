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
        // An empty page ends the listing, whatever continuation it carries.
        if entries == 0 { return nil }
        if let truncatedAt { return truncatedAt }
        return entries >= limit ? cursor : nil
    }

    /// ``next(entries:limit:cursor:truncatedAt:)`` for a read back through time down to `floor`
    /// (inclusive): a continuation at or below the floor has nothing left to read (and one a
    /// server sends below it is not followed).
    static func next<Position: Comparable>(
        entries: Int, limit: Int, cursor: Position?, truncatedAt: Position? = nil, floor: Position?
    ) -> Position? {
        guard let next = next(entries: entries, limit: limit, cursor: cursor, truncatedAt: truncatedAt) else { return nil }
        if let floor, next <= floor { return nil }
        return next
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
