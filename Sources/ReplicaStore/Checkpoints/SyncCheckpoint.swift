import Foundation
import GRDB
import ReplicaModel

/// Where one pull has got to: a channel's history, its reactions, or an object listing.
///
/// History checkpoints (`history:<channel>`) keep three numbers, so that a crash or an error in
/// the middle of a catch-up resumes exactly where it stopped:
/// - ``applied``: every message with a timetoken up to and including it is stored locally.
/// - ``fillTop`` and ``fillCursor``: a catch-up in progress. The pages from `fillTop` down to
///   `fillCursor` (inclusive) are stored; the gap between ``applied`` and `fillCursor` is still
///   being filled, page by page, backward. When the gap closes, ``applied`` becomes `fillTop`.
///
/// Object checkpoints (`objects:users`, `objects:channels`) keep the newest `updated` seen in
/// ``cursor``, for incremental listings.
///
/// Listing checkpoints (`reactions:<channel>`, `members:<channel>`) say how fresh a channel's
/// reactions and members are: ``applied`` is the server time up to which they are known equal to
/// the server's; while ``fillTop`` is nil, live events have kept them current since, up to the
/// channel's live checkpoint. ``fillTop`` set is the end of a gap no listing has covered since:
/// changes between ``applied`` and it may be missing (docs/reconciler.md, "Hot and cold channels").
public struct SyncCheckpoint: Sendable, Hashable, Codable {
    /// The pull this checkpoint belongs to, e.g. `history:general`.
    public var scope: String
    /// Objects: the newest `updated` seen (ISO text). History: unused.
    public var cursor: String?
    /// History: everything up to this timetoken (inclusive) is stored.
    public var applied: Timetoken?
    /// History: the newest timetoken of a catch-up still filling its gap.
    public var fillTop: Timetoken?
    /// History: the oldest timetoken stored so far by that catch-up (the next page's exclusive `start`).
    public var fillCursor: Timetoken?
    /// When the checkpoint was last written.
    public var updatedAt: Date

    /// A checkpoint.
    public init(
        scope: String, cursor: String? = nil, applied: Timetoken? = nil, fillTop: Timetoken? = nil,
        fillCursor: Timetoken? = nil, updatedAt: Date = Date(timeIntervalSince1970: 0)
    ) {
        self.scope = scope
        self.cursor = cursor
        self.applied = applied
        self.fillTop = fillTop
        self.fillCursor = fillCursor
        self.updatedAt = updatedAt
    }

    /// Whether a catch-up was interrupted and must be resumed before anything newer is fetched.
    public var isFilling: Bool { fillTop != nil }

    /// The scope of a channel's history pull.
    public static func history(_ channel: String) -> String { "history:\(channel)" }
    /// The scope of a channel's reaction pull.
    public static func reactions(_ channel: String) -> String { "reactions:\(channel)" }
    /// The scope of a channel's member listing: `applied` is the server time its members were
    /// last listed against.
    public static func members(_ channel: String) -> String { "members:\(channel)" }
    /// The scope of a channel's live checkpoint: every event published on the channel up to
    /// `applied` is stored (written by the live sync, `docs/live.md`).
    public static func live(_ channel: String) -> String { "live:\(channel)" }

    /// The scope prefixes whose checkpoint is a timetoken (`applied`) rather than a cursor.
    static let timetokenPrefixes = ["history:", "reactions:", "members:", "live:"]
    /// The scope of the user listing.
    public static let users = "objects:users"
    /// The scope of the channel listing.
    public static let channels = "objects:channels"
}

// Columns of version 1's `sync_checkpoints`: `cursor` holds the object cursor, or for history the
// applied timetoken as text; `range_end` is the fill top and `range_start` the fill cursor.
extension SyncCheckpoint {
    static let selectSQL = "SELECT scope, cursor, range_start, range_end, updated_at FROM sync_checkpoints"

    init(row: Row) {
        scope = row[0]
        let text: String? = row[1]
        if Self.timetokenPrefixes.contains(where: scope.hasPrefix) {
            applied = text.flatMap { UInt64($0) }.map(Timetoken.init(rawValue:))
        } else {
            cursor = text
        }
        fillCursor = StoreCoding.timetoken(row[2])
        fillTop = StoreCoding.timetoken(row[3])
        updatedAt = Date(milliseconds: row[4])
    }

    static func read(_ scope: String, _ db: Database) throws -> SyncCheckpoint? {
        // A cached statement: a fill or a catch-up reads one checkpoint per channel (5,000 on a
        // big account), and compiling the statement each time cost more than the read.
        try Row.fetchOne(db.cachedStatement(sql: selectSQL + " WHERE scope = ?"), arguments: [scope]).map(SyncCheckpoint.init(row:))
    }

    func write(_ db: Database) throws {
        let text = applied?.description ?? cursor
        try db.cachedStatement(
            sql: """
                INSERT INTO sync_checkpoints (scope, cursor, range_start, range_end, updated_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(scope) DO UPDATE SET cursor = excluded.cursor, range_start = excluded.range_start,
                    range_end = excluded.range_end, updated_at = excluded.updated_at
                """
        ).execute(arguments: [
            scope, text, try StoreCoding.column(fillCursor, field: "checkpoint.fillCursor"),
            try StoreCoding.column(fillTop, field: "checkpoint.fillTop"), updatedAt.milliseconds,
        ])
    }
}
