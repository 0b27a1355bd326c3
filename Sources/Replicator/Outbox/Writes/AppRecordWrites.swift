import Foundation
import ReplicaModel
import ReplicaStore

/// The writes of an app's own DataSync records (`docs/app-data.md`, "Writes"): create, replace,
/// patch (computed from the change), upgrade, delete, and a relationship's link and unlink. Each
/// is one transaction: the record as shown locally and its op, needing no network. The outbox
/// sends them in order per record, probes before a resend, and hands a conflict (a 412, a 409
/// create) to the conflict policies (``ConflictPolicies/classes``).
///
/// Every write is checked against the class's declaration first: a declared property of the
/// wrong kind, a missing required one, an undeclared class or version, an end known deleted is
/// an ``AppDataError`` and nothing is stored.
///
/// ```swift
/// let poll = try await outbox.appRecords.create("Poll", payload: ["question": "Lunch?", "options": ["pizza"], "closed": false])
/// try await outbox.appRecords.update("Poll", id: poll.value!.id) { $0.payload["closed"] = true }
/// try await outbox.appRecords.link("Vote", from: poll.value!.id, to: "alice", id: "vote.\(poll.value!.id).alice")
/// ```
public struct AppRecordWrites<Custom: ChatCustomData>: OutboxWriter {
    /// The outbox the ops are queued in.
    public let outbox: Outbox<Custom>

    /// Creates an entity of class `className` (`POST`). Without an `id`, one is made on the
    /// device (`<prefix>.<uuid>` for a class routed on a wildcard, else a UUID), so a create
    /// whose answer was lost can be probed. The class's newest declared version unless `version`.
    @discardableResult
    public func create(
        _ className: String, id: String? = nil, version: Int? = nil, status: String? = nil, payload: [String: JSONValue]
    ) async throws -> OutboxReceipt<AppRecord> {
        try await created(className, kind: .entity, id: id, version: version, status: status, payload: payload, ends: (nil, nil))
    }

    /// Links entity `a` to entity `b` with a relationship of class `className` (a create). A
    /// relationship whose end's create is still unsent waits for it.
    @discardableResult
    public func link(
        _ className: String, from a: String, to b: String, id: String? = nil, version: Int? = nil, status: String? = nil,
        payload: [String: JSONValue] = [:]
    ) async throws -> OutboxReceipt<AppRecord> {
        try await created(className, kind: .relationship, id: id, version: version, status: status, payload: payload, ends: (a, b))
    }

    /// Edits a stored record: `change` edits it as shown now, and the JSON Patch from the
    /// version the edit is based on to the result is sent (`If-Match` that version's eTag).
    /// Changing ``ReplicaModel/AppRecord/classVersion`` upgrades it.
    ///
    /// ```swift
    /// try await outbox.appRecords.update("Poll", id: "poll.1") { $0.payload["closed"] = true }
    /// ```
    @discardableResult
    public func update(
        _ className: String, id: String, kind: AppRecord.Kind = .entity, _ change: @escaping @Sendable (inout AppRecord) throws -> Void
    ) async throws -> OutboxReceipt<AppRecord> {
        try await edit(className, id: id, kind: kind, replacesWhole: false, change)
    }

    /// Replaces a stored record's status and payload whole (`PUT`, `If-Match`): a payload
    /// member left out is removed on the server.
    @discardableResult
    public func replace(
        _ className: String, id: String, kind: AppRecord.Kind = .entity, status: String? = nil, payload: [String: JSONValue]
    ) async throws -> OutboxReceipt<AppRecord> {
        try await edit(className, id: id, kind: kind, replacesWhole: true) { record in
            record.status = status
            record.payload = payload
        }
    }

    /// Upgrades a stored record to class version `version` (a patch of its version member), its
    /// payload turned into the new version's shape by `transform`.
    @discardableResult
    public func upgrade(
        _ className: String, id: String, kind: AppRecord.Kind = .entity, to version: Int,
        transform: @escaping @Sendable ([String: JSONValue]) throws -> [String: JSONValue] = { $0 }
    ) async throws -> OutboxReceipt<AppRecord> {
        try await edit(className, id: id, kind: kind, replacesWhole: false) { record in
            record.classVersion = version
            record.payload = try transform(record.payload)
        }
    }

    /// Deletes a stored record (`DELETE`, `If-Match`); a relationship is unlinked.
    @discardableResult
    public func delete(_ className: String, id: String, kind: AppRecord.Kind = .entity) async throws -> OutboxReceipt<AppRecord> {
        let opId = Outbox<Custom>.newOpId(), now = clock.now
        let target = AppRecordTarget(kind: kind, className: className, id: id)
        return try await commit { try $0.enqueue.removeAppRecord(opId: opId, target: target, now: now) }
    }

    private func created(
        _ className: String, kind: AppRecord.Kind, id: String?, version: Int?, status: String?, payload: [String: JSONValue],
        ends: (String?, String?)
    ) async throws -> OutboxReceipt<AppRecord> {
        let opId = Outbox<Custom>.newOpId(), now = clock.now
        return try await commit { ops in
            guard let declaration = try ops.tx.appRecords.declaration(of: className) else { throw AppDataError.undeclaredClass(className) }
            let made = id ?? Self.newId(for: declaration)
            let write = AppRecordWrite(
                kind: kind, className: className, id: made, classVersion: version ?? declaration.currentVersion,
                status: status, payload: payload, endA: ends.0, endB: ends.1)
            return try ops.enqueue.setAppRecord(opId: opId, write: write, creating: true, now: now)
        }
    }

    private func edit(
        _ className: String, id: String, kind: AppRecord.Kind, replacesWhole: Bool,
        _ change: @escaping @Sendable (inout AppRecord) throws -> Void
    ) async throws -> OutboxReceipt<AppRecord> {
        let opId = Outbox<Custom>.newOpId(), now = clock.now
        return try await commit { ops in
            // The change is made to the record as this transaction reads it: no edit is lost to a race.
            guard var record = try ops.tx.appRecords.record(kind, id: id), record.className == className else {
                throw AppDataError.recordNotFound(className: className, id: id)
            }
            try change(&record)
            let write = AppRecordWrite(
                kind: kind, className: className, id: id, replacesWhole: replacesWhole, classVersion: record.classVersion,
                status: record.status, payload: record.payload, endA: record.endA, endB: record.endB)
            return try ops.enqueue.setAppRecord(opId: opId, write: write, creating: false, now: now)
        }
    }

    /// A new record id made on the device: `<prefix>.<uuid>` under a wildcard, else a UUID.
    static func newId(for declaration: AppClass) -> String {
        let uuid = UUID().uuidString.lowercased()
        if case .wildcard(let prefix) = declaration.routing { return "\(prefix).\(uuid)" }
        return uuid
    }
}
