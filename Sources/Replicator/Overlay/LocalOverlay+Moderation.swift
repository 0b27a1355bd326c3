import Foundation
import ReplicaModel
import ReplicaStore

// Read-your-writes for the Chat SDK's mute list (`docs/chat.md`, "Moderation"): the server's
// version, then the unsent mute list writes over it, as for any other object.
extension LocalOverlay {
    /// Stores the server's version of `owner`'s mute list (nil: the server has none), then lays
    /// the unsent writes of the list over it. Returns whether the list the app sees changed.
    @discardableResult
    func applyServer(muteList: StoredMuteList?, owner: String) throws -> Bool {
        if let muteList, let stored = try tx.moderation.serverMuteList(owner: owner) {
            // The version rule of every object: an older version (an event that arrives after
            // our own write's answer) or the same eTag changes nothing.
            func version(_ list: StoredMuteList) -> (updated: ISOTimestamp?, eTag: String?) {
                (list.updated.flatMap { try? ISOTimestamp(parsing: $0) }, list.eTag)
            }
            guard VersionDecision(incoming: version(muteList), stored: version(stored)) == .apply else { return false }
        }
        let before = try tx.moderation.shownMutes(owner: owner)
        try tx.moderation.setServerMuteList(owner: owner, muteList)
        try tx.moderation.setShownMutes(owner: owner, muteList?.muted ?? [])
        try reapplyPending(target: OutboxKeys.muteList(owner))
        return try tx.moderation.shownMutes(owner: owner) != before
    }
}
