import Foundation
import GRDB
import ReplicaModel

/// Which slot column (`p0`…`p5` of `app_records`, migration 0019) holds each declared property of
/// one class, and how a property's JSON value is stored there: the one place a property's value
/// becomes a column value, for rows written and for values a query compares with.
///
/// A string or a date (`YYYY-MM-DD`, which sorts as text) is stored as text, a number as a number,
/// a boolean as 0/1, a date-time as its nanoseconds (so that `2026-01-01T00:00:00Z` and
/// `2026-01-01T00:00:00.000Z` are the same instant). A value of another kind stores NULL: the
/// record is kept whole in `payload`, only the property cannot be queried.
package struct AppSlots: Sendable, Hashable, Codable {
    /// The slot index of each property, by property name.
    package var byProperty: [String: Int]

    /// How many slot columns `app_records` has.
    package static let count = AppClass.maxProperties

    /// The column name of slot `index`: `p0`…`p5`.
    package static func column(_ index: Int) -> String { "p\(index)" }

    /// An empty assignment.
    package init(byProperty: [String: Int] = [:]) { self.byProperty = byProperty }

    /// The column that holds property `name`, or nil when it holds none.
    package func column(of name: String) -> String? { byProperty[name].map(Self.column) }

    /// The six slot values of `payload` for `declaration`: slot `i` holds the value of the
    /// property assigned to it, NULL when none is or the value is missing or of another kind.
    package func values(of payload: [String: JSONValue], for declaration: AppClass) -> [DatabaseValue] {
        var values = [DatabaseValue](repeating: .null, count: Self.count)
        for property in declaration.properties {
            guard let slot = byProperty[property.name], let value = property.value(in: payload) else { continue }
            values[slot] = Self.stored(value, as: property.kind)
        }
        return values
    }

    /// How `value` is stored in a slot of `kind`, NULL when it is not of that kind.
    package static func stored(_ value: JSONValue, as kind: DataSyncValueKind) -> DatabaseValue {
        // One switch per value, parsing a date-time once: this runs for each declared property
        // of each record a pull writes. What is of a kind stays `DataSyncValueKind.accepts`'s rule.
        switch (kind, value) {
        case (.string, .string(let text)): return text.databaseValue
        case (.date, .string(let text)): return kind.accepts(value) ? text.databaseValue : .null
        case (.number, .int(let number)): return number.databaseValue
        case (.number, .double(let number)): return number.databaseValue
        case (.boolean, .bool(let flag)): return flag.databaseValue
        case (.datetime, .string(let text)): return ((try? ISOTimestamp(parsing: text))?.nanoseconds).databaseValue
        default: return .null
        }
    }
}
