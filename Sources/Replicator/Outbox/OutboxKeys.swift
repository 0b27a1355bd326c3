import Foundation
import ReplicaModel
import ReplicaStore

/// The lanes and targets ops are filed under: the one place their spelling is decided.
///
/// A *lane* is a FIFO: its ops are sent one at a time in enqueue order. A *target* names the
/// entity an op changes; coalescing and read-your-writes look ops up by target.
enum OutboxKeys {
    /// Sends to one channel share a lane: they reach PubNub in local send order.
    static func sendLane(_ channel: String) -> String { "send:\(channel)" }
    /// The target of a message's publish.
    static func message(_ id: String) -> String { "message:\(id)" }
    /// The reactions of one message share a lane.
    static func reactionLane(_ messageId: String) -> String { "reactions:\(messageId)" }
    /// One reaction (message, type, value) of the current user.
    static func reaction(_ messageId: String, _ type: String, _ value: String) -> String {
        "reaction:\(messageId)/\(type)/\(value)"
    }
    /// The current user's edit of a message (one at a time: unsent edits are merged).
    static func edit(_ messageId: String) -> String { "edit:\(messageId)" }
    /// A message's hard delete (its lane is the channel's send lane).
    static func hardDelete(_ messageId: String) -> String { hardDeletePrefix + messageId }
    /// What every hard delete's target starts with.
    static let hardDeletePrefix = "hard-delete:"
    /// The mention events of one message share a lane.
    static func mentionLane(_ messageId: String) -> String { "mentions:\(messageId)" }
    /// The mention event of one message for one user.
    static func mention(_ messageId: String, _ user: String) -> String { "mention:\(messageId)/\(user)" }
    /// The current user's read receipt signal on a channel; also its lane.
    static func receipt(_ channel: String) -> String { "receipt:\(channel)" }
    /// A user's batched read positions (mark all read); also their lane. Each op of it is laid
    /// over the memberships it names (``LocalOverlay``).
    static func readPositions(_ user: String) -> String { "read-positions:\(user)" }
    /// A membership; also its lane.
    static func member(_ channel: String, _ user: String) -> String { "member:\(channel)/\(user)" }
    /// A user's metadata; also its lane.
    static func user(_ id: String) -> String { "user:\(id)" }
    /// A channel's metadata; also its lane.
    static func channel(_ id: String) -> String { "channel:\(id)" }
    /// A user's mute list; also its lane.
    static func muteList(_ owner: String) -> String { "mute-list:\(owner)" }
    /// The reports of one channel share a lane (each report is its own target).
    static func reportLane(_ channel: String) -> String { "reports:\(channel)" }
    /// One report of a message.
    static func report(_ messageId: String, opId: String) -> String { "report:\(messageId)/\(opId)" }
    /// The invitation event of one user to one channel (its lane is the membership's).
    static func invite(_ channel: String, _ user: String) -> String { "invite:\(channel)/\(user)" }
    /// A device's push registration changes share a lane (each is its own target).
    static func pushLane(_ token: String) -> String { "push:\(token)" }
    /// The base eTag of a channel set or membership set that creates its object only where none
    /// exists (a conversation's channel, an invitation): before the write, the server's object is
    /// read, and one that exists finishes the op without a request, kept as the server has it.
    /// Never sent (no `If-Match` goes with it).
    static let createOnlyBase = "pnr:create-only"
}

extension OutboxState {
    /// The states of an op that is still to be sent (or being sent): a lane's head is its first op
    /// in one of them.
    static let live: Set<OutboxState> = [.pending, .ambiguous, .inflight]
}

extension OutboxEntry {
    /// Whether the op certainly has not reached PubNub: pending, and never answered in a way that
    /// could mean it arrived (a 5xx or a lost response may have been applied). Only such ops may
    /// be merged with or cancelled by a later change.
    var isCertainlyUnsent: Bool {
        guard state == .pending else { return false }
        guard let failure = lastFailure else { return true }
        return failure.errorClass == .notSent || failure.errorClass == .rateLimited
    }
}
