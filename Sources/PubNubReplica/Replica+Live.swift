import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

// MARK: Hot channels

extension Replica {
    /// Marks a channel hot: what the app shows is kept complete. Every sync and every reconnect
    /// then keeps its reactions and members equal to the server's, besides its messages (which
    /// every channel gets). When the channel becomes hot while the replica runs, it is refreshed
    /// at once (its new messages, reactions and members: about four requests).
    ///
    /// A channel the app does not show stays cold: its new messages and unread counts arrive as
    /// usual, and live events keep everything current while connected, but after a gap its
    /// reactions and members are not listed again until it is hot. The store says how fresh they
    /// are (`queries.freshness(ofChannel:)`). Marks are counted: each one
    /// is taken back with ``unmarkHot(_:)``. To keep a channel hot exactly while a screen
    /// observes it, use ``observe(_:keepingHot:)``.
    ///
    /// ```swift
    /// try await replica.markHot("general")  // the chat screen appears
    /// await replica.unmarkHot("general")    // ... and goes away
    /// ```
    ///
    /// Throws `ModelValidationError` for an id no channel can have (empty, `.`, `..`, a comma, a
    /// control character, over 92 bytes); nothing is marked.
    public func markHot(_ channel: String) async throws {
        try Validation.validateStoredIdentifier(channel, field: "channel")
        hotMarks[channel, default: 0] += 1
        guard let reconciler = parts?.reconciler else { return }
        let becameHot = try await reconciler.markHot(channel)
        guard becameHot, isStarted else { return }
        Task { [weak self] in
            do {
                try await reconciler.refresh(channel: channel)
            } catch where !(error is CancellationError) {
                await self?.update { $0.lastError = "refresh of \(channel): \(error)" }
            } catch {}
        }
    }

    /// Takes back one ``markHot(_:)``; the channel turns cold when no mark is left.
    public func unmarkHot(_ channel: String) async {
        guard let count = hotMarks[channel] else { return }
        hotMarks[channel] = count > 1 ? count - 1 : nil
        await parts?.reconciler.unmarkHot(channel)
    }

    /// The channels marked hot, sorted.
    public var hotChannels: [String] { hotMarks.keys.sorted() }

    /// ``observe(_:)`` that keeps `channel` hot while the sequence is iterated: marked when
    /// observation starts, unmarked when the consumer stops. An id no channel can have ends the
    /// sequence with the `ModelValidationError` ``markHot(_:)`` throws.
    ///
    /// ```swift
    /// for try await messages in replica.observe(replica.queries.messages(inChannel: "general"), keepingHot: "general") {
    ///     show(messages)
    /// }
    /// ```
    public nonisolated func observe<Value: Sendable & Equatable>(
        _ query: StoreQuery<Value>, keepingHot channel: String
    ) -> AsyncThrowingStream<Value, any Error> {
        let (stream, continuation) = AsyncThrowingStream<Value, any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        // Marked and unmarked by the same task, in that order, however early the consumer stops.
        let task = Task {
            do {
                try await self.markHot(channel)
            } catch {
                return continuation.finish(throwing: error)
            }
            do {
                for try await value in self.observe(query) { continuation.yield(value) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
            await self.unmarkHot(channel)
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}

// MARK: Live activity, presence and typing

// Live sync, presence and typing through the façade: what live sync applies (event by event),
// a live run without the outbox, who is on a channel, and the Chat SDK's typing signals.
extension Replica {
    /// Everything live sync does from now on, as it happens: its states, each event it applied
    /// (a `LiveEventRecord`: channel, timetoken, kind, subject, outcome), gap fills, catch-up
    /// progress and presence reads. For an activity log or a debugging screen; the data itself is
    /// in the store (``observe(_:)``). Subscribe before ``start()`` or ``listen()`` to miss
    /// nothing; the sequence finishes when that run stops. Read it promptly: it keeps every
    /// element until read.
    ///
    /// ```swift
    /// for await item in try await replica.liveActivity() {
    ///     if case .event(let record) = item { log("\(record.channel) \(record.kind) \(record.outcome)") }
    /// }
    /// ```
    public func liveActivity() throws -> AsyncStream<LiveActivity> {
        try currentParts().live.activity()
    }

    /// Live sync's state now: connecting, catching up, live, offline (and why) or stopped.
    /// ``status`` says the same for a started replica; this is the state of ``listen()`` too.
    public var liveState: LiveState {
        get async throws { try await currentParts().live.state }
    }

    /// Follows PubNub live (subscribe, filling every gap from history first) until the calling
    /// task is cancelled, without sending the outbox: what `pnreplicate listen` does. Network
    /// failures never end it (they are retried with backoff, and show as
    /// `LiveState.offline(reason:)`); a store that fails does (its error is thrown). A
    /// cancelled run returns normally. ``start()`` runs the same live sync together with the
    /// outbox: use one or the other, not both. The channels, users and presence followed are
    /// ``ReplicaConfiguration/live``'s.
    ///
    /// ```swift
    /// let run = Task { try await replica.listen() }
    /// // ... later
    /// run.cancel()
    /// try await run.value
    /// ```
    public func listen() async throws {
        let live = try currentParts().live
        try await live.run()
    }

    /// Who PubNub says is on `channel` now (here-now, with each user's presence state), read from
    /// the server, not the store: one request per 1,000 occupants. The store's view, kept by live
    /// sync with `LiveSyncOptions.presence`, is in the members' `isPresent` and `presenceState`.
    ///
    /// ```swift
    /// let here = try await replica.hereNow(channel: "general")
    /// print("\(here.occupancy) here:", here.occupants.map(\.userId))
    /// ```
    public func hereNow(channel: String) async throws -> ChannelOccupancy {
        let answer = try await client.presence.hereNowAll(channels: [channel], includeState: true)
        return answer.channels[channel] ?? ChannelOccupancy(occupancy: 0, occupants: [])
    }

    /// Says the current user is typing in `channel`, with the Chat SDK's typing signal. Call it on
    /// every keystroke: a signal goes out only when none did in the last few seconds (the others
    /// drop the user 5 s after the last one). Never queued or retried (a late indicator is worse
    /// than none); refused on a channel whose stored type is `public`. Returns whether a signal
    /// was sent.
    ///
    /// ```swift
    /// textField.onChange { _ in Task { try await replica.startTyping(in: "general") } }
    /// ```
    @discardableResult
    public func startTyping(in channel: String) async throws -> Bool {
        try await currentParts().live.typing.startTyping(in: channel)
    }

    /// Says the current user stopped typing in `channel` (sent only after a ``startTyping(in:)``,
    /// or always with `force`). Returns whether a signal was sent.
    @discardableResult
    public func stopTyping(in channel: String, force: Bool = false) async throws -> Bool {
        try await currentParts().live.typing.stopTyping(in: channel, force: force)
    }
}
