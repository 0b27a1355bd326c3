import Foundation
import ReplicaModel
import ReplicaStore
import Replicator

/// The app's own DataSync records (`docs/app-data.md`): created, edited, upgraded and deleted
/// offline through the outbox, as the chat's own writes are. Read them with the store's queries
/// (`replica.fetch(AppRecordQueries.records(AppRecordFilter("Poll")))`, or `observe`).
///
/// Each write is checked against the class's declaration first (``AppDataError``: a property of
/// the wrong kind, a required one missing, an end known deleted; nothing is stored), shown at
/// once, sent in order per record, probed before a resend, and its conflicts (a 412, a 409 on a
/// create) settled by ``ConflictPolicies/classes`` or ``ConflictPolicies/record``.
///
/// ```swift
/// struct Poll: Codable { var question: String; var options: [String]; var closed: Bool }
/// let poll = try await replica.appData.create("Poll", Poll(question: "Lunch?", options: ["pizza"], closed: false)).id
/// try await replica.appData.update("Poll", id: poll, as: Poll.self) { $0.closed = true }
/// try await replica.appData.link("Vote", from: poll, to: "alice", id: "vote.\(poll).alice", ["choice": 0])
/// ```
///
/// Reached through ``Replica/appData``: a value made per access, holding only the replica.
public struct ReplicaAppData<Custom: ChatCustomData>: Sendable {
    /// The replica these calls go through.
    let replica: Replica<Custom>

    /// Creates an entity of class `className` whose payload is `value` encoded as JSON (a
    /// `[String: JSONValue]` is taken as it is). Without an `id` one is made on the device
    /// (`<prefix>.<uuid>` for a class routed on a wildcard). Returns the record as shown
    /// (``OutboxReceipt/value``) and its op.
    @discardableResult
    public func create(
        _ className: String, _ value: some Encodable & Sendable, id: String? = nil, status: String? = nil
    ) async throws -> OutboxReceipt<AppRecord> {
        let payload = try Self.payload(value, className: className)
        return try await replica.write { try await $0.appRecords.create(className, id: id, status: status, payload: payload) }
    }

    /// Links entity `a` to entity `b` with a relationship of class `className` and payload
    /// `payload`. A link whose end was created offline is sent after that end.
    @discardableResult
    public func link(
        _ className: String, from a: String, to b: String, id: String? = nil, _ payload: [String: JSONValue] = [:]
    ) async throws -> OutboxReceipt<AppRecord> {
        try await replica.write { try await $0.appRecords.link(className, from: a, to: b, id: id, payload: payload) }
    }

    /// Edits a stored record's payload as the app's own type: `change` edits it decoded, and the
    /// JSON Patch of what changed is sent (`If-Match` the version the edit is based on). An edit
    /// that changes nothing sends nothing.
    ///
    /// ```swift
    /// try await replica.appData.update("Poll", id: "poll.1", as: Poll.self) { $0.options.append("sushi") }
    /// ```
    @discardableResult
    public func update<Payload: Codable & Sendable>(
        _ className: String, id: String, kind: AppRecord.Kind = .entity, as type: Payload.Type,
        _ change: @escaping @Sendable (inout Payload) throws -> Void
    ) async throws -> OutboxReceipt<AppRecord> {
        try await update(className, id: id, kind: kind) { record in
            var value = try record.decoded(as: Payload.self)
            try change(&value)
            record.payload = try Self.payload(value, className: className)
        }
    }

    /// Edits a stored record as JSON (its payload, status, or class version: an upgrade); the
    /// JSON Patch of what changed is sent.
    @discardableResult
    public func update(
        _ className: String, id: String, kind: AppRecord.Kind = .entity, _ change: @escaping @Sendable (inout AppRecord) throws -> Void
    ) async throws -> OutboxReceipt<AppRecord> {
        try await replica.write { try await $0.appRecords.update(className, id: id, kind: kind, change) }
    }

    /// Replaces a stored record's status and payload whole (`PUT`, `If-Match`): a payload member
    /// left out is removed on the server.
    @discardableResult
    public func replace(
        _ className: String, id: String, kind: AppRecord.Kind = .entity, status: String? = nil, payload: [String: JSONValue]
    ) async throws -> OutboxReceipt<AppRecord> {
        try await replica.write { try await $0.appRecords.replace(className, id: id, kind: kind, status: status, payload: payload) }
    }

    /// Upgrades a stored record to class version `version` (DataSync keeps records of both
    /// versions side by side), its payload reshaped by `transform`.
    @discardableResult
    public func upgrade(
        _ className: String, id: String, to version: Int,
        transform: @escaping @Sendable ([String: JSONValue]) throws -> [String: JSONValue] = { $0 }
    ) async throws -> OutboxReceipt<AppRecord> {
        try await replica.write { try await $0.appRecords.upgrade(className, id: id, to: version, transform: transform) }
    }

    /// Deletes a stored record (a relationship: unlinks it). A record whose create was never
    /// sent is simply withdrawn.
    @discardableResult
    public func delete(_ className: String, id: String, kind: AppRecord.Kind = .entity) async throws -> OutboxReceipt<AppRecord> {
        try await replica.write { try await $0.appRecords.delete(className, id: id, kind: kind) }
    }

    /// `value` as a JSON object, or ``AppDataError/invalidRecord(className:id:reason:)``.
    static func payload(_ value: some Encodable, className: String) throws -> [String: JSONValue] {
        guard case .object(let object) = try JSONValue(encoding: value) else {
            throw AppDataError.invalidRecord(className: className, id: "", reason: "a payload is a JSON object")
        }
        return object
    }
}

extension Replica {
    /// The app's own DataSync records: created, edited, upgraded and deleted offline
    /// (``ReplicaAppData``).
    public nonisolated var appData: ReplicaAppData<Custom> { ReplicaAppData(replica: self) }
}
