import Foundation
import ReplicaModel
import ReplicaStore

/// An app record as an op's base snapshot (`outbox.base_snapshot`): its state (`classVersion`,
/// `status`, `payload`, ``ReplicaStore/AppRecordWrite/state``'s form) with the server's fields
/// (`eTag`, `updated`, `createdAt`, `expiresAt`, `endA`, `endB`), so that a patch is computed
/// from its state and a discarded removal brings the whole record back.
enum AppRecordSnapshot {
    /// The snapshot of `record`.
    static func json(of record: AppRecord) -> JSONValue {
        var object = AppRecordWrite.state(of: record)
        object["eTag"] = record.eTag.map(JSONValue.string)
        object["updated"] = record.updatedAt.map { .string($0.description) }
        object["createdAt"] = record.createdAt.map { .string($0.description) }
        object["expiresAt"] = record.expiresAt.map { .string($0.description) }
        object["endA"] = record.endA.map(JSONValue.string)
        object["endB"] = record.endB.map(JSONValue.string)
        return .object(object)
    }

    /// ``json(of:)`` as the column's text.
    static func text(of record: AppRecord) throws -> String { try json(of: record).jsonString() }

    /// The record a snapshot (or a conflict's server version, which has the state, `eTag` and
    /// `updated` only) describes, over `stored` for what it leaves out; nil when it is not an
    /// object.
    static func record(from json: JSONValue, target: AppRecordTarget, over stored: AppRecord?) -> AppRecord? {
        guard case .object(let object) = json else { return nil }
        func time(_ key: String) -> ISOTimestamp? { object[key]?.stringValue.flatMap { try? ISOTimestamp(parsing: $0) } }
        var record = stored ?? AppRecord(kind: target.kind, id: target.id, className: target.className)
        record = AppRecordWrite(
            kind: record.kind, className: record.className, id: record.id, classVersion: record.classVersion,
            status: record.status, payload: record.payload
        ).with(state: object).applied(to: record)
        record.eTag = object["eTag"]?.stringValue
        record.updatedAt = time("updated")
        if let created = time("createdAt") { record.createdAt = created }
        if let expires = time("expiresAt") { record.expiresAt = expires }
        if let a = object["endA"]?.stringValue { record.endA = a }
        if let b = object["endB"]?.stringValue { record.endB = b }
        return record
    }
}

extension LocalOverlay {
    // MARK: App records

    /// Stores a page of the server's app records (pulls and live events, under the version rule
    /// and the tombstones: ``ReplicaStore/AppRecordIngest``), then lays the unsent writes of the
    /// records it wrote back over them. The outbox is read only when a row changed and an app
    /// record op is queued.
    @discardableResult
    func applyServer(records: [AppRecord]) throws -> AppRecordIngest.Outcome {
        let outcome = try tx.appRecords.apply(records)
        guard outcome.inserted + outcome.updated > 0 else { return outcome }
        let pending = try pendingRecordOps()
        guard !pending.isEmpty else { return outcome }
        let written = Set(records.map { OutboxKeys.appRecord($0.kind, $0.id) })
        for op in pending where written.contains(op.target) { try apply(record: op) }
        return outcome
    }

    /// The ids of the records an app record op is queued on (a full listing's prune and the
    /// expiry sweep keep them: the local side wins until the op is sent).
    func recordsWithPendingOps() throws -> Set<String> {
        Set(try pendingRecordOps().compactMap { $0.operation.appRecord?.id })
    }

    /// Stores the server's answer to a record write (under the version rule), then the later
    /// unsent writes of the record over it.
    func storeAnswer(record: AppRecord) throws {
        try tx.appRecords.apply([record])
        try reapplyPending(target: OutboxKeys.appRecord(record.kind, record.id))
    }

    /// A delete of the record was answered: the row goes, with a tombstone that keeps out every
    /// copy up to `base` (the version the delete was based on; none: the server never had one
    /// this device read), then the later unsent writes (a new create of the same id) are laid back.
    func storeRemoval(of target: AppRecordTarget, base: ISOTimestamp?) throws {
        if let base {
            try tx.appRecords.remove(target.kind, id: target.id, className: target.className, deletedAt: base)
        }
        try tx.appRecords.delete(target.kind, id: target.id)
        try reapplyPending(target: OutboxKeys.appRecord(target.kind, target.id))
    }

    /// Writes the server's current version of a conflicted record (nil: the server has none),
    /// returning the snapshot stored (the op's new base).
    func storeServerRecord(_ remote: JSONValue?, of target: AppRecordTarget) throws -> String? {
        guard let remote else {
            try tx.appRecords.delete(target.kind, id: target.id)
            return nil
        }
        let stored = try tx.appRecords.record(target.kind, id: target.id)
        guard let record = AppRecordSnapshot.record(from: remote, target: target, over: stored) else { return nil }
        try tx.appRecords.put(record)
        return try AppRecordSnapshot.text(of: record)
    }

    /// Undoes a record op's optimistic change: the record as its base snapshot had it, or none.
    func revert(record entry: OutboxEntry) throws {
        guard let target = entry.operation.appRecord else { return }
        if let snapshot = entry.baseSnapshot.flatMap({ JSONValue.parse(text: $0) }),
           let record = AppRecordSnapshot.record(from: snapshot, target: target, over: try tx.appRecords.record(target.kind, id: target.id))
        {
            try tx.appRecords.put(record)
        } else {
            try tx.appRecords.delete(target.kind, id: target.id)
        }
    }

    /// Lays one queued record op's change over the stored record.
    func apply(record op: OutboxEntry) throws {
        switch op.operation {
        case .setAppRecord(let write):
            try tx.appRecords.put(write.applied(to: try tx.appRecords.record(write.kind, id: write.id)))
        case .removeAppRecord(let target):
            try tx.appRecords.delete(target.kind, id: target.id)
        case .send, .addReaction, .removeReaction, .setMembership, .removeMembership, .setUser, .removeUser, .setChannel,
             .removeChannel, .mention, .receipt, .hardDelete, .report, .setMuteList, .invite, .push, .readPositions:
            break
        }
    }

    /// Every queued app record op, oldest first (one range of the target index).
    private func pendingRecordOps() throws -> [OutboxEntry] {
        try tx.outbox.ops(targetPrefix: OutboxKeys.appRecordPrefix)
    }
}
