import Foundation
import ReplicaModel

/// A clock that reads another (the system clock by default) plus an offset that only grows:
/// `pnreplicate simulator serve`'s clock, so that a test driving the simulator over HTTP can move
/// its time forward (`POST /simulator/clock?advance=SECONDS`, served by `SimulatorHTTP`) to
/// expire an Access Manager token or a presence timeout without waiting.
///
/// ```swift
/// let clock = OffsetClock()
/// let server = PubNubServer(clock: clock, secretKey: "sec")
/// clock.advance(by: 3600)     // an hour later for the server, at once
/// ```
///
/// In process, prefer `VirtualClock` (`PubNubSimulatorTesting`): it drives the client too.
public final class OffsetClock: ReplicaClock, @unchecked Sendable {
    // A lock, not an actor: `ReplicaClock.now` is read synchronously.
    private let lock = NSLock()
    private var seconds: TimeInterval = 0
    /// The clock read before the offset is added.
    public let base: any ReplicaClock

    /// The longest single advance, about 100 years: beyond it the server's timetokens would
    /// leave the range they are computed in.
    public static let maximumAdvance: TimeInterval = 3_155_760_000

    /// `base` (the system clock by default), not moved yet.
    public init(base: any ReplicaClock = SystemClock()) { self.base = base }

    /// How far ahead of ``base`` the clock is, in seconds.
    public var offset: TimeInterval { lock.withLock { seconds } }

    /// ``base``'s time plus ``offset``.
    public var now: Date { base.now.addingTimeInterval(offset) }

    /// Moves the clock `seconds` forward and returns the new time. Time only moves forward:
    /// a negative, non-finite or over-``maximumAdvance`` amount changes nothing.
    @discardableResult
    public func advance(by seconds: TimeInterval) -> Date {
        if seconds.isFinite, seconds > 0, seconds <= Self.maximumAdvance {
            lock.withLock { self.seconds += seconds }
        }
        return now
    }

    /// Returns at `date` on this clock or later. Sleeps on ``base`` in steps of at most a second,
    /// so that an advance made meanwhile ends the sleep within a second.
    public func sleep(until date: Date) async throws {
        while true {
            let remaining = date.timeIntervalSince(now)
            guard remaining > 0, !remaining.isNaN else { return }
            try await base.sleep(until: base.now.addingTimeInterval(min(remaining, 1)))
        }
    }
}
