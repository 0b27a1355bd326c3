import Foundation
import ReplicaModel

/// Where the simulator reads the time: unix time in timetoken units (100 ns).
public protocol TimeSource: Sendable {
    /// The current time in 100 ns units since 1970.
    func now() -> UInt64
}

/// The machine's clock.
public struct SystemTimeSource: TimeSource {
    /// The system clock.
    public init() {}
    /// Now, from `Date`.
    public func now() -> UInt64 { UInt64(Date().timeIntervalSince1970 * 10_000_000) }
}

/// A clock that moves only when told to: deterministic runs and instant tests.
public final class ManualTimeSource: TimeSource, @unchecked Sendable {
    private let lock = NSLock()
    private var value: UInt64

    /// Starts at `start` (default 2024-01-01T00:00:00Z).
    public init(start: UInt64 = 17_040_672_000_000_000) { value = start }

    /// The current virtual time.
    public func now() -> UInt64 { lock.withLock { value } }

    /// Moves the clock forward.
    public func advance(by units: UInt64) { lock.withLock { value += units } }
}

/// Hands out strictly increasing timetokens: max(now, last + 1).
struct TimetokenClock {
    let source: any TimeSource
    private(set) var last: UInt64 = 0

    init(source: any TimeSource) { self.source = source }

    mutating func next() -> UInt64 {
        last = max(source.now(), last + 1)
        return last
    }

    /// ISO-8601 with six fraction digits for a timetoken (App Context `updated`).
    static func iso(_ timetoken: UInt64) -> String {
        ISOTimestamp(nanoseconds: Int64(timetoken) * 100, fractionDigits: 6).description
    }
}
