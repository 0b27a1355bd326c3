import Foundation
import ReplicaModel
import ReplicaStore

// How a new op joins the queue: inserted, merged into an unsent op of the same target, or
// cancelling one. With OutboxTransitions.swift, the only code that writes op rows (`.ci/ownership`
// checks it); the enqueue files decide what to queue and call these.
extension OpTransaction {
    /// A set after an unsent set of the same object: one op with the union of fields, the latest
    /// values and the first op's base.
    func insertOrMerge(_ op: NewOutboxRow, id: String, now: Date) throws -> (String?, OutboxDisposition) {
        try checkRestrictions(op.operation)
        // A create-only op stays apart: an edit merged into it would be dropped with it when the
        // object turns out to exist.
        if var latest = try tx.outbox.latestOp(target: op.target), latest.isCertainlyUnsent, latest.kind == op.operation.kind,
           latest.baseETag != OutboxKeys.createOnlyBase
        {
            let added = op.operation.fields ?? [:]
            latest.operation = latest.operation.with(fields: (latest.operation.fields ?? [:]).merging(added) { _, new in new })
            latest.coalesced.append("merged edit \(id): \(added.keys.sorted().joined(separator: ", "))")
            latest.updatedAt = now
            try tx.outbox.save(latest)
            changes.events.append(.coalesced(into: latest.id, cancelled: []))
            changes.wakesDrain = true
            return (latest.id, .merged(into: latest.id))
        }
        try insert(op, id: id, now: now)
        return (id, .enqueued)
    }

    /// Read positions of mark all read, for `user`'s batches: each raises the position in the
    /// newest unsent batch that names its channel, or joins the newest one with room
    /// (``ReadPositionsWrite/fits(_:)``); the rest fill new batches. Each batch changed is saved
    /// once. Returns the batch each channel went into.
    func insertOrMerge(_ marks: [ReadMark], user: String, opId: () -> String, now: Date) throws
        -> [String: (id: String, disposition: OutboxDisposition)]
    {
        let target = OutboxKeys.readPositions(user)
        var unsent = try tx.outbox.ops(target: target).filter(\.isCertainlyUnsent).sorted { $0.seq < $1.seq }
        var positions = unsent.map { $0.readPositions?.marks ?? [] }
        var merged: [Int: Int] = [:], fresh: [[ReadMark]] = []
        var result: [String: (id: String, disposition: OutboxDisposition)] = [:]
        for mark in marks {
            if let i = positions.firstIndex(where: { $0.contains { $0.channel == mark.channel } }),
               let m = positions[i].firstIndex(where: { $0.channel == mark.channel })
            {
                // The position it replaced locally stays the first mark's.
                positions[i][m].timetoken = mark.timetoken
                merged[i, default: 0] += 1
            } else if let i = positions.indices.last(where: { ReadPositionsWrite.fits(positions[$0].map(\.channel) + [mark.channel]) }) {
                positions[i].append(mark)
                merged[i, default: 0] += 1
            } else {
                if let last = fresh.indices.last, ReadPositionsWrite.fits(fresh[last].map(\.channel) + [mark.channel]) {
                    fresh[last].append(mark)
                } else {
                    fresh.append([mark])
                }
                continue
            }
        }
        for (i, count) in merged.sorted(by: { $0.key < $1.key }) {
            unsent[i].operation = .readPositions(ReadPositions(user: user, marks: positions[i]))
            unsent[i].coalesced.append("read positions of \(count) channel(s)")
            unsent[i].updatedAt = now
            try tx.outbox.save(unsent[i])
            changes.events.append(.coalesced(into: unsent[i].id, cancelled: []))
            changes.wakesDrain = true
            for mark in marks where positions[i].contains(where: { $0.channel == mark.channel }) {
                result[mark.channel] = (unsent[i].id, .merged(into: unsent[i].id))
            }
        }
        for batch in fresh {
            let id = opId()
            try insert(NewOutboxRow(.readPositions(ReadPositions(user: user, marks: batch)), opId: id), id: id, now: now)
            for mark in batch { result[mark.channel] = (id, .enqueued) }
        }
        return result
    }

    /// A removal after an unsent set: nothing at all when the object never reached the server
    /// (the set was made on no server version, and no earlier op on the object may have created
    /// it there), otherwise the set becomes the removal.
    func insertOrReplace(_ op: NewOutboxRow, id: String, now: Date) throws -> (String?, OutboxDisposition) {
        try checkRestrictions(op.operation)
        if var latest = try tx.outbox.latestOp(target: op.target), latest.isCertainlyUnsent,
           let setKind = op.operation.kind.traits.replacesSet, latest.kind == setKind
        {
            if try isUnsentCreate(latest, cancelledBy: op) {
                // The removal writes the local rows itself.
                let removed = try withdraw(latest, undo: .keep)
                changes.events.append(.coalesced(into: nil, cancelled: removed))
                return (nil, .cancelled(removed))
            }
            latest.rebase = false
            return try replace(latest, with: op.operation, note: "replaced by removal \(id)", now: now)
        }
        try insert(op, id: id, now: now)
        return (id, .enqueued)
    }

    /// The create that removal `op` cancels: the only op of its target, certainly unsent, and a
    /// create (no base, or a create-only one). Then the object never reached the server, and
    /// the removal withdraws the create instead of being queued.
    func unsentCreate(cancelledBy op: NewOutboxRow) throws -> OutboxEntry? {
        guard let latest = try tx.outbox.latestOp(target: op.target), latest.isCertainlyUnsent,
              let setKind = op.operation.kind.traits.replacesSet, latest.kind == setKind,
              try isUnsentCreate(latest, cancelledBy: op)
        else { return nil }
        return latest
    }

    /// Whether `latest`, an unsent set of removal `op`'s target (its newest op), is a create the
    /// removal cancels: no base (or a create-only one), and the target's only op.
    private func isUnsentCreate(_ latest: OutboxEntry, cancelledBy op: NewOutboxRow) throws -> Bool {
        guard latest.baseETag == nil || latest.baseETag == OutboxKeys.createOnlyBase else { return false }
        return try tx.outbox.ops(target: op.target).count == 1
    }

    /// A write of a whole value (a mute list) after an unsent write of the same target: the
    /// unsent one takes the new value and base (the caller folded the earlier base into it), so
    /// only the newest is sent.
    func insertOrReplaceWhole(_ op: NewOutboxRow, id: String, now: Date) throws -> (String?, OutboxDisposition) {
        try checkRestrictions(op.operation)
        if var latest = try tx.outbox.latestOp(target: op.target), latest.isCertainlyUnsent, latest.kind == op.operation.kind {
            latest.baseSnapshot = op.baseSnapshot
            return try replace(latest, with: op.operation, note: "replaced by \(id)", now: now)
        }
        try insert(op, id: id, now: now)
        return (id, .enqueued)
    }

    /// An unsent op takes another operation (keeping its id, place and base).
    private func replace(_ latest: OutboxEntry, with operation: OutboxOperation, note: String, now: Date) throws
        -> (String?, OutboxDisposition)
    {
        var latest = latest
        latest.operation = operation
        latest.coalesced.append(note)
        latest.updatedAt = now
        try tx.outbox.save(latest)
        changes.events.append(.coalesced(into: latest.id, cancelled: []))
        changes.wakesDrain = true
        return (latest.id, .merged(into: latest.id))
    }

    /// Withdraws an unsent op that a later change cancels. A cancelled removal of a reaction
    /// brings the stored action back; any other op's local rows are written by the change that
    /// cancels it.
    func cancel(_ latest: OutboxEntry) throws {
        let removed = try withdraw(latest, undo: latest.kind == .removeReaction ? .revert : .keep)
        changes.events.append(.coalesced(into: nil, cancelled: removed))
    }

    /// Queues an op. Its channel and user ids must pass PubNub's documented id rules
    /// (``ReplicaModel/Validation/validateIdentifier(_:field:)``): the store keeps ids a server gave
    /// as given (``ReplicaModel/Validation/validateStoredIdentifier(_:field:)``), but nothing this
    /// device writes uses an id PubNub documents as invalid.
    ///
    /// A membership op queued while a batch of read positions naming its membership may still be
    /// sent waits for that batch (``enqueue.liveReadPositions(of:naming:)``): the two writes never race,
    /// and the later one is based on the version the batch produced.
    func insert(_ op: NewOutboxRow, id: String, now: Date) throws {
        var op = op
        try admit(&op)
        try tx.outbox.insertOp(op, id: id, now: now)
        changes.events.append(.enqueued(opId: id, kind: op.operation.kind))
        changes.wakesDrain = true
    }

    /// Queues a batch's publishes from rows made before the transaction (``PreparedSends``), as
    /// ``insert(_:id:now:)`` queues each, in multi-row inserts: `sends` are the rows' ops, in
    /// order, for the checks.
    /// No publish waits for a batch of read positions (``admit(_:)``), so no row changes here.
    func insert(sends: [PreparedSend<Custom>], rows: NewOpRows) throws {
        for send in sends { try check(send.row) }
        try tx.outbox.insertOps(rows)
        changes.wakesDrain = changes.wakesDrain || !sends.isEmpty
        for send in sends { changes.events.append(.enqueued(opId: send.opId, kind: .send)) }
    }

    /// The checks every op passes before it is queued (``insert(_:id:now:)``), and the batch of
    /// read positions a membership op waits for.
    private func admit(_ op: inout NewOutboxRow) throws {
        if op.dependsOn == nil, op.operation.kind == .setMembership || op.operation.kind == .removeMembership,
           let channel = op.operation.channel, let user = op.operation.user,
           let batch = try enqueue.liveReadPositions(of: user, naming: channel)
        {
            op.dependsOn = batch.id
        }
        try check(op)
    }

    /// The checks every op passes before it is queued: its ids, the object backend's rules, the
    /// moderation restrictions.
    private func check(_ op: NewOutboxRow) throws {
        let isSend = op.operation.kind == .send, channel = op.operation.channel
        if isSend, let channel, sendChannelsChecked.contains(channel) {
            // Another send to this channel passed the same checks in this transaction: a batch
            // checks each channel once (no enqueue transaction writes restrictions).
            return
        }
        if let channel { try Validation.validateIdentifier(channel, field: "channel.id") }
        if let user = op.operation.user { try Validation.validateIdentifier(user, field: "user.id") }
        try checkObjectIdentifiers(op.operation)
        try checkRestrictions(op.operation)
        if isSend, let channel { sendChannelsChecked.insert(channel) }
    }

    /// Refuses a user, channel or membership op whose ids the object backend cannot hold
    /// (``ObjectBackend/identifierProblem(_:)``). Other ops (messages, reactions, signals) never
    /// reach the object backend, and a batch of read positions names memberships that exist.
    func checkObjectIdentifiers(_ operation: OutboxOperation) throws {
        guard let objects else { return }
        let ids: [(field: String, id: String)]
        switch operation {
        case .setMembership(let channel, let user, _), .removeMembership(let channel, let user):
            ids = [("channel.id", channel), ("user.id", user)]
        case .setUser(let id, _), .removeUser(let id): ids = [("user.id", id)]
        case .setChannel(let id, _), .removeChannel(let id): ids = [("channel.id", id)]
        case .setMuteList(let owner, _): ids = [("user.id", ChatModeration.muteListId(of: owner))]
        case .send, .addReaction, .removeReaction, .mention, .receipt, .hardDelete, .report, .invite, .push, .readPositions:
            ids = []
        case .setAppRecord, .removeAppRecord:
            // DataSync's own id rule, whatever the object backend (an app record always goes to
            // DataSync): checked with the class's rules before queueing (`AppRecordEnqueue`).
            ids = []
        }
        for (field, id) in ids {
            if let reason = objects.identifierProblem(id) {
                throw OutboxError.identifierRefused(field: field, id: id, backend: objects.name, reason: reason)
            }
        }
    }

    // MARK: The Chat SDK's writes

    /// An edit of a message whose publish certainly has not gone out: the publish takes the new
    /// text (`body`, already checked against the publish limit), and no action is queued.
    func foldEdit(into send: OutboxEntry, body: [String: JSONValue], now: Date) throws {
        guard var message = send.operation.send else { return }
        try checkRestrictions(send.operation)
        var send = send
        message.message = .object(body)
        send.operation = .send(message)
        send.coalesced.append("edited before it was sent")
        send.updatedAt = now
        try tx.outbox.save(send)
    }

    /// A later edit of the same message by the same user, while the earlier `edited` action
    /// certainly has not gone out: the unsent action takes the new text (one action for all the
    /// edits made meanwhile).
    func mergeEdit(into latest: OutboxEntry, reaction: ReactionTarget, editId: String, now: Date) throws {
        try checkRestrictions(.addReaction(reaction))
        var latest = latest
        latest.operation = .addReaction(reaction)
        latest.coalesced.append("merged edit \(editId)")
        latest.updatedAt = now
        try tx.outbox.save(latest)
        changes.events.append(.coalesced(into: latest.id, cancelled: []))
        changes.wakesDrain = true
    }

    /// Queues the read receipt of `channelId` after membership op `membershipOp`, or moves an
    /// unsent receipt of the channel to the newer position: only the newest position is signalled.
    func queueReceipt(channelId: String, timetoken: Timetoken, after membershipOp: String, opId: String, now: Date) throws {
        try checkRestrictions(.receipt(channel: channelId, messageTimetoken: timetoken))
        let target = OutboxKeys.receipt(channelId)
        if var latest = try tx.outbox.latestOp(target: target), latest.isCertainlyUnsent {
            latest.operation = .receipt(channel: channelId, messageTimetoken: timetoken)
            latest.dependsOn = membershipOp
            latest.coalesced.append("newer read position \(timetoken)")
            latest.updatedAt = now
            try tx.outbox.save(latest)
        } else {
            try insert(
                NewOutboxRow(.receipt(channel: channelId, messageTimetoken: timetoken), opId: opId, dependsOn: membershipOp),
                id: opId, now: now)
        }
    }

    /// Before a hard delete of the message at `timetoken`: the ops in `lanes` (its reactions and
    /// mention events) that certainly have not gone out are withdrawn with it; those that may have
    /// carry the timetoken they can no longer read from the store. Returns the withdrawn ids.
    @discardableResult
    func withdrawUnsent(inLanes lanes: [String], stamping timetoken: Timetoken) throws -> [String] {
        var cancelled: [String] = []
        for lane in lanes {
            // An op already withdrawn as the dependent of an earlier one is gone.
            for var op in try tx.outbox.ops(lane: lane) where !cancelled.contains(op.id) {
                if op.isCertainlyUnsent {
                    // The message and its actions leave the store with the delete.
                    cancelled += try withdraw(op, undo: .keep)
                } else {
                    op.operation = op.operation.with(messageTimetoken: timetoken)
                    try tx.outbox.save(op)
                }
            }
        }
        if !cancelled.isEmpty { changes.events.append(.coalesced(into: nil, cancelled: cancelled)) }
        return cancelled
    }
}
