import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

// Presence while live: heartbeats, who is here after a (re)connect or a gap (here-now), and
// leave on stop (`docs/presence.md`).
extension LiveSync {
    /// Sends a heartbeat every `interval` seconds on the injected clock.
    func heartbeats(every interval: TimeInterval) async throws {
        while !Task.isCancelled {
            try await clock.sleep(until: clock.now.addingTimeInterval(interval))
            await sendHeartbeat()
        }
        throw CancellationError()
    }

    /// `leave` for the subscribed channels, when following presence and connected once; bounded
    /// by ``PresenceOptions/leaveTimeout`` and not cancelled by the stop itself.
    func leaveOnStop() async {
        guard let presence = options.presence, presence.leaveOnStop, connectedOnce, !subscribed.isEmpty else { return }
        // One leave per subscribe loop (its URL names as many channels), sent together.
        let client = reconciler.client, timeout = presence.leaveTimeout
        let shares = subscription.loops.map { ($0.named, $0.groups) }.filter { !$0.0.isEmpty || !$0.1.isEmpty }
        let logger = logger
        await Task {
            await withTaskGroup(of: Void.self) { group in
                for (channels, groups) in shares {
                    group.addTask {
                        do {
                            try await client.presence.leave(channels: channels, channelGroups: groups, timeout: timeout)
                        } catch {
                            logger.debug("leave on stop failed", metadata: ["error": "\(error)"])
                        }
                    }
                }
            }
        }.value
    }

    /// The presence state to send for `channels` (only those that have one).
    func presenceState(_ channels: [String]) -> [String: JSONValue]? {
        guard let state = options.presence?.state, !state.isEmpty else { return nil }
        let wanted = Set(channels)
        let kept = state.filter { wanted.contains($0.key) }
        return kept.isEmpty ? nil : kept
    }

    /// Reads who is on the channels in ``needsHereNow`` (here-now, with state) and replaces the
    /// members' presence with it. A failure never stops the stream: it is logged and tried again
    /// after the next poll.
    func refreshPresence() async throws -> Step {
        // As many channels a request as a subscribe loop follows (the URL names them all).
        let shares = subscription.loops.map { $0.presence.filter(needsHereNow.contains) }.filter { !$0.isEmpty }
        let channels = shares.first ?? needsHereNow.sorted()
        do {
            let answer = try await reconciler.client.presence.hereNowAll(channels: channels, includeState: true)
            let counts = try await reconciler.live.applyHereNow(answer, channels: channels)
            needsHereNow.subtract(channels)
            statistics.presenceRefreshes += 1
            hub.send(.presenceRefreshed(counts))
        } catch {
            if error is CancellationError || Task.isCancelled { throw CancellationError() }
            if Self.stopsRun(error) { throw error }
            pollBeforeNextHereNow = true
            // A network failure is the poll's to report (offline); a refusal (presence not enabled
            // on the keyset, no permission) is worth a warning.
            let transient = (error as? WireError)?.retryability.isRetryable ?? false
            logger.log(
                level: transient ? .debug : .warning, "here-now failed; presence is read again after the next poll",
                metadata: ["error": "\(Self.reason(error))"])
        }
        return .progressed
    }
}
