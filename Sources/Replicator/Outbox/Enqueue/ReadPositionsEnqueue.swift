import Foundation
import ReplicaModel
import ReplicaStore

// Mark all read as the Chat SDK's `markAllMessagesAsRead` does it: one membership PATCH for every
// channel whose position moves, then one receipt signal per channel (`docs/conversations.md`, "Mark all
// read"). The batch is one op (``ReplicaStore/OutboxOperation/readPositions(_:)``) of up to 100
// channels, laid over each membership it names until it is sent (``LocalOverlay``).
extension OpEnqueue {
    /// Marks every channel `userId` is a member of read up to its newest stored message.
    ///
    /// A channel whose position moves joins the user's unsent batch (its position raised there
    /// when it is in it already: one op for all the marks made meanwhile), or a new batch when
    /// there is none or the last one is full. A channel with an op of its own on the membership
    /// goes the way ``markRead(opId:channelId:userId:timetoken:force:receiptOpId:now:)``
    /// does (merged into that op), so two writes of one membership never race. A channel the user
    /// may not write (banned, a moderation channel) is left as it is. Each channel that moves
    /// gets its receipt signal after the write (not on `public` channels).
    ///
    /// - Returns: the receipts of the channels whose position moved, by channel.
    func markAllRead(userId: String, opIds: () -> String, now: Date) throws -> [String: OutboxReceipt<Member>] {
        var receipts: [String: OutboxReceipt<Member>] = [:]
        var batched: [(member: Member, timetoken: Timetoken)] = []
        for (channel, newest) in try tx.newestTimetokens(inChannelsOf: userId).sorted(by: { $0.key < $1.key })
        where ReadPosition.isPlausible(newest, now: now) {
            guard let stored = try tx.member(channelId: channel, userId: userId),
                  ReadPosition.moves(in: .object(try stored.customFields()), to: newest, now: now)
            else { continue }
            do {
                try transaction.checkRestrictions(.setMembership(channel: channel, user: userId, fields: [:]))
            } catch is OutboxError {
                continue
            }
            guard try tx.outbox.latestOp(target: OutboxKeys.member(channel, userId)) != nil || !ReadPositionsWrite.canBatch(channel) else {
                batched.append((stored, newest))
                continue
            }
            let receipt = try markRead(
                opId: opIds(), channelId: channel, userId: userId, timetoken: newest, receiptOpId: opIds(), now: now)
            if receipt.opId != nil { receipts[channel] = receipt }
        }
        return receipts.merging(try batchReadPositions(batched, user: userId, opIds: opIds, now: now)) { $1 }
    }

    /// Marks stored memberships of `user` read in the user's batches: each local row shows its
    /// position at once; the positions join the unsent batches or new ones
    /// (``insertOrMerge(_:user:opId:now:)``); each channel's receipt signal waits for its batch
    /// (not on `public` channels). The caller has checked that the user may write each membership.
    ///
    /// - Returns: the receipts by channel (the batch's op id).
    func batchReadPositions(_ reads: [(member: Member, timetoken: Timetoken)], user: String, opIds: () -> String, now: Date) throws
        -> [String: OutboxReceipt<Member>]
    {
        var marks: [ReadMark] = [], locals: [String: Member] = [:]
        for (stored, timetoken) in reads {
            let local = try stored.withReadPosition(timetoken)
            try tx.upsert(member: local, force: true)
            locals[stored.channelId] = local
            marks.append(ReadMark(
                channel: stored.channelId, timetoken: timetoken, previous: ReadPosition.timetoken(in: .object(try stored.customFields())),
                eTag: stored.eTag))
        }
        let batches = try transaction.insertOrMerge(marks, user: user, opId: opIds, now: now)
        var receipts: [String: OutboxReceipt<Member>] = [:]
        for mark in marks {
            guard let batch = batches[mark.channel] else { continue }
            if try tx.channel(id: mark.channel)?.type != "public" {
                try transaction.queueReceipt(channelId: mark.channel, timetoken: mark.timetoken, after: batch.id, opId: opIds(), now: now)
            }
            receipts[mark.channel] = OutboxReceipt(value: locals[mark.channel], opId: batch.id, disposition: batch.disposition)
        }
        return receipts
    }

    /// Whether an unsent batch of `userId`'s read positions names `channel` while no op of the
    /// membership's own is queued: a read position of the channel is raised in that batch.
    func batchNames(_ channel: String, userId: String) throws -> Bool {
        guard ReadPositionsWrite.canBatch(channel), try tx.outbox.latestOp(target: OutboxKeys.member(channel, userId)) == nil else { return false }
        return try tx.outbox.ops(target: OutboxKeys.readPositions(userId))
            .contains { $0.isCertainlyUnsent && $0.readPositions?.mark(in: channel) != nil }
    }

    /// The live batch of `user`'s read positions (pending, ambiguous or in flight) that names
    /// `channel`: a membership op queued after it waits for it (``insert(_:id:now:)``), so the
    /// two writes of the membership do not race and the later one is based on its answer.
    func liveReadPositions(of user: String, naming channel: String) throws -> OutboxEntry? {
        try tx.outbox.ops(target: OutboxKeys.readPositions(user))
            .filter { OutboxState.live.contains($0.state) && $0.readPositions?.mark(in: channel) != nil }
            .max { $0.seq < $1.seq }
    }
}

extension OutboxEntry {
    /// The positions of a ``ReplicaStore/OutboxOperation/readPositions(_:)`` op; nil for any other op.
    var readPositions: ReadPositions? {
        if case .readPositions(let positions) = operation { positions } else { nil }
    }
}
