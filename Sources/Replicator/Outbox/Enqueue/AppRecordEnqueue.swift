import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

// The writes of an app's own DataSync records (`docs/app-data.md`, "Writes"): what each queues,
// its base, and the checks the server would otherwise fail it for, made before anything is
// stored (a typed ``AppDataError``; nothing is written).
extension OpEnqueue {
    /// Writes `write` locally and queues it: a create when `creating` (the record must not be
    /// stored; the op has no base), or an edit of the stored record, based on it (its eTag is the
    /// `If-Match`). A patch
    /// or replace that changes nothing queues nothing (``OutboxDisposition/unchanged``). An
    /// edit of a record whose create is still unsent is merged into that create.
    func setAppRecord(opId: String, write: AppRecordWrite, creating: Bool, now: Date) throws -> OutboxReceipt<AppRecord> {
        let declaration = try checkedClass(write.className, kind: write.kind)
        var write = write
        write.concurrency = declaration.concurrency
        try Self.check(write, against: declaration)
        let stored = try tx.appRecords.record(write.kind, id: write.id)
        if let stored, stored.className != write.className {
            throw AppDataError.invalidRecord(
                className: write.className, id: write.id, reason: "the stored record of this id is of class \(stored.className)")
        }
        var dependsOn: String?
        if creating {
            if stored != nil { throw AppDataError.recordExists(className: write.className, id: write.id) }
            if case .relationship(let a, let b) = declaration.kind {
                dependsOn = try checkEnds(write, classes: (a, b))
            }
        } else {
            guard let stored else { throw AppDataError.recordNotFound(className: write.className, id: write.id) }
            if AppRecordWrite.state(of: stored) == write.state { return OutboxReceipt(value: stored, opId: nil, disposition: .unchanged) }
        }
        let local = write.applied(to: stored)
        try tx.appRecords.put(local)
        let op = NewOutboxRow(
            .setAppRecord(write), opId: opId, baseETag: stored?.eTag, baseUpdated: stored?.updatedAt?.description,
            baseSnapshot: try stored.map(AppRecordSnapshot.text(of:)), dependsOn: dependsOn)
        let (id, disposition) = try transaction.insertOrMerge(op, id: opId, now: now)
        return OutboxReceipt(value: local, opId: id, disposition: disposition)
    }

    /// Removes a stored record locally and queues its DELETE (`If-Match` its eTag). A record
    /// whose create is still unsent is withdrawn with it: nothing is sent.
    func removeAppRecord(opId: String, target: AppRecordTarget, now: Date) throws -> OutboxReceipt<AppRecord> {
        _ = try checkedClass(target.className, kind: target.kind)
        guard let stored = try tx.appRecords.record(target.kind, id: target.id), stored.className == target.className else {
            throw AppDataError.recordNotFound(className: target.className, id: target.id)
        }
        let op = NewOutboxRow(
            .removeAppRecord(target), opId: opId, baseETag: stored.eTag, baseUpdated: stored.updatedAt?.description,
            baseSnapshot: try AppRecordSnapshot.text(of: stored))
        // An entity that never reached the server takes the unsent links to it along, from the
        // outbox and from the store: they could never be made.
        var links: [String] = []
        if target.kind == .entity, try transaction.unsentCreate(cancelledBy: op) != nil {
            for link in try AppRecordEnds.unsentLinks(to: target.id, in: tx) {
                links += try transaction.withdraw(link, undo: .revert)
            }
            if !links.isEmpty { transaction.changes.events.append(.coalesced(into: nil, cancelled: links)) }
        }
        try tx.appRecords.delete(target.kind, id: target.id)
        let (id, disposition) = try transaction.insertOrReplace(op, id: opId, now: now)
        if case .cancelled(let ids) = disposition { return OutboxReceipt(value: nil, opId: id, disposition: .cancelled(ids + links)) }
        return OutboxReceipt(value: nil, opId: id, disposition: disposition)
    }

    /// The declared class `name`, which must hold records of `kind`.
    private func checkedClass(_ name: String, kind: AppRecord.Kind) throws -> AppClass {
        guard let declaration = try tx.appRecords.declaration(of: name) else { throw AppDataError.undeclaredClass(name) }
        guard declaration.recordKind == kind else { throw AppDataError.wrongClassKind(className: name, expected: declaration.recordKind) }
        return declaration
    }

    /// What DataSync would refuse in `write` under `declaration`: the id, the version, the
    /// status's length, each declared property's kind and presence, a wildcard class's id prefix.
    static func check(_ write: AppRecordWrite, against declaration: AppClass) throws {
        let name = write.className
        if let problem = DataSyncIdentifier.problem(write.id) { throw AppDataError.invalidRecord(className: name, id: write.id, reason: problem) }
        if case .wildcard(let prefix) = declaration.routing, !write.id.hasPrefix(prefix + ".") {
            throw AppDataError.invalidRecord(
                className: name, id: write.id, reason: "a record of a class routed on \(prefix).* needs an id \(prefix).<x>")
        }
        guard declaration.versions.contains(write.classVersion) else {
            throw AppDataError.undeclaredVersion(className: name, version: write.classVersion)
        }
        if let status = write.status, !DataSyncLimits.statusLength.contains(status.count) {
            throw AppDataError.invalidRecord(className: name, id: write.id, reason: "a status has 1-100 characters")
        }
        for property in declaration.properties {
            let value = property.value(in: write.payload)
            guard let value, value != .null else {
                if property.isOptional { continue }
                throw AppDataError.missingProperty(className: name, property: property.name)
            }
            guard property.kind.accepts(value) else {
                throw AppDataError.propertyKind(className: name, property: property.name, expected: property.kind, found: value)
            }
        }
    }

    /// A relationship create's ends: each a valid id, not known deleted (a tombstone, or an
    /// unsent delete), and not stored as an entity of another class than declared. An end merely
    /// missing locally may exist on the server: the create goes (a 404 becomes a visible dead
    /// letter). Returns the unsent create of an end, recorded as the relationship's parent.
    private func checkEnds(_ write: AppRecordWrite, classes: (a: String, b: String)) throws -> String? {
        for (end, endClass) in [(write.endA, classes.a), (write.endB, classes.b)] {
            guard let end else {
                throw AppDataError.invalidRecord(className: write.className, id: write.id, reason: "a relationship needs both ends")
            }
            if let problem = DataSyncIdentifier.problem(end) { throw AppDataError.invalidEnd(className: write.className, end: end, reason: problem) }
            // The built-in classes' ends are users and channels, kept by the chat side.
            if endClass == "User" || endClass == "Channel" { continue }
            if try tx.appRecords.isDeleted(.entity, id: end), try tx.appRecords.record(.entity, id: end) == nil {
                throw AppDataError.invalidEnd(className: write.className, end: end, reason: "the entity was deleted")
            }
            let ops = try tx.outbox.ops(target: OutboxKeys.appRecord(.entity, end)).filter { OutboxState.live.contains($0.state) }
            if ops.last?.kind == .removeAppRecord {
                throw AppDataError.invalidEnd(className: write.className, end: end, reason: "the entity is being deleted")
            }
            if let stored = try tx.appRecords.record(.entity, id: end), stored.className != endClass {
                throw AppDataError.invalidEnd(className: write.className, end: end, reason: "it is a \(stored.className), not a \(endClass)")
            }
        }
        // Recorded as the op's parent, so that a withdrawn end create takes the link with it;
        // the drain waits for the other end's too (``AppRecordEnds/unsentCreate(waitedOnBy:in:)``).
        return try AppRecordEnds.unsentCreates(of: write, in: tx).first?.id
    }
}

/// Which ops a relationship's create waits for: the creates of its ends still in the outbox. Read
/// when the link is queued (its ``ReplicaStore/OutboxEntry/dependsOn``, one of them) and again
/// each time the drain looks at it, so that a link of two entities both created offline goes
/// after both, whichever is sent first.
enum AppRecordEnds {
    /// The creates (writes without a base) of `write`'s ends still in the outbox, in any state,
    /// end A's first.
    static func unsentCreates<C: ChatCustomData>(of write: AppRecordWrite, in tx: StoreTransaction<C>) throws -> [OutboxEntry] {
        var creates: [OutboxEntry] = []
        for end in [write.endA, write.endB].compactMap({ $0 }) {
            let ops = try tx.outbox.ops(target: OutboxKeys.appRecord(.entity, end))
            if let create = ops.first(where: { $0.kind == .setAppRecord && $0.baseSnapshot == nil }) { creates.append(create) }
        }
        return creates
    }

    /// The relationship creates still in the outbox, unsent for certain, that name entity `id`
    /// as an end (one range of the target index over the queued relationship ops).
    static func unsentLinks<C: ChatCustomData>(to id: String, in tx: StoreTransaction<C>) throws -> [OutboxEntry] {
        try tx.outbox.ops(targetPrefix: OutboxKeys.appRecordPrefix + "\(AppRecord.Kind.relationship.rawValue):").filter { entry in
            guard entry.kind == .setAppRecord, entry.baseSnapshot == nil, entry.isCertainlyUnsent,
                  case .setAppRecord(let write) = entry.operation
            else { return false }
            return write.endA == id || write.endB == id
        }
    }

    /// The end create `entry` still waits for, when it is a relationship's create: nil for any
    /// other op, and once both ends' creates have left the outbox.
    static func unsentCreate<C: ChatCustomData>(waitedOnBy entry: OutboxEntry, in tx: StoreTransaction<C>) throws -> OutboxEntry? {
        guard entry.kind == .setAppRecord, entry.baseSnapshot == nil, case .setAppRecord(let write) = entry.operation,
              write.kind == .relationship
        else { return nil }
        return try unsentCreates(of: write, in: tx).first
    }
}
