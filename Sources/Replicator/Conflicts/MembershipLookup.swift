import Foundation
import PubNubWire
import ReplicaModel

/// Reading one membership back from the server (conflict checks and probes of membership ops).
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
        let scope = "memberships:\(user)"
        let filter = canName(channel) ? Self.filter([channel]) : nil
        let pages = ObjectPages(scope: scope, query: ObjectListQuery(limit: 100, filter: filter)) { query in
            try await run(scope) { () async throws(WireError) in
                try await client.getMemberships(userId: user, query, as: DefaultChatCustom.self)
            }
        }
        for try await page in pages {
            if let found = page.data.first(where: { $0.channel.id == channel }) {
                return (.object(try found.model(userId: user).wireFields), found.updated, found.eTag)
            }
        }
        return nil
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
