import Foundation
import PubNubWire
import ReplicaModel

/// Reading memberships back from the server (conflict checks and probes of membership ops, the
/// read before a batch of read positions).
enum MembershipLookup {
    /// One membership as the server holds it now: `status`, `type` and `custom` (wire JSON), with
    /// its `updated` and eTag; nil when the user is not a member. The wire has no single-membership
    /// GET, so the user's memberships are listed with the filter `channel.id == '<channel>'` (as the
    /// Chat SDK reads one membership): one request, not a page per 100 memberships. The pages are
    /// still searched for the channel, so a server that ignores the filter costs pages, not
    /// correctness; an id with a quote or a backslash is looked up without a filter.
    ///
    /// - Parameter run: performs each page request (the reconciler retries; the outbox does not).
    ///   The listing is an ``PubNubWire/ObjectPages``: it stops on a short page and refuses a repeated cursor.
    static func find(
        in client: PubNubClient, channel: String, user: String,
        run: @escaping @Sendable (String, @escaping @Sendable () async throws(WireError) -> ObjectPage<WireMembership<DefaultChatCustom>>) async throws
            -> ObjectPage<WireMembership<DefaultChatCustom>>
    ) async throws -> (fields: JSONValue, updated: ISOTimestamp?, eTag: String?)? {
        let found = try await memberships(in: client, user: user, channels: [channel], run: run)[channel]
        return try found.map { (.object(try $0.model(userId: user).wireFields), $0.updated, $0.eTag) }
    }

    /// `user`'s memberships of `channels` as the server holds them now, by channel (a channel the
    /// user is not a member of is missing): the listing filtered on those channels (one request
    /// for up to 100), searched for them page by page, as ``find(in:channel:user:run:)``. Without a
    /// filter when an id cannot be named (``canName(_:)``).
    static func memberships(
        in client: PubNubClient, user: String, channels: [String],
        run: @escaping @Sendable (String, @escaping @Sendable () async throws(WireError) -> ObjectPage<WireMembership<DefaultChatCustom>>) async throws
            -> ObjectPage<WireMembership<DefaultChatCustom>> = { _, body in try await body() }
    ) async throws -> [String: WireMembership<DefaultChatCustom>] {
        let scope = "memberships:\(user)", wanted = Set(channels)
        let filter = channels.allSatisfy(canName) ? Self.filter(channels) : nil
        let pages = ObjectPages(scope: scope, query: ObjectListQuery(limit: 100, filter: filter)) { query in
            try await run(scope) { () async throws(WireError) in
                try await client.getMemberships(userId: user, query, as: DefaultChatCustom.self)
            }
        }
        var found: [String: WireMembership<DefaultChatCustom>] = [:]
        for try await page in pages {
            for membership in page.data where wanted.contains(membership.channel.id) { found[membership.channel.id] = membership }
            if found.count == wanted.count { break }
        }
        return found
    }

    /// The filter of a user's memberships naming exactly `channels`:
    /// `channel.id == 'a' || channel.id == 'b'`, as the Chat SDK writes it. Each id must pass ``canName(_:)``.
    static func filter(_ channels: [String]) -> String {
        channels.map { "channel.id == '\($0)'" }.joined(separator: " || ")
    }

    /// Whether a channel id can be named in a filter: no quote, no backslash (how PubNub escapes
    /// them is not documented).
    static func canName(_ channel: String) -> Bool {
        !channel.contains { $0 == "'" || $0 == "\\" }
    }
}
