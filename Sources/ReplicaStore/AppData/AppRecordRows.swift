import Foundation
import GRDB
import ReplicaModel

extension StoreTransaction {
    /// The app-data records (`app_records`, migration 0019) of this transaction.
    package var appRecords: AppRecordTable<Custom> { AppRecordTable(tx: self) }
}

/// The rows of an app's own DataSync records within one transaction: read one, remove one (with
/// its tombstone). Records are written through ``AppRecordIngest``, which holds the upsert for a
/// whole page.
package struct AppRecordTable<Custom: ChatCustomData>: TransactionTable {
    /// The transaction these rows are read and written in.
    package let tx: StoreTransaction<Custom>

    /// Binds the declared classes (``AppDataCatalog/bind(_:in:)``): called once at each start.
    @discardableResult
    package func bind(_ classes: [AppClass]) throws -> AppDataCatalog.Binding { try AppDataCatalog.bind(classes, in: db) }

    /// Whether any class is bound.
    package func anyBound() throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM app_classes)")) ?? false
    }

    /// Whether class `name` is bound (declared), without reading its declaration.
    package func isBound(_ name: String) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM app_classes WHERE name = ?)"), arguments: [name]) ?? false
    }

    /// Class `name`'s declaration as bound, or nil when it is not declared.
    package func declaration(of name: String) throws -> AppClass? { try AppDataCatalog.declaration(of: name, in: db)?.declaration }

    /// Whether this replica learnt that the record was deleted (its tombstone is kept).
    package func isDeleted(_ kind: AppRecord.Kind, id: String) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM app_tombstones WHERE resource = ? AND id = ?)"),
            arguments: [kind.rawValue, id]) ?? false
    }

    /// The ids of the stored records of class `name`, for its id channels (one index read).
    package func ids(ofClass name: String) throws -> [String] {
        try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM app_records WHERE class_name = ?"), arguments: [name])
    }

    /// The stored record, or nil.
    package func record(_ kind: AppRecord.Kind, id: String) throws -> AppRecord? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT \(AppRecordColumns.select) FROM app_records WHERE resource = ? AND id = ?"),
            arguments: [kind.rawValue, id]
        ).map(AppRecordColumns.read)
    }

    /// Writes `records` as ``AppRecordIngest/apply(_:in:)`` does.
    @discardableResult
    package func apply(_ records: [AppRecord]) throws -> AppRecordIngest.Outcome { try AppRecordIngest.apply(records, in: db) }

    /// Writes `record` as it is, whatever the stored version (no version rule, no tombstone
    /// check): what this device shows while its own write of the record waits in the outbox, and
    /// a server version taken at a conflict. Its class must be bound
    /// (``StoreError/invalidInput(_:)`` otherwise).
    package func put(_ record: AppRecord) throws {
        guard let bound = try AppDataCatalog.declaration(of: record.className, in: db) else {
            throw StoreError.invalidInput("record \(record.className)/\(record.id): class \(record.className) is not declared")
        }
        let values = try AppRecordColumns.values(record) + bound.slots.values(of: record.payload, for: bound.declaration)
        try db.cachedStatement(sql: AppRecordIngest.recordPut).execute(arguments: StatementArguments(values))
    }

    /// Removes the stored record without a tombstone: an optimistic local removal, or a local
    /// create withdrawn (the server never had it, or its own delete will be learnt).
    package func delete(_ kind: AppRecord.Kind, id: String) throws {
        try db.cachedStatement(sql: "DELETE FROM app_records WHERE resource = ? AND id = ?").execute(arguments: [kind.rawValue, id])
    }

    /// Removes a record the server deleted at `deletedAt` (an event's `deletedAt`, or when a
    /// delete this replica made was answered), and leaves a tombstone so that no copy older than
    /// the deletion brings it back. A stored copy written after `deletedAt` is a newer record
    /// with the same id and stays. Returns whether a row went.
    @discardableResult
    package func remove(_ kind: AppRecord.Kind, id: String, className: String, deletedAt: ISOTimestamp) throws -> Bool {
        try db.cachedStatement(sql: """
            DELETE FROM app_records WHERE resource = ? AND id = ? AND (updated_ns IS NULL OR updated_ns <= ?)
            """).execute(arguments: [kind.rawValue, id, deletedAt.nanoseconds])
        let removed = db.changesCount > 0
        try db.cachedStatement(sql: """
            INSERT INTO app_tombstones (resource, id, class_name, deleted_ns) VALUES (?, ?, ?, ?)
            ON CONFLICT(resource, id) DO UPDATE SET deleted_ns = max(deleted_ns, excluded.deleted_ns)
            """).execute(arguments: [kind.rawValue, id, className, deletedAt.nanoseconds])
        return removed
    }

    /// Removes every record whose `expiresAt` has passed at `now` (the server deletes it then,
    /// and promises no event: `docs/datasync.md`, choice 2c), through the expiry index. Returns
    /// the removed records' classes and ids.
    /// Records in `keeping` (ids with a local write still queued) stay.
    package func removeExpired(at now: ISOTimestamp, keeping: Set<String> = []) throws -> [(className: String, id: String)] {
        let expired = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT resource, id, class_name FROM app_records WHERE expires_ns <= ?"),
            arguments: [now.nanoseconds]
        ).filter { !keeping.contains($0[1]) }
        for row in expired {
            try db.cachedStatement(sql: "DELETE FROM app_records WHERE resource = ? AND id = ?").execute(arguments: [row[0] as String, row[1] as String])
        }
        return expired.map { ($0[2], $0[1]) }
    }

    /// After a full listing of class `className`: removes the stored rows it did not list (the
    /// server deleted them while no event could reach this replica) and forgets the tombstones
    /// of records it did not list either (their deletion is confirmed, no older copy is in
    /// flight). Records in `keeping` (ids with a local write still queued) stay. Returns how
    /// many rows went.
    @discardableResult
    package func prune(_ kind: AppRecord.Kind, className: String, listed: Set<String>, keeping: Set<String> = []) throws -> Int {
        let stored = try String.fetchAll(
            db.cachedStatement(sql: "SELECT id FROM app_records WHERE class_name = ?"), arguments: [className])
        var removed = 0
        for id in stored where !listed.contains(id) && !keeping.contains(id) {
            try db.cachedStatement(sql: "DELETE FROM app_records WHERE resource = ? AND id = ?").execute(arguments: [kind.rawValue, id])
            removed += db.changesCount
        }
        let tombstones = try String.fetchAll(
            db.cachedStatement(sql: "SELECT id FROM app_tombstones WHERE class_name = ?"), arguments: [className])
        for id in tombstones where !listed.contains(id) {
            try db.cachedStatement(sql: "DELETE FROM app_tombstones WHERE resource = ? AND id = ?").execute(arguments: [kind.rawValue, id])
        }
        return removed
    }
}

/// Writes pages of app-data records into the store under the version rule
/// (`VersionDecision.sqlApplies`): a record older than the stored one, or with its eTag, changes
/// nothing; one older than its tombstone is not brought back. The pulls, the live events and the
/// benchmark all write through ``apply(_:in:)``.
///
/// Each record's class must be bound (``AppDataCatalog/bind(_:in:)``) and its version declared;
/// the others are left out and counted in ``Outcome/skipped`` (the server may hold classes and
/// versions this replica does not read).
public enum AppRecordIngest {
    /// What one ``apply(_:in:)`` did.
    public struct Outcome: Sendable, Hashable {
        /// Rows that were new.
        public var inserted = 0
        /// Rows that replaced an older version.
        public var updated = 0
        /// Records left as they were (same eTag, older, or older than their tombstone).
        public var unchanged = 0
        /// Records of a class or version not declared, as `Class/id`.
        public var skipped: [String] = []

        /// Adds `other`'s counts and skipped records to these.
        mutating func add(_ other: Outcome) {
            inserted += other.inserted
            updated += other.updated
            unchanged += other.unchanged
            skipped += other.skipped
        }
    }

    /// Binds `classes` in `store` (``AppDataCatalog/bind(_:in:)``, one transaction): what a
    /// replica does at each start with its configuration's classes. For tools and benchmarks that
    /// fill a store without a replica.
    @discardableResult
    public static func bind<Custom: ChatCustomData>(_ classes: [AppClass], in store: ChatStore<Custom>) async throws -> AppDataCatalog.Binding {
        try await store.transaction { tx in try tx.appRecords.bind(classes) }
    }

    /// Writes `records` into `store` as the pulls do: pages of `pageSize` records,
    /// `pagesPerTransaction` pages per transaction, each page through ``apply(_:in:)``. For tools
    /// and benchmarks that fill a store without a replica.
    ///
    /// ```swift
    /// try await AppRecordIngest.bind([poll], in: store)
    /// let outcome = try await AppRecordIngest.load(records, into: store)
    /// ```
    @discardableResult
    public static func load<Custom: ChatCustomData>(
        _ records: [AppRecord], into store: ChatStore<Custom>, pageSize: Int = 100, pagesPerTransaction: Int = 32
    ) async throws -> Outcome {
        var outcome = Outcome()
        let chunk = max(1, pageSize) * max(1, pagesPerTransaction)
        for start in stride(from: 0, to: records.count, by: chunk) {
            let slice = Array(records[start..<min(start + chunk, records.count)])
            let step = max(1, pageSize)
            outcome.add(try await store.transaction { tx in
                var part = Outcome()
                for page in stride(from: 0, to: slice.count, by: step) {
                    part.add(try tx.appRecords.apply(Array(slice[page..<min(page + step, slice.count)])))
                }
                return part
            })
        }
        return outcome
    }

    /// The upsert, one row per execution: 20 parameters in ``AppRecordColumns/written`` order.
    /// One `INSERT … VALUES`: an `INSERT … SELECT` may write many rows, so SQLite would keep a
    /// statement journal (a temporary file of every page it touches) for each execution, which
    /// cost more than the rows (measured: 26 writes a record). Tombstones are read once per call.
    static let recordUpsert = upsert(where: VersionDecision.sqlApplies(table: "app_records"))

    /// The forced write of one row (``AppRecordTable/put(_:)``): the upsert without its version rule.
    static let recordPut = upsert(where: nil)

    /// One row's `INSERT … ON CONFLICT DO UPDATE`, the update only where `condition` holds.
    private static func upsert(where condition: String?) -> String {
        let columns = AppRecordColumns.written
        let updates = columns.dropFirst(2).map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        return """
            INSERT INTO app_records (\(columns.joined(separator: ", ")))
            VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))
            ON CONFLICT(resource, id) DO UPDATE SET \(updates)
            """ + (condition.map { "\nWHERE \($0)" } ?? "")
    }

    /// When each of `records` that has a tombstone was deleted, by kind and id: one indexed read
    /// per 500 records, none when no tombstone is stored.
    static func tombstones(of records: [AppRecord], in db: Database) throws -> [AppRecord.Kind: [String: Int64]] {
        guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM app_tombstones)")) == true else { return [:] }
        var found: [AppRecord.Kind: [String: Int64]] = [:]
        for (kind, group) in Dictionary(grouping: records, by: \.kind) {
            let ids = Array(Set(group.map(\.id)))
            for start in stride(from: 0, to: ids.count, by: 500) {
                let chunk = Array(ids[start..<min(start + 500, ids.count)])
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
                for row in try Row.fetchAll(
                    db, sql: "SELECT id, deleted_ns FROM app_tombstones WHERE resource = ? AND id IN (\(marks))",
                    arguments: StatementArguments([kind.rawValue] + chunk))
                {
                    found[kind, default: [:]][row[0]] = row[1]
                }
            }
        }
        return found
    }

    /// Writes `records` in `db`'s transaction: one cached statement, bound straight to SQLite;
    /// each record's class read once per call.
    @discardableResult
    package static func apply(_ records: [AppRecord], in db: Database) throws -> Outcome {
        var outcome = Outcome()
        guard !records.isEmpty else { return outcome }
        var classes: [String: (declaration: AppClass, slots: AppSlots)?] = [:]
        let statement = try db.cachedStatement(sql: recordUpsert)
        let deleted = try tombstones(of: records, in: db)
        for record in records {
            let bound: (declaration: AppClass, slots: AppSlots)?
            if let known = classes[record.className] { bound = known } else {
                bound = try AppDataCatalog.declaration(of: record.className, in: db)
                classes[record.className] = bound
            }
            guard let bound, bound.declaration.versions.contains(record.classVersion),
                  bound.declaration.recordKind == record.kind
            else {
                outcome.skipped.append("\(record.className)/\(record.id)")
                continue
            }
            // Deleted at or after this version was written: an older copy, kept out.
            if let deletedAt = deleted[record.kind]?[record.id], (record.updatedAt?.nanoseconds).map({ $0 <= deletedAt }) ?? true {
                outcome.unchanged += 1
                continue
            }
            let values = try AppRecordColumns.values(record) + bound.slots.values(of: record.payload, for: bound.declaration)
            switch try db.upsert(statement, values: values) {
            case .inserted: outcome.inserted += 1
            case .updated: outcome.updated += 1
            case .unchanged: outcome.unchanged += 1
            }
        }
        return outcome
    }
}

/// The columns of `app_records` written and read, in order: the one place a record becomes a row
/// and a row a record.
package enum AppRecordColumns {
    /// The columns an upsert writes, in argument order (the six slots last).
    static let written = [
        "resource", "id", "class_name", "class_version", "status", "payload", "etag", "created_at", "updated_at",
        "updated_ns", "expires_at", "expires_ns", "end_a", "end_b",
    ] + (0..<AppSlots.count).map(AppSlots.column)

    /// The select list ``read(_:)`` reads.
    package static let select =
        "resource, id, class_name, class_version, status, payload, etag, created_at, updated_at, expires_at, end_a, end_b"
    /// ``select`` of the rows aliased `e` (a join).
    static let selectOfE = select.split(separator: ",").map { "e." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")

    /// A record's values for the columns of ``written`` before the slots.
    /// Throws ``StoreError/invalidInput(_:)`` for a payload JSON cannot hold (a number that is not
    /// finite): nothing is stored in its place.
    static func values(_ record: AppRecord) throws -> [DatabaseValue] {
        let payload: String
        do {
            payload = try JSONValue.object(record.payload).jsonString()
        } catch {
            throw StoreError.invalidInput("record \(record.className)/\(record.id): its payload is not JSON: \(error)")
        }
        return [
            record.kind.rawValue.databaseValue, record.id.databaseValue, record.className.databaseValue,
            record.classVersion.databaseValue, record.status.databaseValue, payload.databaseValue, record.eTag.databaseValue,
            record.createdAt?.description.databaseValue ?? .null, record.updatedAt?.description.databaseValue ?? .null,
            record.updatedAt?.nanoseconds.databaseValue ?? .null, record.expiresAt?.description.databaseValue ?? .null,
            record.expiresAt?.nanoseconds.databaseValue ?? .null, record.endA.databaseValue, record.endB.databaseValue,
        ]
    }

    /// The record of a row read with ``select``. A stored value that cannot be read back (a
    /// payload that is not a JSON object, a bad timestamp) is
    /// ``StoreError/corruptValue(table:column:key:message:)``.
    package static func read(_ row: Row) throws -> AppRecord {
        let id: String = row[1]
        let kindText: String = row[0]
        guard let kind = AppRecord.Kind(rawValue: kindText) else {
            throw StoreError.corruptValue(table: "app_records", column: "resource", key: id, message: "unknown resource \(kindText)")
        }
        guard let payload = JSONValue.parse(text: row[5])?.objectValue else {
            throw StoreError.corruptValue(table: "app_records", column: "payload", key: id, message: "not a JSON object")
        }
        return AppRecord(
            kind: kind, id: id, className: row[2], classVersion: row[3], status: row[4], payload: payload, eTag: row[6],
            createdAt: try StoreCoding.timestamp(row[7], table: "app_records", column: "created_at", key: id),
            updatedAt: try StoreCoding.timestamp(row[8], table: "app_records", column: "updated_at", key: id),
            expiresAt: try StoreCoding.timestamp(row[9], table: "app_records", column: "expires_at", key: id),
            endA: row[10], endB: row[11])
    }
}
