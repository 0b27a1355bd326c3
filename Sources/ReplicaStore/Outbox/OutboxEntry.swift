import Foundation
import GRDB
import ReplicaModel

/// What an outbox op does.
public enum OutboxKind: String, Codable, Sendable, CaseIterable {
    /// Publish a message.
    case send
    /// Add a message action (a reaction).
    case addReaction
    /// Remove this user's message action.
    case removeReaction
    /// Set a membership's status, type or custom data.
    case setMembership
    /// Remove a membership.
    case removeMembership
    /// PATCH a user's metadata.
    case setUser
    /// Delete a user's metadata.
    case removeUser
    /// PATCH a channel's metadata.
    case setChannel
    /// Delete a channel's metadata.
    case removeChannel
    /// Publish the Chat SDK's mention event to a mentioned user, after the message.
    case mention
    /// Signal the Chat SDK's read receipt on a channel, after the read position is written.
    case receipt
    /// Delete a message from PubNub's history (a hard delete).
    case hardDelete
    /// Publish the Chat SDK's report of a message to its channel's moderation channel.
    case report
    /// Write the current user's mute list (the Chat SDK's `PN_PRV.<user>.mute1` user object).
    case setMuteList
    /// Publish the Chat SDK's invitation event to an invited user, after their pending membership.
    case invite
    /// Register or remove a device for mobile push.
    case push
    /// Write the current user's read positions of many channels in one membership PATCH (mark
    /// all read), as the Chat SDK's `markAllMessagesAsRead` does.
    case readPositions
}

/// Where an op is in its life. An op leaves the table when it succeeds or is discarded.
public enum OutboxState: String, Codable, Sendable, CaseIterable {
    /// Waiting to be sent (possibly after a backoff).
    case pending
    /// Handed to the transport by a drain that is still running (or that crashed: see ``ambiguous``).
    case inflight
    /// The last attempt may or may not have reached PubNub; the next attempt probes before resending.
    case ambiguous
    /// An edit hit a stale eTag (412); waits for the app (retry or discard).
    case conflict
    /// Refused for good (4xx, or too many server failures); waits for the app (retry or discard).
    case dead
}

/// How the last failed attempt failed.
public enum OutboxErrorClass: String, Codable, Sendable {
    /// The request never left the device (offline, connection refused).
    case notSent
    /// The request may have been applied (timeout, connection lost after sending, crash while in flight).
    case outcomeUnknown
    /// HTTP 429: the server asked to wait.
    case rateLimited
    /// HTTP 5xx.
    case server
    /// HTTP 4xx that resending cannot fix (400, 401, 403, 404, 413, ...).
    case rejected
    /// HTTP 412: the object changed on the server since the local edit's base.
    case conflict
    /// Anything else (an undecodable answer, an invalid op).
    case other
    /// Access Manager: the token expired or was refused, or does not grant the op. A live op of
    /// this class waits for a new token (``OutboxEntry/waitsForToken``); a dead one was refused
    /// under a token that arrived after it first waited (`docs/access.md`).
    case accessDenied
    /// The keyset or the configuration refuses the op whatever the token (DataSync: not enabled
    /// on the keyset, Access Manager off, no credential, a class that does not fit:
    /// `docs/datasync.md`, "Errors"). The op stays pending and is tried again every few minutes;
    /// it never becomes a dead letter for this alone.
    case configuration
}

/// The row form of an ``OutboxOperation`` (the `outbox.payload` column): which fields are set
/// depends on the kind. Only the store reads and writes it; code that handles ops uses
/// ``OutboxEntry/operation``.
struct OutboxPayload: Codable, Sendable, Hashable {
    /// The channel (sends, reactions, memberships, channel edits).
    var channel: String?
    /// The user (memberships, user edits).
    var user: String?
    /// The message's own id (sends, reactions).
    var messageId: String?
    /// The message's timetoken when it was known at enqueue time (reactions).
    var messageTimetoken: Timetoken?
    /// The action's timetoken when known (reaction removals).
    var actionTimetoken: Timetoken?
    /// The action type (reactions).
    var actionType: String?
    /// The action value (reactions).
    var actionValue: String?
    /// The thread's parent channel (mention events of a message in a thread).
    var parentChannel: String?
    /// The publish body (sends): the message payload with its `id`.
    var message: JSONValue?
    /// The publish `meta` (sends): the app's meta plus `pnr_op`, the op id.
    var meta: JSONValue?
    /// The publish's `custom_message_type` (sends), when it has one.
    var customMessageType: String?
    /// Changed fields by wire name (edits and membership sets); a JSON `null` clears a field.
    var fields: [String: JSONValue]?
    /// How a send with files publishes them (``FileShape``'s raw value); nil for a send without files.
    var fileShape: String?
    /// Set by `retry` on a conflicted edit: the next attempt fetches the server's eTag and resends over it.
    var rebase: Bool?
    /// A hard delete that leaves the message's files on PubNub (the Chat SDK's `preserveFiles`).
    var preserveFiles: Bool?

    /// An empty payload.
    init() {}

    /// The payload as its column holds it: the fields that are set, by name (what `Codable`
    /// writes), for the fast JSON writer.
    var jsonValue: JSONValue {
        var object: [String: JSONValue] = [:]
        object["channel"] = channel.map(JSONValue.string)
        object["user"] = user.map(JSONValue.string)
        object["messageId"] = messageId.map(JSONValue.string)
        object["messageTimetoken"] = messageTimetoken.map { .string($0.description) }
        object["actionTimetoken"] = actionTimetoken.map { .string($0.description) }
        object["actionType"] = actionType.map(JSONValue.string)
        object["actionValue"] = actionValue.map(JSONValue.string)
        object["parentChannel"] = parentChannel.map(JSONValue.string)
        object["message"] = message
        object["meta"] = meta
        object["customMessageType"] = customMessageType.map(JSONValue.string)
        object["fileShape"] = fileShape.map(JSONValue.string)
        object["fields"] = fields.map(JSONValue.object)
        object["rebase"] = rebase.map(JSONValue.bool)
        object["preserveFiles"] = preserveFiles.map(JSONValue.bool)
        return .object(object)
    }

    /// Reads the column's parsed JSON as `Codable` would, or nil when a field is not as expected
    /// (then `JSONDecoder` decodes it, or names what is wrong).
    init?(json: JSONValue) {
        guard case .object(let object) = json else { return nil }
        func string(_ key: String) -> String?? {
            switch object[key] {
            case nil, .null?: .some(nil)
            case .string(let value)?: .some(value)
            default: nil
            }
        }
        func timetoken(_ key: String) -> Timetoken?? {
            switch object[key] {
            case nil, .null?: return .some(nil)
            case .string(let text)?: return (try? Timetoken(parsing: text)).map { .some($0) }
            case .int(let value)?: return UInt64(exactly: value).map { .some(Timetoken(rawValue: $0)) }
            default: return nil
            }
        }
        guard let channel = string("channel"), let user = string("user"), let messageId = string("messageId"),
              let messageTimetoken = timetoken("messageTimetoken"), let actionTimetoken = timetoken("actionTimetoken"),
              let actionType = string("actionType"), let actionValue = string("actionValue"),
              let parentChannel = string("parentChannel"), let customMessageType = string("customMessageType"),
              let fileShape = string("fileShape")
        else { return nil }
        self.customMessageType = customMessageType
        self.fileShape = fileShape
        self.channel = channel
        self.user = user
        self.messageId = messageId
        self.messageTimetoken = messageTimetoken
        self.actionTimetoken = actionTimetoken
        self.actionType = actionType
        self.actionValue = actionValue
        self.parentChannel = parentChannel
        message = object["message"].flatMap { $0 == .null ? JSONValue?.none : $0 }
        meta = object["meta"].flatMap { $0 == .null ? JSONValue?.none : $0 }
        switch object["fields"] {
        case nil, .null?: fields = nil
        case .object(let value)?: fields = value
        default: return nil
        }
        switch object["rebase"] {
        case nil, .null?: rebase = nil
        case .bool(let value)?: rebase = value
        default: return nil
        }
        switch object["preserveFiles"] {
        case nil, .null?: preserveFiles = nil
        case .bool(let value)?: preserveFiles = value
        default: return nil
        }
    }
}

/// The last failure of an op, kept until it succeeds or is discarded.
public struct OutboxFailure: Codable, Sendable, Hashable, CustomStringConvertible {
    /// The error class.
    public var errorClass: OutboxErrorClass
    /// The HTTP status, when there was an answer.
    public var httpStatus: Int?
    /// The server's message or the transport's reason.
    public var message: String
    /// For ``OutboxErrorClass/accessDenied``: the fingerprint of the Access Manager token it was
    /// refused under (a short hash, never the token; "none" without one). A later refusal under
    /// the same token leaves the op waiting; under another, it is a dead letter (`docs/access.md`).
    public var token: String?

    /// A failure record.
    public init(errorClass: OutboxErrorClass, httpStatus: Int? = nil, message: String, token: String? = nil) {
        self.errorClass = errorClass
        self.httpStatus = httpStatus
        self.message = message
        self.token = token
    }

    /// `class (HTTP n): message`.
    public var description: String {
        "\(errorClass.rawValue)\(httpStatus.map { " (HTTP \($0))" } ?? ""): \(message)"
    }
}

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
        state != .dead && state != .conflict && lastFailure?.errorClass == .accessDenied
            && (nextAttemptAt.map { $0 >= Self.tokenWaitMarker } ?? false)
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
        if let errorClass = (row[15] as String?).flatMap(OutboxErrorClass.init(rawValue:)) {
            lastFailure = OutboxFailure(errorClass: errorClass, httpStatus: row[16], message: row[17] ?? "", token: row[21])
        }
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

extension Date {
    /// A date from milliseconds since 1970.
    package init(milliseconds: Int64) { self.init(timeIntervalSince1970: Double(milliseconds) / 1000) }
    /// Milliseconds since 1970, rounded; a date too far out for 64 bits (or not finite) is
    /// clamped, so a retry time computed from a server's answer can always be stored.
    package var milliseconds: Int64 {
        let value = (timeIntervalSince1970 * 1000).rounded()
        guard !value.isNaN else { return 0 }
        return Int64(exactly: value) ?? (value > 0 ? .max : .min)
    }
}

extension ChatQueries {
    /// Every outbox op in enqueue order, with its state and last failure (dead letters and
    /// conflicts included: they stay until the app retries or discards them).
    public func outbox() -> StoreQuery<[OutboxEntry]> {
        StoreQuery { db in try OutboxEntry.fetchAll(db) }
    }

    /// How many ops are in each state (states with none are absent): what a sync status shows,
    /// read with one grouped count instead of every op.
    public func outboxCounts() -> StoreQuery<[OutboxState: Int]> {
        StoreQuery { db in
            var counts: [OutboxState: Int] = [:]
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT state, count(*) FROM outbox GROUP BY state")) {
                if let state = OutboxState(rawValue: row[0]) { counts[state] = row[1] }
            }
            return counts
        }
    }

    /// One page of the outbox in enqueue order: at most `limit` ops after sequence number
    /// `afterSeq` (nil: from the first). Pass the last op's ``OutboxEntry/seq`` for the next page;
    /// a page shorter than `limit` is the last. Reads a large outbox in bounded memory.
    public func outbox(afterSeq: Int64?, limit: Int) -> StoreQuery<[OutboxEntry]> {
        StoreQuery { db in try OutboxEntry.fetchAll(db, where: "seq > ?", arguments: [afterSeq ?? Int64.min], limit: max(1, limit)) }
    }

    /// The newest failure of an op waiting on the keyset's configuration (error class
    /// ``OutboxErrorClass/configuration``: DataSync not enabled, Access Manager off, no
    /// credential), or nil when none waits so. Such ops stay pending and are tried again every
    /// few minutes; this is what a status shows meanwhile. Read through a partial index
    /// (migration 0013): cheap whatever the outbox's size.
    public func outboxConfigurationProblem() -> StoreQuery<String?> {
        StoreQuery { db in try String.fetchOne(db.cachedStatement(sql: OutboxReads.configurationProblem)) }
    }

    /// How many ops the outbox holds, whatever their state.
    public func outboxCount() -> StoreQuery<Int> {
        StoreQuery { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM outbox") ?? 0 }
    }

    /// The states of the ops among `ids` that are still in the outbox.
    public func outboxStates(ids: some Collection<String>) -> StoreQuery<[String: OutboxState]> {
        let ids = Array(ids)
        return StoreQuery { db in
            guard !ids.isEmpty else { return [:] }
            let rows = try Row.fetchAll(
                db, sql: "SELECT op_id, state FROM outbox WHERE op_id IN (\(databaseQuestionMarks(count: ids.count)))",
                arguments: StatementArguments(ids))
            let states = rows.compactMap { row in OutboxState(rawValue: row[1]).map { (row[0] as String, $0) } }
            return Dictionary(states, uniquingKeysWith: { a, _ in a })
        }
    }

    /// The outbox op with `id`, or nil.
    public func outboxEntry(id: String) -> StoreQuery<OutboxEntry?> {
        StoreQuery { db in try OutboxEntry.fetchAll(db, where: "op_id = ?", arguments: [id]).first }
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

/// SQL of the outbox's reads whose plan matters (`ChatQueryPlanTests` explains them).
enum OutboxReads {
    /// The newest failure of an op waiting on the configuration. `INDEXED BY` the partial index:
    /// left to itself, SQLite's planner walks `outbox_ready` through every pending op (21 ms at
    /// 20,000 ops, read at each outbox count; `pnreplicate --dry-run`'s first line came 50 ms
    /// later at 100,000).
    static let configurationProblem = """
        SELECT last_error FROM outbox INDEXED BY outbox_configuration
        WHERE last_error_class = 'configuration' AND state IN ('pending', 'ambiguous', 'inflight')
        ORDER BY updated_at DESC LIMIT 1
        """
}
