import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

// MARK: Unread counts

/// A reconciler's unread counts: PubNub's message counts after the stored read positions, and the
/// store's exact counts wherever the store holds everything after the position.
struct UnreadCounts<Custom: ChatCustomData>: ReconcilerPart {
    let context: PullContext<Custom>
    /// What ``Reconciler/remoteUnreadCounts`` does (its doc says how).
    func remoteUnreadCounts(channels: [String]? = nil) async throws -> [String: Int] {
        var positions = try await store.fetch(store.queries.readPositions(of: userId))
        if let channels { positions = positions.filter { channels.contains($0.key) } }
        let ordered = positions.keys.sorted()
        var counts: [String: Int] = [:]
        for start in stride(from: 0, to: ordered.count, by: 100) {
            let chunk = Array(ordered[start..<min(start + 100, ordered.count)])
            let since = chunk.map { (positions[$0] ?? nil) ?? Timetoken(rawValue: 0) }
            let page = try await fetch("message-counts") { () async throws(WireError) -> [String: Int] in
                try await client.history.messageCounts(channels: chunk, since: since)
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

extension UnreadCounts {
    /// What ``Reconciler/unreadCounts`` does (its doc says how).
    func unreadCounts() async throws -> [String: UnreadCount] {
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
