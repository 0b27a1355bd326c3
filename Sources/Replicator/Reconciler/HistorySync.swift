import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

/// What pulling one channel's history did.
public struct ChannelPullReport: Sendable, Hashable, Codable {
    /// The channel.
    public var channel: String
    /// History requests that returned a page.
    public var pages = 0
    /// Messages stored for the first time.
    public var inserted = 0
    /// Stored messages that changed (own pending sends that arrived count here).
    public var updated = 0
    /// Own publishes the pull proved had arrived (their outbox ops are finished).
    public var completedSends = 0
    /// Chat SDK events of a user's channel stored for the first time (mentions, invitations).
    public var events = 0
    /// Why the pull stopped early, or nil when it reached the present.
    public var error: String?
    /// Whether this channel's failure (the server unreachable, or the sync's deadline passed)
    /// made the pull skip the channels after it.
    public var endedPulls = false

    /// An empty report for `channel`.
    public init(channel: String) { self.channel = channel }

    mutating func add(_ result: HistoryPageResult) {
        pages += result.pages
        inserted += result.inserted
        updated += result.updated
        completedSends += result.completedSends.count
        events += result.events
    }
}

/// Progress of a pull, one value per commit (of one page, or of several fetched pages that were
/// ready together).
public struct PullProgress: Sendable, Hashable {
    /// The channel or object scope.
    public var scope: String
    /// Pages applied so far in this scope.
    public var pages: Int
    /// Items applied so far in this scope.
    public var items: Int
}

/// A reconciler's history: pulling each channel's new messages (resumably, 500 channels a
/// request), scrolling back, reading a range of the server's history, and applying pages with
/// their checkpoint in one transaction. `docs/reconciler.md`, "History".
struct HistorySync<Custom: ChatCustomData>: ReconcilerPart {
    let context: PullContext<Custom>

    /// What ``Reconciler/pullHistory`` does (its doc says how).
    func pullHistory(
        channels: [String], progress: (@Sendable (PullProgress) -> Void)? = nil
    ) async throws -> [ChannelPullReport] {
        var first: [SharedChannel] = [], known: [SharedChannel] = [], filling: [SharedChannel] = []
        let sorted = Set(channels).sorted()
        let stored = try await store.fetch(store.queries.checkpoints(sorted.map(SyncCheckpoint.history)))
        for channel in sorted {
            let checkpoint = stored[SyncCheckpoint.history(channel)] ?? SyncCheckpoint(scope: SyncCheckpoint.history(channel))
            let member = SharedChannel(channel: channel, checkpoint: checkpoint)
            if checkpoint.isFilling {
                filling.append(member)
            } else if checkpoint.applied == nil {
                first.append(member)
            } else {
                known.append(member)
            }
        }
        // A channel pulled for the first time may turn out empty (the user's own channel, a new
        // conversation): it gets a checkpoint, so that later syncs share a request for it, only
        // from a time trusted before its request. One `/time` when none is trusted yet.
        if !first.isEmpty || filling.contains(where: { $0.checkpoint.applied == nil }), context.serverTime.ceiling == nil {
            await verifyServerTime()
        }
        // The shared rounds; the channels they leave are paged alone.
        var (reports, alone, swept) = try await pullShared(first: first, known: known, filling: filling, progress: progress)
        // After a failure that every later request would meet too (unreachable, deadline), the
        // remaining channels are skipped rather than each tried and waited for in turn.
        var unreachable: String?
        func pullAlone(_ channels: [String], refresh: (String) -> Bool) async throws {
            for channel in channels {
                var report = reports[channel] ?? ChannelPullReport(channel: channel)
                if let unreachable {
                    report.error = "skipped (\(unreachable))"
                    reports[channel] = report
                    continue
                }
                do {
                    // Counted on from what the shared rounds read of the channel.
                    let base = (pages: report.pages, items: report.inserted + report.updated)
                    let counted = progress.map { progress in
                        { @Sendable (more: PullProgress) in
                            progress(PullProgress(scope: more.scope, pages: base.pages + more.pages, items: base.items + more.items))
                        }
                    }
                    let more = try await catchUp(channel: channel, refresh: refresh(channel), progress: counted)
                    report.pages += more.pages
                    report.inserted += more.inserted
                    report.updated += more.updated
                    report.completedSends += more.completedSends
                    report.error = more.error
                } catch is CancellationError {
                    throw CancellationError()
                } catch {
                    if Self.stopsSync(error) { throw error }
                    report.error = "\(error)"
                    if Self.endsPulls(error) {
                        unreachable = "\(error)"
                        report.endedPulls = true
                    }
                }
                reports[channel] = report
            }
        }
        // A channel the shared rounds left is paged alone; one whose fill they began closes it
        // there without a round of its own for what was published since the fill began: one
        // shared round below asks that of all of them at once.
        try await pullAlone(alone) { !swept.contains($0) }
        guard !swept.isEmpty, unreachable == nil else { return reports.values.sorted { $0.channel < $1.channel } }
        var topUp: [SharedChannel] = []
        let sweptChannels = swept.sorted().filter { reports[$0]?.error == nil }
        let afterSweep = try await store.fetch(store.queries.checkpoints(sweptChannels.map(SyncCheckpoint.history)))
        for channel in sweptChannels {
            guard let checkpoint = afterSweep[SyncCheckpoint.history(channel)],
                  checkpoint.applied != nil, !checkpoint.isFilling
            else { continue }
            topUp.append(SharedChannel(channel: channel, checkpoint: checkpoint))
        }
        var stillBehind: [String] = [], failed: [String] = []
        for group in requestGroups(topUp) {
            stillBehind += try await sharedRound(group, start: nil, reports: &reports, alone: &failed, progress: progress).map(\.channel)
        }
        try await pullAlone(stillBehind + failed) { _ in true }
        return reports.values.sorted { $0.channel < $1.channel }
    }

    /// What ``Reconciler/catchUp`` does (its doc says how).
    ///
    /// - Parameter refresh: after closing a fill, page back from now again for what was
    ///   published since the fill began (a pull's shared rounds ask that of many channels at
    ///   once instead).
    @discardableResult
    func catchUp(
        channel: String, refresh: Bool = true, progress: (@Sendable (PullProgress) -> Void)? = nil
    ) async throws -> ChannelPullReport {
        let scope = SyncCheckpoint.history(channel)
        var report = ChannelPullReport(channel: channel)
        var checkpoint = try await store.fetch(store.queries.checkpoint(scope)) ?? SyncCheckpoint(scope: scope)
        let pageSize = min(Swift.max(1, options.pageSize), 100)
        var items = 0
        // A time this device trusts from before the request, less a margin for a publish not yet
        // in history when the request was answered: an empty history then holds nothing up to
        // it either (a channel with no message yet: the user's own, a new conversation).
        let trustedBefore = trustedBeforeRequest
        while true {
            // One round: from the fill cursor (or now) down to just above `applied`.
            let round = historyRound(channel: channel, pageSize: pageSize, from: checkpoint)
            let limit = checkpoint.applied == nil ? options.initialMessages : nil
            let handOff = HandOff<FetchedPage>(capacity: options.pagesPerCommit)
            let ended: HistoryStep = try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await Self.fetchRound(round, channel: channel, stopAfter: limit, into: handOff) }
                defer { group.cancelAll() }
                do {
                    var fetchedThisFill = 0
                    while let batch = try await handOff.takeAll() {
                        var next = checkpoint
                        next.updatedAt = clock.now
                        var messages: [Message] = []
                        var pages = 0
                        var step = HistoryStep.more
                        for fetched in batch {
                            step = Self.advance(&next, by: fetched.page, pageSize: pageSize, initialMessages: options.initialMessages,
                                                fetchedThisFill: &fetchedThisFill)
                            if step == .nothingNew {
                                // An empty channel gets a checkpoint, so that later syncs ask for
                                // it in a shared request instead of on its own each time.
                                if next.applied == nil, !next.isFilling, let trustedBefore {
                                    next.applied = trustedBefore
                                    _ = try await apply([Message](), channel: channel, checkpoint: next)
                                    checkpoint = next
                                }
                                break
                            }
                            messages += fetched.messages
                            pages += 1
                            ReplicatorMetrics.catchUpPage("history", to: client.metrics)
                            if step != .more { break }
                        }
                        if pages > 0 {
                            var result = try await apply(messages, channel: channel, checkpoint: next)
                            result.pages = pages
                            report.add(result)
                            items += messages.count
                            progress?(PullProgress(scope: channel, pages: report.pages, items: items))
                            checkpoint = next
                        }
                        if step != .more {
                            await handOff.close()
                            return step
                        }
                    }
                    // The round ended without a last page (not expected): a new round from the checkpoint.
                    return HistoryStep.closed
                } catch {
                    await handOff.close()
                    throw error
                }
            }
            // A closed fill: the next round pages back from now to the new `applied`.
            if ended != .closed || !refresh { return report }
        }
    }

    /// How far below the trusted time an empty channel's first checkpoint is set (timetoken
    /// units: 10 seconds), so that a message published just before the request but not yet in
    /// history is still above the checkpoint and fetched by the next pull.
    static var emptyHistoryMargin: UInt64 { 100_000_000 }

    /// The checkpoint an empty channel's first pull may take: a time this device trusts from
    /// before the request, less ``emptyHistoryMargin`` (nil when no time is trusted yet).
    var trustedBeforeRequest: Timetoken? {
        context.serverTime.ceiling.map { Timetoken(rawValue: $0.rawValue > Self.emptyHistoryMargin ? $0.rawValue - Self.emptyHistoryMargin : 0) }
    }

    /// A page of a catch-up round with its messages converted (by the fetcher, off the writer).
    struct FetchedPage: Sendable {
        var page: HistoryPages.Page
        var messages: [Message]
    }

    /// Where a page leaves a catch-up.
    enum HistoryStep: Sendable, Equatable {
        /// More pages of this round follow.
        case more
        /// Caught up: `applied` is the newest message.
        case done
        /// A fill closed: a new round fetches what was published meanwhile.
        case closed
        /// An empty first page: nothing new.
        case nothingNew
    }

    /// Moves `checkpoint` past one page of a round: the first page of a round that is not short
    /// starts a fill (`fillTop` its newest, `fillCursor` its oldest), later pages move the cursor,
    /// and a short page (or, on a first pull with ``ReconcilerOptions/initialMessages``, enough
    /// messages) closes it.
    static func advance(
        _ checkpoint: inout SyncCheckpoint, by page: HistoryPages.Page, pageSize: Int, initialMessages: Int?,
        fetchedThisFill: inout Int
    ) -> HistoryStep {
        let messages = page.messages
        let short = page.isLast
        if checkpoint.isFilling {
            fetchedThisFill += messages.count
            let deepEnough = checkpoint.applied == nil && initialMessages.map { fetchedThisFill >= $0 } == true
            if short || deepEnough {
                // The gap is closed (or the first pull went back far enough): all up to the top is stored.
                checkpoint.applied = checkpoint.fillTop
                checkpoint.fillTop = nil
                checkpoint.fillCursor = nil
                return .closed
            }
            // Where the round's next page starts.
            checkpoint.fillCursor = messages.first?.timetoken
            return .more
        }
        guard let newest = messages.last?.timetoken else { return .nothingNew }
        fetchedThisFill = messages.count
        let deepEnough = checkpoint.applied == nil && initialMessages.map { messages.count >= $0 } == true
        if short || deepEnough {
            checkpoint.applied = newest
            return .done
        }
        checkpoint.fillTop = newest
        checkpoint.fillCursor = messages.first?.timetoken
        return .more
    }

    /// The fetcher of a catch-up round: requests each page, converts its messages and hands it
    /// over, until the round's last page, `stopAfter` messages, the writer leaving, or an error
    /// (handed over after the pages before it).
    private static func fetchRound(
        _ round: HistoryPages.AsyncIterator, channel: String, stopAfter limit: Int?, into handOff: HandOff<FetchedPage>
    ) async {
        var round = round
        var fetched = 0
        do {
            while let page = try await round.next() {
                let messages = try page.messages.map { try message($0, channel: channel) }
                guard await handOff.put(FetchedPage(page: page, messages: messages)) else { return }
                fetched += messages.count
                if page.isLast || limit.map({ fetched >= $0 }) == true { break }
            }
            await handOff.finish()
        } catch {
            await handOff.finish(throwing: error)
        }
    }

    /// One round of a catch-up: the channel's history paged back from the checkpoint's fill
    /// cursor (or from now, when not filling) down to just above `applied`. ``PubNubWire/HistoryPages``
    /// stops it on a short page and refuses a server that ignores `start`.
    private func historyRound(channel: String, pageSize: Int, from checkpoint: SyncCheckpoint) -> HistoryPages.AsyncIterator {
        let scope = SyncCheckpoint.history(channel)
        return HistoryPages(
            channel: channel, pageSize: pageSize, start: checkpoint.isFilling ? checkpoint.fillCursor : nil,
            end: checkpoint.applied?.next, scope: scope
        ) { query in
            try await self.fetch(scope) { () async throws(WireError) -> HistoryPage in try await self.client.history.fetchHistory(query) }
        }.makeAsyncIterator()
    }

    /// What ``Reconciler/loadOlder`` does (its doc says how).
    func loadOlder(channel: String, limit: Int = 100) async throws -> [Message] {
        guard (1...100).contains(limit) else { throw ReconcilerError.invalidArgument("limit must be 1-100, got \(limit)") }
        let oldest = try await store.oldestTimetoken(channel: channel)
        let query = HistoryQuery(channels: [channel], max: limit, start: oldest)
        let page = try await fetch("older:\(channel)") { () async throws(WireError) -> HistoryPage in
            try await client.history.fetchHistory(query)
        }
        let messages = try (page.channels[channel] ?? []).map { try Self.message($0, channel: channel) }
        // Scroll-back pages lie below the checkpoint and leave it alone; only into an empty channel
        // does this page also set where catch-ups continue from.
        var checkpoint: SyncCheckpoint?
        if oldest == nil, let newest = messages.last?.timetoken {
            checkpoint = SyncCheckpoint(scope: SyncCheckpoint.history(channel), applied: newest, updatedAt: clock.now)
        }
        _ = try await applyHistoryPage(messages, checkpoint: checkpoint)
        // History the storage budget evicted is complete again down to this page.
        try await store.lowerHistoryBound(channel: channel, to: messages.first?.timetoken, reachedStart: messages.count < limit)
        return messages
    }

    /// What ``Reconciler/remoteHistory`` does (its doc says how).
    func remoteHistory(
        channel: String, start: Timetoken? = nil, end: Timetoken? = nil, reverse: Bool = false, limit: Int = 100
    ) async throws -> [Message] {
        guard (1...100).contains(limit) else { throw ReconcilerError.invalidArgument("limit must be 1-100, got \(limit)") }
        if reverse && !(start != nil && end != nil) {
            var query = LegacyHistoryQuery(channel: channel)
            query.count = limit
            query.start = start
            query.end = end
            query.reverse = true
            let page = try await fetch("history:\(channel)") { () async throws(WireError) -> LegacyHistoryPage in
                try await client.history.fetchLegacyHistory(query)
            }
            return try page.messages.map { entry in
                var message = HistoryMessage(message: entry.message, timetoken: entry.timetoken, meta: entry.meta)
                message.decryptionError = entry.decryptionError
                return try Self.message(message, channel: channel)
            }
        }
        let query = HistoryQuery(channels: [channel], max: limit, start: start, end: end)
        let page = try await fetch("history:\(channel)") { () async throws(WireError) -> HistoryPage in
            try await client.history.fetchHistory(query)
        }
        return try (page.channels[channel] ?? []).map { try Self.message($0, channel: channel) }
    }

    private func apply(_ wire: [HistoryMessage], channel: String, checkpoint: SyncCheckpoint) async throws
        -> HistoryPageResult
    {
        try await apply(try wire.map { try Self.message($0, channel: channel) }, channel: channel, checkpoint: checkpoint)
    }

    private func apply(_ messages: [Message], channel: String, checkpoint: SyncCheckpoint) async throws
        -> HistoryPageResult
    {
        var beforeCommit: (@Sendable () throws -> Void)?
        if let hook = options.beforeHistoryCommit { beforeCommit = { try hook(channel) } }
        let result = try await applyHistoryPage(messages, checkpoint: checkpoint, beforeCommit: beforeCommit)
        return result
    }

    /// A history entry as a chat message. A payload in pnreplicate's (the unified chat) format
    /// keeps its id; any other payload is kept whole in `content` (content type
    /// ``Reconciler<Custom>.foreignContentType``) under an id made from its channel and timetoken.
    /// A file message (``ReplicaModel/ChatFile/fileMessageType``) is read from its inner `message`
    /// with its `file` attached; a Chat SDK text message's `files` are attached too
    /// (``ReplicaModel/ChatFile/split(payload:messageType:)``).
    static func message(_ entry: HistoryMessage, channel: String) throws -> Message {
        var body = entry
        var files: [ChatFile] = []
        if entry.decryptionError == nil {
            (body.message, files) = ChatFile.split(payload: entry.message, messageType: entry.messageType)
        }
        var message = try payloadMessage(body, channel: channel)
        message.files = files
        // What the message was published with besides its payload, kept as the server gave it
        // (an empty string is PubNub's "no meta").
        message.meta = entry.meta.flatMap { $0 == .null || $0 == .string("") ? JSONValue?.none : $0 }
        message.customMessageType = entry.customMessageType
        return message
    }

    private static func payloadMessage(_ entry: HistoryMessage, channel: String) throws -> Message {
        let publisher = entry.uuid ?? Reconciler<Custom>.unknownPublisher
        if entry.decryptionError != nil {
            // Kept as received, marked, so that `decryptPending()` can read it once the key is right.
            let make = { (user: String) throws -> Message in
                try Message(
                    id: MessageIdentity.derivedId(channel: channel, timetoken: entry.timetoken), text: "", contentType: Reconciler<Custom>.undecryptableContentType, content: entry.message,
                    createdAt: ISOTimestamp(date: entry.timetoken.date), timetoken: entry.timetoken, userId: user, channelId: channel)
            }
            if let message = try? make(publisher) { return message }
            return try make(Reconciler<Custom>.unknownPublisher)
        }
        if let payload = MessagePayload<Custom.Message>(json: entry.message),
           let message = try? Message(payload: payload, channelId: channel, userId: publisher, timetoken: entry.timetoken)
        {
            return message
        }
        // A plain string, or the Chat SDK's `{"type":"text","text":…}` (its mentions and links are
        // in the text: ``ReplicaModel/ChatMessage/elements``), gives the message its text; so does
        // any other object's string `text` (`{"id":…,"text":…}` without `createdAt`, what other
        // SDKs' apps commonly publish), kept whole in `content` all the same.
        let chatText = ChatSDKFormat.text(ofBody: entry.message)
        let objectText = entry.message.objectValue?["text"]?.stringValue
        let text = (entry.message.stringValue ?? chatText ?? objectText).flatMap {
            (try? Validation.validateMessageText($0, field: "text")) != nil ? $0 : nil
        }
        func foreign(_ userId: String) throws -> Message {
            try Message(
                id: MessageIdentity.derivedId(channel: channel, timetoken: entry.timetoken), text: text ?? "",
                contentType: chatText != nil && text != nil ? Reconciler<Custom>.chatSDKTextContentType : Reconciler<Custom>.foreignContentType,
                content: entry.message, createdAt: ISOTimestamp(date: entry.timetoken.date), timetoken: entry.timetoken,
                userId: userId, channelId: channel)
        }
        // A publisher id the model refuses must not block the channel: the message is kept, its author unknown.
        if let message = try? foreign(publisher) { return message }
        return try foreign(Reconciler<Custom>.unknownPublisher)
    }

}
