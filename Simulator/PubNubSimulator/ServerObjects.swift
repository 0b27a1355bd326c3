import Foundation
import PubNubWire
import ReplicaModel

extension PubNubServer {
    enum ObjectKind {
        case user, channel

        var fields: Set<String> {
            switch self {
            case .user: ["name", "externalId", "profileUrl", "email", "type", "status", "custom"]
            case .channel: ["name", "description", "type", "status", "custom"]
            }
        }
        var staleMessage: String {
            switch self {
            case .user: "User to update has been modified after it was read."
            case .channel: "Channel to update has been modified after it was read."
            }
        }
    }

    /// `segments` after `/v2/objects/{sub}`: `uuids[/id[/channels]]` or `channels[/id[/uuids]]`.
    func objects(_ request: WireRequest, segments s: [String]) -> WireResponse {
        guard let kind: ObjectKind = s[0] == "uuids" ? .user : s[0] == "channels" ? .channel : nil else { return Reply.notFound() }
        switch (request.method, s.count) {
        case (.get, 1): return listObjects(request, kind: kind)
        case (.get, 2): return getObject(request, kind: kind, id: s[1])
        case (.patch, 2): return setObject(request, kind: kind, id: s[1])
        case (.delete, 2):
            let existed: Bool
            switch kind {
            case .user: existed = users.removeValue(forKey: s[1]) != nil
            case .channel: existed = channels.removeValue(forKey: s[1]) != nil
            }
            if existed { emitObjectDelete(kind: kind, id: s[1]) }
            return Reply.json(200, ["status": 200, "data": nil])
        case (.get, 3), (.patch, 3):
            return memberships(request, kind: kind, id: s[1], listing: s[2])
        default:
            return Reply.notFound()
        }
    }

    func store(_ kind: ObjectKind) -> [String: StoredObject] { kind == .user ? users : channels }

    func include(_ request: WireRequest) -> Set<String> {
        Set((request.queryValue("include") ?? "").split(separator: ",").map(String.init))
    }

    /// An object as the API returns it; status, type and custom only when included.
    func json(_ object: StoredObject, kind: ObjectKind, include: Set<String>) -> JSONValue {
        var result: [String: JSONValue] = ["id": .string(object.id), "updated": .string(object.updated), "eTag": .string(object.eTag)]
        for field in kind.fields {
            if ["type", "status", "custom"].contains(field) && !include.contains(field) { continue }
            result[field] = object.fields[field] ?? .null
        }
        return .object(result)
    }

    func getObject(_ request: WireRequest, kind: ObjectKind, id: String) -> WireResponse {
        guard let object = store(kind)[id] else { return Reply.objectError(404, "Requested object was not found.", source: "objects") }
        return Reply.json(200, ["status": 200, "data": json(object, kind: kind, include: include(request))])
    }

    func setObject(_ request: WireRequest, kind: ObjectKind, id: String) -> WireResponse {
        guard case .object(let body)? = Reply.bodyJSON(request) else {
            return Reply.objectError(415, "Request payload must be in JSON format.", source: "objects")
        }
        if let custom = body["custom"], let problem = Self.customProblem(custom) {
            return Reply.objectError(400, "Request payload contained invalid input.", source: "objects",
                                     details: [(problem, kind == .user ? "uuid.custom" : "channel.custom")])
        }
        let existing = store(kind)[id]
        if let ifMatch = request.headers.first(where: { $0.key.lowercased() == "if-match" })?.value, ifMatch != existing?.eTag {
            return Reply.objectError(412, kind.staleMessage, source: "objects")
        }
        var fields = existing?.fields ?? [:]
        for (key, value) in body where kind.fields.contains(key) { fields[key] = value }
        let object: StoredObject
        if let existing, existing.fields == fields {
            object = existing  // setting identical data changes nothing
        } else {
            object = StoredObject(id: id, fields: fields, updated: TimetokenClock.iso(timetokens.next()), eTag: nextETag())
        }
        switch kind {
        case .user: users[id] = object
        case .channel: channels[id] = object
        }
        if object != existing { emitObjectSet(kind: kind, old: existing, new: object) }
        return Reply.json(200, ["status": 200, "data": json(object, kind: kind, include: include(request))])
    }

    /// PubNub allows only a flat object of scalars (or null) in `custom`.
    static func customProblem(_ custom: JSONValue) -> String? {
        switch custom {
        case .null: return nil
        case .object(let values):
            for (key, value) in values {
                if case .array = value { return "custom.\(key) must be a scalar" }
                if case .object = value { return "custom.\(key) must be a scalar" }
            }
            return nil
        default: return "custom must be an object"
        }
    }

    func listObjects(_ request: WireRequest, kind: ObjectKind) -> WireResponse {
        var all = Array(store(kind).values)
        if let filter = request.queryValue("filter") {
            guard let predicate = ObjectFilter(filter) else {
                return Reply.objectError(400, "Invalid filter expression.", source: "objects")
            }
            all = all.filter { predicate.matches(id: $0.id, fields: $0.fields, updated: $0.updated) }
        }
        let sorted = Self.sorted(all, sort: request.queryValue("sort"), id: \.id) { o, field in
            switch field {
            case "id": o.id
            case "updated": o.updated
            default: o.fields[field]?.stringValue ?? ""
            }
        }
        let include = include(request)
        return Reply.page(request, items: sorted) { json($0, kind: kind, include: include) }
    }

    /// The one reading of a listing's `sort` (`field[:asc|:desc]`, comma-joined): orders
    /// `elements` by those keys (`value` gives an element's text for a field, read once per
    /// element and key, not once per comparison), ties ordered by `id`.
    static func sorted<Element>(
        _ elements: [Element], sort: String?, id: (Element) -> String, value: (Element, String) -> String
    ) -> [Element] {
        let keys: [(field: String, descending: Bool)] = (sort ?? "").split(separator: ",").compactMap { key in
            let parts = key.split(separator: ":")
            guard let first = parts.first else { return nil }
            return (String(first), parts.count > 1 && parts[1] == "desc")
        }
        // Sorted as small keys (the element's position, its texts), not as the elements: a
        // listing of thousands of memberships is sorted again for each of its pages.
        let decorated = elements.enumerated().map { position, element in
            SortKey(position: position, values: keys.map { value(element, $0.field) }, id: id(element))
        }
        return decorated.sorted { a, b in
            for (index, key) in keys.enumerated() where a.values[index] != b.values[index] {
                return key.descending ? a.values[index] > b.values[index] : a.values[index] < b.values[index]
            }
            return a.id < b.id
        }.map { elements[$0.position] }
    }
}

/// An element of a listing being sorted: its position and the texts it is sorted by.
private struct SortKey {
    var position: Int
    var values: [String]
    var id: String
}

extension Reply {
    /// A list page: `limit` ≤ 100, cursors are unpadded base64 of the offset, `count` adds `totalCount`.
    static func page(_ request: WireRequest, items: [JSONValue]) -> WireResponse {
        page(request, items: items) { $0 }
    }

    /// A list page of `items` in their order, only the page's own elements rendered.
    static func page<Element>(_ request: WireRequest, items: [Element], render: (Element) -> JSONValue) -> WireResponse {
        let limit = request.int("limit") ?? 100
        guard (1...100).contains(limit) else {
            return objectError(400, "Request contained invalid parameters.", source: "objects", details: [("limit must be 1-100", "limit")])
        }
        let offset: Int
        if let start = request.queryValue("start") {
            guard let value = Cursor.decode(start) else { return objectError(400, "Invalid cursor.", source: "objects") }
            offset = value
        } else if let end = request.queryValue("end") {
            guard let value = Cursor.decode(end) else { return objectError(400, "Invalid cursor.", source: "objects") }
            offset = max(0, value - limit)
        } else {
            offset = 0
        }
        let slice = items.dropFirst(offset).prefix(limit).map(render)
        var body: [String: JSONValue] = ["status": 200, "data": .array(slice)]
        if !slice.isEmpty { body["next"] = .string(Cursor.encode(offset + slice.count)) }
        if offset > 0 { body["prev"] = .string(Cursor.encode(offset)) }
        if request.flag("count", default: false) { body["totalCount"] = .int(Int64(items.count)) }
        return json(200, .object(body))
    }
}

/// Opaque list cursors: unpadded base64 of a decimal offset, as observed on PubNub ("MTA" = 10).
enum Cursor {
    static func encode(_ offset: Int) -> String {
        Data(String(offset).utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ text: String) -> Int? {
        let padded = text + String(repeating: "=", count: (4 - text.count % 4) % 4)
        guard let data = Data(base64Encoded: padded) else { return nil }
        return Int(String(decoding: data, as: UTF8.self))
    }
}
