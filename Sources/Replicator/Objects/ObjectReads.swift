import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

// The reads the outbox and the reconciler build from a backend's one-request pages: a listing
// followed page by page, and a user's memberships of some channels.

/// A backend's listing, followed page by page.
enum ObjectListing {
    /// A listing followed through its cursors by the one pager (``PubNubWire/ObjectPages``: it
    /// stops on a short page, on a steady total when `first.wantsTotal`, and refuses a repeated
    /// cursor), one `fetch` per page (wrap it to retry).
    static func pages<Item>(
        scope: String, first: ObjectPageRequest,
        fetch: @escaping @Sendable (ObjectPageRequest) async throws -> ObjectBatch<Item>
    ) -> ObjectPages<Item> {
        ObjectPages(scope: scope, query: ObjectListQuery(limit: first.limit, start: first.cursor, count: first.wantsTotal)) { query in
            var request = first
            request.cursor = query.start
            let batch = try await fetch(request)
            return ObjectPage(data: batch.items, totalCount: batch.totalCount, next: batch.next, skipped: batch.skipped)
        }
    }
}

extension ObjectBackend {
    /// `user`'s memberships of `channels` as the server holds them now, by channel (a channel the
    /// user is not a member of is missing): the user's listing narrowed to those channels,
    /// searched page by page until each is found (a backend that cannot narrow costs pages, not
    /// correctness).
    ///
    /// - Parameter run: performs each page request (the reconciler retries; the outbox does not).
    func memberships(
        user: String, channels: [String],
        run: @escaping @Sendable (String, @escaping @Sendable () async throws(WireError) -> ObjectBatch<ChatMember<RawChatCustom>>)
            async throws -> ObjectBatch<ChatMember<RawChatCustom>> = { _, body in try await body() }
    ) async throws -> [String: ChatMember<RawChatCustom>] {
        let scope = "memberships:\(user)", wanted = Set(channels)
        let pages = ObjectListing.pages(scope: scope, first: ObjectPageRequest()) { page in
            try await run(scope) { () async throws(WireError) in
                try await self.memberships(of: .user(user), channels: channels, page, as: RawChatCustom.self)
            }
        }
        var found: [String: ChatMember<RawChatCustom>] = [:]
        for try await page in pages {
            for membership in page.data where wanted.contains(membership.channelId) { found[membership.channelId] = membership }
            if found.count == wanted.count { break }
        }
        return found
    }
}
