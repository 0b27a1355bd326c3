import Foundation
import PubNubWire
import ReplicaModel

extension PubNubServer {
    /// `GET|PATCH /v2/objects/{sub}/uuids/{user}/channels` and `/channels/{channel}/uuids`.
    func memberships(_ request: WireRequest, kind: ObjectKind, id: String, listing: String) -> WireResponse {
        let ofUser = kind == .user
        guard listing == (ofUser ? "channels" : "uuids") else { return Reply.notFound() }
        let otherKey = ofUser ? "channel" : "uuid"
        // Read before a PATCH changes anything: a refused filter leaves the memberships as they were.
        var filter: ObjectFilter?
        if let text = request.queryValue("filter") {
            filter = ObjectFilter(text, listing: ofUser ? .memberships : .members)
            guard filter != nil else { return Reply.objectError(400, "Invalid filter expression.", source: "objects") }
        }
        if request.method == .patch {
            guard case .object(let body)? = Reply.bodyJSON(request) else {
                return Reply.objectError(415, "Request payload must be in JSON format.", source: "objects")
            }
            let sets = body["set"]?.arrayValue ?? []
            let deletes = body["delete"]?.arrayValue ?? []
            for entry in sets {
                guard let item = entry.objectValue, let otherId = item[otherKey]?.objectValue?["id"]?.stringValue,
                    !otherId.isEmpty
                else {
                    return Reply.objectError(400, "Request payload contained invalid input.", source: "objects",
                                             details: [("Missing \(otherKey).id", "set")])
                }
                if let custom = item["custom"], let problem = Self.customProblem(custom) {
                    return Reply.objectError(400, "Request payload contained invalid input.", source: "objects",
                                             details: [(problem, "set.custom")])
                }
                let (user, channel) = ofUser ? (id, otherId) : (otherId, id)
                let old = memberships[user]?[channel]
                // A field the entry leaves out keeps its value, as the real service merges a
                // membership write (kmp-chat's `MembershipIntegrationTest.updatePartially` relies
                // on it: an invitation's read position written alone keeps `pending`).
                let status = item["status"] ?? old?.status ?? .null, type = item["type"] ?? old?.type ?? .null
                let custom = item["custom"] ?? old?.custom ?? .null
                if let old, old.status == status, old.type == type, old.custom == custom { continue }
                let membership = StoredMembership(
                    status: status, type: type, custom: custom, updated: TimetokenClock.iso(timetokens.next()), eTag: nextETag())
                memberships[user, default: [:]][channel] = membership
                emitMembership(user: user, channel: channel, membership: membership, updated: membership.updated, eTag: membership.eTag)
            }
            for entry in deletes {
                guard let otherId = entry.objectValue?[otherKey]?.objectValue?["id"]?.stringValue else { continue }
                let (user, channel) = ofUser ? (id, otherId) : (otherId, id)
                if memberships[user]?.removeValue(forKey: channel) != nil {
                    // The removal's `updated` is its event's timetoken (taken there); no eTag is
                    // spent on it, so the eTags of later changes stay as they were.
                    emitMembership(user: user, channel: channel, membership: nil, updated: nil, eTag: nil)
                }
            }
        }
        let include = include(request)
        let pairs: [(other: String, membership: StoredMembership)] =
            ofUser
            ? (memberships[id] ?? [:]).map { ($0.key, $0.value) }
            : memberships.compactMap { user, channels in channels[id].map { (user, $0) } }
        let kept = pairs.filter { other, membership in
            filter?.matches(membership: membership, other: other, otherObject: ofUser ? channels[other] : users[other]) ?? true
        }
        let objects = ofUser ? channels : users
        let ordered = Self.sorted(kept, sort: request.queryValue("sort"), id: \.other) { entry, field in
            switch field {
            case "updated": return entry.membership.updated
            case "status": return entry.membership.status.stringValue ?? ""
            case "type": return entry.membership.type.stringValue ?? ""
            case "\(otherKey).id": return entry.other
            case "\(otherKey).updated": return objects[entry.other]?.updated ?? ""
            default:
                guard field.hasPrefix(otherKey + ".") else { return "" }
                return objects[entry.other]?.fields[String(field.dropFirst(otherKey.count + 1))]?.stringValue ?? ""
            }
        }
        let nested = Set(include.compactMap { $0.hasPrefix(otherKey + ".") ? String($0.dropFirst(otherKey.count + 1)) : nil })
        // Sorted by the `sort` keys (`updated`, `status`, `type`, `<other>.id`, `<other>.<field>`
        // of the other side's object), then by the other side's id, as the listing without
        // `sort` is ordered; only the page's own entries are rendered.
        return Reply.page(request, items: ordered) { other, membership in
            var element: [String: JSONValue] = ["updated": .string(membership.updated), "eTag": .string(membership.eTag)]
            if include.contains(otherKey), let otherObject = objects[other] {
                element[otherKey] = json(otherObject, kind: ofUser ? .channel : .user, include: nested)
            } else {
                element[otherKey] = ["id": .string(other)]
            }
            if include.contains("status") { element["status"] = membership.status }
            if include.contains("type") { element["type"] = membership.type }
            if include.contains("custom") { element["custom"] = membership.custom }
            return .object(element)
        }
    }

    // MARK: Another device

    /// Before a conditional write to a user or channel, another device touches the object (new
    /// eTag and `updated`, fields unchanged), so the write's `If-Match` is stale.
    public func raceConditionalWrite(_ request: WireRequest) {
        let s = request.pathSegments
        guard s.count == 5, s[0] == "v2", s[1] == "objects" else { return }
        switch s[3] {
        case "uuids" where users[s[4]] != nil: remoteEditUser(id: s[4], fields: [:])
        case "channels" where channels[s[4]] != nil: remoteEditChannel(id: s[4], fields: [:])
        default: break
        }
    }

    /// Changes a user's fields as another device would (new eTag and `updated`): forces a 412 on
    /// the next conditional write that carries the old eTag.
    public func remoteEditUser(id: String, fields: [String: JSONValue]) {
        let old = users[id]
        let edited = remoteEdit(old, id: id, fields: fields)
        users[id] = edited
        emitObjectSet(kind: .user, old: old, new: edited)
    }

    /// Changes a channel's fields as another device would.
    public func remoteEditChannel(id: String, fields: [String: JSONValue]) {
        let old = channels[id]
        let edited = remoteEdit(old, id: id, fields: fields)
        channels[id] = edited
        emitObjectSet(kind: .channel, old: old, new: edited)
    }

    private func remoteEdit(_ existing: StoredObject?, id: String, fields: [String: JSONValue]) -> StoredObject {
        var object = existing ?? StoredObject(id: id, fields: [:], updated: "", eTag: "")
        for (key, value) in fields { object.fields[key] = value }
        object.updated = TimetokenClock.iso(timetokens.next())
        object.eTag = nextETag()
        return object
    }
}
