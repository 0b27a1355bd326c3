import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

// The Chat SDK's moderation data a pull reads (`docs/chat.md`, "Moderation"): the current user's
// restrictions come with their memberships listing (no request of their own: the store turns
// each moderation membership into a restriction, and `pruneRestrictions` removes the lifted
// ones); the mute list is one `GET` of the user object `PN_PRV.<userId>.mute1` per object pull.
extension Reconciler {
    /// Reads the current user's mute list (a 404: they have none) and stores it under the unsent
    /// mute and unmute ops. Returns whether the list the app sees changed.
    @discardableResult
    public func pullMuteList() async throws -> Bool {
        let owner = userId, id = ChatModeration.muteListId(of: owner)
        let list: StoredMuteList?
        do {
            let user = try await fetch("mute-list") { () async throws(WireError) in try await client.getUser(id: id, as: JSONValue.self) }
            list = StoredMuteList(
                muted: ChatModeration.mutedUsers(fromCustom: user.custom), updated: user.updated?.description, eTag: user.eTag)
        } catch WireError.service(let error) where error.reason == .notFound {
            list = nil
        }
        return try await ops.commit { try $0.overlay.applyServer(muteList: list, owner: owner) }
    }
}
