import Foundation
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
