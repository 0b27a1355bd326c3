import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

/// Everything a support desk needs to answer "why didn't my message arrive?", in one value:
/// what ``ReplicaDiagnostics/report(hashingIdentifiers:)`` returns, for a support screen to show or an
/// app to attach to a bug report as JSON (``json()``, at most 64 KB). `docs/diagnostics.md`
/// lists every field.
///
/// Nothing secret is in it: the publish, subscribe and cipher keys, the token and the auth key
/// are named only as set or not, message text never appears (a GET publish's path shows
/// `{message}`), and with `hashingIdentifiers` the user and channel ids are hashed too (they are
/// personal data).
///
/// ```swift
/// let report = try await replica.diagnostics.report(hashingIdentifiers: true)
/// attachment = try report.json()                // ≤ 64 KB
/// supportLabel.text = report.summary            // "live; 2 ops waiting (oldest 5 min); 1 dead letter"
/// ```
public struct DiagnosticsReport: Sendable, Codable, Hashable {
    /// When the report was made (the replica's clock).
    public var madeAt: Date
    /// Versions: the package's, the store schema's (its newest migration), SQLite's.
    public var versions: [String: String]
    /// The configuration, redacted: keys and tokens as `set` or `none`, the options that shape
    /// replication as they are.
    public var configuration: [String: String]
    /// The store: its size, WAL, free space, budget and what the budget evicted, row counts.
    public var store: Store?
    /// The outbox: counts by state, the oldest op's age, and the first ops with why each waits.
    public var outbox: Outbox?
    /// The followed channels: how many, and the least fresh with their checkpoints.
    public var channels: Channels?
    /// The live state now and its recent changes.
    public var live: Live
    /// The Access Manager token: whether there is one, when it expires, what it grants (never
    /// its text).
    public var token: Token
    /// How far the server's clock is ahead of this device's (negative: behind), in seconds, at
    /// the newest `/time` answer; nil when none came yet.
    public var serverClockOffset: Double?
    /// The last requests (method, path with ids but never keys, tokens, signatures or message
    /// text, status, duration, retry), oldest first.
    public var requests: [RequestJournal.Entry]
    /// Every error code seen in an answer (`DS-0201`...), with how many times.
    public var errorCodes: [String: Int]
    /// DataSync objects this user follows that the server deletes soon, soonest first.
    public var expiring: [String]
    /// What a report of at most 64 KB left out (`requests: 10`...): nothing is cut silently.
    public var omitted: [String: Int] = [:]

    /// The store part of a report.
    public struct Store: Sendable, Codable, Hashable {
        /// Bytes of the database file's pages, of those in use, and of the free ones.
        public var databaseBytes: Int, usedBytes: Int, freeBytes: Int
        /// Bytes of the write-ahead log now (0 for an in-memory store).
        public var walBytes: Int
        /// The retention policy last enforced, in words, or nil.
        public var budget: String?
        /// Messages evicted by the budget, and from how many channels.
        public var evictedMessages: Int, evictedChannels: Int
        /// Rows per table.
        public var rowCounts: [String: Int]
        /// Migrations this build would still apply.
        public var pendingMigrations: [String]
    }

    /// The outbox part of a report.
    public struct Outbox: Sendable, Codable, Hashable {
        /// Ops by state (`pending`, `inflight`, `ambiguous`, `dead`, `conflict`).
        public var states: [String: Int]
        /// Seconds since the oldest op still waiting was made, or nil when none waits.
        public var oldestAgeSeconds: Double?
        /// Ops waiting by reason (`behind an earlier op of its lane`...), for all ops.
        public var reasons: [String: Int]
        /// The first ops waiting to go, in order, each with why it waits.
        public var waiting: [Op]
        /// Dead letters with their errors.
        public var deadLetters: [Op]
        /// Edits in conflict, waiting for the app.
        public var conflicts: [Op]
    }

    /// One outbox op in a report: never its payload.
    public struct Op: Sendable, Codable, Hashable {
        /// The op id (`grep` a verbose log for it).
        public var id: String
        /// Its kind (`sendMessage`, `updateUser`...), state and target.
        public var kind: String, state: String, target: String
        /// Attempts so far.
        public var attempts: Int
        /// Why it waits, or for a dead letter why it was refused.
        public var why: String
        /// Seconds since it was made.
        public var ageSeconds: Double
    }

    /// The channels part of a report.
    public struct Channels: Sendable, Codable, Hashable {
        /// Channels with a checkpoint, hot ones, and those whose reactions or members have a gap.
        public var count: Int, hot: Int, withGap: Int
        /// The least fresh channels first.
        public var stalest: [Channel]
    }

    /// One channel in a report.
    public struct Channel: Sendable, Codable, Hashable {
        /// The channel id (hashed on request).
        public var id: String
        /// Whether its reactions and members are listed at each sync.
        public var hot: Bool
        /// Complete up to (history, live stream), as timetokens.
        public var historyThrough: String?, liveThrough: String?
        /// Seconds since its last checkpoint moved.
        public var ageSeconds: Double
        /// Whether its reactions or members have a gap (listed only when it turns hot).
        public var gap: Bool
    }

    /// The live part of a report.
    public struct Live: Sendable, Codable, Hashable {
        /// The status now, in words (``ReplicaStatus/description``).
        public var status: String
        /// When the store was last known complete.
        public var lastSyncedAt: Date?
        /// The connection's recent changes, oldest first: `2026-12-01T10:00:00Z live`.
        public var transitions: [String]
    }

    /// The token part of a report.
    public struct Token: Sendable, Codable, Hashable {
        /// `none`, `token` (Access Manager v3), or `legacy auth key`.
        public var kind: String
        /// When it expires, and whether it already has.
        public var expires: Date?, expired: Bool
        /// What every request waits for (`expired`, `refused`, `missing`), or nil.
        public var waitingFor: String?
        /// What it grants: resources and patterns by kind, each with its permissions (the
        /// token's meta left out).
        public var grants: [String: String]
    }

    /// One line for a support screen: `live; 2 ops waiting (oldest 5 min); 1 dead letter`.
    public var summary: String {
        var parts = [live.status]
        if let outbox {
            let waiting = (outbox.states["pending"] ?? 0) + (outbox.states["ambiguous"] ?? 0) + (outbox.states["inflight"] ?? 0)
            if waiting > 0 {
                let age = outbox.oldestAgeSeconds.map { " (oldest \(Int($0 / 60)) min)" } ?? ""
                parts.append("\(waiting) op\(waiting == 1 ? "" : "s") waiting\(age)")
            }
            if let dead = outbox.states["dead"], dead > 0 { parts.append("\(dead) dead letter\(dead == 1 ? "" : "s")") }
            if let conflicts = outbox.states["conflict"], conflicts > 0 { parts.append("\(conflicts) conflict\(conflicts == 1 ? "" : "s")") }
        }
        if token.expired { parts.append("the token expired") }
        if let offset = serverClockOffset, abs(offset) > 60 { parts.append("the device clock is \(Int(abs(offset))) s off the server's") }
        return parts.joined(separator: "; ")
    }

    /// The largest ``json()`` gives.
    public static let maximumJSONBytes = 64 * 1024

    /// The report as JSON (sorted keys, ISO 8601 dates), at most ``maximumJSONBytes``: when it
    /// would be larger, the oldest requests, then the least fresh channels and the listed ops,
    /// are left out, each counted in ``omitted``.
    public func json() throws -> Data {
        var report = self
        while true {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            encoder.dateEncodingStrategy = .iso8601
            let data = try encoder.encode(report)
            if data.count <= Self.maximumJSONBytes || !report.trimOnce() { return data }
        }
    }

    /// Leaves out a quarter of the longest list; false when nothing is left to leave out.
    mutating func trimOnce() -> Bool {
        func cut<T>(_ list: inout [T], _ name: String, fromFront: Bool) -> Bool {
            guard !list.isEmpty else { return false }
            let count = max(1, list.count / 4)
            if fromFront { list.removeFirst(count) } else { list.removeLast(count) }
            omitted[name, default: 0] += count
            return true
        }
        if requests.count > 10 { return cut(&requests, "requests", fromFront: true) }
        if let count = channels?.stalest.count, count > 10 { return cut(&channels!.stalest, "channels", fromFront: false) }
        if let count = outbox?.waiting.count, count > 5 { return cut(&outbox!.waiting, "waiting", fromFront: false) }
        if let count = outbox?.deadLetters.count, count > 5 { return cut(&outbox!.deadLetters, "deadLetters", fromFront: false) }
        if let count = outbox?.conflicts.count, count > 5 { return cut(&outbox!.conflicts, "conflicts", fromFront: false) }
        return cut(&requests, "requests", fromFront: true)
    }
}
