import Foundation
import ReplicaModel

/// Virtual time that never waits: sleeping moves the clock to the wake-up time at once (or, made
/// with ``Sleeps/untilAdvanced``, waits for the test to advance it).
///
/// One `VirtualClock` drives a whole test: pass it to the outbox and the reconciler (as their
/// ``ReplicaModel/ReplicaClock``) and to the simulator (`PubNubServer(clock:)`), and every
/// backoff, `Retry-After` and deadline is crossed instantly while server timetokens follow the
/// same timeline. Code written against Swift's `Clock` takes it too: it is a `Clock` whose
/// ``Instant`` counts a `Duration` since 1970.
///
/// ```swift
/// let clock = VirtualClock()
/// let server = PubNubServer(clock: clock)
/// let outbox = Outbox(store: store, client: client, clock: clock)
/// try await clock.sleep(for: .seconds(30))   // returns at once, 30 s later
/// clock.advance(by: 1)                       // one more second, for everyone
/// ```
///
/// Time only moves forward: sleeping until a moment already past, or advancing by a negative
/// amount, changes nothing. Sleeps still check for cancellation and yield, so that other tasks run.
///
/// ``ReplicaModel/ReplicaClock`` and `Clock` both name their time `now`, as a `Date` and as an
/// ``Instant``. On a `VirtualClock`, `clock.now` is the `Date` (`clock.now.addingTimeInterval(60)`);
/// code that uses it as a `Clock` (`clock.sleep(for:)`, any generic `Clock` code) gets the
/// ``Instant``, as does `clock.now` where an `Instant` is expected. ``date`` and ``instant`` name
/// each without relying on the context.
///
/// ## Topics
///
/// ### Creating a clock
///
/// - ``init(start:)``
/// - ``init(start:sleeps:)``
/// - ``Sleeps``
///
/// ### Reading the time
///
/// - ``date``
/// - ``instant``
/// - ``minimumResolution``
/// - ``Instant``
///
/// ### Moving time
///
/// - ``advance(by:)-(TimeInterval)``
/// - ``advance(by:)-(Duration)``
/// - ``sleep(until:)``
/// - ``sleep(until:tolerance:)``
public final class VirtualClock: Clock, ReplicaClock, @unchecked Sendable {
    /// A moment on a ``VirtualClock``: a `Duration` since 1970-01-01T00:00:00Z.
    public struct Instant: InstantProtocol, CustomStringConvertible {
        /// The time since 1970-01-01T00:00:00Z.
        public var sinceEpoch: Duration

        /// The instant `sinceEpoch` after 1970-01-01T00:00:00Z.
        public init(sinceEpoch: Duration) { self.sinceEpoch = sinceEpoch }

        /// The instant of `date`, rounded up to the first instant whose ``date`` is not before it.
        /// Dates beyond about a million years either way are taken as that far.
        public init(_ date: Date) {
            let seconds = date.timeIntervalSince1970
            guard !seconds.isNaN else {
                self.init(sinceEpoch: .zero)
                return
            }
            let clamped = min(max(seconds, -Self.farthestSeconds), Self.farthestSeconds)
            let target = clamped == seconds ? date : Date(timeIntervalSince1970: clamped)
            var offset = Duration.seconds(clamped)
            // The conversions (a `Date` counts from 2001) can land a hair before the date: a step
            // of one ulp at a time reaches it, in a step or two.
            let step = max(Duration.seconds(clamped.ulp), Duration(secondsComponent: 0, attosecondsComponent: 1))
            while Instant(sinceEpoch: offset).date < target { offset += step }
            self.init(sinceEpoch: offset)
        }

        /// About a million years, in seconds: the range ``init(_:)`` clamps dates to.
        static let farthestSeconds = 3e13

        /// The instant as a `Date` (to the nearest one a `Date` can hold).
        public var date: Date {
            let (seconds, attoseconds) = sinceEpoch.components
            return Date(timeIntervalSince1970: Double(seconds) + Double(attoseconds) * 1e-18)
        }

        /// The instant `duration` later.
        public func advanced(by duration: Duration) -> Instant { Instant(sinceEpoch: sinceEpoch + duration) }

        /// The time from this instant to `other`.
        public func duration(to other: Instant) -> Duration { other.sinceEpoch - sinceEpoch }

        /// Whether `lhs` is earlier than `rhs`.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.sinceEpoch < rhs.sinceEpoch }

        /// The date, ISO-8601.
        public var description: String { ISOTimestamp(date: date).description }
    }

    /// What a sleep on the clock does.
    public enum Sleeps: Sendable, Hashable {
        /// A sleep moves the clock to its wake-up time at once (backoffs and deadlines are crossed
        /// instantly). The default.
        case jump
        /// A sleep waits until ``advance(by:)-(TimeInterval)`` moves the clock to its wake-up time:
        /// for timers that run beside the code under test (heartbeats, typing expiry), which would
        /// otherwise push everyone's time ahead on their own.
        case untilAdvanced
    }

    // A lock, not an actor: both protocols require `now` to be readable synchronously.
    private let lock = NSLock()
    private var current: Instant
    private let sleeps: Sleeps
    private var sleepers: [UInt64: (deadline: Instant, continuation: CheckedContinuation<Void, any Error>)] = [:]
    private var sleeperCounter: UInt64 = 0

    /// A clock starting at `start` (by default 2026-09-21T13:46:40Z, timetoken 17900000000000000).
    public init(start: Date = Date(timeIntervalSince1970: 1_790_000_000)) {
        current = Instant(start)
        sleeps = .jump
    }

    /// A clock starting at `start` whose sleeps behave as `sleeps` says.
    ///
    /// ```swift
    /// let clock = VirtualClock(sleeps: .untilAdvanced)
    /// let timer = Task { try await clock.sleep(until: clock.now.addingTimeInterval(5)) }
    /// clock.advance(by: 5)          // now the timer wakes
    /// ```
    public init(start: Date = Date(timeIntervalSince1970: 1_790_000_000), sleeps: Sleeps) {
        current = Instant(start)
        self.sleeps = sleeps
    }

    /// Sleeps waiting for ``advance(by:)-(TimeInterval)`` (``Sleeps/untilAdvanced`` clocks).
    public var waitingSleepers: Int { lock.withLock { sleepers.count } }

    /// The current time as a date: what the outbox, the reconciler and the simulator read.
    public var now: Date { date }

    /// The current instant, whatever the context (`Clock.now` is the same).
    public var instant: Instant { lock.withLock { current } }

    /// The current time as a date, whatever the context.
    public var date: Date { instant.date }

    /// Virtual time has no granularity.
    public var minimumResolution: Duration { .zero }

    /// Moves time forward by `seconds` (nothing for a negative or NaN amount).
    public func advance(by seconds: TimeInterval) {
        guard seconds > 0 else { return }
        advance(by: .seconds(min(seconds, Instant.farthestSeconds)))
    }

    /// Moves time forward by `duration` (nothing for a negative one).
    public func advance(by duration: Duration) {
        let woken = lock.withLock { () -> [CheckedContinuation<Void, any Error>] in
            if duration > .zero { current = current.advanced(by: duration) }
            let due = sleepers.filter { $0.value.deadline <= current }
            for id in due.keys { sleepers[id] = nil }
            return due.sorted { $0.value.deadline < $1.value.deadline }.map(\.value.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    /// Jumps to `deadline` when it is later than now, then yields; never waits. `tolerance` is
    /// ignored. Throws `CancellationError` when the task is cancelled.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        guard sleeps == .untilAdvanced else {
            lock.withLock { current = max(current, deadline) }
            await Task.yield()
            return
        }
        let id = lock.withLock { () -> UInt64 in
            sleeperCounter += 1
            return sleeperCounter
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let now = lock.withLock { () -> Bool in
                    if deadline <= current || Task.isCancelled { return true }
                    sleepers[id] = (deadline, continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let continuation = lock.withLock { sleepers.removeValue(forKey: id)?.continuation }
            continuation?.resume(throwing: CancellationError())
        }
        try Task.checkCancellation()
    }

    /// Jumps to `date` when it is later than now, then yields; never waits. Afterwards ``date``
    /// is not before `date`. Throws `CancellationError` when the task is cancelled.
    public func sleep(until date: Date) async throws {
        try await sleep(until: Instant(date), tolerance: nil)
    }
}

extension Clock where Self: VirtualClock {
    /// The current instant, as a `Clock` tells it: the same moment as ``VirtualClock/date``.
    /// (A `VirtualClock`'s own `now` is the `Date`; see ``VirtualClock``.)
    public var now: VirtualClock.Instant { instant }
}
