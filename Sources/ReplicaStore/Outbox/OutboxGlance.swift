import Foundation
import GRDB

/// An outbox op read without its payload: what a diagnostics report and a checkup need of each
/// op (its state, lane, failure and why it waits), and the channel it writes to.
///
/// Decoding every op's payload was most of a report's time on an outbox of 1,000 ops; code that
/// handles ops reads ``OutboxEntry``.
package struct OutboxGlance: Sendable, Hashable, Identifiable {
    /// The op id.
    package var id: String
    /// What kind of op it is.
    package var kind: OutboxKind
    /// The FIFO lane (``OutboxEntry/lane``).
    package var lane: String
    /// The entity the op changes (``OutboxEntry/target``).
    package var target: String
    /// The channel it writes to (``OutboxOperation/channel``), read from the payload in SQL.
    package var channel: String?
    /// An op that must succeed first.
    package var dependsOn: String?
    /// The state.
    package var state: OutboxState
    /// How many times the op was handed to the transport.
    package var attempts: Int
    /// Not before this time.
    package var nextAttemptAt: Date?
    /// The last failure.
    package var lastFailure: OutboxFailure?
    /// When it was enqueued.
    package var createdAt: Date

    /// Whether it waits for a new Access Manager token (``OutboxEntry/waitsForToken``).
    package var waitsForToken: Bool {
        OutboxEntry.waitsForToken(state: state, lastFailure: lastFailure, nextAttemptAt: nextAttemptAt)
    }

    /// Every op in enqueue order, without payloads. A row whose kind or state this version does
    /// not know is a corrupt store, as for ``OutboxEntry``.
    package static func all() -> StoreQuery<[OutboxGlance]> {
        StoreQuery { db in
            try Row.fetchAll(db.cachedStatement(sql: """
                SELECT op_id, kind, lane, target, depends_on, state, attempts, next_attempt_at, last_error_class,
                       last_http_status, last_error, last_error_token, created_at,
                       CASE WHEN json_valid(payload) THEN json_extract(payload, '$.\(OutboxPayload.channelKey)') END
                FROM outbox ORDER BY seq
                """)).map { row in
                let id: String = row[0]
                guard let kind = OutboxKind(rawValue: row[1]) else {
                    throw StoreError.corruptValue(table: "outbox", column: "kind", key: id, message: "unknown kind")
                }
                guard let state = OutboxState(rawValue: row[5]) else {
                    throw StoreError.corruptValue(table: "outbox", column: "state", key: id, message: "unknown state")
                }
                return OutboxGlance(
                    id: id, kind: kind, lane: row[2], target: row[3], channel: row[13], dependsOn: row[4], state: state,
                    attempts: row[6], nextAttemptAt: (row[7] as Int64?).map(Date.init(milliseconds:)),
                    lastFailure: OutboxFailure(row: row, errorClass: 8, httpStatus: 9, message: 10, token: 11),
                    createdAt: Date(milliseconds: row[12]))
            }
        }
    }
}
