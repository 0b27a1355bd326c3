import Foundation
import ReplicaModel
import ReplicaStore

/// Read-your-writes: what the store shows for an entity, given what the server holds and the
/// local ops still in the outbox on it. The one owner of that rule.
///
/// Every writer of server state goes through it: pulls (``applyServer(user:)`` and the other
/// `applyServer` methods), conflict settlement (``storeServerVersion(_:of:)``), completion of an
/// op, and discard (``revert(_:)``). Each writes the server's side, then lays the unsent local
/// changes of the same target back over it, oldest first, so the user keeps seeing their own
/// edits until the outbox has sent them.
///
/// It writes entity rows only: op rows belong to the outbox's transitions.
struct LocalOverlay<Custom: ChatCustomData> {
    typealias User = ChatUser<Custom.User>
    typealias Channel = ChatChannel<Custom.Channel>
    typealias Member = ChatMember<Custom>
    typealias Message = ChatMessage<Custom.Message>

    let tx: StoreTransaction<Custom>

    /// What applying a server version did.
    struct Applied {
        var outcome: UpsertOutcome
        /// Whether local unsent changes were laid back over it.
        var overlaid: Bool
    }

    // MARK: Server state from pulls

    /// Stores a pulled user (the store's version rule: a newer `updated` wins, the same eTag is
    /// a no-op), then its unsent local edits over it.
    func applyServer(user: User) throws -> Applied {
        try overlay(OutboxKeys.user(user.id), after: tx.upsert(user: user))
    }

    /// Stores a pulled channel, as ``applyServer(user:)``.
    func applyServer(channel: Channel) throws -> Applied {
        try overlay(OutboxKeys.channel(channel.id), after: tx.upsert(channel: channel))
    }

    /// Stores a pulled membership, as ``applyServer(user:)``. A listing carries the other side's
    /// object only partly (or by id): a fuller stored one is kept.
    func applyServer(member: Member) throws -> Applied {
        let incoming = try keepingStoredSides(of: member, onlyUnversioned: true)
        return try overlay(member: member, after: tx.upsert(member: incoming, force: false))
    }

    /// A full listing no longer has this user or channel: it is removed locally, unless a local op
    /// is still queued on it (the local side wins until the op is sent). Returns whether it was removed.
    func serverLacks(_ table: ObjectTable, id: String) throws -> Bool {
        let target = table == .users ? OutboxKeys.user(id) : OutboxKeys.channel(id)
        guard try tx.outbox.latestOp(target: target) == nil else { return false }
        if table == .users { try tx.deleteUser(id: id) } else { try tx.deleteChannel(id: id) }
        return true
    }

    /// The user's or channel's `expiresAt` has passed: removed as ``serverLacks(_:id:)`` removes
    /// it, unless a local op is queued on it; when memberships of it are still stored (one
    /// created after it, or one with a pending op), its row is made bare instead, so that they
    /// stay (deleting it would delete them).
    func serverExpired(_ table: ObjectTable, id: String) throws -> Bool {
        let target = table == .users ? OutboxKeys.user(id) : OutboxKeys.channel(id)
        guard try tx.outbox.latestOp(target: target) == nil else { return false }
        if try tx.hasMemberships(table, id: id) {
            try tx.demoteToBare(table, id: id)
            return true
        }
        return try serverLacks(table, id: id)
    }

    /// A complete membership listing no longer has this membership: removed unless a local op is queued on it.
    func serverLacks(channelId: String, userId: String) throws -> Bool {
        guard try tx.outbox.latestOp(target: OutboxKeys.member(channelId, userId)) == nil else { return false }
        try tx.deleteMember(channelId: channelId, userId: userId)
        return true
    }

    /// The current user's unsent reaction changes on `channel`: what a reactions listing or a
    /// live action event may not undo (read-your-writes for message actions).
    func pendingReactions(channel: String, currentUser: String) throws -> PendingReactions {
        var adds = Set<String>(), removes = Set<String>()
        for op in try tx.outbox.ops(kinds: [.addReaction, .removeReaction]) where op.operation.channel == channel {
            guard let reaction = op.operation.reaction else { continue }
            let key = OutboxKeys.reaction(reaction.messageId, reaction.type, reaction.value)
            if op.kind == .addReaction { adds.insert(key) } else { removes.insert(key) }
        }
        return PendingReactions(adds: adds, removes: removes, currentUser: currentUser)
    }

    /// Whether one server statement about an action (``PendingReactions/overrides(serverSays:messageId:type:value:user:)``)
    /// is overridden by an unsent op; reads the outbox only when the action is the current user's.
    func overridesReaction(
        serverSays present: Bool, channel: String, messageId: String?, type: String, value: String, user: String,
        currentUser: String
    ) throws -> Bool {
        guard user == currentUser, messageId != nil else { return false }
        return try pendingReactions(channel: channel, currentUser: currentUser)
            .overrides(serverSays: present, messageId: messageId, type: type, value: value, user: user)
    }

    // MARK: Server state from the outbox

    /// Stores the server's answer to an op on `target` (under the store's version rule), then the
    /// later unsent edits over it, whether or not the row changed.
    func storeAnswer(user: User) throws { _ = try overlay(OutboxKeys.user(user.id), after: tx.upsert(user: user), always: true) }

    /// As ``storeAnswer(user:)`` for a channel.
    func storeAnswer(channel: Channel) throws {
        _ = try overlay(OutboxKeys.channel(channel.id), after: tx.upsert(channel: channel), always: true)
    }

    /// As ``storeAnswer(user:)`` for a membership; the answer's channel and user objects may be
    /// partial, so the stored ones are kept.
    func storeAnswer(member server: Member) throws -> Member {
        let member = try keepingStoredSides(of: server)
        _ = try overlay(member: server, after: tx.upsert(member: member, force: false), always: true)
        return member
    }

    /// Writes the server's version of a user or channel (or deletes it when the server has none);
    /// returns the stored version as JSON text.
    private func storeServerObject<Entity: StoredEntity>(_ remote: JSONValue?, as _: Entity.Type, id: String) throws -> String? {
        guard let remote else {
            try tx.delete(Entity.self, id: id)
            return nil
        }
        let object = try remote.decode(as: Entity.self)
        try tx.upsert(object, force: true)
        return try tx.snapshot(object)
    }

    /// Writes the server's current version (wire JSON; nil when the server has none) of the object
    /// a conflicted op changes, then the unsent edits still queued on it. Returns the version
    /// stored, as JSON text (the op's new base snapshot when it is sent again).
    @discardableResult
    func storeServerVersion(_ remote: JSONValue?, of entry: OutboxEntry) throws -> String? {
        var snapshot: String?
        switch entry.operation {
        case .setUser(let id, _), .removeUser(let id):
            snapshot = try storeServerObject(remote, as: User.self, id: id)
        case .setChannel(let id, _), .removeChannel(let id):
            snapshot = try storeServerObject(remote, as: Channel.self, id: id)
        case .setMembership(let channelId, let userId, _), .removeMembership(let channelId, let userId):
            guard let remote else {
                try tx.deleteMember(channelId: channelId, userId: userId)
                break
            }
            var member = try keepingStoredSides(
                of: try Member(channelId: channelId, userId: userId).applying(remote.objectValue ?? [:]))
            member.updated = try remote.objectValue?["updated"]?.stringValue.map { try ISOTimestamp(parsing: $0) }
            member.eTag = remote.objectValue?["eTag"]?.stringValue
            try tx.upsert(member: member, force: true)
            snapshot = try tx.snapshot(member)
        case .setAppRecord, .removeAppRecord:
            guard let target = entry.operation.appRecord else { return nil }
            snapshot = try storeServerRecord(remote, of: target)
        case .send, .addReaction, .removeReaction, .mention, .receipt, .hardDelete, .report, .setMuteList, .invite, .push,
             .readPositions:
            return nil
        }
        try reapplyPending(of: entry)
        return snapshot
    }

    // MARK: Local reverts

    /// Undoes an op's optimistic local change (the op is withdrawn or cancelled), then lays the
    /// other unsent ops of its target back over the result.
    func revert(_ entry: OutboxEntry) throws {
        func snapshot<T: Decodable>(_ type: T.Type) throws -> T? { try tx.decodeSnapshot(T.self, of: entry) }
        switch entry.operation {
        case .send(let send):
            try tx.messages.deleteUnsentMessage(id: send.messageId)
        case .addReaction(let reaction):
            try tx.messageActions.deleteUnsentActions(messageId: reaction.messageId, type: reaction.type, value: reaction.value)
        case .removeReaction:
            if let action = try snapshot(ChatMessageAction.self) { try tx.upsert(action: action) }
        case .setMembership(let channel, let user, _), .removeMembership(let channel, let user):
            if let member = try snapshot(Member.self) {
                try tx.upsert(member: member, force: true)
            } else {
                try tx.deleteMember(channelId: channel, userId: user)
            }
        case .setUser(let id, _), .removeUser(let id):
            if let user = try snapshot(User.self) {
                try tx.upsert(user: user, force: true)
            } else {
                try tx.deleteUser(id: id)
            }
        case .setChannel(let id, _), .removeChannel(let id):
            if let channel = try snapshot(Channel.self) {
                try tx.upsert(channel: channel, force: true)
            } else {
                try tx.deleteChannel(id: id)
            }
        case .mention, .receipt, .report, .invite, .push:
            // A mention or invitation event, a receipt signal, a report or a push registration
            // changes nothing locally (an invitation's pending membership is its own op).
            break
        case .setMuteList(let owner, _):
            // The server's list comes back (the other unsent ones are laid over it below).
            try tx.moderation.setShownMutes(owner: owner, try tx.moderation.serverMuteList(owner: owner)?.muted ?? [])
        case .hardDelete:
            // The message as it was stored when it was deleted comes back.
            if let message = try snapshot(Message.self) { try tx.upsert(message: message) }
        case .readPositions(let positions):
            // Each membership shows the position it showed before (the other ops are laid back
            // below). A server version stored since hid its own position under the batch's: its
            // eTag goes, so the next pull (memberships are listed in full) stores it again.
            for mark in positions.marks {
                guard var member = try tx.member(channelId: mark.channel, userId: positions.user) else { continue }
                member = try member.withReadPosition(mark.previous)
                if member.eTag != mark.eTag { member.eTag = nil }
                try tx.upsert(member: member, force: true)
            }
        case .setAppRecord, .removeAppRecord:
            try revert(record: entry)
        }
        try reapplyPending(of: entry)
    }

    /// Lays back the unsent ops of what `entry` changed: its target's, or, for a membership or a
    /// batch of read positions, every op on each membership it names.
    private func reapplyPending(of entry: OutboxEntry) throws {
        switch entry.operation {
        case .setMembership(let channel, let user, _), .removeMembership(let channel, let user):
            try reapplyPending(channel: channel, user: user)
        case .readPositions(let positions):
            for channel in positions.channels { try reapplyPending(channel: channel, user: positions.user) }
        case .send, .addReaction, .removeReaction, .setUser, .removeUser, .setChannel, .removeChannel, .mention, .receipt,
             .hardDelete, .report, .setMuteList, .invite, .push, .setAppRecord, .removeAppRecord:
            try reapplyPending(target: entry.target)
        }
    }

    /// The unsent ops on one membership, oldest first: its own ops and the batches of read
    /// positions (mark all read) that name it.
    func pendingOps(channel: String, user: String) throws -> [OutboxEntry] {
        let own = try tx.outbox.ops(target: OutboxKeys.member(channel, user))
        let batches = try tx.outbox.ops(target: OutboxKeys.readPositions(user)).filter { $0.readPositions?.mark(in: channel) != nil }
        return (own + batches).sorted { $0.seq < $1.seq }
    }

    /// Re-applies the optimistic changes of the ops still queued on one membership, oldest first.
    /// A batch's read position is laid over the membership only where it moves it forward (at the
    /// time the batch was queued, ``ReplicaModel/ReadPosition/moves(in:to:now:)``), and never
    /// makes a membership the store does not hold.
    func reapplyPending(channel: String, user: String) throws {
        for op in try pendingOps(channel: channel, user: user) {
            guard let mark = op.readPositions?.mark(in: channel) else {
                try apply(op)
                continue
            }
            guard let member = try tx.member(channelId: channel, userId: user) else { continue }
            guard ReadPosition.moves(in: .object(try member.customFields()), to: mark.timetoken, now: op.createdAt) else { continue }
            try tx.upsert(member: try member.withReadPosition(mark.timetoken), force: true)
        }
    }

    /// Re-applies the optimistic changes of the ops still queued on `target`, oldest first, so the
    /// local object keeps showing the user's own unsent edits.
    func reapplyPending(target: String) throws {
        for op in try tx.outbox.ops(target: target) { try apply(op) }
    }

    /// Re-applies one queued op's optimistic change to the store.
    func apply(_ op: OutboxEntry) throws {
        switch op.operation {
        case .setUser(let id, let fields):
            try tx.upsert(user: try (try tx.user(id: id) ?? User(id: id)).applying(fields), force: true)
        case .removeUser(let id):
            try tx.deleteUser(id: id)
        case .setChannel(let id, let fields):
            try tx.upsert(channel: try (try tx.channel(id: id) ?? Channel(id: id)).applying(fields), force: true)
        case .removeChannel(let id):
            try tx.deleteChannel(id: id)
        case .setMembership(let channel, let user, let fields):
            let stored = try tx.member(channelId: channel, userId: user)
            let member = try (stored ?? Member(channelId: channel, userId: user)).applying(fields)
            try tx.upsert(member: member, force: true)
        case .removeMembership(let channel, let user):
            try tx.deleteMember(channelId: channel, userId: user)
        case .hardDelete(_, let messageId, _, _):
            try tx.messages.deleteMessage(id: messageId)
        case .setMuteList(let owner, let muted):
            // The op's change over what shows now (the server's list, earlier ops), as it
            // will be applied to the server's list when sent.
            let change = try tx.decodeSnapshot(MuteListChange.self, of: op)
            try tx.moderation.setShownMutes(owner: owner, change.map { $0.applied(to: try tx.moderation.shownMutes(owner: owner)) } ?? muted)
        case .setAppRecord, .removeAppRecord:
            try apply(record: op)
        case .send, .addReaction, .removeReaction, .mention, .receipt, .report, .invite, .push, .readPositions:
            // Nothing local, or (a batch of read positions) laid over each membership by ``reapplyPending(channel:user:)``.
            break
        }
    }

    /// A membership from the server with the stored membership's channel and user objects: a
    /// membership answer or listing carries the other sides only partly (or by id). With
    /// `onlyUnversioned`, a side the server sent whole (it has an eTag) is kept.
    private func keepingStoredSides(of member: Member, onlyUnversioned: Bool = false) throws -> Member {
        guard let stored = try tx.member(channelId: member.channelId, userId: member.userId) else { return member }
        var result = member
        if !onlyUnversioned || member.channel.eTag == nil { result.channel = stored.channel }
        if !onlyUnversioned || member.user.eTag == nil { result.user = stored.user }
        return result
    }

    /// Lays the unsent ops of `target` over a row just written; without `always`, only when the
    /// write changed the row and an op is queued (an unchanged row still shows them).
    private func overlay(_ target: String, after outcome: UpsertOutcome, always: Bool = false) throws -> Applied {
        if !always {
            guard outcome != .unchanged, try tx.outbox.latestOp(target: target) != nil else {
                return Applied(outcome: outcome, overlaid: false)
            }
        }
        try reapplyPending(target: target)
        return Applied(outcome: outcome, overlaid: true)
    }

    /// As ``overlay(_:after:always:)`` for a membership: its own ops and the batches of read
    /// positions naming it.
    private func overlay(member: Member, after outcome: UpsertOutcome, always: Bool = false) throws -> Applied {
        if !always {
            guard outcome != .unchanged, try !pendingOps(channel: member.channelId, user: member.userId).isEmpty else {
                return Applied(outcome: outcome, overlaid: false)
            }
        }
        try reapplyPending(channel: member.channelId, user: member.userId)
        return Applied(outcome: outcome, overlaid: true)
    }
}

/// The current user's actions (reactions, edits, deletes) on one channel with an unsent add or
/// removal in the outbox, keyed by (message, type, value) as ``OutboxKeys/reaction(_:_:_:)`` spells
/// it. The key comes from the op, not its target: an edit's target is its message's edit slot.
struct PendingReactions {
    let adds: Set<String>
    let removes: Set<String>
    let currentUser: String

    /// Whether the server's statement about an action is ignored: it says the action is there
    /// (listed, or an "added" event) while an unsent removal of ours is queued, or that it is
    /// gone (missing from a complete listing, or a "removed" event) while an unsent add is. Only
    /// the current user's actions can have ops pending; an action on a message not stored
    /// (`messageId` nil) has none.
    func overrides(serverSays present: Bool, messageId: String?, type: String, value: String, user: String) -> Bool {
        guard user == currentUser, let messageId else { return false }
        let key = OutboxKeys.reaction(messageId, type, value)
        return present ? removes.contains(key) : adds.contains(key)
    }
}
