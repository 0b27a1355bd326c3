import Foundation
import GRDB
import ReplicaModel

/// Which records of one app-data class a query reads, compared on the class's declared
/// properties, sorted and paged. Every comparison on a declared property is one search of that
/// property's index (``AppRecordQueries/records(_:)``).
///
/// ```swift
/// let open = AppRecordFilter("Poll", where: [.init("closed", .equal, false)], sortedBy: .init("closesAt"))
/// for try await polls in store.observe(AppRecordQueries.records(open)) { show(polls) }
/// ```
public struct AppRecordFilter: Sendable, Hashable {
    /// The class read.
    public var className: String
    /// Only records of this class version (nil: every version).
    public var version: Int?
    /// Comparisons that must all hold.
    public var predicates: [AppRecordPredicate]
    /// The order (nil: the most recently changed first).
    public var sort: AppRecordSort?
    /// At most this many records (nil: all).
    public var limit: Int?
    /// Records skipped before the first returned.
    public var offset: Int

    /// A filter of class `className`.
    public init(
        _ className: String, version: Int? = nil, where predicates: [AppRecordPredicate] = [], sortedBy sort: AppRecordSort? = nil,
        limit: Int? = nil, offset: Int = 0
    ) {
        self.className = className
        self.version = version
        self.predicates = predicates
        self.sort = sort
        self.limit = limit
        self.offset = offset
    }
}

/// One comparison of an ``AppRecordFilter``: a declared property, or one of the system fields
/// `id`, `status`, `updatedAt`, `endA`, `endB`, against values of its kind.
///
/// ```swift
/// AppRecordPredicate("closed", .equal, false)
/// AppRecordPredicate("closesAt", .less, "2026-12-31T00:00:00Z")
/// AppRecordPredicate("team", .in, ["support", "sales"])
/// AppRecordPredicate("closesAt", .isNull)
/// ```
public struct AppRecordPredicate: Sendable, Hashable {
    /// A comparison's operator.
    public enum Comparison: String, Sendable, Hashable, CaseIterable {
        /// Equal.
        case equal = "="
        /// Not equal (a record without the property is left out).
        case notEqual = "<>"
        /// Less than.
        case less = "<"
        /// Less than or equal.
        case lessOrEqual = "<="
        /// Greater than.
        case greater = ">"
        /// Greater than or equal.
        case greaterOrEqual = ">="
        /// Equal to one of an array's values.
        case `in` = "IN"
        /// The record leaves the property out (or holds a value of another kind, or null).
        case isNull = "IS NULL"
    }

    /// The property compared.
    public var property: String
    /// The operator.
    public var comparison: Comparison
    /// The value compared with (an array for ``Comparison/in``; ignored for ``Comparison/isNull``).
    public var value: JSONValue

    /// A comparison.
    public init(_ property: String, _ comparison: Comparison, _ value: JSONValue = .null) {
        self.property = property
        self.comparison = comparison
        self.value = value
    }
}

/// The order of an ``AppRecordFilter``: by a declared property (or `id`, `status`, `updatedAt`),
/// records that leave it out first when ascending; ties in the order the records were stored.
public struct AppRecordSort: Sendable, Hashable {
    /// The property sorted by.
    public var property: String
    /// Largest first.
    public var descending: Bool

    /// An order.
    public init(_ property: String, descending: Bool = false) {
        self.property = property
        self.descending = descending
    }
}

/// The store's reads of app-data records, each a ``StoreQuery`` to fetch once or observe. A filter
/// naming a class that is not bound, a property the class does not declare, or a value of the
/// wrong kind is ``StoreError/invalidInput(_:)``.
public enum AppRecordQueries {
    /// The records `filter` selects, in its order.
    public static func records(_ filter: AppRecordFilter) -> StoreQuery<[AppRecord]> {
        StoreQuery { db in
            let (sql, arguments) = try select(filter, in: db)
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map(AppRecordColumns.read)
        }
    }

    /// How many records `filter` selects (ignoring its limit and offset).
    public static func count(_ filter: AppRecordFilter) -> StoreQuery<Int> {
        StoreQuery { db in
            var unpaged = filter
            unpaged.limit = nil
            unpaged.offset = 0
            unpaged.sort = nil
            let (sql, arguments) = try select(unpaged, in: db, columns: "count(*)", ordered: false)
            return try Int.fetchOne(db, sql: sql, arguments: arguments) ?? 0
        }
    }

    /// The stored record of `kind` with `id`, or nil.
    public static func record(_ kind: AppRecord.Kind, id: String) -> StoreQuery<AppRecord?> {
        StoreQuery { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT \(AppRecordColumns.select) FROM app_records WHERE resource = ? AND id = ?"),
                arguments: [kind.rawValue, id]
            ).map(AppRecordColumns.read)
        }
    }

    /// The entities linked to entity `id` by relationships of class `relationship`: with `side`
    /// ``Side/a``, `id` is each relationship's first end and the second ends are returned (a
    /// poll's voters through `Vote`); with ``Side/b`` the other way round. One search of the
    /// relationship's end index, then one lookup per link.
    public static func related(to id: String, through relationship: String, side: Side = .a) -> StoreQuery<[AppRecord]> {
        StoreQuery { db in
            let (near, far) = side == .a ? ("end_a", "end_b") : ("end_b", "end_a")
            return try Row.fetchAll(
                db, sql: """
                    SELECT \(AppRecordColumns.selectOfE) FROM app_records r
                    JOIN app_records e ON e.resource = 'entities' AND e.id = r.\(far)
                    WHERE r.class_name = ? AND r.\(near) = ? ORDER BY r.rowid
                    """, arguments: [relationship, id]
            ).map(AppRecordColumns.read)
        }
    }

    /// Which end of a relationship an entity is (``related(to:through:side:)``).
    public enum Side: Sendable, Hashable {
        /// The first end (`entityAId`).
        case a
        /// The second end (`entityBId`).
        case b
    }

    /// The SQL and arguments of `filter`.
    static func select(
        _ filter: AppRecordFilter, in db: Database, columns: String = AppRecordColumns.select, ordered: Bool = true
    ) throws -> (String, StatementArguments) {
        guard let bound = try AppDataCatalog.declaration(of: filter.className, in: db) else {
            throw StoreError.invalidInput("class \(filter.className) is not declared in this replica's app data")
        }
        var clauses = ["class_name = ?"]
        var compared = Set<String>()
        var values: [DatabaseValue] = [filter.className.databaseValue]
        if let version = filter.version {
            clauses.append("class_version = ?")
            values.append(version.databaseValue)
        }
        for predicate in filter.predicates {
            let (column, kind) = try resolve(predicate.property, of: bound)
            compared.insert(column)
            let operand = { (value: JSONValue) throws -> DatabaseValue in
                let stored = AppSlots.stored(value, as: kind)
                if stored.isNull {
                    throw StoreError.invalidInput(
                        "\(filter.className).\(predicate.property) holds \(kind.rawValue) values: cannot compare with \(value)")
                }
                return stored
            }
            switch predicate.comparison {
            case .isNull:
                clauses.append("\(column) IS NULL")
            case .in:
                guard case .array(let items) = predicate.value, !items.isEmpty else {
                    throw StoreError.invalidInput("\(filter.className).\(predicate.property) IN needs a non-empty array")
                }
                clauses.append("\(column) IN (\(items.map { _ in "?" }.joined(separator: ", ")))")
                values += try items.map(operand)
            default:
                clauses.append("\(column) \(predicate.comparison.rawValue) ?")
                values.append(try operand(predicate.value))
            }
        }
        var sql = "SELECT \(columns) FROM app_records WHERE \(clauses.joined(separator: " AND "))"
        if ordered {
            let direction = filter.sort?.descending ?? true ? "DESC" : "ASC"
            let column = try filter.sort.map { try resolve($0.property, of: bound).column } ?? "updated_ns"
            // Compared on other columns, the rows are found through the compared column's index
            // and then sorted: `+column` keeps the planner from walking the order's index over
            // the whole class instead (it prefers avoiding a sort to a selective search).
            let key = compared.isEmpty || compared.contains(column) ? column : "+" + column
            sql += " ORDER BY \(key) \(direction), rowid \(direction)"
        }
        if let limit = filter.limit {
            sql += " LIMIT ? OFFSET ?"
            values += [limit.databaseValue, filter.offset.databaseValue]
        } else if filter.offset > 0 {
            sql += " LIMIT -1 OFFSET ?"
            values.append(filter.offset.databaseValue)
        }
        return (sql, StatementArguments(values))
    }

    /// The column of `property` in a class's rows and the kind its values are compared as.
    static func resolve(_ property: String, of bound: (declaration: AppClass, slots: AppSlots)) throws -> (column: String, kind: DataSyncValueKind) {
        switch property {
        case "id": return ("id", .string)
        case "status": return ("status", .string)
        case "updatedAt": return ("updated_ns", .datetime)
        case "endA": return ("end_a", .string)
        case "endB": return ("end_b", .string)
        default:
            guard let declared = bound.declaration.property(named: property), let column = bound.slots.column(of: property) else {
                let names = bound.declaration.properties.map(\.name).joined(separator: ", ")
                throw StoreError.invalidInput(
                    "\(property) is not a declared property of \(bound.declaration.name) (declared: \(names.isEmpty ? "none" : names))")
            }
            return (column, declared.kind)
        }
    }
}
