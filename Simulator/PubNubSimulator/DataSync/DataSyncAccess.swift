import Foundation
import PubNubWire
import ReplicaModel

extension DataSyncService {
    /// The records in a stable text, for ``PubNubServer/stateDigest()``.
    var digestText: String {
        var text = ""
        for resource in DataSyncResource.allCases {
            for (id, record) in (records[resource] ?? [:]).sorted(by: { $0.key < $1.key }) { text += "d,\(resource.rawValue),\(id),\(record.eTag);" }
        }
        return text
    }
}

extension AccessManager {
    /// What a list answered to `request` may show: everything to a signed request (the secret
    /// key's holder), else what its token may `get` (reference §10: the rest is left out, never
    /// refused).
    func readable(_ request: WireRequest) -> @Sendable (AccessResourceKind, String) -> Bool {
        if request.queryValue("signature") != nil { return { _, _ in true } }
        guard let text = request.queryValue("auth"), let grants = tokens[text]?.grant.grants else { return { _, _ in false } }
        return { kind, name in grants.permissions(kind, name: name).contains(.get) }
    }
}
