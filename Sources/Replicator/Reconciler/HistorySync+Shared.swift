import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

// Shared rounds: one history request for many channels (PubNub answers up to 25 messages of each
// of up to 500 channels), for quiet channels, first pulls and long gaps. `docs/reconciler.md`,
// "Shared requests".
extension HistorySync {
    /// A channel in the shared rounds of a pull (``pullShared(first:known:filling:progress:)``): what is stored of
    /// it, and where its next page starts.
    struct SharedChannel: Sendable {
        var channel: String
        /// Its checkpoint as last written (a fill in progress once a round left it incomplete).
        var checkpoint: SyncCheckpoint
        /// The timetokens of its last answer, ascending: the messages stored from its fill cursor
        /// up (an answer is the newest ones below its `start`). Nil when unknown (a fill resumed
        /// from an earlier pull): it then shares only a request that starts at its cursor.
        var recent: [Timetoken]?
        /// Messages fetched for it in this pull (``ReconcilerOptions/initialMessages``).
        var fetched = 0

        /// Everything above this is stored (the next request's exclusive `start`); nil before
        /// its first answer.
        var cursor: Timetoken? { checkpoint.fillCursor }

        /// How many messages it already holds that a shared request starting at `start` would
        /// answer again (its answer is the newest below `start`, and it holds all from its
        /// cursor up). `Int.max` when that is unknown.
        func overlap(start: Timetoken) -> Int {
            guard let cursor else { return Int.max }
            if start == cursor { return 0 }
            // Rounds start lower each time: what it holds below `start` is in its last answer.
            guard start > cursor, let recent else { return Int.max }
            return recent.count { $0 < start }
        }
    }

    /// Shared rounds: requests for many channels at once (PubNub answers up to 25 of each of up
    /// to 500 channels), each the newest messages below one `start`, until every channel is
    /// caught up or would cost more shared than alone.
    ///
    /// The first round has no `start`: each channel's newest messages (down to its checkpoint,
    /// when it has one). A channel whose answer is short, or reaches its checkpoint, is caught up.
    /// The others hold everything from their cursor (their answer's oldest) up; the next round
    /// starts at the highest cursor and takes every channel that would get at least half a page
    /// of messages it does not hold (channels whose histories interleave in time: the usual
    /// case). When fewer than ``minimumSharedChannels`` channels would, the channel at the
    /// highest cursor is paged alone (100 a page) instead. Each answer is applied with every
    /// channel's checkpoint in one transaction; a checkpoint never claims a message not stored
    /// (an incomplete channel records a fill: ``SyncCheckpoint/fillTop``, ``SyncCheckpoint/fillCursor``).
    ///
    /// Returns the reports and the channels to page alone (their fill recorded).
    func pullShared(
        first: [SharedChannel], known: [SharedChannel], filling: [SharedChannel],
        progress: (@Sendable (PullProgress) -> Void)?
    ) async throws -> (reports: [String: ChannelPullReport], alone: [String], swept: Set<String>) {
        var reports: [String: ChannelPullReport] = [:]
        var alone: [String] = []
        // The first round: each channel's newest messages, first pulls and the others apart (the
        // others' requests stop at their lowest checkpoint).
        var pending = filling
        for group in requestGroups(first) + requestGroups(known) {
            pending += try await sharedRound(group, start: nil, reports: &reports, alone: &alone, progress: progress)
        }
        let swept = Set(pending.map(\.channel))
        while !pending.isEmpty {
            guard let start = pending.compactMap(\.cursor).max() else { break }
            let taking = pending.filter { $0.overlap(start: start) <= options.multiChannelPageSize / 2 }
            if taking.count < Self.minimumSharedChannels {
                // Too few would share: the channel at the top goes alone (its fill is recorded).
                let top = pending.firstIndex { $0.cursor == start } ?? 0
                alone.append(pending.remove(at: top).channel)
                continue
            }
            let taken = Set(taking.map(\.channel))
            pending.removeAll { taken.contains($0.channel) }
            for group in requestGroups(taking) {
                pending += try await sharedRound(group, start: start, reports: &reports, alone: &alone, progress: progress)
            }
        }
        return (reports, alone, swept)
    }

    /// Fewer channels than this would share a round: the top one is paged alone instead.
    static var minimumSharedChannels: Int { 4 }

    /// `channels` cut into requests: as many as PubNub takes in one and the URL holds.
    func requestGroups(_ channels: [SharedChannel]) -> [[SharedChannel]] {
        var groups: [[SharedChannel]] = []
        var index = 0
        while index < channels.count {
            var end = index, bytes = 0
            while end < channels.count, end - index < max(1, options.channelsPerRequest) {
                let size = PercentEncoding.pathSegmentLength(channels[end].channel) + 3   // and its `%2C`
                if end > index, bytes + size > options.channelBytesPerRequest { break }
                bytes += size
                end += 1
            }
            groups.append(Array(channels[index..<end]))
            index = end
        }
        return groups
    }

    /// One shared request for `group`, starting below `start` (nil: the newest), down to the
    /// group's lowest checkpoint: each channel's new messages and its checkpoint applied in one
    /// transaction. A channel whose answer is short, reaches its checkpoint, or (on a first
    /// pull) holds ``ReconcilerOptions/initialMessages``, is caught up; the others are returned,
    /// their fill recorded. A failed request sends the group's channels to be paged alone.
    func sharedRound(
        _ group: [SharedChannel], start: Timetoken?, reports: inout [String: ChannelPullReport], alone: inout [String],
        progress: (@Sendable (PullProgress) -> Void)?
    ) async throws -> [SharedChannel] {
        // Channels pulled for the first time share only when there are a few of them: one or
        // two are cheaper paged alone (100 a page) than shared first (25 each).
        let firstPulls = group.allSatisfy { $0.checkpoint.applied == nil && !$0.checkpoint.isFilling }
        if group.count == 1 || firstPulls && group.count < Self.minimumSharedChannels {
            alone += group.map(\.channel)
            return []
        }
        var max = min(options.multiChannelPageSize, PubNubHistory.historyCap(channelCount: group.count, withActions: false))
        if firstPulls, let initial = options.initialMessages { max = Swift.max(1, min(max, initial)) }
        let floors = group.map(\.checkpoint.applied)
        let end = floors.contains(nil) ? nil : floors.compactMap { $0 }.min()?.next
        // A first pull that finds a channel empty gives it a checkpoint from a time trusted
        // before the request (as a catch-up does: `catchUp(channel:progress:)`).
        let trustedBefore = trustedBeforeRequest
        let page: HistoryPage
        do {
            let query = HistoryQuery(channels: group.map(\.channel), max: max, start: start, end: end)
            page = try await fetch("history:\(group.count) channels") { () async throws(WireError) -> HistoryPage in
                try await client.history.fetchHistory(query)
            }
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            // The shared request failed: each channel is tried on its own.
            logger.warning("shared history request failed", metadata: ["channels": "\(group.count)", "error": "\(error)"])
            alone += group.map(\.channel)
            return []
        }
        var incomplete: [SharedChannel] = []
        var writes: [(channel: String, messages: [Message], checkpoint: SyncCheckpoint)] = [], fetched: [Int] = []
        for var member in group {
            let all = page.channels[member.channel] ?? []
            let applied = member.checkpoint.applied, cursor = member.cursor
            let fresh = all.filter { entry in
                applied.map { entry.timetoken > $0 } ?? true && cursor.map { entry.timetoken < $0 } ?? true
            }
            member.fetched += fresh.count
            var next = member.checkpoint
            let reachedFloor = applied.map { floor in all.first.map { $0.timetoken <= floor } ?? false } ?? false
            let deepEnough = applied == nil && options.initialMessages.map { member.fetched >= $0 } == true
            if all.count < max || reachedFloor || deepEnough {
                if let top = next.fillTop ?? fresh.last?.timetoken {
                    next.applied = top
                } else if applied == nil, let trustedBefore {
                    next.applied = trustedBefore   // an empty channel, first pulled
                }
                next.fillTop = nil
                next.fillCursor = nil
            } else {
                next.fillTop = next.fillTop ?? all.last?.timetoken
                next.fillCursor = all.first?.timetoken
                member.recent = all.map(\.timetoken)
            }
            if fresh.isEmpty, next == member.checkpoint {
                // Nothing new, nothing written; a fill this round did not move is paged alone.
                if next.isFilling { alone.append(member.channel) }
                continue
            }
            next.updatedAt = clock.now
            member.checkpoint = next
            writes.append((member.channel, try fresh.map { try Self.message($0, channel: member.channel) }, next))
            fetched.append(member.fetched)
            if next.isFilling { incomplete.append(member) }
        }
        let results: [HistoryPageResult]
        do {
            results = try await applyShared(writes)
        } catch {
            // Nothing of the answer was stored (one transaction): each channel is tried on its own.
            logger.warning("storing a shared history answer failed", metadata: ["channels": "\(group.count)", "error": "\(error)"])
            alone += group.map(\.channel)
            return []
        }
        for (index, (write, result)) in zip(writes, results).enumerated() {
            var report = reports[write.channel] ?? ChannelPullReport(channel: write.channel)
            report.add(result)
            reports[write.channel] = report
            if !write.messages.isEmpty { progress?(PullProgress(scope: write.channel, pages: report.pages, items: fetched[index])) }
        }
        return incomplete
    }

    /// Applies the answers of one shared request, each channel's messages with its checkpoint,
    /// in one transaction; a result per channel.
    private func applyShared(_ writes: [(channel: String, messages: [Message], checkpoint: SyncCheckpoint)]) async throws
        -> [HistoryPageResult]
    {
        guard !writes.isEmpty else { return [] }
        let logger = logger, hook = options.beforeHistoryCommit
        do {
            let results = try await ops.commit { ops in
                let tx = ops.tx
                var lookups = try ServerMessageLookups(prefetching: writes.flatMap(\.messages), tx: tx)
                var results: [HistoryPageResult] = []
                for write in writes {
                    var result = HistoryPageResult()
                    for message in write.messages {
                        try ServerMessages<Custom>.apply(message, ops: ops, lookups: &lookups, into: &result, logger: logger)
                    }
                    if !write.messages.isEmpty { result.pages = 1 }
                    try tx.write(write.checkpoint)
                    try hook?(write.channel)
                    results.append(result)
                }
                return results
            }
            if let newest = writes.lazy.flatMap(\.messages).compactMap(\.timetoken).max() { context.serverTime.stored(messages: [newest]) }
            return results
        } catch {
            throw StoreError.wrapping(error)
        }
    }
}
