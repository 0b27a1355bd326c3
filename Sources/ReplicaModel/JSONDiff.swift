/// One change between two JSON objects: at `path` (member names from the root), a new value or
/// the member's removal. ``JSONDiff`` computes them; a JSON Patch is built from them (each `set`
/// is an `add`, which RFC 6902 §4.1 makes a replace when the member exists; each `remove` a `remove`).
public struct JSONChange: Sendable, Hashable, CustomStringConvertible {
    /// What happens at ``path``.
    public enum Edit: Sendable, Hashable {
        /// The member at the path takes this value (added, or replacing what was there).
        case set(JSONValue)
        /// The member at the path is removed.
        case remove
    }

    /// The member names from the root object to the changed member; never empty.
    public var path: [String]
    /// The change at ``path``.
    public var edit: Edit

    /// A change of the member at `path`.
    public init(path: [String], edit: Edit) {
        self.path = path
        self.edit = edit
    }

    /// `set /a/b = 1` or `remove /a/b`, for logs and test failures.
    public var description: String {
        let pointer = "/" + path.joined(separator: "/")
        switch edit {
        case .set(let value): return "set \(pointer) = \((try? value.jsonString()) ?? "?")"
        case .remove: return "remove \(pointer)"
        }
    }
}

/// The difference between two JSON objects as a list of ``JSONChange``s, and its application.
///
/// Objects are compared member by member, recursively; arrays and scalars are leaves, replaced
/// whole when they differ (an array's element-wise patch would depend on positions another
/// device may have shifted). A member new in `new` is one `set` at the highest level that is new,
/// so a change never needs a parent that does not exist. Members are visited in sorted order, so the
/// same two objects always give the same list. `apply(changes(from: a, to: b), to: a) == b`.
///
/// ```swift
/// let old: [String: JSONValue] = ["question": .string("Lunch?"), "options": .array([.string("pizza")])]
/// var new = old
/// new["closed"] = .bool(true)
/// JSONDiff.changes(from: old, to: new)   // [set /closed = true]
/// ```
public enum JSONDiff {
    /// The changes that turn `old` into `new`; empty when they are equal.
    public static func changes(from old: [String: JSONValue], to new: [String: JSONValue]) -> [JSONChange] {
        var changes: [JSONChange] = []
        collect(old, new, path: [], into: &changes)
        return changes
    }

    /// `object` with `changes` applied in order. A `set` whose parents are missing (or are not
    /// objects) makes them objects; a `remove` of a missing member changes nothing.
    public static func apply(_ changes: [JSONChange], to object: [String: JSONValue]) -> [String: JSONValue] {
        var result = object
        for change in changes where !change.path.isEmpty {
            apply(change.edit, at: change.path[...], in: &result)
        }
        return result
    }

    private static func collect(
        _ old: [String: JSONValue], _ new: [String: JSONValue], path: [String], into changes: inout [JSONChange]
    ) {
        let keys = Set(old.keys).union(new.keys).sorted()
        for key in keys {
            let here = path + [key]
            switch (old[key], new[key]) {
            case (nil, let added?):
                changes.append(JSONChange(path: here, edit: .set(added)))
            case (_?, nil):
                changes.append(JSONChange(path: here, edit: .remove))
            case (.object(let before)?, .object(let after)?):
                collect(before, after, path: here, into: &changes)
            case (let before?, let after?):
                if before != after { changes.append(JSONChange(path: here, edit: .set(after))) }
            case (nil, nil):
                continue
            }
        }
    }

    private static func apply(_ edit: JSONChange.Edit, at path: ArraySlice<String>, in object: inout [String: JSONValue]) {
        guard let key = path.first else { return }
        if path.count == 1 {
            switch edit {
            case .set(let value): object[key] = value
            case .remove: object[key] = nil
            }
            return
        }
        var child = object[key]?.objectValue ?? [:]
        if case .remove = edit, object[key]?.objectValue == nil { return }
        apply(edit, at: path.dropFirst(), in: &child)
        object[key] = .object(child)
    }
}
