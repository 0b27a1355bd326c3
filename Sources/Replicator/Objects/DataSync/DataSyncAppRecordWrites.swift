import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

/// The writes of an app's own DataSync records on the wire (`docs/app-data.md`, "Writes"): the
/// one place a record op becomes a request and its answer a record, and where the server's
/// current record is read for a probe or a conflict.
///
/// - create: `POST /entities` (or `/relationships`) with the id, class, version, status, payload
///   (and a relationship's ends); a 409 means the id exists.
/// - replace: `PUT` with `If-Match` the base's eTag: every mutable field as wanted.
/// - patch: `PATCH` with `If-Match`, `application/json-patch+json`: the JSON Patch from the base's
///   state to the wanted one (``patch(from:to:kind:)``). A version change is `add
///   /entityClassVersion` (an upgrade).
/// - delete: `DELETE` with `If-Match` when the base's eTag is known.
enum DataSyncAppRecordWrites {
    /// The member that holds a record's class version on the wire.
    static func versionMember(_ kind: AppRecord.Kind) -> String {
        kind == .entity ? "entityClassVersion" : "relationshipClassVersion"
    }

    /// The JSON Patch that turns a record's `base` state into `wanted` (both in
    /// ``ReplicaStore/AppRecordWrite/state``'s form): an `add` per changed leaf (a replace where
    /// the member exists, RFC 6902 §4.1), a `remove` per removed member; the class version and the
    /// status at their wire paths (a status set to none is removed). Empty when they are equal.
    ///
    /// ```swift
    /// // [{"op":"add","path":"/payload/closed","value":true}]
    /// DataSyncAppRecordWrites.patch(from: base, to: wanted, kind: .entity)
    /// ```
    static func patch(from base: [String: JSONValue], to wanted: [String: JSONValue], kind: AppRecord.Kind) -> [JSONPatchOperation] {
        JSONDiff.changes(from: base, to: wanted).map { change -> JSONPatchOperation in
            var path = change.path
            if path.first == "classVersion" { path[0] = versionMember(kind) }
            let pointer = JSONPointer(path)
            switch change.edit {
            case .set(.null) where path == ["status"], .remove: return .remove(pointer)
            case .set(let value): return .add(pointer, value)
            }
        }
    }

    /// A `test` of the base's value at each path `operations` touch that the base holds (an
    /// added member has no value to test; JSON Patch cannot test an absence).
    static func tests(of operations: [JSONPatchOperation], in base: [String: JSONValue], kind: AppRecord.Kind) -> [JSONPatchOperation] {
        var wire = base
        wire[versionMember(kind)] = base["classVersion"]
        wire["classVersion"] = nil
        if wire["status"] == .null { wire["status"] = nil }
        return operations.compactMap { operation in
            let path = operation.path
            var value: JSONValue? = .object(wire)
            for token in path.tokens { value = value?.objectValue?[token] }
            return value.map { .test(path, $0) }
        }
    }

    /// The request of a record op: `baseState` is the state the op was based on (the op's base
    /// snapshot; none: a create), `ifMatch` the eTag it expects. Throws ``PubNubWire/WireError/invalidArgument(_:)``
    /// for what cannot be sent (a patch that changes nothing, a status outside 1-100 characters).
    static func request(
        for operation: OutboxOperation, baseState: [String: JSONValue]?, ifMatch: String?, client: PubNubClient
    ) throws(WireError) -> WireRequest {
        let sync = client.dataSync
        switch operation {
        case .setAppRecord(let write):
            let resource = AppRecord.resource(write.kind)
            // No base: the server never had the record as far as this device knows.
            guard let baseState else { return try sync.createRequest(resource, object(of: write)) }
            if write.replacesWhole { return try sync.replaceRequest(resource, id: write.id, object(of: write), ifMatch: ifMatch) }
            let operations = patch(from: baseState, to: write.state, kind: write.kind)
            guard write.concurrency == .touchedFields else {
                return try sync.patchRequest(resource, id: write.id, operations, ifMatch: ifMatch)
            }
            // Each touched member's base value is tested instead: another device's edit of
            // other members merges on the server; one of the same member fails the test (409).
            return try sync.patchRequest(resource, id: write.id, tests(of: operations, in: baseState, kind: write.kind) + operations)
        case .removeAppRecord(let target):
            return try sync.deleteRequest(AppRecord.resource(target.kind), id: target.id, ifMatch: ifMatch)
        case .send, .addReaction, .removeReaction, .setMembership, .removeMembership, .setUser, .removeUser, .setChannel,
             .removeChannel, .mention, .receipt, .hardDelete, .report, .setMuteList, .invite, .push, .readPositions:
            throw .invalidArgument("not an app record write: \(operation.kind.rawValue)")
        }
    }

    /// The record a write answer carries (create, replace, patch); nil for a delete's empty answer.
    static func answer(_ response: WireResponse, to operation: OutboxOperation) throws(WireError) -> AppRecord? {
        guard case .setAppRecord(let write) = operation else { return nil }
        let row = try PubNubDataSync.row(from: response, operation: "write \(write.className)")
        guard let record = AppRecord(row: row, kind: write.kind, className: write.className, classVersion: write.classVersion) else {
            throw .decoding(operation: "write \(write.className)", status: response.status, message: "the answer names no class or version")
        }
        return record
    }

    /// The server's current record, or nil when it has none: what a probe or a conflict reads.
    static func fetch(_ target: AppRecordTarget, client: PubNubClient) async throws(WireError) -> AppRecord? {
        guard let row = try await client.dataSync.get(AppRecord.resource(target.kind), id: target.id) else { return nil }
        return AppRecord(row: row, kind: target.kind, className: target.className)
    }

    /// The body's object of a create or replace.
    private static func object(of write: AppRecordWrite) -> DataSyncObject {
        var object = DataSyncObject(id: write.id, className: write.className, classVersion: write.classVersion, status: write.status, payload: write.payload)
        object.entityAId = write.endA
        object.entityBId = write.endB
        return object
    }
}
