import Foundation
import ReplicaModel

/// Hands out the server's timetokens from its clock: `max(now, last + 1)`, so strictly
/// increasing even when the clock stands still or two requests share an instant.
struct TimetokenClock {
    /// The server's clock (``PubNubServer/clock``).
    let clock: any ReplicaClock
    /// The last timetoken handed out (0 before the first).
    private(set) var last: UInt64 = 0

    init(clock: any ReplicaClock) { self.clock = clock }

    /// The clock's time as a timetoken, without handing one out (error answers carry it).
    var now: UInt64 { Self.timetoken(clock.now) }

    /// A subscribe cursor: the present, never before the last timetoken handed out, and reserved,
    /// so that every later timetoken is strictly greater (a subscriber asking for events after
    /// it misses none published at the same instant).
    mutating func cursor() -> UInt64 {
        last = max(now, last)
        return last
    }

    /// The next timetoken.
    mutating func next() -> UInt64 {
        last = max(now, last + 1)
        return last
    }

    /// The latest time a timetoken is taken from, in seconds since 1970 (about the year 5138).
    /// A virtual clock that a hostile `Retry-After` pushed further stays there, so that the
    /// conversion below never traps; timetokens still increase by one per request.
    static let latestSeconds = 1e11

    /// `date` as a timetoken: unix time × 10^7, truncated; 0 before 1970 (or for NaN), and
    /// ``latestSeconds`` at the latest.
    static func timetoken(_ date: Date) -> UInt64 {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return UInt64(min(seconds, latestSeconds) * 10_000_000)
    }

    /// ISO-8601 with six fraction digits for a timetoken (App Context `updated`); a timetoken past
    /// 2262-04-11 (the last nanosecond an `Int64` holds) reads as that date instead of trapping.
    static func iso(_ timetoken: UInt64) -> String {
        let (nanoseconds, overflow) = Int64(clamping: timetoken).multipliedReportingOverflow(by: 100)
        return ISOTimestamp(nanoseconds: overflow ? .max : nanoseconds, fractionDigits: 6).description
    }
}
