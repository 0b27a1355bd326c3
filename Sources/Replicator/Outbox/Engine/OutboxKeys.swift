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
    /// A record of the app's own classes (an entity and a relationship may share an id); also
    /// its lane: its writes reach the server in local order.
    static func appRecord(_ kind: AppRecord.Kind, _ id: String) -> String { appRecordPrefix + "\(kind.rawValue):\(id)" }
    /// What every app record's target starts with.
    static let appRecordPrefix = "app:"
    /// The base eTag of a channel set or membership set that creates its object only where none
    /// exists (a conversation's channel, an invitation): before the write, the server's object is
    /// read, and one that exists finishes the op without a request, kept as the server has it.
    /// Never sent (no `If-Match` goes with it).
    static let createOnlyBase = "pnr:create-only"

    /// The lane and target an op is filed under, from its operation (and, for the kinds whose
    /// every op is its own target, its id): the one switch that decides where each kind goes.
    static func filing(of operation: OutboxOperation, opId: String) -> (lane: String, target: String) {
        switch operation {
        case .send(let send):
            return (sendLane(send.channel), message(send.messageId))
        case .addReaction(let target) where target.type == ChatSDKFormat.editedType:
            // One edit at a time per message: unsent edits are merged into the queued one.
            return (reactionLane(target.messageId), edit(target.messageId))
        case .addReaction(let target), .removeReaction(let target, _):
            return (reactionLane(target.messageId), reaction(target.messageId, target.type, target.value))
        case .setMembership(let channel, let user, _), .removeMembership(let channel, let user):
            return (member(channel, user), member(channel, user))
        case .setUser(let id, _), .removeUser(let id):
            return (user(id), user(id))
        case .setChannel(let id, _), .removeChannel(let id):
            return (channel(id), channel(id))
        case .mention(let notice):
            return (mentionLane(notice.messageId), mention(notice.messageId, notice.user))
        case .receipt(let channel, _):
            return (receipt(channel), receipt(channel))
        case .hardDelete(let channel, let messageId, _, _):
            // After the channel's sends: a message is deleted only once it is published.
            return (sendLane(channel), hardDelete(messageId))
        case .report(let channel, let messageId, _):
            return (reportLane(channel), report(messageId, opId: opId))
        case .setMuteList(let owner, _):
            return (muteList(owner), muteList(owner))
        case .invite(let notice):
            // After the pending membership that invites the user (same lane).
            return (member(notice.channel, notice.user), invite(notice.channel, notice.user))
        case .push(let registration):
            return (pushLane(registration.token), "\(pushLane(registration.token))/\(opId)")
        case .readPositions(let positions):
            return (readPositions(positions.user), readPositions(positions.user))
        case .setAppRecord(let write):
            return (appRecord(write.kind, write.id), appRecord(write.kind, write.id))
        case .removeAppRecord(let record):
            return (appRecord(record.kind, record.id), appRecord(record.kind, record.id))
        }
    }
}

extension NewOutboxRow {
    /// A row for `operation`, filed under the lane and target ``OutboxKeys/filing(of:opId:)``
    /// gives it.
    init(
        _ operation: OutboxOperation, opId: String, baseETag: String? = nil, baseUpdated: String? = nil,
        baseSnapshot: String? = nil, dependsOn: String? = nil
    ) {
        let filing = OutboxKeys.filing(of: operation, opId: opId)
        self.init(
            operation, lane: filing.lane, target: filing.target, baseETag: baseETag, baseUpdated: baseUpdated,
            baseSnapshot: baseSnapshot, dependsOn: dependsOn)
    }
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
