import Foundation
import PubNubWire
import ReplicaModel

// What the simulator's DataSync checks in a record against its class (the protocol reference,
// §1, §4, §16): declared properties of the declared kind and present unless nullable, a
// relationship's ends existing and of the classes it declares, one-to-one cardinality.
extension DataSyncService {
    /// Refuses a record whose declared properties do not hold: a value of another kind (400
    /// ``DataSyncCodes/wrongKind``), a property that is not nullable missing or null (400
    /// ``DataSyncCodes/requiredMissing``); the refusal's `path` is the property's pointer.
    /// Undeclared payload keys are stored as given (reference §1).
    func validate(payload: [String: JSONValue]?, as type: DataSyncClass) throws(DataSyncRefusal) {
        guard !type.properties.isEmpty else { return }
        let document: JSONValue = ["payload": payload.map(JSONValue.object) ?? .null]
        for property in type.properties {
            guard let value = try? JSONPatch.value(at: property.pointer, in: document), value != .null else {
                if property.isNullable { continue }
                throw .init(400, codes.requiredMissing, "\(property.name) must not be null", path: property.pointer.text)
            }
            guard property.valueKind.accepts(value) else {
                throw .init(400, codes.wrongKind, "\(property.name) must be a \(property.valueKind.rawValue)", path: property.pointer.text)
            }
        }
    }

    /// The record an end of a relationship names: for a class that declares its end classes, a
    /// record of that class (`User`: a user, `Channel`: a channel, else an entity of the class;
    /// 400 ``DataSyncCodes/invalid`` naming `field` when it is of another), else a user, channel
    /// or entity of that id; 404 when there is none.
    func end(_ id: String, declared: String?, field: String) throws(DataSyncRefusal) -> DataSyncRecord {
        let notFound = DataSyncRefusal(404, codes.notFound, "Entity not found: \(id)")
        guard let declared else {
            for resource in [DataSyncResource.entities, .users, .channels] {
                if let record = records[resource]?[id] { return record }
            }
            throw notFound
        }
        let resource: DataSyncResource = switch declared {
        case "User": .users
        case "Channel": .channels
        default: .entities
        }
        if let record = records[resource]?[id], resource != .entities || record.type.name == declared { return record }
        let elsewhere = [DataSyncResource.entities, .users, .channels].contains { records[$0]?[id] != nil }
        guard elsewhere else { throw notFound }
        throw .init(400, codes.invalid, "\(field) must name a \(declared)", path: field)
    }

    /// Refuses a relationship between `a` and `b` that its one-to-one class already links on
    /// either side (409 ``DataSyncCodes/cardinality``).
    func checkCardinality(_ type: DataSyncClass, a: String, b: String) throws(DataSyncRefusal) {
        guard type.cardinality == .oneToOne else { return }
        let clash = records[.relationships]?.values.first { $0.type.name == type.name && ($0.endA == a || $0.endB == b) }
        guard let clash else { return }
        let end = clash.endA == a ? a : b
        throw .init(409, codes.cardinality, "\(type.name) is one-to-one: '\(clash.id)' already links \(end)")
    }

    /// The class a patch moves a record to when it changes the class version: the same name and
    /// level at `version` (404 ``DataSyncCodes/notFound`` when it is not defined). Its expiry is
    /// kept (choice 2a).
    func upgradedClass(_ record: DataSyncRecord, to version: Int, path: String) throws(DataSyncRefusal) -> DataSyncClass {
        guard version != record.type.version else { return record.type }
        guard version > 0, let type = classes[DataSyncClass.Key(name: record.type.name, version: version, level: record.type.level)],
              type.kind == record.type.kind
        else {
            throw .init(404, codes.notFound, "Class definition not found: \(record.type.name) v\(version)", path: path)
        }
        return type
    }
}
