import Foundation
import GRDB
import ReplicaModel

/// The app-data classes a store holds (`app_classes`, migration 0019): each declared
/// ``ReplicaModel/AppClass`` as last bound, with the slot column of each of its properties
/// (``AppSlots``). The one owner of what a changed declaration does to the stored records.
///
/// A replica binds its configuration's classes at every start (``bind(_:in:)``), in one
/// transaction: a property kept as it was keeps its slot; a new, moved or retyped one takes a
/// free slot and the class's rows are filled again from their payloads; a class whose sync rule,
/// kind or versions changed loses its pull checkpoint (the next pull lists it whole, which also
/// prunes what the new rule leaves out); a class no longer declared loses its rows.
public enum AppDataCatalog {
    /// What one ``bind(_:in:)`` changed, for the start's log.
    public struct Binding: Sendable, Hashable {
        /// Nothing bound, refilled, reset or dropped.
        public init() {}

        /// Classes bound for the first time.
        public var added: [String] = []
        /// Classes whose rows' slot values were filled again (a property added, moved or retyped).
        public var refilled: [String] = []
        /// Classes whose pull checkpoint was dropped (the rule, kind or versions changed).
        public var reset: [String] = []
        /// Classes no longer declared, with how many rows they lost.
        public var dropped: [String: Int] = [:]
    }

    /// The pull checkpoint scope of class `name`: `app:Poll` (its cursor: the newest
    /// `updatedAt` pulled).
    package static func checkpointScope(_ name: String) -> String { "app:\(name)" }

    /// The scope that says when class `name` was last listed whole: `app-full:Poll` (its
    /// `updatedAt`).
    package static func fullListingScope(_ name: String) -> String { "app-full:\(name)" }

    /// How many rows one refill step reads and rewrites.
    static let refillBatch = 1_000

    /// Binds `classes` (already validated: `AppDataDeclaration.validate()`), as the type's
    /// summary says. Idempotent: binding the same classes again changes nothing.
    @discardableResult
    package static func bind(_ classes: [AppClass], in db: Database) throws -> Binding {
        var binding = Binding()
        let stored = try declarations(db)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for declaration in classes {
            let previous = stored[declaration.name]
            let slots = assignSlots(declaration, previous: previous)
            if previous == nil { binding.added.append(declaration.name) }
            if let previous, previous.declaration == declaration, previous.slots == slots { continue }
            let kindChanged = previous.map { $0.declaration.kind != declaration.kind } ?? false
            if kindChanged { try dropRows(of: declaration.name, in: db) }
            if let previous, kindChanged || previous.declaration.rule != declaration.rule
                || previous.declaration.versions != declaration.versions
            {
                try db.execute(
                    sql: "DELETE FROM sync_checkpoints WHERE scope IN (?, ?)",
                    arguments: [checkpointScope(declaration.name), fullListingScope(declaration.name)])
                binding.reset.append(declaration.name)
            }
            if let previous, !kindChanged, previous.slots != slots || previous.declaration.properties != declaration.properties {
                try refill(declaration, slots: slots, in: db)
                binding.refilled.append(declaration.name)
            }
            try db.execute(
                sql: """
                    INSERT INTO app_classes (name, declaration, slots) VALUES (?, ?, ?)
                    ON CONFLICT(name) DO UPDATE SET declaration = excluded.declaration, slots = excluded.slots
                    """,
                arguments: [
                    declaration.name, String(decoding: try encoder.encode(declaration), as: UTF8.self),
                    String(decoding: try encoder.encode(slots.byProperty), as: UTF8.self),
                ])
        }
        let declared = Set(classes.map(\.name))
        for name in stored.keys.sorted() where !declared.contains(name) {
            binding.dropped[name] = try dropRows(of: name, in: db)
            try db.execute(sql: "DELETE FROM app_classes WHERE name = ?", arguments: [name])
            try db.execute(sql: "DELETE FROM sync_checkpoints WHERE scope IN (?, ?)", arguments: [checkpointScope(name), fullListingScope(name)])
        }
        return binding
    }

    /// Every bound class with its slots, by name. A stored declaration that no longer decodes (a
    /// store written by a later version) is ``StoreError/corruptValue(table:column:key:message:)``.
    package static func declarations(_ db: Database) throws -> [String: (declaration: AppClass, slots: AppSlots)] {
        var result: [String: (declaration: AppClass, slots: AppSlots)] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT name, declaration, slots FROM app_classes") {
            let name: String = row[0]
            result[name] = try decode(name: name, declaration: row[1], slots: row[2])
        }
        return result
    }

    /// The bound class `name` with its slots, or nil when it is not bound.
    package static func declaration(of name: String, in db: Database) throws -> (declaration: AppClass, slots: AppSlots)? {
        guard let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT declaration, slots FROM app_classes WHERE name = ?"), arguments: [name])
        else { return nil }
        return try decode(name: name, declaration: row[0], slots: row[1])
    }

    private static func decode(name: String, declaration: String, slots: String) throws -> (declaration: AppClass, slots: AppSlots) {
        do {
            let decoder = JSONDecoder()
            return (
                try decoder.decode(AppClass.self, from: Data(declaration.utf8)),
                AppSlots(byProperty: try decoder.decode([String: Int].self, from: Data(slots.utf8)))
            )
        } catch {
            throw StoreError.corruptValue(table: "app_classes", column: "declaration", key: name, message: "\(error)")
        }
    }

    /// The slots of `declaration`: a property the previous binding had with the same path and kind
    /// keeps its slot; every other one takes the lowest free slot.
    static func assignSlots(_ declaration: AppClass, previous: (declaration: AppClass, slots: AppSlots)?) -> AppSlots {
        var slots = AppSlots()
        var taken = Set<Int>()
        for property in declaration.properties {
            guard let previous, let slot = previous.slots.byProperty[property.name],
                  previous.declaration.property(named: property.name).map({ $0.path == property.path && $0.kind == property.kind }) == true
            else { continue }
            slots.byProperty[property.name] = slot
            taken.insert(slot)
        }
        for property in declaration.properties where slots.byProperty[property.name] == nil {
            guard let free = (0..<AppSlots.count).first(where: { !taken.contains($0) }) else { break }
            slots.byProperty[property.name] = free
            taken.insert(free)
        }
        return slots
    }

    /// Rewrites every slot of the class's rows from their payloads, a batch at a time.
    static func refill(_ declaration: AppClass, slots: AppSlots, in db: Database) throws {
        let update = try db.makeStatement(sql: """
            UPDATE app_records SET p0 = ?, p1 = ?, p2 = ?, p3 = ?, p4 = ?, p5 = ? WHERE rowid = ?
            """)
        var after: Int64 = 0
        while true {
            let rows = try Row.fetchAll(
                db, sql: "SELECT rowid, payload FROM app_records WHERE class_name = ? AND rowid > ? ORDER BY rowid LIMIT ?",
                arguments: [declaration.name, after, refillBatch])
            guard let last = rows.last else { return }
            for row in rows {
                let rowid: Int64 = row[0]
                let payload = JSONValue.parse(text: row[1])?.objectValue ?? [:]
                try update.execute(arguments: StatementArguments(slots.values(of: payload, for: declaration) + [rowid.databaseValue]))
            }
            after = last[0]
        }
    }

    /// Deletes every row and tombstone of class `name`; returns how many rows went.
    @discardableResult
    static func dropRows(of name: String, in db: Database) throws -> Int {
        try db.execute(sql: "DELETE FROM app_records WHERE class_name = ?", arguments: [name])
        let count = db.changesCount
        try db.execute(sql: "DELETE FROM app_tombstones WHERE class_name = ?", arguments: [name])
        return count
    }
}
