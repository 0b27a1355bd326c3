import Foundation

/// Reads the PubNub Chat SDK's read position from a membership's custom data:
/// `lastReadMessageTimetoken`, a timetoken written as a string (a number is accepted too).
///
/// A read position only moves forward, so one far in the future would freeze a channel's unread
/// count for good (another user can write it through App Context, a typo can ask for it). So a
/// position later than ``ceiling(now:)`` is **implausible**: it is refused when this user marks a
/// channel read, and a stored one is treated as no position (the next read replaces it). The Chat
/// SDK writes the server's `time()` there on invite, join and mark-all-read, so the ceiling is the
/// present plus a tolerance, not the newest message.
public enum ReadPosition {
    /// How far past the device's clock a read position may be: 10 minutes (the clocks of the
    /// devices that write positions may run ahead of this one's).
    public static let tolerance: TimeInterval = 600

    /// The latest plausible read position at device time `now`: `now` plus ``tolerance``.
    public static func ceiling(now: Date) -> Timetoken {
        (try? Timetoken(date: now.addingTimeInterval(tolerance))) ?? Timetoken(rawValue: .max)
    }

    /// Whether `position` can be a read position at device time `now` (at most ``ceiling(now:)``).
    public static func isPlausible(_ position: Timetoken, now: Date) -> Bool {
        position <= ceiling(now: now)
    }

    /// The read position in `custom` (a membership's custom data as JSON), or nil when it has none.
    public static func timetoken(in custom: JSONValue?) -> Timetoken? {
        switch custom?.objectValue?[ChatSDKFormat.lastReadKey] {
        case .string(let raw)?: UInt64(raw).map(Timetoken.init(rawValue:))
        case .int(let value)? where value >= 0: Timetoken(rawValue: UInt64(value))
        default: nil
        }
    }
}
