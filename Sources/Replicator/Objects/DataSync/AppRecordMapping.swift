import Foundation
import PubNubWire
import ReplicaModel

/// How a DataSync record of an app's own class becomes an ``ReplicaModel/AppRecord``: the one
/// owner of that mapping, for pages, write answers and live events alike (`docs/app-data.md`).
///
/// A list answer carries each record's class; an event does not, and some answers leave it out
/// (a record listed under `entity_class=Poll`): the caller names it from what it asked for or
/// from the event's metadata. Without a class, or without a version, there is no record.
extension AppRecord {
    /// The record `row` describes, of `kind`; `className` and `classVersion` fill what the row
    /// leaves out (the row's own win). Nil when neither names the class, or neither its version.
    ///
    /// ```swift
    /// let page = try await client.dataSync.list(.entities, query)
    /// let records = page.data.compactMap { AppRecord(row: $0, kind: .entity, className: "Poll") }
    /// ```
    package init?(row: DataSyncRow, kind: Kind, className: String? = nil, classVersion: Int? = nil) {
        guard let name = row.className ?? className, let version = row.classVersion ?? classVersion else { return nil }
        self.init(
            kind: kind, id: row.id, className: name, classVersion: version, status: row.status,
            payload: row.payload ?? [:], eTag: row.eTag, createdAt: row.createdAt, updatedAt: row.updatedAt,
            expiresAt: row.expiresAt, endA: kind == .relationship ? row.entityAId : nil, endB: kind == .relationship ? row.entityBId : nil)
    }

    /// The DataSync resource records of `kind` live under: `entities` or `relationships`.
    package static func resource(_ kind: Kind) -> DataSyncResource { kind == .entity ? .entities : .relationships }
}
