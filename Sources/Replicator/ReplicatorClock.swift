import Foundation

/// The replicator's source of time. Retry times are stored in the outbox as wall-clock
/// milliseconds, so a clock tells the date and can sleep until one.
///
/// Inject ``VirtualClock`` in tests: retries, backoff and Retry-After then run instantly and
/// deterministically, and the clock's ``VirtualClock/now`` shows every wait.
public protocol ReplicatorClock: Sendable {
    /// The current time.
    var now: Date { get }
    /// Returns at `date` or later; throws `CancellationError` when the task is cancelled.
    func sleep(until date: Date) async throws
}

/// Wall-clock time and real sleeps.
public struct SystemClock: ReplicatorClock {
    /// The system clock.
    public init() {}

    /// `Date()`.
    public var now: Date { Date() }

    /// Sleeps until `date` (returns at once for a date in the past). However far `date` is, the
    /// wait never overflows: it is slept in steps of at most a day.
    public func sleep(until date: Date) async throws {
        while true {
            let seconds = date.timeIntervalSinceNow
            guard seconds > 0, !seconds.isNaN else { return }
            try await Task.sleep(nanoseconds: UInt64(min(seconds, 86_400) * 1_000_000_000))
        }
    }
}

/// Virtual time that never waits: sleeping until a date moves the clock to that date at once.
///
/// Time only moves forward, through ``sleep(until:)`` and ``advance(by:)``.
public final class VirtualClock: ReplicatorClock, @unchecked Sendable {
    // A lock, not an actor: `now` must be readable synchronously, as the protocol requires.
    private let lock = NSLock()
    private var current: Date
    private var sleeps = 0

    /// A clock starting at `start`.
    public init(start: Date = Date(timeIntervalSince1970: 1_790_000_000)) {
        current = start
    }

    /// The virtual time.
    public var now: Date { lock.withLock { current } }

    /// How many times a caller slept (with a date in the future).
    public var sleepCount: Int { lock.withLock { sleeps } }

    /// Jumps to `date` when it is later than now.
    public func sleep(until date: Date) async throws {
        try Task.checkCancellation()
        lock.withLock {
            if date > current {
                current = date
                sleeps += 1
            }
        }
        await Task.yield()
    }

    /// Moves time forward.
    public func advance(by seconds: TimeInterval) {
        lock.withLock { current += max(0, seconds) }
    }
}
