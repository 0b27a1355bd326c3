import Foundation
import GRDB
import ReplicaModel

/// One row of the outbox.
public struct OutboxEntry: Sendable, Hashable, Identifiable, Codable {
    /// The next attempt time of an op that waits for a new Access Manager token: it goes when one
    /// arrives, not at a time (the year 3000, far past any backoff).
    public static let tokenWaitMarker = Date(timeIntervalSince1970: 32_503_680_000)

    /// The fingerprint of the token the op last waited under (`none` without a token), or nil
    /// when its last failure was not Access Manager's.
    public var waitedUnderToken: String? {
        guard lastFailure?.errorClass == .accessDenied else { return nil }
        return lastFailure?.token ?? "none"
    }

    /// Whether the op waits for a new Access Manager token (a live op refused, or not granted, under
    /// the current one); it is made due again when a token arrives.
    public var waitsForToken: Bool {
        Self.waitsForToken(state: state, lastFailure: lastFailure, nextAttemptAt: nextAttemptAt)
    }

    /// The rule behind ``waitsForToken``, for a row read without its payload (``OutboxGlance``).
    static func waitsForToken(state: OutboxState, lastFailure: OutboxFailure?, nextAttemptAt: Date?) -> Bool {
        state != .dead && state != .conflict && lastFailure?.errorClass == .accessDenied
            && (nextAttemptAt.map { $0 >= tokenWaitMarker } ?? false)
    }

    /// The op id (a UUID); also sent to PubNub in publish `meta` as `pnr_op`.
    public var id: String
    /// Global enqueue order.
    public var seq: Int64
    /// What the op does, with its data.
    public var operation: OutboxOperation
    /// What kind of op it is.
    public var kind: OutboxKind { operation.kind }
    /// The FIFO lane: ops of one lane are sent one at a time in `seq` order.
    public var lane: String
    /// The entity the op changes (coalescing key).
    public var target: String
    /// Set by `retry` on a conflicted edit: the next attempt fetches the server's eTag and
    /// resends over it.
    public var rebase: Bool
    /// The object's eTag when the op was made (sent as `If-Match` for user and channel edits).
    public var baseETag: String?
    /// The object's `updated` when the op was made.
    public var baseUpdated: String?
    /// The stored object (JSON) before this op changed it; discard restores it.
    public var baseSnapshot: String?
    /// An op that must succeed first (a reaction on a message still being sent).
    public var dependsOn: String?
    /// The state.
    public var state: OutboxState
    /// How many times the op was handed to the transport.
    public var attempts: Int
    /// How many 5xx answers it got.
    public var serverFailures: Int
    /// Not before this time.
    public var nextAttemptAt: Date?
    /// When it was first handed to the transport.
    public var firstAttemptAt: Date?
    /// The last failure.
    public var lastFailure: OutboxFailure?
    /// Notes on what coalescing merged into this op.
    public var coalesced: [String]
    /// When it was enqueued.
    public var createdAt: Date
    /// When it last changed.
    public var updatedAt: Date
}

extension OutboxEntry {
    static let columns = """
        op_id, seq, kind, lane, target, payload, base_etag, base_updated, base_snapshot, depends_on, state, attempts,
        server_failures, next_attempt_at, first_attempt_at, last_error_class, last_http_status, last_error, coalesced,
        created_at, updated_at, last_error_token
        """

    init(row: Row, coding: StoreCoding = StoreCoding()) throws {
        let id: String = row[0]
        func corrupt(_ column: String, _ message: String) -> StoreError {
            .corruptValue(table: "outbox", column: column, key: id, message: message)
        }
        guard let kind = OutboxKind(rawValue: row[2]) else { throw corrupt("kind", "unknown kind") }
        guard let state = OutboxState(rawValue: row[10]) else { throw corrupt("state", "unknown state") }
        self.id = id
        seq = row[1]
        lane = row[3]
        target = row[4]
        guard let payload = try coding.decode(
            OutboxPayload.self, row[5], table: "outbox", column: "payload", key: id, fast: OutboxPayload.init(json:))
        else {
            throw corrupt("payload", "missing")
        }
        do {
            operation = try OutboxOperation(kind: kind, payload: payload)
        } catch {
            throw corrupt("payload", "\(error)")
        }
        rebase = payload.rebase == true
        baseETag = row[6]
        baseUpdated = row[7]
        baseSnapshot = row[8]
        dependsOn = row[9]
        self.state = state
        attempts = row[11]
        serverFailures = row[12]
        nextAttemptAt = (row[13] as Int64?).map(Date.init(milliseconds:))
        firstAttemptAt = (row[14] as Int64?).map(Date.init(milliseconds:))
        lastFailure = OutboxFailure(row: row, errorClass: 15, httpStatus: 16, message: 17, token: 21)
        coalesced = try coding.decode([String].self, row[18], table: "outbox", column: "coalesced", key: id) ?? []
        createdAt = Date(milliseconds: row[19])
        updatedAt = Date(milliseconds: row[20])
    }

    static func fetchAll(
        _ db: Database, where condition: String = "1", arguments: StatementArguments = [], limit: Int? = nil
    ) throws -> [OutboxEntry] {
        // Cached: the drain reads a lane's head per op (the conditions are a handful of constants).
        try Row.fetchAll(
            db.cachedStatement(sql: "SELECT \(columns) FROM outbox WHERE \(condition) ORDER BY seq" + (limit.map { " LIMIT \($0)" } ?? "")),
            arguments: arguments
        ).map { [coding = StoreCoding()] in try OutboxEntry(row: $0, coding: coding) }
    }
}

// The JSON form of an entry (what `pnreplicate outbox --json` prints) keeps the row's shape:
// `kind` and the wire-named `payload` next to the other columns.
extension OutboxEntry {
    private enum CodingKeys: String, CodingKey {
        case id, seq, kind, lane, target, payload, baseETag, baseUpdated, baseSnapshot, dependsOn, state, attempts
        case serverFailures, nextAttemptAt, firstAttemptAt, lastFailure, coalesced, createdAt, updatedAt
    }

    /// Decodes the row-shaped JSON form.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        seq = try c.decode(Int64.self, forKey: .seq)
        let payload = try c.decode(OutboxPayload.self, forKey: .payload)
        operation = try OutboxOperation(kind: try c.decode(OutboxKind.self, forKey: .kind), payload: payload)
        rebase = payload.rebase == true
        lane = try c.decode(String.self, forKey: .lane)
        target = try c.decode(String.self, forKey: .target)
        baseETag = try c.decodeIfPresent(String.self, forKey: .baseETag)
        baseUpdated = try c.decodeIfPresent(String.self, forKey: .baseUpdated)
        baseSnapshot = try c.decodeIfPresent(String.self, forKey: .baseSnapshot)
        dependsOn = try c.decodeIfPresent(String.self, forKey: .dependsOn)
        state = try c.decode(OutboxState.self, forKey: .state)
        attempts = try c.decode(Int.self, forKey: .attempts)
        serverFailures = try c.decode(Int.self, forKey: .serverFailures)
        nextAttemptAt = try c.decodeIfPresent(Date.self, forKey: .nextAttemptAt)
        firstAttemptAt = try c.decodeIfPresent(Date.self, forKey: .firstAttemptAt)
        lastFailure = try c.decodeIfPresent(OutboxFailure.self, forKey: .lastFailure)
        coalesced = try c.decode([String].self, forKey: .coalesced)
        createdAt = try c.decode(Date.self, forKey: .createdAt)
        updatedAt = try c.decode(Date.self, forKey: .updatedAt)
    }

    /// Encodes the row-shaped JSON form.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(seq, forKey: .seq)
        try c.encode(kind, forKey: .kind)
        try c.encode(lane, forKey: .lane)
        try c.encode(target, forKey: .target)
        try c.encode(operation.payload(rebase: rebase), forKey: .payload)
        try c.encodeIfPresent(baseETag, forKey: .baseETag)
        try c.encodeIfPresent(baseUpdated, forKey: .baseUpdated)
        try c.encodeIfPresent(baseSnapshot, forKey: .baseSnapshot)
        try c.encodeIfPresent(dependsOn, forKey: .dependsOn)
        try c.encode(state, forKey: .state)
        try c.encode(attempts, forKey: .attempts)
        try c.encode(serverFailures, forKey: .serverFailures)
        try c.encodeIfPresent(nextAttemptAt, forKey: .nextAttemptAt)
        try c.encodeIfPresent(firstAttemptAt, forKey: .firstAttemptAt)
        try c.encodeIfPresent(lastFailure, forKey: .lastFailure)
        try c.encode(coalesced, forKey: .coalesced)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(updatedAt, forKey: .updatedAt)
    }
}
