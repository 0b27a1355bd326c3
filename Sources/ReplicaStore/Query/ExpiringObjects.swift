import Foundation
import GRDB
import ReplicaModel

/// A user, channel or membership the server deletes at a known time: DataSync's `expiresAt`
/// (`docs/datasync.md`, "Expiry"). App Context objects never expire, so a store on App Context
/// has none.
///
/// ```swift
/// for object in try await replica.expiryWarnings() {
///     print(object)          // membership general/alice expires 2026-12-01T00:00:00.000000Z
/// }
/// ```
public struct ExpiringObject: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Which of the three followed kinds an expiring object is, and so what ``ExpiringObject/id``
    /// names: a user's id, a channel's id, or a membership's channel.
    public enum Kind: String, Hashable, Sendable, Codable {
        /// A user (``ExpiringObject/id`` is the user's id).
        case user
        /// A channel (``ExpiringObject/id`` is the channel's id).
        case channel
        /// A membership (``ExpiringObject/id`` is its channel, ``ExpiringObject/userId`` its user).
        case membership
    }

    /// Whether it is a user, a channel or a membership (what ``id`` and ``userId`` name).
    public var kind: Kind
    /// The user's or channel's id; a membership's channel.
    public var id: String
    /// A membership's user; nil for a user or channel.
    public var userId: String?
    /// When the server deletes it.
    public var expiresAt: ISOTimestamp

    /// An expiring object: `id` is the user's or channel's id, or for a membership its channel,
    /// with `userId` its user (`ChatQueries.expiringObjects(followedBy:before:)` makes them).
    public init(kind: Kind, id: String, userId: String? = nil, expiresAt: ISOTimestamp) {
        self.kind = kind
        self.id = id
        self.userId = userId
        self.expiresAt = expiresAt
    }

    /// `membership general/alice expires 2026-12-01T00:00:00.000000Z`.
    public var description: String {
        "\(kind.rawValue) \(id)\(userId.map { "/\($0)" } ?? "") expires \(expiresAt)"
    }

    /// The rows of `sql`'s `kind, id, user_id, expires_at, expires_ns` columns: `expiresAt` as the
    /// server wrote it, or from `expires_ns` (what the query compared) when that text cannot be read,
    /// so that no expiring object is left out of a warning or the sweep.
    static func rows(_ db: Database, sql: String, arguments: StatementArguments) throws -> [ExpiringObject] {
        try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
            let text: String? = row[3]
            let expiresAt = text.flatMap { try? ISOTimestamp(parsing: $0) } ?? ISOTimestamp(nanoseconds: row[4])
            return ExpiringObject(kind: Kind(rawValue: row[0]) ?? .user, id: row[1], userId: row[2], expiresAt: expiresAt)
        }
    }

    /// Every stored object with an `expires_ns` before `bound` (nanoseconds): `followedBy` nil
    /// for all of them, else only that user, their memberships and the channels of those.
    static func select(followedBy user: String?) -> String {
        let users = "SELECT 'user', id, NULL, expires_at, expires_ns FROM users WHERE expires_ns < ?1"
        let channels = "SELECT 'channel', id, NULL, expires_at, expires_ns FROM channels WHERE expires_ns < ?1"
        let members = "SELECT 'membership', channel_id, user_id, expires_at, expires_ns FROM members WHERE expires_ns < ?1"
        guard user != nil else { return "\(users) UNION ALL \(channels) UNION ALL \(members) ORDER BY 5, 1, 2, 3" }
        return """
            \(users) AND id = ?2
            UNION ALL \(members) AND user_id = ?2
            UNION ALL SELECT 'channel', c.id, NULL, c.expires_at, c.expires_ns FROM channels c
                WHERE c.expires_ns < ?1 AND c.id IN (SELECT channel_id FROM members WHERE user_id = ?2)
            ORDER BY 5, 1, 2, 3
            """
    }
}
