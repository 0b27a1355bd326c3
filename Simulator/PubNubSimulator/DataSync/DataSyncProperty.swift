import Foundation
import PubNubWire
import ReplicaModel

/// One property a DataSync class declares (the Admin API body's `properties[]`; the protocol
/// reference, §16): a name, where its value sits in a record, the kind of value it holds, how it
/// can be filtered and sorted on, whether it may be missing, and the projections that show it.
///
/// Only declared properties are validated on a write and usable in `filter_fast`, `filter` and
/// `sort` (reference §1, §10); any other payload key is stored as given.
///
/// ```swift
/// DataSyncProperty(name: "closesAt", pointer: JSONPointer(["payload", "closesAt"]), valueKind: .datetime,
///                  filtering: .full, isNullable: true)
/// ```
public struct DataSyncProperty: Sendable, Hashable {
    /// Where a property may be used in a list (`filtering`).
    public enum Filtering: String, Sendable, Hashable, CaseIterable {
        /// Stored and validated, never filtered or sorted on.
        case none
        /// In `filter_fast` and `sort`.
        case simple
        /// In `filter_fast`, `filter` and `sort`.
        case full
    }

    /// The property's name, used in filters and sorts (`closed`).
    public var name: String
    /// Where the value sits in a record (`/payload/closed`).
    public var pointer: JSONPointer
    /// The kind of value it holds.
    public var valueKind: DataSyncValueKind
    /// Where it may be used in a list.
    public var filtering: Filtering
    /// Whether a record may leave it out or hold `null` (`isNullable`).
    public var isNullable: Bool
    /// The projections that show it (`__default__` when none is named).
    public var projections: [String]

    /// A property; nullable, not filterable and in `__default__` unless told otherwise.
    public init(
        name: String, pointer: JSONPointer, valueKind: DataSyncValueKind, filtering: Filtering = .none, isNullable: Bool = true,
        projections: [String] = ["__default__"]
    ) {
        self.name = name
        self.pointer = pointer
        self.valueKind = valueKind
        self.filtering = filtering
        self.isNullable = isNullable
        self.projections = projections
    }

    /// The property as the Admin API answers it.
    var json: JSONValue {
        [
            "name": .string(name), "path": .string(pointer.text), "valueKind": .string(valueKind.rawValue),
            "filtering": .string(filtering.rawValue), "isNullable": .bool(isNullable),
            "projections": .array(projections.map { ["name": .string($0)] }),
        ]
    }
}

/// How many relationships of a class one entity may take part in (`cardinality`; reference §16).
public enum DataSyncCardinality: String, Sendable, Hashable, CaseIterable {
    /// Any number on either side (a membership; a vote).
    case manyToMany = "many-to-many"
    /// At most one per entity on each side: a second is refused with 409 `DS-0801`.
    case oneToOne = "one-to-one"
}
