import Foundation
import PubNubWire
import ReplicaModel

// The simulator's DataSync lists (reference §10): `limit` 1-100 (default 20), forward cursors,
// `filter_fast` or `filter` (not both), `sort`, a membership's `user_id`/`channel_id`, a
// relationship's ends, the class parameters, and only what the token may read.
extension DataSyncService {
    /// One sort key: a field, ascending unless `:desc` (or a leading `-`).
    struct SortKey: Sendable {
        var field: String
        var descending: Bool

        init(_ text: Substring) {
            if text.hasPrefix("-") {
                (field, descending) = (String(text.dropFirst()), true)
            } else if text.hasSuffix(":desc") {
                (field, descending) = (String(text.dropLast(5)), true)
            } else {
                (field, descending) = (String(text.hasSuffix(":asc") ? text.dropLast(4) : text), false)
            }
        }
    }

    /// The fields a list of `resource` (of `className`, at `version`, when given) may use where
    /// `modes` are allowed: the system fields always (reference §10: they behave as `full`), and
    /// the declared properties whose filtering is one of `modes` (`filter_fast` and `sort`:
    /// simple or full; `filter`: full).
    func listFields(
        _ resource: DataSyncResource, className: String? = nil, version: Int? = nil,
        modes: Set<DataSyncProperty.Filtering> = [.simple, .full]
    ) -> Set<String> {
        var fields: Set<String> = ["id", "createdAt", "updatedAt", "status"]
        if resource == .memberships { fields.formUnion(["channelId", "userId"]) }
        if resource == .relationships { fields.formUnion(["entityAId", "entityBId"]) }
        for type in classes.values where type.resource == resource && (className == nil || type.name == className)
            && (version == nil || type.version == version)
        {
            fields.formUnion(type.properties.filter { modes.contains($0.filtering) }.map(\.name))
        }
        return fields
    }

    /// The fields of `resource` that compare as numbers: properties of kind `number`.
    func numericFields(_ resource: DataSyncResource, className: String?) -> Set<String> {
        var fields: Set<String> = []
        for type in classes.values where type.resource == resource && (className == nil || type.name == className) {
            fields.formUnion(type.properties.filter { $0.valueKind == .number }.map(\.name))
        }
        return fields
    }

    func list(_ resource: DataSyncResource, _ request: WireRequest, readable: (AccessResourceKind, String) -> Bool) -> WireResponse {
        let limit = request.int("limit") ?? 20
        guard DataSyncLimits.pageSize.contains(limit) else { return DataSyncReply.error(400, codes.invalid, "limit must be 1-100", path: "limit") }
        let fast = request.queryValue("filter_fast"), slow = request.queryValue("filter")
        guard fast == nil || slow == nil else { return DataSyncReply.error(400, codes.invalid, "send filter or filter_fast, not both") }
        let relationship = resource.isRelationship
        let className = request.queryValue(relationship ? "relationship_class" : "entity_class")
        if className == nil, resource == .entities || resource == .relationships {
            return DataSyncReply.error(400, codes.invalid, "must not be null", path: relationship ? "relationship_class" : "entity_class")
        }
        let version = request.int(relationship ? "relationship_class_version" : "entity_class_version")
        let level = request.queryValue("entity_class_level")
        let fields = listFields(resource, className: className, version: version)
        let numeric = numericFields(resource, className: className)
        var filter: ObjectFilter?
        if let text = fast ?? slow {
            do {
                let usable = slow == nil ? fields : listFields(resource, className: className, version: version, modes: [.full])
                let parsed = try ObjectFilter(parsing: text, listing: .dataSync(fields: usable))
                if fast != nil, parsed.predicateCount > choices.maxFastPredicates {
                    return DataSyncReply.error(400, codes.invalid, "filter_fast allows at most \(choices.maxFastPredicates) predicates")
                }
                filter = parsed
            } catch .unknownField(let field, _) {
                return DataSyncReply.error(400, codes.unfilterable, "\(field) cannot be filtered on")
            } catch {
                return DataSyncReply.error(400, codes.filterSyntax, "invalid filter: \(error)")
            }
        }
        let sort = (request.queryValue("sort") ?? "").split(separator: ",").map(SortKey.init)
        if let unknown = sort.first(where: { !fields.contains($0.field) }) {
            return DataSyncReply.error(400, codes.unfilterable, "\(unknown.field) cannot be sorted on")
        }
        let ends: (String?, String?) = resource == .memberships
            ? (request.queryValue("channel_id"), request.queryValue("user_id"))
            : (request.queryValue("entity_a_id"), request.queryValue("entity_b_id"))
        let kind: AccessResourceKind = switch resource {
        case .users: .user
        case .channels: .channel
        case .memberships: .dataSyncMembership
        case .entities: .dataSyncEntity
        case .relationships: .dataSyncRelationship
        }
        let filtered = (records[resource] ?? [:]).values.filter { record in
            (className == nil || record.type.name == className) && (version == nil || record.type.version == version)
                && (level == nil || record.type.level.rawValue == level)
                && (ends.0 == nil || record.endA == ends.0) && (ends.1 == nil || record.endB == ends.1)
                && (filter?.matches({ record.value(of: $0) }, numeric: numeric.contains) ?? true) && readable(kind, record.id)
        }
        // Each row's sort values are read once, not at each comparison.
        let numericKeys = sort.map { numeric.contains($0.field) }
        var rows = filtered.map { record in Position(values: sort.map { record.value(of: $0.field) }, sequence: record.sequence, record: record) }
        rows.sort { Self.precedes($0, $1, sort: sort, numeric: numericKeys) }
        if let cursor = request.queryValue("cursor") {
            guard let after = Self.decodeCursor(cursor) else { return DataSyncReply.error(400, codes.invalid, "invalid cursor", path: "cursor") }
            rows.removeAll { !Self.precedes(after, $0, sort: sort, numeric: numericKeys) }
        }
        let page = rows.prefix(limit)
        var meta: [String: JSONValue] = ["has_next": .bool(rows.count > limit), "limit": .int(Int64(limit))]
        if rows.count > limit, let last = page.last { meta["next_cursor"] = .string(Self.cursor(after: last)) }
        return Reply.json(200, ["data": .array(page.compactMap { $0.record?.json }), "meta": .object(meta)], contentType: resource.contentType)
    }

    /// Whether `a` comes before `b`: by the sort keys (a missing value first; `numeric` keys
    /// compared as numbers), then by creation.
    static func precedes(_ a: Position, _ b: Position, sort: [SortKey], numeric: [Bool]) -> Bool {
        for (index, key) in sort.enumerated() {
            let x = index < a.values.count ? a.values[index] : nil, y = index < b.values.count ? b.values[index] : nil
            let order: ComparisonResult = switch (x, y) {
            case (nil, nil): .orderedSame
            case (nil, _): .orderedAscending
            case (_, nil): .orderedDescending
            case (let x?, let y?): ObjectFilter.order(x, y, numeric: numeric[index])
            }
            if order == .orderedSame { continue }
            return (order == .orderedAscending) != key.descending
        }
        return a.sequence < b.sequence
    }

    /// A row's place in a list: its sort values and creation number (a cursor's: the last row's;
    /// no record).
    struct Position: Sendable {
        var values: [String?]
        var sequence: UInt64
        var record: DataSyncRecord?
    }

    /// `base64url({"i":"<sequence>","sv":[…]})`, unpadded: the captured format.
    static func cursor(after position: Position) -> String {
        let values = JSONValue.array(position.values.map { $0.map(JSONValue.string) ?? .null })
        let json: JSONValue = ["i": .string(String(position.sequence)), "sv": values]
        let text = (try? json.jsonData()).map { $0.base64EncodedString() } ?? ""
        return text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decodeCursor(_ text: String) -> Position? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard text.count <= 4096, let data = Data(base64Encoded: base64), let json = JSONValue.parse(data)?.objectValue,
              let sequence = json["i"]?.stringValue.flatMap({ UInt64($0) })
        else { return nil }
        let values = (json["sv"]?.arrayValue ?? []).map(\.stringValue)
        return Position(values: values, sequence: sequence, record: nil)
    }
}
