import Foundation

/// The one source of time of pnreplicate: the outbox's retries and backoffs, the reconciler's
/// deadlines and the simulator's timetokens all read it.
///
/// Retry times are stored in the outbox as wall-clock milliseconds and PubNub's timetokens are
/// unix time, so a clock tells the date and can sleep until one. ``SystemClock`` is the default
/// everywhere; tests inject `VirtualClock` (in the `PubNubSimulatorTesting` product), which never
/// waits, so that retries, backoff, `Retry-After` and the simulator's timetokens run instantly
/// and deterministically on one timeline.
///
/// The protocol lives in `ReplicaModel`, the one module that both the replicator and the
/// simulator depend on, so that neither depends on the other to share a clock.
///
/// ## Topics
///
/// ### Telling the time
///
/// - ``now``
/// - ``sleep(until:)``
///
/// ### Clocks
///
/// - ``SystemClock``
public protocol ReplicaClock: Sendable {
    /// The current time.
    var now: Date { get }
    /// Returns at `date` or later; throws `CancellationError` when the task is cancelled.
    func sleep(until date: Date) async throws
}

/// Wall-clock time and real sleeps: the default clock of the outbox, the reconciler and the
/// simulator.
public struct SystemClock: ReplicaClock {
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
