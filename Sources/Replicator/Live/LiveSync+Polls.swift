import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

// The loops' long polls in flight (SubscribeLoops): each loop's next poll goes out as soon as its
// previous answer is in (LiveSyncOptions.pipelinePolls: before that answer is stored), and a step
// takes the first answer of any loop.
extension LiveSync {
    /// The index of the first loop whose poll ended (answered or failed); waits for one.
    func firstAnswered() async throws -> Int {
        while true {
            if let index = subscription.answeredLoop { return index }
            guard let id = await subscription.completions.next(), !Task.isCancelled else { throw CancellationError() }
            subscription.ended(id)
        }
    }

    /// Cancels every loop's poll (their answers are never applied).
    package func dropPolls() { subscription.dropPolls() }

    /// Cancels every loop's poll and waits until its request has ended (``run()`` stopping).
    func endPolls() async {
        for poll in subscription.dropPolls() { _ = try? await poll.answer.value }
    }

    /// Sends each loop's long poll (unless the one in flight was sent for the same request),
    /// then takes the first answer and its events.
    func pollLoops() async throws -> Step {
        for index in subscription.loops.indices {
            guard let cursor = subscription.loops[index].cursor else { continue }
            let request = subscribeRequest(subscription.loops[index], cursor: cursor)
            if subscription.loops[index].poll?.request != request { subscription.send(request, loop: index, client: reconciler.client) }
        }
        let index = try await firstAnswered()
        guard let poll = subscription.take(loop: index), let cursor = poll.request.cursor else { return .progressed }
        let answer: SubscribeAnswer
        do {
            answer = try await withTaskCancellationHandler { try await poll.answer.value } onCancel: { poll.answer.cancel() }
        } catch {
            return try await failed(error, loops: [index])
        }
        return try await apply(answer, loop: index, from: cursor)
    }

    /// The events of `answer`, loop `index`'s long poll from `cursor`.
    func apply(_ answer: SubscribeAnswer, loop index: Int, from cursor: SubscribeCursor) async throws -> Step {
        let channels = subscription.loops[index].channels, presence = subscription.loops[index].presence
        // A subscribe answer: one fill may follow it.
        pollBeforeNextFill = false
        statistics.answers += 1
        statistics.events += answer.envelopes.count
        var gap: GapReason?
        if answer.mayHaveOverflowed {
            gap = .fullBuffer
        } else if answer.cursor.region != cursor.region || answer.cursor.timetoken < cursor.timetoken {
            gap = .cursorReset
        } else if answer.cursor.timetoken.date.timeIntervalSince(cursor.timetoken.date) > options.maximumCursorJump {
            gap = .cursorJump
        } else if !reconciler.isPlausible(cursor: answer.cursor.timetoken) {
            // Ahead of the time this device verified by more than its clock moved since: a lie
            // (TrustedTime). Its events are applied; the cursor is not continued from.
            gap = .cursorJump
        }
        if gap == nil, options.pipelinePolls {
            subscription.send(subscribeRequest(subscription.loops[index], cursor: answer.cursor), loop: index, client: reconciler.client)
        }
        let advancing = gap == nil ? Set(channels).subtracting(needsFill.keys) : []
        // Only what was asked for is stored: an event on a channel this request did not name (a
        // broken or hostile server) would otherwise be stored, and its channel followed from then on.
        let requested = acceptedNames(subscription.loops[index])
        let envelopes = answer.envelopes.filter { AppDataLive.covers(requested, $0.channel) }
        if envelopes.count < answer.envelopes.count {
            logger.warning("ignored live events on channels that were not subscribed", metadata: [
                "events": "\(answer.envelopes.count - envelopes.count)",
            ])
        }
        var result = try await reconciler.live.applyLive(envelopes, advancing: advancing, through: answer.cursor.timetoken)
        for envelope in answer.envelopes where !AppDataLive.covers(requested, envelope.channel) {
            result.ignored += 1
            result.applied.append(envelope.record(kind: "unknown", subject: "-", outcome: "skipped: not subscribed"))
        }
        for record in result.applied { hub.send(.event(record)) }
        for envelope in envelopes where envelope.event == .signal {
            await typing.receive(channel: envelope.channel, userId: envelope.publisher ?? "", payload: envelope.payload)
        }
        needsHereNow.formUnion(result.presenceRefresh.intersection(presence))
        if let gap {
            logger.debug("live stream may have lost events", metadata: ["reason": "\(gap.rawValue)", "channels": "\(channels.count)"])
            for channel in channels where needsFill[channel] == nil { needsFill[channel] = gap }
        }
        for channel in result.unreadableChannels where channels.contains(channel) && needsFill[channel] == nil {
            needsFill[channel] = .unreadableEvent
        }
        // Presence events are not in history: a gap on a presence channel is healed by a
        // here-now once its fill is done (see `fill`); a lost presence event by one at once.
        if gap != nil { needsHereNow.formUnion(presence) }
        // A cursor that moved back, changed region or leapt ahead is not trusted to continue
        // from (a cursor in the future would silently skip every later event): a new handshake
        // takes the server's present, and the fill covers the time in between.
        subscription.loops[index].cursor = gap == .cursorReset || gap == .cursorJump ? nil : answer.cursor
        if subscription.loops[index].cursor == nil {
            // A server whose cursors keep moving back or leaping ahead is failing, however well
            // formed its answers: from the second such answer in a row, the handshake and fill
            // that follow wait out a growing backoff. (The first is a real server's reset or a
            // device back from suspension: it goes on at once. A new handshake and a fill cost
            // two requests where a failed poll costs one: the wait is one step longer.)
            consecutiveResets += 1
            if consecutiveResets > 1 {
                try await clock.sleep(until: clock.now.addingTimeInterval(backoff(minimum: 0, attempt: consecutiveResets + 1)))
            }
        } else {
            consecutiveFailures = 0
            consecutiveResets = 0
        }
        for object in result.incomplete.sorted(by: { $0.description < $1.description }) {
            do {
                try await reconciler.live.refresh(object)
            } catch {
                if Self.stopsRun(error) { throw error }
                logger.warning("could not fetch an object a live event changed", metadata: ["object": "\(object)", "error": "\(error)"])
                needsObjects = true
            }
        }
        return .progressed
    }
}
