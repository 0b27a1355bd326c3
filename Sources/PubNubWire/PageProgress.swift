import Foundation
import ReplicaModel

/// A paged read that stopped because the server's answers did not move forward.
///
/// A server that ignores `start` (or hands back the same `next` cursor) would otherwise be asked
/// for the same page without end: thousands of identical requests and a sync that never returns.
/// The pagers (``HistoryPages``, ``MessageActionPages``, ``ObjectPages``) check every position
/// they are about to request with `PageProgress` and stop with this error the first time a
/// position repeats or moves the wrong way, so a loop over a pager never checks it again.
///
/// ```swift
/// do {
///     for try await page in client.history.historyPages(channel: "general") { store(page.messages) }
/// } catch let error as PagingError {
///     log("the server ignored start: \(error)")       // the pages before it were delivered
/// }
/// ```
public enum PagingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The page position did not advance: `cursor` was seen before in this listing (or is not
    /// older than the previous one when paging back through time).
    case noProgress(scope: String, cursor: String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .noProgress(let scope, let cursor):
            "\(scope) made no progress: the server answered with position \(cursor) again (does it ignore start?)"
        }
    }
}

/// Checks that each page of one paged read moves forward (see ``PagingError``).
///
/// The pagers apply it to every page they request; use it directly only in a loop that cannot
/// use a pager. Keep one value per listing: ``advance(to:)`` remembers every cursor it accepted.
///
/// ```swift
/// var progress = PageProgress(scope: "users")
/// try progress.advance(to: "MTA")          // accepted
/// try progress.advance(to: "MTA")          // throws PagingError.noProgress(scope: "users", cursor: "MTA")
/// try progress.older(Timetoken(rawValue: 5), than: Timetoken(rawValue: 9))   // accepted: 5 < 9
/// ```
package struct PageProgress: Sendable {
    /// What is being paged, for the error (e.g. `history:general`, `objects:users`).
    package let scope: String
    private var seen: Set<String> = []

    /// A check for one listing called `scope`.
    package init(scope: String) { self.scope = scope }

    /// Accepts an opaque cursor (App Context `next`) not seen before in this listing.
    package mutating func advance(to cursor: String) throws(PagingError) {
        guard seen.insert(cursor).inserted else { throw .noProgress(scope: scope, cursor: cursor) }
    }

    /// Accepts a timetoken strictly older than the previous one (`nil`: the first page), for
    /// listings that page back through time (history, message actions).
    package func older(_ next: Timetoken, than previous: Timetoken?) throws(PagingError) {
        if let previous, next >= previous { throw .noProgress(scope: scope, cursor: next.description) }
    }
}
