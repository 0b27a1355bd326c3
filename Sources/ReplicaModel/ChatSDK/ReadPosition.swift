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

    /// Whether the read position in `custom` may move to `timetoken` at device time `now`: read
    /// positions only move forward, and a stored one later than ``ceiling(now:)`` counts as none.
    /// The one owner of that rule (marking read, joining, mark all read and its overlay ask it).
    public static func moves(in custom: JSONValue?, to timetoken: Timetoken, now: Date) -> Bool {
        guard let current = Self.timetoken(in: custom), isPlausible(current, now: now) else { return true }
        return current < timetoken
    }

    /// `custom` (a membership's custom data as JSON fields) with its read position set to
    /// `timetoken`, written as the Chat SDK writes it (a string); other keys kept. A nil
    /// `timetoken` removes the position.
    public static func setting(_ timetoken: Timetoken?, in custom: [String: JSONValue]) -> [String: JSONValue] {
        var custom = custom
        custom[ChatSDKFormat.lastReadKey] = timetoken.map { .string(String($0.rawValue)) }
        return custom
    }
}

extension ChatMember {
    /// The membership's custom data as JSON fields (none when it has none).
    public func customFields() throws -> [String: JSONValue] {
        try custom.map { try JSONValue(encoding: $0).objectValue ?? [:] } ?? [:]
    }

    /// The membership with its read position set to `timetoken` (nil removes it), other custom
    /// keys kept (``ReadPosition/setting(_:in:)``).
    ///
    /// ```swift
    /// let read = try member.withReadPosition(newest)
    /// ```
    public func withReadPosition(_ timetoken: Timetoken?) throws -> ChatMember {
        try applying(["custom": .object(ReadPosition.setting(timetoken, in: try customFields()))])
    }
}
