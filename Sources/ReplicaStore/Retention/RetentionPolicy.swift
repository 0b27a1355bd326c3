import Foundation

/// How much message history a store keeps (`docs/store.md`, "Storage budget"): a rule per channel
/// (a time window or a number of messages) and a size for the whole store. Set it in
/// ``StoreOptions/retention``; each sync then evicts the oldest history of the coldest channels
/// until both hold, and gives the space back to the file system.
///
/// Eviction never removes a message that is not sent yet, a pinned message, a thread's root, a
/// message an outbox op names, a message after the current user's read position in its channel
/// (unread counts and mentions are read from stored messages), any message of a channel a screen
/// keeps hot (`observe(_:keepingHot:)`), or the newest ``keepNewest`` of a channel; drafts are not
/// messages and are never touched. An evicted message comes back when the user scrolls back to it
/// (`loadOlder`), and search says from when a channel is complete.
///
/// ```swift
/// var options = StoreOptions()
/// options.retention = RetentionPolicy(perChannel: .days(90), maxBytes: 200 * 1_048_576)
/// ```
public struct RetentionPolicy: Sendable, Hashable, Codable {
    /// What each channel keeps.
    public enum ChannelRule: Sendable, Hashable, Codable {
        /// The messages published in the last this many days.
        case days(Int)
        /// The newest this many messages.
        case messages(Int)
    }

    /// What each channel keeps; nil: no rule per channel (only the size budget evicts).
    public var perChannel: ChannelRule?
    /// The most the store's pages may hold, in bytes (its database file, without the WAL and the
    /// files area, which has its own budget); nil: no size budget. Past it, the coldest channels
    /// (the longest without a new message) lose their oldest evictable history first.
    public var maxBytes: Int?
    /// The newest messages of each channel that are always kept (a channel list's last message,
    /// the first screen of a channel); default 20.
    public var keepNewest = 20

    /// The policy in words: `90 days per channel, 200.0 MB in all, the newest 20 of each channel
    /// kept` (`pnreplicate status`, the diagnostics report).
    public var summary: String {
        var parts: [String] = []
        switch perChannel {
        case .days(let days)?: parts.append("\(days) days per channel")
        case .messages(let count)?: parts.append("\(count) messages per channel")
        case nil: break
        }
        if let maxBytes { parts.append(String(format: "%.1f MB in all", Double(maxBytes) / 1_048_576)) }
        parts.append("the newest \(keepNewest) of each channel kept")
        return parts.joined(separator: ", ")
    }

    /// A policy: a rule per channel, a size budget, or both.
    public init(perChannel: ChannelRule? = nil, maxBytes: Int? = nil) {
        self.perChannel = perChannel
        self.maxBytes = maxBytes
    }
}

/// What one enforcement of a ``RetentionPolicy`` did.
public struct RetentionReport: Sendable, Hashable, Codable {
    /// Messages evicted.
    public var evicted = 0
    /// The channels that lost history, sorted.
    public var channels: [String] = []
    /// The bytes the store's pages held before and after (eviction and incremental vacuum).
    public var bytesBefore = 0
    public var bytesAfter = 0
    /// Whether the size budget holds now (true when there is none). False when everything left
    /// past the budget is kept by a rule above (pending, pinned, unread, hot ...).
    public var withinBudget = true

    /// An empty report.
    public init() {}
}
