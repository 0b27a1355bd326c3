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
