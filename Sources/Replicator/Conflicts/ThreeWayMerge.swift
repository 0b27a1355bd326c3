import Foundation
import ReplicaModel

/// The field-by-field comparison behind ``ConflictPolicy/fieldMerge(tie:)`` and the policies
/// that pick a side. Pure functions over wire-named field maps.
public enum ThreeWayMerge {
    /// The fields each entity kind replicates, by wire name.
    public static func fields(of entity: ConflictEntity) -> [String] {
        switch entity {
        case .user: FieldSchema.user
        case .channel: FieldSchema.channel
        case .membership: FieldSchema.membership
        case .record: ["classVersion", "payload", "status"]
        }
    }

    /// `object`'s replicated fields, with absent ones as JSON `null` (and an absent user or channel
    /// `type` as `"default"`, as the store keeps it), so that versions compare field by field.
    public static func normalize(_ object: JSONValue?, entity: ConflictEntity) -> [String: JSONValue]? {
        guard case .object(let values)? = object else { return nil }
        var result: [String: JSONValue] = [:]
        for field in fields(of: entity) {
            var value = entity == .membership || entity == .record ? values[field] ?? .null : FieldSchema.comparable(field, values[field])
            if field == "custom", case .object(let custom) = value, custom.isEmpty { value = .null }
            result[field] = value
        }
        return result
    }

    /// The three-way merge of `local` and `remote` against `base`: a field (or `custom` key)
    /// changed on one side only takes that side; changed on both to different values, `tie`
    /// decides (`localIsLater` answers ``TieRule/lastWriter``).
    public static func merge(
        base: [String: JSONValue]?, local: [String: JSONValue], remote: [String: JSONValue], tie: TieRule,
        localIsLater: Bool
    ) -> [String: JSONValue] {
        let preferLocal =
            switch tie {
            case .local: true
            case .remote: false
            case .lastWriter: localIsLater
            }
        var result = remote
        for key in Set(local.keys).union(remote.keys) {
            let b = base?[key] ?? .null, l = local[key] ?? .null, r = remote[key] ?? .null
            if key == "payload", case .object(let lo) = l, case .object(let ro) = r {
                // An app record's payload, member by member (recursively).
                result[key] = .object(mergeJSON(base: b.objectValue ?? [:], local: lo, remote: ro, preferLocal: preferLocal))
                continue
            }
            if key == "custom", case .object = l, case .object = r {
                result[key] = mergeCustom(base: b, local: l, remote: r, preferLocal: preferLocal)
                continue
            }
            result[key] = pick(base: b, local: l, remote: r, preferLocal: preferLocal)
        }
        return result
    }

    /// One value: the side that changed it; both changed differently → the preferred side.
    static func pick(base: JSONValue, local: JSONValue, remote: JSONValue, preferLocal: Bool) -> JSONValue {
        let localChanged = local != base, remoteChanged = remote != base
        switch (localChanged, remoteChanged) {
        case (false, _): return remote
        case (true, false): return local
        case (true, true): return local == remote ? local : (preferLocal ? local : remote)
        }
    }

    /// `custom` key by key (PubNub replaces it whole, so the merged object is sent whole).
    static func mergeCustom(base: JSONValue, local: JSONValue, remote: JSONValue, preferLocal: Bool) -> JSONValue {
        let b = base.objectValue ?? [:], l = local.objectValue ?? [:], r = remote.objectValue ?? [:]
        var merged: [String: JSONValue] = [:]
        for key in Set(b.keys).union(l.keys).union(r.keys) {
            // An absent key is a removed (or never set) key: compare it as null.
            let value = pick(base: b[key] ?? .null, local: l[key] ?? .null, remote: r[key] ?? .null, preferLocal: preferLocal)
            if value != .null { merged[key] = value }
        }
        return merged.isEmpty ? .null : .object(merged)
    }

    /// The fields of `result` that differ from `remote` (what must be sent to reach `result`).
    public static func changes(from remote: [String: JSONValue]?, to result: [String: JSONValue]) -> [String: JSONValue] {
        result.filter { key, value in (remote?[key] ?? .null) != value }
    }
}
