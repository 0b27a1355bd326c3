import ReplicaModel

extension ThreeWayMerge {
    /// The three-way merge of two JSON objects against the `base` both were edited from: member
    /// by member, recursively where both sides hold objects, each leaf (a scalar, an array, or a
    /// member's absence) taken as ``pick(base:local:remote:preferLocal:)`` takes a field: the
    /// side that changed it, and where both changed it differently, the preferred side.
    ///
    /// What a DataSync record's `payload` conflict is settled with under
    /// ``ConflictPolicy/fieldMerge(tie:)``: one device closing a poll and another editing its
    /// options keep both edits.
    ///
    /// ```swift
    /// let base: [String: JSONValue] = ["closed": .bool(false), "options": .array([.string("a")])]
    /// var local = base; local["closed"] = .bool(true)
    /// var remote = base; remote["options"] = .array([.string("a"), .string("b")])
    /// ThreeWayMerge.mergeJSON(base: base, local: local, remote: remote, preferLocal: true)
    /// // ["closed": true, "options": ["a", "b"]]
    /// ```
    public static func mergeJSON(
        base: [String: JSONValue], local: [String: JSONValue], remote: [String: JSONValue], preferLocal: Bool
    ) -> [String: JSONValue] {
        var merged: [String: JSONValue] = [:]
        for key in Set(base.keys).union(local.keys).union(remote.keys) {
            let b = base[key], l = local[key], r = remote[key]
            if case .object(let lo)? = l, case .object(let ro)? = r {
                let bo: [String: JSONValue] = if case .object(let inner)? = b { inner } else { [:] }
                merged[key] = .object(mergeJSON(base: bo, local: lo, remote: ro, preferLocal: preferLocal))
                continue
            }
            let localChanged = l != b, remoteChanged = r != b
            let value: JSONValue? = switch (localChanged, remoteChanged) {
            case (false, _): r
            case (true, false): l
            case (true, true): l == r ? l : (preferLocal ? l : r)
            }
            if let value { merged[key] = value }
        }
        return merged
    }
}
