import Foundation
import PubNubWire
import ReplicaModel

/// The listing of one app-data class on DataSync (`docs/app-data.md`, "Pulls"): the records of
/// the class the sync rule keeps, every version, changed at or after `since` (oldest change
/// first), 100 a page. The one place an app-data listing is built and sent.
enum DataSyncAppRecords {
    /// The query of a page: `entity_class` (or `relationship_class`), the rule and `updatedAt >=`
    /// as one `filter_fast` conjunction, sorted by `updatedAt` so that the newest change read is
    /// the next pull's checkpoint.
    ///
    /// ```swift
    /// // filter_fast=closed == false && updatedAt >= "2026-12-03T07:00:00.000000Z"&sort=updatedAt
    /// DataSyncAppRecords.query(poll, since: checkpoint, cursor: nil)
    /// ```
    static func query(_ type: AppClass, since: ISOTimestamp?, cursor: String?, limit: Int = 100) -> DataSyncListQuery {
        var query = DataSyncListQuery()
        query.className = type.name
        query.limit = limit
        query.cursor = cursor
        let terms = [type.rule.filterFast, since.map { #"updatedAt >= "\#($0.description)""# }].compactMap { $0 }
        query.filterFast = terms.isEmpty ? nil : terms.joined(separator: " && ")
        query.sort = ["updatedAt"]
        return query
    }

    /// One page of the class's listing, as records (rows without a class take the listed one;
    /// a row the mapping cannot read is skipped with its reason).
    static func page(
        _ type: AppClass, since: ISOTimestamp?, cursor: String?, limit: Int, client: PubNubClient
    ) async throws(WireError) -> ObjectBatch<DataSyncRow> {
        let page = try await client.dataSync.list(AppRecord.resource(type.recordKind), query(type, since: since, cursor: cursor, limit: limit))
        return ObjectBatch(items: page.data, skipped: page.skipped, next: page.next)
    }
}
