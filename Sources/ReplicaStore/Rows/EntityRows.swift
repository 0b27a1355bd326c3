import Foundation
import GRDB
import ReplicaModel

/// A user's or channel's row, derived from its field table (``ReplicatedEntity/fields``): the
/// columns written are `id`, each field's column in the table's order, the table's derived
/// columns, then `updated`, `updated_ns` and `etag`; the columns read are the same without the
/// derived ones and `updated_ns`. The upsert, its arguments, the select list and the row reader
/// all come from here, so a field declared once is stored and read back without more code.
package struct EntityRows<Entity: ReplicatedEntity> {
    /// The table.
    let table: String
    /// How its id is named in a validation error (`user.id`).
    let idField: String
    /// Columns stored beside the fields, computed from the entity (a channel's `avatar_url`,
    /// from its custom data), written only.
    let derived: [(column: String, value: @Sendable (Entity) -> String?)]

    /// Every column an upsert writes, in argument order.
    var writtenColumns: [String] {
        ["id"] + Entity.fields.map(\.column) + derived.map(\.column) + ["updated", "updated_ns", "etag"] + MetadataColumns.written
    }

    /// The upsert: a row newer by the version rule replaces the stored one; with `force`, any row does.
    func upsertSQL(force: Bool) -> String {
        let columns = writtenColumns
        let updates = columns.dropFirst().map { MetadataColumns.update($0, table: table) }.joined(separator: ", ")
        return """
            INSERT INTO \(table) (\(columns.joined(separator: ", ")))
            VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))
            ON CONFLICT(id) DO UPDATE SET \(updates)
            \(force ? "" : "WHERE " + VersionDecision.sqlApplies(table: table))
            """
    }

    /// The upsert's arguments for `entity`, in ``writtenColumns`` order.
    func arguments(_ entity: Entity, coding: StoreCoding) throws -> StatementArguments {
        var values: [(any DatabaseValueConvertible)?] = [entity.id]
        values += try entity.columnValues(coding: coding)
        for column in derived { values.append(column.value(entity)) }
        values += [entity.updated?.description, entity.updated?.nanoseconds, entity.eTag]
        values += MetadataColumns.values(entity.metadata)
        return StatementArguments(values)
    }

    /// The select list of a row aliased `alias`, in the order ``read(_:at:coding:)`` reads.
    func selectList(_ alias: String) -> String {
        (["id"] + Entity.fields.map(\.column) + ["updated", "etag"] + MetadataColumns.read).map { "\(alias).\($0)" }
            .joined(separator: ", ")
    }

    /// How many columns ``selectList(_:)`` selects.
    var selectCount: Int { Entity.fields.count + 3 + MetadataColumns.read.count }

    /// Reads the entity from `row`, starting at column `i` of a ``selectList(_:)``. A stored
    /// value the entity refuses (an invalid id, unreadable custom JSON or timestamp) is
    /// ``StoreError/corruptValue(table:column:key:message:)``.
    func read(_ row: Row, at i: Int, coding: StoreCoding) throws -> Entity {
        let id: String = row[i]
        var entity: Entity
        do {
            entity = try Entity.placeholder(id: id)
        } catch let error as ModelValidationError {
            throw StoreError.corruptValue(table: table, column: "id", key: id, message: error.description)
        }
        try entity.readColumns(row, at: i + 1, coding: coding, table: table, key: id)
        let after = i + 1 + Entity.fields.count
        entity.updated = try StoreCoding.timestamp(row[after], table: table, column: "updated", key: id)
        entity.eTag = row[after + 1]
        entity.metadata = try MetadataColumns.metadata(row, at: after + 2, table: table, key: id)
        return entity
    }
}

/// The columns of ``ReplicaModel/ObjectMetadata`` (migration 0014), the same on users, channels
/// and members: written after the version, read after the eTag. An upsert that carries none
/// (an App Context object, a write answer without them) keeps what the row holds.
enum MetadataColumns {
    /// Written, in argument order.
    static let written = ["expires_at", "expires_ns", "class_name", "class_version", "backend_id"]
    /// Read, in ``metadata(_:at:table:key:)`` order.
    static let read = ["expires_at", "class_name", "class_version", "backend_id"]

    /// The `SET` term of `column` in an upsert into `table`: a metadata column keeps its stored
    /// value when the incoming one is NULL.
    static func update(_ column: String, table: String) -> String {
        written.contains(column) ? "\(column) = coalesce(excluded.\(column), \(table).\(column))" : "\(column) = excluded.\(column)"
    }

    /// The values of ``written``.
    static func values(_ metadata: ObjectMetadata?) -> [(any DatabaseValueConvertible)?] {
        [metadata?.expiresAt?.description, metadata?.expiresAt?.nanoseconds, metadata?.className, metadata?.classVersion,
         metadata?.backendId]
    }

    /// Writes `metadata` over the row of `key` in `table` when it holds the version `eTag`: an
    /// upsert the version rule left unchanged (the same eTag came again) still takes the server's
    /// metadata, so a row stored without it (from a live event, a conflict's server version, a
    /// store older than migration 0014) gets it from the next listing, and an `expiresAt` the
    /// server moved is taken.
    static func refresh(_ metadata: ObjectMetadata, table: String, key: KeyValuePairs<String, String>, eTag: String?, in db: Database) throws {
        guard let eTag else { return }
        let assignments = zip(written, values(metadata)).filter { $0.1 != nil }
        guard !assignments.isEmpty else { return }
        let sql = "UPDATE \(table) SET \(assignments.map { "\($0.0) = ?" }.joined(separator: ", ")) WHERE "
            + key.map { "\($0.key) = ?" }.joined(separator: " AND ") + " AND etag = ?"
        var arguments: [(any DatabaseValueConvertible)?] = assignments.map(\.1)
        for (_, value) in key { arguments.append(value) }
        arguments.append(eTag)
        try db.cachedStatement(sql: sql).execute(arguments: StatementArguments(arguments))
    }

    /// Makes the row of `id` in `table` a bare one, as a row made for an object known only by its
    /// id (its fields, version and metadata cleared; `type` the default): what the expiry sweep
    /// leaves of a user or channel whose memberships are still stored, since deleting the row would
    /// delete them.
    static func demoteToBare<Entity: ReplicatedEntity>(_ rows: EntityRows<Entity>, id: String, in db: Database) throws {
        let cleared = Entity.fields.map(\.column).filter { $0 != "type" } + rows.derived.map(\.column)
            + ["updated", "updated_ns", "etag"] + written
        let sql = "UPDATE \(rows.table) SET type = ?, \(cleared.map { "\($0) = NULL" }.joined(separator: ", ")) WHERE id = ?"
        try db.cachedStatement(sql: sql).execute(arguments: [FieldSchema.defaultType, id])
    }

    /// The metadata of `row`'s columns `i...` (``read``), nil when all are NULL.
    static func metadata(_ row: Row, at i: Int, table: String, key: String) throws -> ObjectMetadata? {
        let metadata = ObjectMetadata(
            backendId: row[i + 3], className: row[i + 1], classVersion: row[i + 2],
            expiresAt: try StoreCoding.timestamp(row[i], table: table, column: "expires_at", key: key))
        return metadata.isEmpty ? nil : metadata
    }
}

/// The users table's row (``EntityRows``); its SQL does not depend on the custom type.
enum UserRows {
    static func rows<C: CustomData>(_: C.Type = C.self) -> EntityRows<ChatUser<C>> {
        EntityRows(table: "users", idField: "user.id", derived: [])
    }
    static let upsert = rows(JSONValue.self).upsertSQL(force: false)
    static let forceUpsert = rows(JSONValue.self).upsertSQL(force: true)
    static let count = rows(JSONValue.self).selectCount
    static func select(_ alias: String) -> String { rows(JSONValue.self).selectList(alias) }
}

/// The channels table's row (``EntityRows``): its fields and `avatar_url`, the avatar kept in
/// custom data, stored for queries.
enum ChannelRows {
    static func rows<C: CustomData>(_: C.Type = C.self) -> EntityRows<ChatChannel<C>> {
        EntityRows(table: "channels", idField: "channel.id", derived: [("avatar_url", { $0.avatarURLString })])
    }
    static let upsert = rows(JSONValue.self).upsertSQL(force: false)
    static let forceUpsert = rows(JSONValue.self).upsertSQL(force: true)
    static let count = rows(JSONValue.self).selectCount
    static func select(_ alias: String) -> String { rows(JSONValue.self).selectList(alias) }
}

extension ReplicatedFields {
    /// Its fields' column values, in field-table order (custom data as JSON).
    func columnValues(coding: StoreCoding) throws -> [(any DatabaseValueConvertible)?] {
        try Self.fields.map { field in
            field.isCustom ? try coding.json(self[keyPath: Self.customField]) : field.text(of: self)
        }
    }

    /// Reads its fields from `row`'s columns `i...`, in field-table order. Unreadable custom
    /// JSON is ``StoreError/corruptValue(table:column:key:message:)`` naming `table` and `key`.
    mutating func readColumns(_ row: Row, at i: Int, coding: StoreCoding, table: String, key: String) throws {
        for (offset, field) in Self.fields.enumerated() {
            if field.isCustom {
                self[keyPath: Self.customField] = try coding.decode(
                    CustomFields.self, row[i + offset], table: table, column: field.column, key: key)
            } else {
                field.setText(row[i + offset], on: &self)
            }
        }
    }
}

/// A user or channel as the store keeps it: its row and the upsert statements (built once).
/// Code of the package writes either one through ``StoreTransaction/upsert(_:force:)`` and
/// ``StoreTransaction/delete(_:id:)``.
package protocol StoredEntity: ReplicatedEntity, Codable {
    /// Its row.
    static var rows: EntityRows<Self> { get }
    /// The upsert under the version rule.
    static var upsertSQL: String { get }
    /// The upsert that writes whatever the stored version.
    static var forceUpsertSQL: String { get }
}

extension ChatUser: StoredEntity {
    package static var rows: EntityRows<Self> { UserRows.rows(Custom.self) }
    package static var upsertSQL: String { UserRows.upsert }
    package static var forceUpsertSQL: String { UserRows.forceUpsert }
}

extension ChatChannel: StoredEntity {
    package static var rows: EntityRows<Self> { ChannelRows.rows(Custom.self) }
    package static var upsertSQL: String { ChannelRows.upsert }
    package static var forceUpsertSQL: String { ChannelRows.forceUpsert }
}
