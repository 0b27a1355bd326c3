import Foundation
import ReplicaModel

/// A paged read that stopped because the server's answers did not move forward.
///
/// A server that ignores `start` (or hands back the same `next` cursor) would otherwise be asked
/// for the same page without end: thousands of identical requests and a sync that never returns.
/// Every loop over pages checks each new position with ``PageProgress`` and stops with this error
/// the first time a position repeats or moves the wrong way.
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
struct PageProgress {
    /// What is being paged, for the error.
    let scope: String
    private var seen: Set<String> = []

    init(scope: String) { self.scope = scope }

    /// Accepts a cursor not seen before in this listing.
    mutating func advance(to cursor: String) throws(PagingError) {
        guard seen.insert(cursor).inserted else { throw .noProgress(scope: scope, cursor: cursor) }
    }

    /// Accepts a timetoken strictly older than the previous one (`nil`: the first page).
    func older(_ next: Timetoken, than previous: Timetoken?) throws(PagingError) {
        if let previous, next >= previous { throw .noProgress(scope: scope, cursor: next.description) }
    }
}
