import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

extension Reconciler {
    /// PubNub's own unread counts of the user's channels, as the Chat SDK's
    /// `getUnreadMessagesCounts` reads them: the message-counts API after each stored read
    /// position (timetoken 0 where there is none), 100 channels a request.
    ///
    /// Use it for channels whose history the store has not pulled in full (the local
    /// ``ReplicaStore/ChatQueries/unreadCounts(for:)`` counts only what the store holds). PubNub's
    /// counts differ from the local rule: they include the user's own and soft-deleted messages,
    /// and PubNub caps each at 10,000 (`docs/chat.md`).
    ///
    /// - Parameter channels: only these channels (default: every membership of the user in the store).
    public func remoteUnreadCounts(channels: [String]? = nil) async throws -> [String: Int] {
        var positions = try await store.fetch(store.queries.readPositions(of: userId))
        if let channels { positions = positions.filter { channels.contains($0.key) } }
        let ordered = positions.keys.sorted()
        var counts: [String: Int] = [:]
        for start in stride(from: 0, to: ordered.count, by: 100) {
            let chunk = Array(ordered[start..<min(start + 100, ordered.count)])
            let since = chunk.map { (positions[$0] ?? nil) ?? Timetoken(rawValue: 0) }
            let page = try await fetch("message-counts") { () async throws(WireError) -> [String: Int] in
                try await client.messageCounts(channels: chunk, since: since)
            }
            counts.merge(page) { _, new in new }
        }
        return counts
    }
}

/// A channel's unread count and where it comes from.
public struct UnreadCount: Sendable, Hashable {
    /// Where a count comes from.
    public enum Source: String, Sendable, Hashable {
        /// The store: it holds every message after the read position, so the count is exact
        /// (others' messages, soft-deleted ones left out).
        case store
        /// PubNub's message counts: the store may not hold every message after the read
        /// position (own and soft-deleted messages included, capped at 10,000).
        case pubnub
    }

    /// How many messages are unread.
    public var count: Int
    /// Where the number comes from.
    public var source: Source

    /// A count.
    public init(count: Int, source: Source) {
        self.count = count
        self.source = source
    }
}

extension Reconciler {
    /// The user's unread counts, exact from the store wherever it can be, from PubNub elsewhere.
    ///
    /// The store's count is exact when the store holds every message after the read position:
    /// the position is at or after the oldest stored message of the channel (history pulls keep
    /// what is stored contiguous up to the present). A channel without a read position, or read
    /// only up to a point older than anything stored, is asked of PubNub
    /// (``remoteUnreadCounts(channels:)``). Offline, use the store's
    /// ``ReplicaStore/ChatQueries/unreadCounts(for:)``, which needs no network.
    public func unreadCounts() async throws -> [String: UnreadCount] {
        let local = try await store.fetch(store.queries.unreadCounts(for: userId))
        let positions = try await store.fetch(store.queries.readPositions(of: userId))
        var result: [String: UnreadCount] = [:]
        var remote: [String] = []
        for (channel, count) in local {
            let oldest = try await store.oldestTimetoken(channel: channel)
            if let position = positions[channel] ?? nil, let oldest, position >= oldest {
                result[channel] = UnreadCount(count: count, source: .store)
            } else {
                remote.append(channel)
            }
        }
        if !remote.isEmpty {
            for (channel, count) in try await remoteUnreadCounts(channels: remote) {
                result[channel] = UnreadCount(count: count, source: .pubnub)
            }
        }
        return result
    }
}
