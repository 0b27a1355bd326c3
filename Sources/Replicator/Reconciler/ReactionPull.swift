import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

extension Reconciler {
    /// Makes the stored reactions (all message actions) on the channel's stored messages equal to
    /// the server's, with the outbox's unsent reaction changes laid over them (read-your-writes).
    ///
    /// The server's actions are listed from the present (a `time` request fixes the snapshot)
    /// back to the oldest stored message, then replace the local set in one transaction.
    @discardableResult
    public func pullReactions(channel: String) async throws -> ReactionSyncResult {
        guard let window = try await store.timetokenWindow(channel: channel) else { return ReactionSyncResult() }
        let scope = SyncCheckpoint.reactions(channel)
        let snapshot = try await fetch(scope) { () async throws(WireError) -> Timetoken in try await client.time() }
        var actions: [ChatMessageAction] = []
        let pages = MessageActionPages(
            channel: channel, start: snapshot, end: window.lowerBound, limit: 100, scope: scope
        ) { query in
            try await self.fetch(scope) { () async throws(WireError) -> MessageActionsPage in
                try await self.client.listMessageActions(query)
            }
        }
        for try await page in pages {
            var skipped: [String] = []
            for action in page.data {
                do {
                    actions.append(try action.model(channel: channel))
                } catch {
                    skipped.append("\(error)")
                }
            }
            logSkipped(skipped, scope: scope)
        }
        let result = try await replaceReactions(
            channel: channel, window: window, server: actions, snapshot: snapshot, currentUser: userId)
        // Recorded for `pnreplicate checkpoints`: when the reactions were last made equal to the server's.
        try await store.saveCheckpoint(SyncCheckpoint(scope: scope, applied: snapshot, updatedAt: clock.now))
        return result
    }
}
