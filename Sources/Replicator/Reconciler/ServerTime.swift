import Foundation
import PubNubWire
import ReplicaModel

/// The server times one reconciler has seen, shared by its parts: the newest `/time` answer (the
/// snapshot listings are taken against) and the times it trusts (``TrustedTime``, the owner of
/// the rule). Each call is atomic: a lock guards the state, so the history pull, a live apply and
/// a listing may use it from any task.
final class ServerTime: @unchecked Sendable {
    // An NSLock guards `trusted` and `last`.
    private let lock = NSLock()
    private var trusted: TrustedTime
    private var last: Timetoken?
    private var lastOffset: (seconds: TimeInterval, at: Date)?

    /// No time seen yet; `/time` and the device clock may disagree by `tolerance` seconds.
    init(tolerance: TimeInterval) {
        trusted = TrustedTime(tolerance: tolerance)
    }

    /// How far `/time` and the device clock may disagree (seconds).
    var tolerance: TimeInterval { trusted.tolerance }

    /// The newest `/time` answer, trusted or not.
    var lastAnswer: Timetoken? { lock.withLock { last } }

    /// How far the server's clock was ahead of this device's (negative: behind) at the newest
    /// `/time` answer, and when (device time); nil before any. Measured whether the answer was
    /// trusted or not: a device clock 10 minutes off is exactly what a diagnostics report names.
    var offset: (seconds: TimeInterval, at: Date)? { lock.withLock { lastOffset } }

    /// The newest time a checkpoint may claim (``TrustedTime/ceiling``).
    var ceiling: Timetoken? { lock.withLock { trusted.ceiling } }

    /// Takes a `/time` answer received at `now`: the next listings' snapshot, and trusted when it
    /// agrees with the device clock. Returns whether it was trusted.
    func take(_ answer: Timetoken, now: Date) -> Bool {
        lock.withLock {
            last = answer
            lastOffset = (answer.date.timeIntervalSince(now), now)
            return trusted.accept(serverTime: answer, now: now)
        }
    }

    /// Messages with these timetokens were stored.
    func stored(messages: some Sequence<Timetoken>) {
        lock.withLock { for timetoken in messages { trusted.stored(message: timetoken) } }
    }

    /// Where a checkpoint may move given `cursor` (``TrustedTime/clamp(_:)``), counting `messages`
    /// as stored (they are about to be, in the same transaction as the checkpoint); nil when
    /// nothing is trusted.
    func clamp(_ cursor: Timetoken, including messages: [Timetoken] = []) -> Timetoken? {
        lock.withLock {
            var copy = trusted
            for timetoken in messages { copy.stored(message: timetoken) }
            return copy.clamp(cursor)
        }
    }

    /// Whether a subscribe cursor received at `now` can be the server's present
    /// (``TrustedTime/isPlausible(cursor:now:)``).
    func isPlausible(cursor: Timetoken, now: Date) -> Bool {
        lock.withLock { trusted.isPlausible(cursor: cursor, now: now) }
    }
}
