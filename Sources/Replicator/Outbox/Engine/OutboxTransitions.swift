import Foundation
import ReplicaModel
import ReplicaStore

/// What happened to ops in one transaction: announced by the ``Outbox`` after it commits, in order.
struct OpChanges: Sendable {
    /// One event per op transition.
    var events: [OutboxEvent] = []
    /// Final outcomes, for whoever waits in ``Outbox/completion(of:)``.
    var outcomes: [OpOutcome] = []
    /// Whether an op became ready to send (the running drain should look again).
    var wakesDrain = false

    struct OpOutcome: Sendable {
        var opId: String
        var outcome: OutboxOutcome
    }

    mutating func finish(_ opId: String, _ outcome: OutboxOutcome) {
        outcomes.append(OpOutcome(opId: opId, outcome: outcome))
    }
}

/// The outbox's state machine: every change of an op row, made inside one store transaction.
///
/// This is the only code that writes op rows, and each transition records its ``OutboxEvent``
/// in ``changes``; the ``Outbox`` actor runs it (``Outbox/commit(_:)``) and announces the
/// events once the transaction has committed. Entity rows change through ``LocalOverlay`` in
/// the same transaction, so an op and the local object it touches never disagree.
final class OpTransaction<Custom: ChatCustomData> {
    let tx: StoreTransaction<Custom>
    var changes = OpChanges()
    var overlay: LocalOverlay<Custom> { LocalOverlay(tx: tx) }
    /// The user whose ops are queued (the outbox's): their restrictions are checked before an
    /// op is queued. Nil only in a transaction that queues nothing (crash recovery).
    let actingUser: String?
    /// The push configuration the messages queued here carry (``OutboxOptions/push``).
    let push: ChatPushConfiguration?
    /// The backend the object ops queued here are written to: its id rule is checked before an
    /// op is queued (nil: PubNub's rules only).
    let objects: (any ObjectBackend)?
    /// The channels a send queued in this transaction was checked for (ids, restrictions): the
    /// next send to one of them is not checked again (``insert(_:id:now:)``).
    var sendChannelsChecked: Set<String> = []

    init(
        _ tx: StoreTransaction<Custom>, actingUser: String? = nil, push: ChatPushConfiguration? = nil,
        objects: (any ObjectBackend)? = nil
    ) {
        self.tx = tx
        self.actingUser = actingUser
        self.push = push
        self.objects = objects
    }

    /// The Chat SDK's push keys for `text` sent by `sender` on `channel` (none without a push
    /// configuration): titled with the sender's stored name, else their id; the channel's stored
    /// name as the subtitle (a thread's reply shows its parent's).
    func pushKeys(text: String, sender: String, channel: String) throws -> [String: JSONValue] {
        guard let push, push.sendPushes else { return [:] }
        let named = ChatSDKFormat.threadParent(ofChannel: channel) ?? channel
        return ChatPushPayload.keys(
            title: ChatPushPayload.title(userName: try tx.user(id: sender)?.name, userId: sender), body: text,
            channelName: try tx.channel(id: named)?.name, configuration: push)
    }

    /// The op with `id`; throws ``OutboxError/opNotFound(_:)`` when it is gone.
    func existing(_ id: String) throws -> OutboxEntry {
        guard let entry = try tx.outbox.op(id: id) else { throw OutboxError.opNotFound(id) }
        return entry
    }

    // MARK: Attempts

    /// Marks an op in flight (one more attempt) when it is pending or ambiguous; nil when it is
    /// gone or in another state (discarded or settled meanwhile).
    func markInflight(_ id: String, now: Date) throws -> OutboxEntry? {
        guard let entry = try tx.outbox.op(id: id) else { return nil }
        return try markInflight(entry, now: now)
    }

    /// ``markInflight(_:now:)`` of an op read in this transaction. Only the attempt's columns
    /// are written (the payload is as it was read).
    func markInflight(_ read: OutboxEntry, now: Date) throws -> OutboxEntry? {
        guard read.state == .pending || read.state == .ambiguous else { return nil }
        var entry = read
        entry.state = .inflight
        entry.attempts += 1
        entry.firstAttemptAt = entry.firstAttemptAt ?? now
        entry.updatedAt = now
        try tx.outbox.saveAttempt(entry)
        changes.events.append(.sending(opId: entry.id, attempt: entry.attempts))
        return entry
    }

    /// The lane's next op, marked in flight in this transaction, when it can go now as it is: the
    /// lane's head, due, not waiting on a parent, and one whose request needs nothing looked up
    /// (``OutboxAttempt/sendsAsIs(_:)``). Nil leaves the lane as it is (the drain reads it again).
    func startNext(lane: String, now: Date) throws -> MarkedOp? {
        guard let entry = try tx.outbox.laneHead(lane: lane, states: OutboxState.live) else { return nil }
        guard OutboxAttempt<Custom>.sendsAsIs(entry), OutboxWait.of(head: try LaneHead.of(entry, in: tx), now: now) == .ready,
              let inflight = try markInflight(entry, now: now)
        else { return nil }
        return MarkedOp(head: entry, inflight: inflight)
    }

    /// Records a failed attempt: back to `pending` or `ambiguous` with a retry time, or parked as
    /// `dead` or `conflict` (no retry time) until the app decides. A parked publish shows as
    /// `failed` in the message queries.
    func recordFailure(
        _ id: String, state: OutboxState, retryAt: Date?, failure: OutboxFailure, serverFailure: Bool, now: Date
    ) throws {
        guard var entry = try tx.outbox.op(id: id) else { return }
        entry.state = state
        entry.nextAttemptAt = retryAt
        entry.lastFailure = failure
        entry.serverFailures += serverFailure ? 1 : 0
        entry.updatedAt = now
        try tx.outbox.save(entry)
        if let send = entry.operation.send {
            try tx.messages.setDelivery(messageId: send.messageId, to: state == .dead ? .failed : .pending)
        }
        switch state {
        case .dead:
            // A batch of read positions that will not be sent holds no membership edit back.
            try releaseMembershipEdits(waitingFor: entry)
            changes.events.append(.failed(opId: id, failure: failure))
            changes.finish(id, .failed(failure))
        case .conflict:
            changes.events.append(.conflict(opId: id, failure: failure))
            changes.finish(id, .conflict(failure))
        case .ambiguous:
            changes.events.append(.ambiguous(opId: id, at: retryAt ?? now, failure: failure))
        case .pending, .inflight:
            changes.events.append(.retrying(opId: id, at: retryAt ?? now, failure: failure))
        }
    }

    /// Ops left `inflight` by a process that died mid-request (the caller holds the drain lease,
    /// so no live process is sending them) may have arrived: they become `ambiguous`, to be
    /// probed before any resend. Returns how many.
    func recoverAbandoned(now: Date) throws -> Int {
        let abandoned = try tx.outbox.ops(states: [.inflight])
        for var entry in abandoned {
            entry.state = .ambiguous
            entry.updatedAt = now
            try tx.outbox.save(entry)
            changes.events.append(.ambiguous(
                opId: entry.id, at: entry.nextAttemptAt ?? now,
                failure: OutboxFailure(errorClass: .outcomeUnknown, message: "left in flight by a process that stopped")))
        }
        return abandoned.count
    }

    /// Rebases a conflicted edit on the server's version: a new base eTag and the `rebase` flag
    /// cleared. The fields are left alone (an enqueue may have merged more into them meanwhile).
    func rebase(_ id: String, baseETag: String?, now: Date) throws {
        guard var entry = try tx.outbox.op(id: id) else { return }
        entry.rebase = false
        entry.baseETag = baseETag
        entry.updatedAt = now
        try tx.outbox.save(entry)
    }

    // MARK: Completion

    /// The op reached PubNub: its result is written to the local object and the op leaves the
    /// outbox, in this transaction.
    func complete(_ entry: OutboxEntry, _ result: OpResult<Custom>, userId: String) throws {
        try tx.outbox.deleteOp(id: entry.id)
        var timetoken: Timetoken?
        switch result {
        case .published(let tt):
            timetoken = tt
            if let send = entry.operation.send {
                let (channel, messageId) = (send.channel, send.messageId)
                // A timetoken names one message of a channel: an answer that gives ours one that
                // another stored message holds is wrong (a broken or hostile server), and taking
                // it would make two messages one. Not believed: the op turns ambiguous and its
                // probe finds what the server really holds.
                if let holder = try tx.messages.messageId(channel: channel, timetoken: tt, other: messageId) {
                    throw OutboxError.timetokenTaken(channel: channel, timetoken: tt, heldBy: holder)
                }
                try tx.messages.markSent(messageId: messageId, timetoken: tt)
                // Only a send with files has upload rows (`OpEnqueue.send`).
                if send.files != nil { try tx.files.finishFileUploads(opId: entry.id, messageId: messageId, timetoken: tt) }
            }
        case .reaction(let tt):
            timetoken = tt
            if let tt, case .addReaction(let reaction) = entry.operation {
                try tx.messageActions.setActionTimetoken(
                    messageId: reaction.messageId, type: reaction.type, value: reaction.value, userId: userId,
                    actionTimetoken: tt)
            }
        case .user(let user):
            try overlay.storeAnswer(user: user)
            try rebaseLaterOps(target: OutboxKeys.user(user.id), on: user)
        case .channel(let channel):
            try overlay.storeAnswer(channel: channel)
            try rebaseLaterOps(target: OutboxKeys.channel(channel.id), on: channel)
        case .membership(let member):
            if let member {
                let stored = try overlay.storeAnswer(member: member)
                try rebaseLaterOps(target: OutboxKeys.member(member.channelId, member.userId), on: stored)
            }
        case .memberships(let written, let members):
            for member in members {
                let stored = try overlay.storeAnswer(member: member)
                // Only a version this op produced is the base of the edits queued after it.
                if written.contains(member.channelId) {
                    try rebaseLaterOps(target: OutboxKeys.member(member.channelId, member.userId), on: stored)
                }
            }
        case .muteList(let owner, let list):
            // The op has left the table: the later unsent writes of the list are laid over the answer.
            try overlay.applyServer(muteList: list, owner: owner)
        case .appRecord(let record):
            // The op has left the table: the server's record (or its deletion), then the later
            // unsent writes of it, based on the version this op produced.
            guard let target = entry.operation.appRecord else { break }
            if let record {
                try overlay.storeAnswer(record: record)
                try rebaseLaterOps(target: OutboxKeys.appRecord(target.kind, target.id), onRecord: record)
            } else {
                // Every version up to the one the delete was based on is kept out from now on.
                try overlay.storeRemoval(of: target, base: entry.baseUpdated.flatMap { try? ISOTimestamp(parsing: $0) })
            }
        case .none:
            if case .hardDelete(let channel, let messageId, let timetoken, let preserveFiles) = entry.operation {
                if preserveFiles {
                    // Its files stay; no later message can be the one they were uploaded for.
                    try tx.files.forgetUploads(ofMessage: messageId)
                } else {
                    try deleteFiles(ofDeletedMessage: entry, id: messageId, channel: channel, timetoken: timetoken)
                }
            }
        }
        changes.events.append(.sent(opId: entry.id, timetoken: timetoken))
        changes.finish(entry.id, .sent(timetoken: timetoken))
    }

    /// A message deleted from history takes its own files along, as the Chat SDK's `delete` does,
    /// and only those (`FileOwnership`): each becomes an orphan, deleted from PubNub after the drain
    /// (once the server confirms it, when this device did not upload it for this message). The
    /// files are read from the message as it was stored (the op's snapshot).
    private func deleteFiles(ofDeletedMessage entry: OutboxEntry, id: String, channel: String, timetoken: Timetoken) throws {
        guard let snapshot = entry.baseSnapshot, let stored = try? JSONValue(jsonData: Data(snapshot.utf8)),
              let files = stored.objectValue?["files"]?.arrayValue
        else { return }
        let orphans = try FileOwnership.orphans(
            ofDeleted: id, channel: channel, timetoken: timetoken, files: files.compactMap { ChatFile(wire: $0) }, tx: tx)
        for orphan in orphans { try tx.files.addFileOrphan(orphan) }
    }

    /// A pull found our pending publish on the server: the op is finished by the page that holds it.
    func completeByPull(messageId: String, timetoken: Timetoken) throws -> String? {
        guard let op = try tx.outbox.ops(target: OutboxKeys.message(messageId)).first(where: { $0.kind == .send }) else {
            return nil
        }
        try tx.outbox.deleteOp(id: op.id)
        try tx.files.finishFileUploads(opId: op.id, messageId: messageId, timetoken: timetoken)
        changes.events.append(.sent(opId: op.id, timetoken: timetoken))
        changes.finish(op.id, .sent(timetoken: timetoken))
        return op.id
    }

    /// Edits of the same object made while this one was in flight were based on the version it
    /// replaced; their base becomes the version it produced, so they do not conflict with it.
    /// Only up to the first removal: an op queued after a removal was made on no object (its base
    /// is "none"), and basing it on a version the removal deletes would make it see its own
    /// removal as someone else's.
    private func rebaseLaterOps<Object: VersionedObject & Encodable>(target: String, on server: Object) throws {
        try rebaseLaterOps(target: target, eTag: server.eTag, updated: server.updated, snapshot: try tx.snapshot(server))
    }

    /// ``rebaseLaterOps(target:on:)`` for an app record: its later writes are based on `record`.
    private func rebaseLaterOps(target: String, onRecord record: AppRecord) throws {
        try rebaseLaterOps(target: target, eTag: record.eTag, updated: record.updatedAt, snapshot: try AppRecordSnapshot.text(of: record))
    }

    private func rebaseLaterOps(target: String, eTag: String?, updated: ISOTimestamp?, snapshot: String?) throws {
        for var op in try tx.outbox.ops(target: target).sorted(by: { $0.seq < $1.seq }) {
            op.baseETag = eTag
            op.baseUpdated = updated?.description
            op.baseSnapshot = snapshot
            try tx.outbox.save(op)
            if op.kind.traits.isRemoval { break }
        }
    }

    // MARK: The app's decisions

    /// Puts a dead or conflicted op back in the queue. A send that may have arrived is probed first.
    func retry(_ id: String, now: Date) throws {
        var entry = try existing(id)
        guard entry.state == .dead || entry.state == .conflict else {
            throw OutboxError.notRetryable(opId: id, state: entry.state)
        }
        // Any publish that was handed to the transport before is probed first: some failures
        // (a 5xx, a failed probe) do not prove it did not arrive.
        let mayHaveArrived = entry.kind == .send && entry.firstAttemptAt != nil
        if entry.state == .conflict { entry.rebase = true }
        entry.state = mayHaveArrived ? .ambiguous : .pending
        entry.nextAttemptAt = nil
        entry.serverFailures = 0
        entry.updatedAt = now
        if let messageId = entry.operation.send?.messageId {
            // It is sent again now, after later messages of its channel may have gone: its place
            // in the local order moves to the end, so a later message's probe floor (earlier local
            // order) never includes it.
            try tx.messages.moveToEndOfLocalOrder(messageId: messageId)
            try tx.messages.setDelivery(messageId: messageId, to: .pending)
        }
        try tx.outbox.save(entry)
        // A person chose the local edit: an open conflict entry of this op is closed with it.
        try tx.closeOpenConflicts(opId: id, with: .local, policy: "outbox retry")
        changes.events.append(.retried(opId: id))
        changes.wakesDrain = true
    }

    /// The network is back: every op waiting out a backoff (pending or ambiguous, its next
    /// attempt later than `now`) may go at once. Its attempt count stays, so a failure right after
    /// still backs off as long as it would have. Returns how many ops were moved.
    func retryWaitingNow(now: Date) throws -> Int {
        // An op waiting for a token goes when one arrives (`tokenArrived`), not when the network does.
        try makeDue(now: now) { entry in (entry.nextAttemptAt.map { $0 > now } ?? false) && !entry.waitsForToken }
    }

    /// Makes every pending or ambiguous op that `waits` due now (its attempt count and failure
    /// stay); wakes the drain when any moved. Returns how many moved.
    private func makeDue(now: Date, _ waits: (OutboxEntry) -> Bool) throws -> Int {
        var moved = 0
        for var entry in try tx.outbox.ops(states: [.pending, .ambiguous]) where waits(entry) {
            entry.nextAttemptAt = now
            entry.updatedAt = now
            try tx.outbox.save(entry)
            moved += 1
        }
        if moved > 0 { changes.wakesDrain = true }
        return moved
    }

    /// A new Access Manager token arrived: every op waiting for one may go at once. Its failure
    /// stays recorded, so that a refusal under the new token makes it a dead letter
    /// (``FailureDecision``). Returns how many ops were moved.
    func tokenArrived(now: Date) throws -> Int {
        try makeDue(now: now) { $0.waitsForToken }
    }

    /// Every request waits for a token: each live op not yet marked is marked as waiting for one
    /// (under the token of `fingerprint`), so that the status shows it and a refusal under the next
    /// token is told from this one. Nothing was sent for them. Returns how many ops were marked.
    func parkForToken(fingerprint: String, reason: String, now: Date) throws -> Int {
        var parked = 0
        for var entry in try tx.outbox.ops(states: [.pending, .ambiguous]) where !entry.waitsForToken {
            entry.nextAttemptAt = OutboxEntry.tokenWaitMarker
            entry.lastFailure = OutboxFailure(errorClass: .accessDenied, message: reason, token: entry.waitedUnderToken ?? fingerprint)
            entry.updatedAt = now
            try tx.outbox.save(entry)
            parked += 1
        }
        return parked
    }

    /// The app discards an op that has not reached PubNub: ``withdraw(_:undo:)`` with its local
    /// change reverted; a discarded send takes the reactions waiting on it along. Returns the ids
    /// of every op removed.
    func discard(_ id: String) throws -> [String] {
        let entry = try existing(id)
        guard entry.state != .inflight, entry.state != .ambiguous else {
            throw OutboxError.mayHaveBeenApplied(opId: id, state: entry.state)
        }
        let removed = try withdraw(entry, undo: .revert)
        // A person dropped the local edit: an open conflict entry of this op is closed with the server's side.
        try tx.closeOpenConflicts(opId: id, with: .remote, policy: "outbox discard")
        changes.events.append(.discarded(opIds: removed))
        return removed
    }

    // MARK: Withdrawal

    /// What becomes of a withdrawn op's local change.
    enum Undo {
        /// Put back what the op changed (its base snapshot): the write is dropped.
        case revert
        /// Store the server's version in its place (nil: the server has none): a conflict settled
        /// for the server.
        case serverVersion(JSONValue?)
        /// Leave the local rows as they are: the change that withdraws the op writes them itself.
        case keep
    }

    /// Withdraws an op that will never be sent: its row and those of the ops waiting on it
    /// (``OutboxEntry/dependsOn``) leave the outbox, its local change is undone as `undo` says,
    /// and each finishes as discarded. Every way an op leaves the outbox unsent goes through here
    /// (the app's discard, a settlement for the server, coalescing, a hard delete); the caller
    /// announces why. Returns the ids removed, the op's first.
    @discardableResult
    func withdraw(_ entry: OutboxEntry, undo: Undo) throws -> [String] {
        var removed = [entry.id]
        try releaseMembershipEdits(waitingFor: entry)
        for dependent in try tx.outbox.ops(dependingOn: entry.id) {
            try tx.outbox.deleteOp(id: dependent.id)
            removed.append(dependent.id)
        }
        try tx.outbox.deleteOp(id: entry.id)
        // A send with files: what it may have uploaded is deleted from PubNub after the next drain.
        try tx.files.abandonFileUploads(opId: entry.id)
        switch undo {
        case .revert: try overlay.revert(entry)
        case .serverVersion(let remote): try overlay.storeServerVersion(remote, of: entry)
        case .keep: break
        }
        for opId in removed { changes.finish(opId, .discarded) }
        return removed
    }

    /// The membership edits that only waited for a batch of read positions (`insert`) go on
    /// their own once it is withdrawn or dead: it did not change the membership, so their base
    /// holds. Its receipts keep waiting for it (and leave with it).
    private func releaseMembershipEdits(waitingFor entry: OutboxEntry) throws {
        guard entry.kind == .readPositions else { return }
        for var dependent in try tx.outbox.ops(dependingOn: entry.id) where dependent.kind != .receipt {
            dependent.dependsOn = nil
            try tx.outbox.save(dependent)
        }
    }

    // MARK: Conflict settlement

    /// Settles a conflicted op and logs it: the op, the local object and the log entry change
    /// together. Returns the log entry's id.
    ///
    /// - Parameters:
    ///   - remote: the server's current version as wire JSON, or nil when it has none.
    ///   - closing: an open log entry that this decision closes (a person's decision), instead of
    ///     writing a new one.
    func settle(
        _ opId: String, remote: JSONValue?, settlement: ConflictSettlement, record: NewConflictRecord, closing: Int64?,
        now: Date
    ) throws -> Int64 {
        var entry = try existing(opId)
        guard entry.state == .conflict else { throw OutboxError.notRetryable(opId: opId, state: entry.state) }
        let logId: Int64
        if let closing {
            try tx.updateConflict(id: closing, with: record)
            logId = closing
        } else {
            logId = try tx.insertConflict(record)
        }
        switch settlement {
        case .wait:
            break
        case .takeRemote:
            let removed = try withdraw(entry, undo: .serverVersion(remote))
            changes.events.append(.settled(opId: opId, resent: false, conflictId: logId))
            if removed.count > 1 { changes.events.append(.discarded(opIds: Array(removed.dropFirst()))) }
        case .resend(let fields):
            entry.rebase = false
            if let fields { entry.operation = entry.operation.with(fields: fields) }
            entry.state = .pending
            entry.baseETag = remote?.objectValue?["eTag"]?.stringValue
            entry.baseUpdated = remote?.objectValue?["updated"]?.stringValue
            entry.nextAttemptAt = nil
            entry.serverFailures = 0
            entry.updatedAt = now
            // The op is saved first: the server's version is stored and this op's edit laid over it.
            try tx.outbox.save(entry)
            entry.baseSnapshot = try overlay.storeServerVersion(remote, of: entry)
            try tx.outbox.save(entry)
            changes.events.append(.settled(opId: opId, resent: true, conflictId: logId))
            changes.wakesDrain = true
        }
        return logId
    }
}

/// How a conflicted op is settled.
enum ConflictSettlement: Sendable, Hashable {
    /// Drop the local edit and store the server's version (none: the server deleted the object).
    case takeRemote
    /// Send again over the server's version (its eTag becomes the op's base and `If-Match`); for
    /// an edit, `fields` become the op's fields.
    case resend(fields: [String: JSONValue]?)
    /// Leave the op in `conflict` for a person; only the log entry is written.
    case wait
}

/// A successful op's result, as the store keeps it.
enum OpResult<Custom: ChatCustomData> {
    case published(Timetoken)
    case reaction(Timetoken?)
    case user(ChatUser<Custom.User>)
    case channel(ChatChannel<Custom.Channel>)
    case membership(ChatMember<Custom>?)
    /// A batch of read positions: the channels it wrote and the server's memberships of its channels.
    case memberships(written: Set<String>, [ChatMember<Custom>])
    case muteList(owner: String, StoredMuteList)
    /// An app record as the server answered its write (nil: a delete).
    case appRecord(AppRecord?)
    case none
}
