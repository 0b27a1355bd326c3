import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

/// Live: the channels kept complete (hot), live sync's activity and state, a live run on its own, presence and typing.
///
/// ```swift
/// try await replica.live.markHot("general")  // the chat screen appears
/// await replica.live.unmarkHot("general")    // ... and goes away
/// ```
///
/// Reached through ``Replica/live``: a value made per access, holding only the replica.
public struct ReplicaLive<Custom: ChatCustomData>: Sendable {
    /// The replica these calls go through.
    let replica: Replica<Custom>

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
    /// observes it, use ``Replica/observe(_:keepingHot:)``.
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
        try await Self.mark(channel, on: replica)
    }

    /// Takes back one ``markHot(_:)``; the channel turns cold when no mark is left.
    public func unmarkHot(_ channel: String) async {
        await Self.unmark(channel, on: replica)
    }

    /// The channels marked hot, sorted.
    public var hotChannels: [String] {
        get async { await replica.hotMarks.keys.sorted() }
    }

    /// Counts a mark on the replica (marks outlive its parts: ``Replica/resume()`` restores them)
    /// and tells the reconciler; a channel that became hot while started is refreshed at once.
    private static func mark(_ channel: String, on replica: isolated Replica<Custom>) async throws {
        replica.hotMarks[channel, default: 0] += 1
        guard let reconciler = replica.parts?.reconciler else { return }
        let becameHot = try await reconciler.markHot(channel)
        guard becameHot, replica.isStarted else { return }
        Task { [weak replica] in
            do {
                try await reconciler.refresh(channel: channel)
            } catch where !(error is CancellationError) {
                replica?.hub.update { $0.lastError = "refresh of \(channel): \(error)" }
            } catch {}
        }
    }

    private static func unmark(_ channel: String, on replica: isolated Replica<Custom>) async {
        guard let count = replica.hotMarks[channel] else { return }
        replica.hotMarks[channel] = count > 1 ? count - 1 : nil
        await replica.parts?.reconciler.unmarkHot(channel)
    }

    /// Everything live sync does from now on, as it happens: its states, each event it applied
    /// (a `LiveEventRecord`: channel, timetoken, kind, subject, outcome), gap fills, catch-up
    /// progress and presence reads. For an activity log or a debugging screen; the data itself is
    /// in the store (``Replica/observe(_:)``). Subscribe before ``Replica/start()`` or ``listen()`` to miss
    /// nothing; the sequence finishes when that run stops. Read it promptly: it keeps every
    /// element until read.
    ///
    /// ```swift
    /// for await item in try await replica.liveActivity() {
    ///     if case .event(let record) = item { log("\(record.channel) \(record.kind) \(record.outcome)") }
    /// }
    /// ```
    public func activity() async throws -> AsyncStream<LiveActivity> {
        try await replica.currentParts().live.activity()
    }

    /// Live sync's state now: connecting, catching up, live, offline (and why) or stopped.
    /// ``Replica/status`` says the same for a started replica; this is the state of ``listen()`` too.
    public var state: LiveState {
        get async throws { try await replica.currentParts().live.state }
    }

    /// Follows PubNub live (subscribe, filling every gap from history first) until the calling
    /// task is cancelled, without sending the outbox: what `pnreplicate listen` does. Network
    /// failures never end it (they are retried with backoff, and show as
    /// `LiveState.offline(reason:)`); a store that fails does (its error is thrown). A
    /// cancelled run returns normally. ``Replica/start()`` runs the same live sync together with the
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
        let live = try await replica.currentParts().live
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
        let answer = try await replica.client.presence.hereNowAll(channels: [channel], includeState: true)
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
        try await replica.currentParts().live.typing.startTyping(in: channel)
    }

    /// Says the current user stopped typing in `channel` (sent only after a ``startTyping(in:)``,
    /// or always with `force`). Returns whether a signal was sent.
    @discardableResult
    public func stopTyping(in channel: String, force: Bool = false) async throws -> Bool {
        try await replica.currentParts().live.typing.stopTyping(in: channel, force: force)
    }
}

extension Replica {
    /// Live: the channels kept complete (hot), live sync's activity and state, a live run on its own, presence and typing.
    public nonisolated var live: ReplicaLive<Custom> { ReplicaLive(replica: self) }
}
