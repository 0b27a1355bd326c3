import Foundation
import GRDB
import ReplicaModel

/// A message's stored columns, declared once, as users, channels and memberships declare their
/// fields (`EntityField`): the upsert's SQL (its insert list, the conflict rule of each column
/// and the "changed" condition), the values it binds, the select list and the row reading all
/// come from these cases, in this order.
///
/// A new stored message field is a case here (its column, its conflict rule, its value and its
/// reading: the compiler names each switch), a migration adding the column, and the model's
/// property; nothing else in the store spells it.
///
/// ```swift
/// MessageColumn.customMessageType.name        // "custom_message_type"
/// MessageColumn.customMessageType.onConflict  // .keepStored: a version without one keeps it
/// ```
enum MessageColumn: Int, CaseIterable, Sendable {
    case id, channelId, userId, text, contentType, content, custom, createdAt, timetoken, delivery
    case meta, customMessageType, files
    /// The local send order (``StoreTransaction/upsert(message:)``): written, never read back into
    /// a message. Last, so that every read column's index in a row is its raw value.
    case localSequence

    /// What an upsert of a message already stored does with a column.
    enum ConflictRule: Sendable {
        /// The key the upsert conflicts on.
        case key
        /// Set when the row is inserted, never changed by an upsert (a message does not move).
        case insertOnly
        /// The new version's value replaces the stored one.
        case replace
        /// The new version's value, unless it has none: the stored one stays (a timetoken is never
        /// erased by a version without one; a history page without `meta` keeps the publish's).
        case keepStored
        /// `sent` once either version has a timetoken, else the new version's state.
        case deliveryState
    }

    /// The column in the `messages` table.
    var name: String {
        switch self {
        case .id: "id"
        case .channelId: "channel_id"
        case .userId: "user_id"
        case .text: "text"
        case .contentType: "content_type"
        case .content: "content"
        case .custom: "custom"
        case .createdAt: "created_at"
        case .timetoken: "timetoken"
        case .delivery: "delivery"
        case .meta: "meta"
        case .customMessageType: "custom_message_type"
        case .files: "files"
        case .localSequence: "local_seq"
        }
    }

    /// What an upsert does with this column when the message is stored already.
    var onConflict: ConflictRule {
        switch self {
        case .id: .key
        case .channelId, .userId, .localSequence: .insertOnly
        case .text, .contentType, .content, .custom, .createdAt: .replace
        case .timetoken, .meta, .customMessageType, .files: .keepStored
        case .delivery: .deliveryState
        }
    }

    /// Whether a read returns this column into the message.
    var isRead: Bool { self != .localSequence }

    /// The values an upsert binds, one per column in order. `timetoken` and `delivery` are the
    /// row's, as the upsert settled them (a timetoken in SQLite's range; `sent` once there is one).
    static func values<C: CustomData>(
        of message: ChatMessage<C>, timetoken: Int64?, delivery: DeliveryState, localSequence: Int64, coding: StoreCoding
    ) throws -> [DatabaseValue] {
        var values: [DatabaseValue] = []
        values.reserveCapacity(all.count)
        try append(message, timetoken: timetoken, delivery: delivery, localSequence: localSequence, coding: coding, to: &values)
        return values
    }

    /// ``values(of:timetoken:delivery:localSequence:coding:)`` appended to `values` (a batch's
    /// rows, one after another: ``NewMessageRows``). One loop over the columns in one function:
    /// the ingest path pays no call per column.
    static func append<C: CustomData>(
        _ message: ChatMessage<C>, timetoken: Int64?, delivery: DeliveryState, localSequence: Int64, coding: StoreCoding,
        to values: inout [DatabaseValue]
    ) throws {
        for column in all {
            switch column {
            case .id: values.append(message.id.databaseValue)
            case .channelId: values.append(message.channelId.databaseValue)
            case .userId: values.append(message.userId.databaseValue)
            case .text: values.append(message.text.databaseValue)
            case .contentType: values.append(message.contentType.databaseValue)
            case .content: values.append(try coding.json(message.content).databaseValue)
            case .custom: values.append(try coding.json(message.custom).databaseValue)
            case .createdAt: values.append(message.createdAt.description.databaseValue)
            case .timetoken: values.append(timetoken.databaseValue)
            case .delivery: values.append(delivery.rawValue.databaseValue)
            case .meta: values.append(try coding.json(message.meta).databaseValue)
            case .customMessageType: values.append(message.customMessageType.databaseValue)
            case .files: values.append(try coding.json(message.files.isEmpty ? nil : message.files).databaseValue)
            case .localSequence: values.append(localSequence.databaseValue)
            }
        }
    }

    /// Reads this column of `row` (at its raw value) into `message`. The columns a message is
    /// made from (``MessageColumn/isInitial``) are read by ``StoreCoding/message(_:)`` itself.
    func read<C: CustomData>(_ row: Row, into message: inout ChatMessage<C>, coding: StoreCoding) throws {
        switch self {
        case .meta: message.meta = try coding.decode(JSONValue.self, row[rawValue], table: "messages", column: name, key: message.id)
        case .customMessageType: message.customMessageType = row[rawValue]
        case .files:
            message.files = try coding.decode([ChatFile].self, row[rawValue], table: "messages", column: name, key: message.id) ?? []
        case .id, .channelId, .userId, .text, .contentType, .content, .custom, .createdAt, .timetoken, .delivery, .localSequence:
            break
        }
    }

    /// Whether the message is made from this column (its initializer's arguments), rather than
    /// given it afterwards by ``read(_:into:coding:)``.
    var isInitial: Bool {
        switch self {
        case .id, .channelId, .userId, .text, .contentType, .content, .custom, .createdAt, .timetoken, .delivery: true
        case .meta, .customMessageType, .files, .localSequence: false
        }
    }

    /// Every column, in order (`allCases`, made once rather than per row).
    static let all = allCases

    /// The columns read after the message is made.
    static let readAfterward = allCases.filter { $0.isRead && !$0.isInitial }

    /// How many stored columns a read selects; the ``Computed`` ones follow.
    static let readCount = allCases.filter(\.isRead).count

    /// What the store computes for a message besides its columns (``ChatSemantics``), selected
    /// after them in this order: a computed column's index in a row is ``readCount`` plus its raw value.
    enum Computed: Int, CaseIterable {
        /// The newest edit's text.
        case editedText
        /// Whether the message is soft-deleted.
        case isDeleted
        /// Whether its author is muted.
        case isFromMutedUser
        /// Whether it has a thread.
        case hasThread

        /// The SQL expression that computes it.
        var sql: String {
            switch self {
            case .editedText: ChatSemantics.editedTextColumn
            case .isDeleted: ChatSemantics.isDeletedColumn
            case .isFromMutedUser: ChatSemantics.isFromMutedUserColumn
            case .hasThread: ChatSemantics.hasThreadColumn
            }
        }

        /// Its index in a row selected with ``MessageColumn/selectList``.
        var index: Int { MessageColumn.readCount + rawValue }
    }

    /// The select list of a message (`msg` must alias `messages`): its stored columns, then
    /// the ``Computed`` ones.
    static let selectList = (allCases.filter(\.isRead).map { "msg.\($0.name)" } + Computed.allCases.map(\.sql))
        .joined(separator: ", ")

    /// The upsert of a message by id, with each column's ``onConflict`` rule; an unchanged row is
    /// not written (no `UPDATE` when no column would change).
    static let upsertSQL: String = {
        let stored = "messages"
        let sentOrNew = "CASE WHEN coalesce(excluded.timetoken, \(stored).timetoken) IS NOT NULL THEN 'sent' ELSE excluded.delivery END"
        var sets: [String] = [], changed: [String] = []
        for column in allCases {
            let name = column.name, new: String
            switch column.onConflict {
            case .key, .insertOnly: continue
            case .replace: new = "excluded.\(name)"
            case .keepStored: new = "coalesce(excluded.\(name), \(stored).\(name))"
            case .deliveryState: new = "(\(sentOrNew))"
            }
            sets.append("\(name) = \(new)")
            changed.append("\(stored).\(name) IS NOT \(new)")
        }
        let key = allCases.filter { $0.onConflict == .key }.map(\.name).joined(separator: ", ")
        return """
            INSERT INTO messages (\(allCases.map(\.name).joined(separator: ", ")))
            VALUES (\(allCases.indices.map { "?\($0 + 1)" }.joined(separator: ", ")))
            ON CONFLICT(\(key)) DO UPDATE SET \(sets.joined(separator: ", "))
            WHERE \(changed.joined(separator: " OR "))
            """
    }()
}
