import Foundation

/// App Context's filter language, as far as the replica writes it: naming a user's memberships of
/// some channels (the read before a membership write, and a batch of read positions).
enum AppContextFilter {
    /// The filter of a user's memberships naming exactly `channels`:
    /// `channel.id == 'a' || channel.id == 'b'`, as the Chat SDK writes it. Each id must pass ``canName(_:)``.
    static func filter(_ channels: [String]) -> String {
        channels.map { "channel.id == '\($0)'" }.joined(separator: " || ")
    }

    /// Whether a channel id can be named in a filter: no quote, no backslash (how PubNub escapes
    /// them is not documented).
    static func canName(_ channel: String) -> Bool {
        !channel.contains { $0 == "'" || $0 == "\\" }
    }

    /// The incremental listing filter: everything changed at or after `since`. `>=` re-reads the
    /// objects of that instant (unchanged by eTag) rather than miss one that shares it.
    static func updated(since: String) -> String { "updated >= \"\(since)\"" }
}
