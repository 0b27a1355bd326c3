import Foundation
import ReplicaModel
import ReplicaStore

// Mark all read as the Chat SDK's `markAllMessagesAsRead` does it: one membership PATCH for every
// channel whose position moves, then one receipt signal per channel (`docs/chat.md`, "Mark all
// read"). The batch is one op (``ReplicaStore/OutboxOperation/readPositions(_:)``) of up to 100
// channels, laid over each membership it names until it is sent (``LocalOverlay``).
extension OpTransaction {
    /// Marks every channel `userId` is a member of read up to its newest stored message.
    ///
    /// A channel whose position moves joins the user's unsent batch (its position raised there
    /// when it is in it already: one op for all the marks made meanwhile), or a new batch when
    /// there is none or the last one is full. A channel with an op of its own on the membership
    /// goes the way ``enqueueMarkRead(opId:channelId:userId:timetoken:force:receiptOpId:now:)``
    /// does (merged into that op), so two writes of one membership never race. A channel the user
    /// may not write (banned, a moderation channel) is left as it is. Each channel that moves
    /// gets its receipt signal after the write (not on `public` channels).
    ///
    /// - Returns: the receipts of the channels whose position moved, by channel.
    func enqueueMarkAllRead(userId: String, opIds: () -> String, now: Date) throws -> [String: OutboxReceipt<Member>] {
        var receipts: [String: OutboxReceipt<Member>] = [:]
        for (channel, newest) in try tx.newestTimetokens(inChannelsOf: userId).sorted(by: { $0.key < $1.key })
        where ReadPosition.isPlausible(newest, now: now) {
            guard let stored = try tx.member(channelId: channel, userId: userId),
                  ReadPosition.moves(in: .object(try stored.customFields()), to: newest, now: now)
            else { continue }
            do {
                try checkRestrictions(.setMembership(channel: channel, user: userId, fields: [:]))
            } catch is OutboxError {
                continue
            }
            let receipt: OutboxReceipt<Member>
            if try tx.latestOp(target: OutboxKeys.member(channel, userId)) != nil || !ReadPositionsWrite.canBatch(channel) {
                receipt = try enqueueMarkRead(
                    opId: opIds(), channelId: channel, userId: userId, timetoken: newest, receiptOpId: opIds(), now: now)
            } else {
                receipt = try batchReadPosition(stored, timetoken: newest, opIds: opIds, now: now)
            }
            if receipt.opId != nil { receipts[channel] = receipt }
        }
        return receipts
    }

    /// Marks one stored membership read up to `timetoken` in the user's batch: the local row
    /// shows it at once; the position joins the newest unsent batch that names the channel or has
    /// room, else a new batch; the receipt signal waits for the batch.
    func batchReadPosition(_ stored: Member, timetoken: Timetoken, opIds: () -> String, now: Date) throws -> OutboxReceipt<Member> {
        let channel = stored.channelId, user = stored.userId
        try checkRestrictions(.setMembership(channel: channel, user: user, fields: [:]))
        let local = try stored.withReadPosition(timetoken)
        try tx.upsert(member: local, force: true)
        let mark = ReadMark(channel: channel, timetoken: timetoken, previous: ReadPosition.timetoken(in: .object(try stored.customFields())))
        let (opId, disposition) = try insertOrMerge(mark, user: user, opId: opIds, now: now)
        if try tx.channel(id: channel)?.type != "public" {
            try queueReceipt(channelId: channel, timetoken: timetoken, after: opId, opId: opIds(), now: now)
        }
        return OutboxReceipt(value: local, opId: opId, disposition: disposition)
    }

    /// Whether an unsent batch of `userId`'s read positions names `channel` while no op of the
    /// membership's own is queued: a read position of the channel is raised in that batch.
    func batchNames(_ channel: String, userId: String) throws -> Bool {
        guard ReadPositionsWrite.canBatch(channel), try tx.latestOp(target: OutboxKeys.member(channel, userId)) == nil else { return false }
        return try tx.ops(target: OutboxKeys.readPositions(userId))
            .contains { $0.isCertainlyUnsent && $0.readPositions?.mark(in: channel) != nil }
    }

    /// The live batch of `user`'s read positions (pending, ambiguous or in flight) that names
    /// `channel`: a membership op queued after it waits for it (``insert(_:id:now:)``), so the
    /// two writes of the membership do not race and the later one is based on its answer.
    func liveReadPositions(of user: String, naming channel: String) throws -> OutboxEntry? {
        try tx.ops(target: OutboxKeys.readPositions(user))
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
