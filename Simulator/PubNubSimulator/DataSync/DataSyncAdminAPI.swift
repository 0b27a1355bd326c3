import Foundation
import PubNubWire
import ReplicaModel

// The Admin API's class definitions (the protocol reference, §16), so that a test, a peer or a
// team's script defines a keyset's entity and relationship classes as it would on PubNub:
//
//     POST|GET|DELETE /v2/datasync/subkeys/{subKey}/entity-classes/{Name}/versions/{n}
//     POST|GET|DELETE /v2/datasync/subkeys/{subKey}/relationship-classes/{Name}/versions/{n}
//
// `Authorization: <admin key>` (the server checks it: `PubNubServer.adminKey`), a body of
// `{"data":{description, extends, config.ttlSec, properties[], cardinality, entityAClass,
// entityBClass}}`. What the reference does not give (the answers' shapes, GET and DELETE) is
// chosen in `docs/datasync.md`, "Choices": 201 `{"data": <the class>}`, GET 200 the same,
// DELETE 200 empty, refused with a 409 while records of the version exist.
extension DataSyncService {
    /// The path of a class definition: `{entity|relationship}-classes/{Name}/versions/{n}`.
    static func adminPath(_ segments: ArraySlice<String>) -> (kind: DataSyncClass.Kind, name: String, version: String)? {
        let s = Array(segments)
        guard s.count == 4, s[2] == "versions" else { return nil }
        switch s[0] {
        case "entity-classes": return (.entity, s[1], s[3])
        case "relationship-classes": return (.relationship, s[1], s[3])
        default: return nil
        }
    }

    /// Answers one Admin API request (`segments` after `subkeys/{subKey}`), whose key the server
    /// has checked.
    mutating func admin(_ request: WireRequest, segments: ArraySlice<String>) -> WireResponse {
        guard let (kind, name, versionText) = Self.adminPath(segments) else { return DataSyncReply.error(404, nil, "Not Found") }
        if let problem = DataSyncLimits.classNameProblem(name) { return DataSyncReply.error(400, codes.invalid, problem, path: "name") }
        guard let version = Int(versionText), version > 0 else {
            return DataSyncReply.error(400, codes.invalid, "a class version is a whole number from 1", path: "version")
        }
        let key = DataSyncClass.Key(name: name, version: version, level: .subKey)
        let contentType = "application/vnd.pubnub.objects.\(kind == .entity ? "entity" : "relationship")-class+json"
        switch request.method {
        case .get:
            guard let type = classes[key], type.kind == kind else { return classNotFound(name, version) }
            return Reply.json(200, ["data": type.adminJSON], contentType: contentType)
        case .delete:
            guard let type = classes[key], type.kind == kind else { return classNotFound(name, version) }
            if records.values.contains(where: { $0.values.contains { $0.type.key == key } }) {
                return DataSyncReply.error(409, nil, "\(name) v\(version) still has records")
            }
            classes[key] = nil
            return WireResponse(status: 200, headers: ["Content-Type": contentType], body: Data())
        case .post:
            if let refusal = Self.adminContentTypeRefusal(request, contentType) { return refusal }
            guard classes[key] == nil else {
                return DataSyncReply.error(409, codes.duplicate, "\(name) v\(version) is already defined")
            }
            do {
                let type = try definition(kind, name: name, version: version, body: Reply.bodyJSON(request))
                classes[key] = type
                return Reply.json(201, ["data": type.adminJSON], contentType: contentType)
            } catch {
                return error.response
            }
        default:
            return DataSyncReply.error(405, nil, "Method Not Allowed")
        }
    }

    func classNotFound(_ name: String, _ version: Int) -> WireResponse {
        DataSyncReply.error(404, codes.notFound, "Class definition not found: \(name) v\(version)")
    }

    /// The class vendor type or `application/json`; anything else is a 415.
    static func adminContentTypeRefusal(_ request: WireRequest, _ vendor: String) -> WireResponse? {
        let type = (request.headers.first { $0.key.lowercased() == "content-type" }?.value ?? "").lowercased()
        let base = type.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        return [vendor, "application/json"].contains(base) ? nil : DataSyncReply.error(415, nil, "Unsupported Media Type: \(base)")
    }

    /// The class a definition body describes, or why it is refused (each refusal names its field
    /// in `path`).
    func definition(_ kind: DataSyncClass.Kind, name: String, version: Int, body: JSONValue?) throws(DataSyncRefusal) -> DataSyncClass {
        guard let data = body?.objectValue?["data"]?.objectValue else {
            throw .init(400, codes.syntax, "the body must be {\"data\":{…}}")
        }
        var type = DataSyncClass(name: name, version: version, level: .subKey, kind: kind)
        switch data["description"] {
        case nil, .null?: break
        case .string(let text)?: type.summary = text
        default: throw .init(400, codes.invalid, "description must be a string", path: "description")
        }
        type.extends = try extended(kind, data["extends"])
        type.ttlSeconds = try timeToLive(data["config"])
        type.properties = try declaredProperties(data["properties"])
        if kind == .relationship {
            type.cardinality = try cardinality(data["cardinality"])
            if type.extends == nil {
                type.ends = (try endClass(data, "entityAClass"), try endClass(data, "entityBClass"))
            }
        } else {
            for field in ["cardinality", "entityAClass", "entityBClass"] where data[field] != nil {
                throw .init(400, codes.invalid, "\(field) is for relationship classes", path: field)
            }
        }
        return type
    }

    /// `extends: {name, version}`: `User` or `Channel` v1 for an entity class, `Membership` v1
    /// for a relationship class, or nil.
    func extended(_ kind: DataSyncClass.Kind, _ value: JSONValue?) throws(DataSyncRefusal) -> String? {
        guard let value, value != .null else { return nil }
        guard let object = value.objectValue, let base = object["name"]?.stringValue else {
            throw .init(400, codes.invalid, "extends must be {\"name\",\"version\"}", path: "extends")
        }
        let version: Int64 = if case .int(let v)? = object["version"] { v } else { 1 }
        let allowed = kind == .entity ? ["User", "Channel"] : ["Membership"]
        guard allowed.contains(base) else {
            throw .init(400, codes.notSubclass, "a class can extend only \(allowed.joined(separator: " or "))", path: "extends/name")
        }
        guard version == 1 else {
            throw .init(404, codes.notFound, "Class definition not found: \(base) v\(version)", path: "extends/version")
        }
        return base
    }

    /// `config.ttlSec`: 0 to 315,569,260 seconds; 31 days when left out (reference §8).
    func timeToLive(_ config: JSONValue?) throws(DataSyncRefusal) -> Int {
        guard let config, config != .null else { return 2_678_400 }
        guard let object = config.objectValue else { throw .init(400, codes.invalid, "config must be an object", path: "config") }
        switch object["ttlSec"] {
        case nil, .null?: return 2_678_400
        case .int(let seconds)? where (0...315_569_260).contains(seconds): return Int(seconds)
        default: throw .init(400, codes.invalid, "ttlSec is a whole number from 0 to 315569260", path: "config/ttlSec")
        }
    }

    /// `cardinality`: many-to-many when left out.
    func cardinality(_ value: JSONValue?) throws(DataSyncRefusal) -> DataSyncCardinality {
        guard let value, value != .null else { return .manyToMany }
        guard let text = value.stringValue, let cardinality = DataSyncCardinality(rawValue: text) else {
            throw .init(400, codes.invalid, "cardinality is many-to-many or one-to-one", path: "cardinality")
        }
        return cardinality
    }

    /// `entityAClass`/`entityBClass`: an entity class defined (any version) or a built-in one.
    func endClass(_ data: [String: JSONValue], _ field: String) throws(DataSyncRefusal) -> String {
        guard let name = data[field]?.stringValue else { throw .init(400, codes.notNull, "must not be null", path: field) }
        guard classes.values.contains(where: { $0.name == name && $0.kind == .entity }) else {
            throw .init(404, codes.notFound, "Class definition not found: \(name)", path: field)
        }
        return name
    }

    /// `properties[]`: unique names and paths under `/payload/`, known kinds and filterings,
    /// at most 3 projections in all (`__default__` counted).
    func declaredProperties(_ value: JSONValue?) throws(DataSyncRefusal) -> [DataSyncProperty] {
        guard let value, value != .null else { return [] }
        guard let items = value.arrayValue else { throw .init(400, codes.invalid, "properties must be an array", path: "properties") }
        var properties: [DataSyncProperty] = []
        var projections: Set<String> = ["__default__"]
        for (index, item) in items.enumerated() {
            let property = try declaredProperty(item, at: "properties/\(index)")
            if properties.contains(where: { $0.name == property.name || $0.pointer == property.pointer }) {
                throw .init(400, codes.invalid, "two properties share a name or a path", path: "properties/\(index)")
            }
            projections.formUnion(property.projections)
            guard projections.count <= 3 else {
                throw .init(400, codes.invalid, "a class has at most 3 projections, __default__ included", path: "properties/\(index)/projections")
            }
            properties.append(property)
        }
        return properties
    }

    /// One `properties[]` item.
    func declaredProperty(_ item: JSONValue, at path: String) throws(DataSyncRefusal) -> DataSyncProperty {
        guard let object = item.objectValue else { throw .init(400, codes.invalid, "a property is an object", path: path) }
        guard let name = object["name"]?.stringValue, DataSyncLimits.classNameProblem(name) == nil else {
            throw .init(400, codes.invalid, "a property's name is 1-128 letters, digits, _ or -, from a letter", path: "\(path)/name")
        }
        guard let text = object["path"]?.stringValue, let pointer = try? JSONPointer(parsing: text),
              pointer.tokens.count >= 2, pointer.tokens[0] == "payload", !pointer.tokens.contains(where: \.isEmpty)
        else {
            throw .init(400, codes.invalid, "a property's path is a pointer under /payload/", path: "\(path)/path")
        }
        guard let kindText = object["valueKind"]?.stringValue, let kind = DataSyncValueKind(rawValue: kindText) else {
            throw .init(400, codes.invalid, "valueKind is string, number, boolean, date or datetime", path: "\(path)/valueKind")
        }
        var filtering = DataSyncProperty.Filtering.none
        if let given = object["filtering"], given != .null {
            guard let text = given.stringValue, let parsed = DataSyncProperty.Filtering(rawValue: text) else {
                throw .init(400, codes.invalid, "filtering is none, simple or full", path: "\(path)/filtering")
            }
            filtering = parsed
        }
        var nullable = true
        switch object["isNullable"] {
        case nil, .null?: break
        case .bool(let flag)?: nullable = flag
        default: throw .init(400, codes.invalid, "isNullable is true or false", path: "\(path)/isNullable")
        }
        var projections = ["__default__"]
        if let given = object["projections"], given != .null {
            guard let list = given.arrayValue else { throw .init(400, codes.invalid, "projections is an array", path: "\(path)/projections") }
            projections = []
            for entry in list {
                guard let projection = entry.objectValue?["name"]?.stringValue, Self.isProjectionName(projection) else {
                    throw .init(400, codes.invalid, "a projection is {\"name\"}, 1-64 letters, digits, _ or -", path: "\(path)/projections")
                }
                if !projections.contains(projection) { projections.append(projection) }
            }
        }
        return DataSyncProperty(name: name, pointer: pointer, valueKind: kind, filtering: filtering, isNullable: nullable, projections: projections)
    }

    /// `__default__`, or 1 to 64 of `[a-zA-Z0-9_-]` starting with a letter or digit (reference §15).
    static func isProjectionName(_ name: String) -> Bool {
        if name == "__default__" { return true }
        guard (1...64).contains(name.utf8.count), let first = name.unicodeScalars.first, first.isASCII,
              first.properties.isAlphabetic || ("0"..."9").contains(first)
        else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "-") }
    }
}

extension DataSyncClass {
    /// The class as the Admin API answers it.
    var adminJSON: JSONValue {
        var data: [String: JSONValue] = [
            "name": .string(name), "version": .int(Int64(version)), "level": .string(level.rawValue),
            "config": ["ttlSec": .int(Int64(ttlSeconds))], "properties": .array(properties.map(\.json)),
        ]
        if let summary { data["description"] = .string(summary) }
        if let extends { data["extends"] = ["name": .string(extends), "version": 1] }
        if kind == .relationship, let cardinality { data["cardinality"] = .string(cardinality.rawValue) }
        if let ends {
            data["entityAClass"] = .string(ends.a)
            data["entityBClass"] = .string(ends.b)
        }
        return .object(data)
    }
}
