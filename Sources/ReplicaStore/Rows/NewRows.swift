import Foundation
import GRDB
import ReplicaModel

/// New message rows made before the transaction that inserts them (a batch send prepares them
/// while the batch before it is written): every column's value but the local send order, which
/// the transaction gives (`StoreTransaction.insert(newMessages:)`).
package struct NewMessageRows<Custom: ChatCustomData>: Sendable {
    /// Every row's values in ``MultiRowInsert/messages``' column order, one row after another;
    /// each row's local sequence is a placeholder.
    let values: [DatabaseValue]

    /// The rows of new pending messages, as ``StoreTransaction/insert(newMessage:)`` would store
    /// each: a message of a hidden channel has none. Throws what storing them would throw for an
    /// invalid id.
    package init(_ messages: [ChatMessage<Custom.Message>]) throws {
        try self.init(messages, coding: StoreCoding())
    }

    /// ``init(_:)`` with a transaction's coder (its own single inserts make no new one).
    init(_ messages: [ChatMessage<Custom.Message>], coding: StoreCoding) throws {
        var values: [DatabaseValue] = []
        values.reserveCapacity(messages.count * MultiRowInsert.messages.parameters)
        for message in messages {
            _ = try RowUpserts<Custom>.appendRow(of: message, localSequence: 0, coding: coding, to: &values)
        }
        self.values = values
    }

    /// How many rows.
    package var count: Int { values.count / MultiRowInsert.messages.parameters }

    /// The rows' message ids, in order (for an error).
    var ids: [String] {
        stride(from: MessageColumn.id.rawValue, to: values.count, by: MultiRowInsert.messages.parameters).map {
            String.fromDatabaseValue(values[$0]) ?? ""
        }
    }
}

/// New pending op rows made before the transaction that inserts them (a batch send's publishes):
/// every column's value but the op's sequence number, which ``OutboxTable/insertOps(_:)``
/// gives. The one owner of an op row's inserted values.
package struct NewOpRows: Sendable {
    /// Every row's values in ``MultiRowInsert/outboxOps``' column order, one row after another;
    /// each row's sequence number is a placeholder.
    private(set) var values: [DatabaseValue]
    /// When the ops were queued, in milliseconds (their `created_at` and `updated_at`).
    private let milliseconds: DatabaseValue

    /// The sequence number's column in a row.
    static let seqColumn = 1

    /// The rows of `ops`, queued at `now`; a payload not encoded yet (``NewOutboxRow/encodePayload()``)
    /// is encoded here.
    package init(_ ops: [(row: NewOutboxRow, id: String)], now: Date) throws {
        try self.init(ops, now: now, coding: StoreCoding())
    }

    /// ``init(_:now:)`` with a transaction's coder (its own single inserts make no new one).
    init(_ ops: [(row: NewOutboxRow, id: String)], now: Date, coding: StoreCoding) throws {
        milliseconds = now.milliseconds.databaseValue
        values = []
        values.reserveCapacity(ops.count * MultiRowInsert.outboxOps.parameters)
        for (row, id) in ops { try Self.append(row, id: id, milliseconds: milliseconds, coding: coding, to: &values) }
    }

    /// How many rows.
    package var count: Int { values.count / MultiRowInsert.outboxOps.parameters }

    /// Replaces the row at `index` (a send prepared again inside its transaction, with the
    /// store's push keys).
    package mutating func replace(at index: Int, with row: NewOutboxRow, id: String) throws {
        var one: [DatabaseValue] = []
        try Self.append(row, id: id, milliseconds: milliseconds, coding: StoreCoding(), to: &one)
        let width = MultiRowInsert.outboxOps.parameters
        values.replaceSubrange(index * width..<(index + 1) * width, with: one)
    }

    /// One op's values, in ``MultiRowInsert/outboxOps``' column order.
    private static func append(
        _ row: NewOutboxRow, id: String, milliseconds: DatabaseValue, coding: StoreCoding, to values: inout [DatabaseValue]
    ) throws {
        values.append(id.databaseValue)
        values.append(0.databaseValue)  // the sequence number (``seqColumn``), given at insert
        values.append(row.operation.kind.rawValue.databaseValue)
        values.append(row.lane.databaseValue)
        values.append(row.target.databaseValue)
        values.append(try (row.encodedPayload ?? coding.json(row.operation.payload(rebase: false))).databaseValue)
        values.append(row.baseETag.databaseValue)
        values.append(row.baseUpdated.databaseValue)
        values.append(row.baseSnapshot.databaseValue)
        values.append(row.dependsOn.databaseValue)
        values.append(milliseconds)
        values.append(milliseconds)
    }
}
