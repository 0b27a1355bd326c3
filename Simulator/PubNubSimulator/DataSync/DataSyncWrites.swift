import Foundation
import PubNubWire
import ReplicaModel

// The simulator's DataSync writes: create, replace, patch, delete (reference §3-§8).
extension DataSyncService {
    /// The `data` object of a create or replace body, or the refusal.
    func bodyData(_ request: WireRequest) -> Result<[String: JSONValue], DataSyncRefusal> {
        guard let body = Reply.bodyJSON(request), let data = body.objectValue?["data"]?.objectValue else {
            return .failure(.init(400, codes.syntax, "the body must be {\"data\":{…}}"))
        }
        return .success(data)
    }

    /// `status` and `payload` of a body: a status of 1 to 100 characters, a payload object.
    func statusAndPayload(_ data: [String: JSONValue]) -> Result<(String?, [String: JSONValue]?), DataSyncRefusal> {
        var status: String?
        switch data["status"] {
        case nil, .null?: break
        case .string(let text)? where DataSyncLimits.statusLength.contains(text.count): status = text
        default: return .failure(.init(400, codes.invalid, "status must be 1-100 characters", path: "status"))
        }
        switch data["payload"] {
        case nil, .null?: return .success((status, nil))
        case .object(let payload)?: return .success((status, payload))
        default: return .failure(.init(400, codes.invalid, "payload must be an object", path: "payload"))
        }
    }

    mutating func create(_ resource: DataSyncResource, _ request: WireRequest, now: ISOTimestamp) -> (WireResponse, [DataSyncEmission]) {
        if let refusal = Self.contentTypeRefusal(request, patch: false, resource: resource) { return (refusal, []) }
        do {
            let record = try newRecord(resource, try bodyData(request).get(), now: now)
            records[resource, default: [:]][record.id] = record
            nextExpiry = min(nextExpiry ?? record.expiresAt, record.expiresAt)
            return (DataSyncReply.record(201, record), emission("create", record))
        } catch {
            return (error.response, [])
        }
    }

    /// The record a create body makes, or why not.
    mutating func newRecord(_ resource: DataSyncResource, _ data: [String: JSONValue], now: ISOTimestamp) throws(DataSyncRefusal)
        -> DataSyncRecord
    {
        let relationship = resource.isRelationship
        guard case .int(let version)? = data[relationship ? "relationshipClassVersion" : "entityClassVersion"], version > 0 else {
            throw .init(400, codes.notNull, "must not be null", path: relationship ? "relationshipClassVersion" : "entityClassVersion")
        }
        let level = data["entityClassLevel"]?.stringValue.flatMap(DataSyncClassLevel.init(rawValue:))
        let name = (relationship ? data["relationshipClass"] : data["entityClass"])?.stringValue
        let type = try resolveClass(resource, name: name, version: Int(version), level: level).get()
        let (status, payload) = try statusAndPayload(data).get()
        try validate(payload: payload, as: type)
        var id: String
        if let given = data["id"] {
            guard let text = given.stringValue else { throw .init(400, codes.invalid, "id must be a string", path: "id") }
            if let problem = DataSyncIdentifier.problem(text) { throw .init(400, codes.invalid, problem, path: "id") }
            id = text
        } else {
            sequence += 1
            id = "\(resource.noun)-\(sequence)"
        }
        guard !exists(resource, id) else { throw .init(409, codes.duplicate, "\(type.name) '\(id)' already exists") }
        var ends: (String, String)?
        if relationship {
            let keys = resource == .memberships ? ("channelId", "userId") : ("entityAId", "entityBId")
            guard let a = data[keys.0]?.stringValue, let b = data[keys.1]?.stringValue else {
                throw .init(400, codes.invalid, "must not be null", path: data[keys.0] == nil ? keys.0 : keys.1)
            }
            if resource == .memberships {
                guard exists(.channels, a) else { throw .init(404, codes.notFound, "Entity not found: \(a)") }
                guard exists(.users, b) else { throw .init(404, codes.notFound, "Entity not found: \(b)") }
                if records[.memberships]?.values.contains(where: { $0.endA == a && $0.endB == b }) == true {
                    throw .init(409, codes.duplicate, "a membership of user '\(b)' in channel '\(a)' already exists")
                }
            } else {
                _ = try end(a, declared: type.ends?.a, field: "entityAId")
                _ = try end(b, declared: type.ends?.b, field: "entityBId")
                try checkCardinality(type, a: a, b: b)
            }
            ends = (a, b)
        }
        sequence += 1
        let created = stamp(now)
        return DataSyncRecord(
            resource: resource, id: id, type: type, status: status, payload: payload, createdAt: created, updatedAt: created,
            expiresAt: Self.expiry(created, ttlSeconds: type.ttlSeconds), eTag: nextETag(), endA: ends?.0, endB: ends?.1,
            sequence: sequence)
    }

    mutating func replace(_ resource: DataSyncResource, id: String, _ request: WireRequest, now: ISOTimestamp)
        -> (WireResponse, [DataSyncEmission])
    {
        if let refusal = Self.contentTypeRefusal(request, patch: false, resource: resource) { return (refusal, []) }
        guard var record = records[resource]?[id] else { return (DataSyncReply.notFound(resource, id, code: codes.notFound), []) }
        if let stale = staleIfMatch(request, record) { return (stale, []) }
        do throws(DataSyncRefusal) {
            let data = try bodyData(request).get()
            let key = resource.isRelationship ? "relationshipClassVersion" : "entityClassVersion"
            guard case .int(let version)? = data[key] else { throw DataSyncRefusal(400, codes.notNull, "must not be null", path: key) }
            guard Int(version) == record.type.version else {
                throw DataSyncRefusal(400, codes.invalid, "the class version cannot change to \(version) here", path: key)
            }
            (record.status, record.payload) = try statusAndPayload(data).get()
            try validate(payload: record.payload, as: record.type)
        } catch {
            return (error.response, [])
        }
        return commit(record, now: now)
    }

    mutating func patch(_ resource: DataSyncResource, id: String, _ request: WireRequest, now: ISOTimestamp)
        -> (WireResponse, [DataSyncEmission])
    {
        if let refusal = Self.contentTypeRefusal(request, patch: true, resource: resource) { return (refusal, []) }
        guard var record = records[resource]?[id] else { return (DataSyncReply.notFound(resource, id, code: codes.notFound), []) }
        if let stale = staleIfMatch(request, record) { return (stale, []) }
        do throws(DataSyncRefusal) {
            guard let list = Reply.bodyJSON(request)?.arrayValue else { throw DataSyncRefusal(400, codes.syntax, "the body must be a JSON Patch array") }
            guard !list.isEmpty else { throw DataSyncRefusal(400, codes.syntax, "empty patch") }
            var operations: [JSONPatchOperation] = []
            for item in list {
                do {
                    operations.append(try JSONPatchOperation(json: item))
                } catch {
                    throw DataSyncRefusal(400, codes.syntax, error.description)
                }
            }
            let versionKey = resource.isRelationship ? "relationshipClassVersion" : "entityClassVersion"
            for operation in operations {
                var touched = [operation.path]
                if case .move(let from, _) = operation { touched.append(from) }
                for pointer in touched where ![versionKey, "status", "payload"].contains(pointer.tokens.first ?? "") {
                    throw DataSyncRefusal(400, codes.invalid, "\(pointer.text) cannot be patched", path: pointer.text)
                }
            }
            let patched: JSONValue
            do {
                patched = try JSONPatch.apply(operations, to: record.patchable)
            } catch .testFailed(let pointer) {
                throw DataSyncRefusal(409, codes.testFailed, "test failed", path: pointer.text)
            } catch .missingTarget(let pointer) {
                throw DataSyncRefusal(400, codes.missingMember, "Property does not exist", path: pointer.text)
            } catch {
                throw DataSyncRefusal(400, codes.syntax, error.description)
            }
            let fields = patched.objectValue ?? [:]
            guard case .int(let version)? = fields[versionKey] else {
                throw DataSyncRefusal(400, codes.invalid, "the class version is a whole number", path: "/" + versionKey)
            }
            // A new version is an upgrade to a defined version of the class (its expiry kept).
            record.type = try upgradedClass(record, to: Int(version), path: "/" + versionKey)
            (record.status, record.payload) = try statusAndPayload(fields).get()
            try validate(payload: record.payload, as: record.type)
        } catch {
            return (error.response, [])
        }
        return commit(record, now: now)
    }

    /// Stores an updated record with a new eTag and `updatedAt` (never `expiresAt`: choice 2a).
    private mutating func commit(_ changed: DataSyncRecord, now: ISOTimestamp) -> (WireResponse, [DataSyncEmission]) {
        var record = changed
        record.updatedAt = stamp(now)
        record.eTag = nextETag()
        records[record.resource, default: [:]][record.id] = record
        return (DataSyncReply.record(200, record), emission("update", record))
    }

    mutating func delete(_ resource: DataSyncResource, id: String, _ request: WireRequest, now: ISOTimestamp)
        -> (WireResponse, [DataSyncEmission])
    {
        guard let record = records[resource]?[id] else { return (DataSyncReply.notFound(resource, id, code: codes.notFound), []) }
        if let stale = staleIfMatch(request, record) { return (stale, []) }
        records[resource]?[id] = nil
        var emissions = emission("delete", record, deletedAt: now)
        if resource == .users || resource == .channels {
            // A user's or channel's memberships go with it (reference §16: a soft cascade).
            let gone = (records[.memberships] ?? [:]).values.filter { resource == .users ? $0.endB == id : $0.endA == id }
            for membership in gone.sorted(by: { $0.sequence < $1.sequence }) {
                records[.memberships]?[membership.id] = nil
                emissions += emission("delete", membership, deletedAt: now)
            }
        }
        return (WireResponse(status: 200, headers: [:], body: Data()), emissions)
    }
}
