import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

// Reactions (message actions): listing a channel's and storing them with the pending ops laid over.

// MARK: Pulling

/// A reconciler's reactions (message actions): listing a channel's and storing them with the
/// pending ops laid over. `docs/reconciler.md`, "Reactions".
struct ReactionSync<Custom: ChatCustomData>: ReconcilerPart {
    let context: PullContext<Custom>

    /// What ``Reconciler/pullReactions`` does (its doc says how).
    @discardableResult
    func pullReactions(channel: String) async throws -> ReactionSyncResult {
        try await pullReactions(channel: channel, snapshot: nil)
    }

    /// ``pullReactions(channel:)`` against `snapshot`, a `/time` answer taken before the listing
    /// (nil: one is requested).
    func pullReactions(channel: String, snapshot given: Timetoken?) async throws -> ReactionSyncResult {
        guard let window = try await store.timetokenWindow(channel: channel) else { return ReactionSyncResult() }
        let scope = SyncCheckpoint.reactions(channel)
        let snapshot: Timetoken
        if let given { snapshot = given } else { snapshot = try await serverSnapshot(atLeast: nil) }
        var actions: [ChatMessageAction] = []
        let pages = MessageActionPages(
            channel: channel, start: snapshot, end: window.lowerBound, limit: 100, scope: scope
        ) { query in
            let page = try await self.fetch(scope) { () async throws(WireError) -> MessageActionsPage in
                try await self.client.messageActions.listMessageActions(query)
            }
            ReplicatorMetrics.catchUpPage("reactions", to: self.client.metrics)
            return page
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
        // When the reactions were last made equal to the server's (their freshness, `pnreplicate checkpoints`).
        try await saveListing(scope, snapshot: snapshot)
        return result
    }
}

// MARK: Applying

/// What replacing a channel's reactions did.
public struct ReactionSyncResult: Sendable, Hashable {
    /// Actions the server has that were missing locally.
    public var added = 0
    /// Local actions the server no longer has.
    public var removed = 0
    /// Differences left alone because a local op is pending on them (read-your-writes), or the
    /// local action is newer than the listing.
    public var keptPending = 0

    /// An empty result.
    public init() {}
}

/// PubNub's identity of an action: (message timetoken, type, value, user).
private struct ReactionKey: Hashable {
    var messageTimetoken: Int64
    var type: String
    var value: String
    var user: String
}

extension ReactionSync {
    /// Makes the stored actions on a channel's messages in `window` (message timetokens,
    /// inclusive) equal to `server`, the complete listing taken just before `snapshot`, in one
    /// transaction.
    ///
    /// Local changes still in the outbox win over the listing (``LocalOverlay``): an unsent add
    /// keeps its action, an unsent removal keeps it away. A stored action whose timetoken is at or
    /// after `snapshot` arrived after the listing was taken and is kept.
    func replaceReactions(
        channel: String, window: ClosedRange<Timetoken>, server: [ChatMessageAction], snapshot: Timetoken,
        currentUser: String
    ) async throws(StoreError) -> ReactionSyncResult {
        func column(_ timetoken: Timetoken, _ field: String) throws(StoreError) -> Int64 {
            guard let value = Int64(exactly: timetoken.rawValue) else {
                throw .valueOutOfRange(field: field, value: timetoken.description)
            }
            return value
        }
        let low = try column(window.lowerBound, "window.lowerBound"), high = try column(window.upperBound, "window.upperBound")
        let snapshotValue = try column(snapshot, "snapshot")
        return try await store.storeTransaction { tx in
            var result = ReactionSyncResult()
            let pending = try LocalOverlay(tx: tx).pendingReactions(channel: channel, currentUser: currentUser)
            let ids = try tx.messages.messageIds(channel: channel, window: low...high)
            func overridden(_ key: ReactionKey, serverSays present: Bool) -> Bool {
                pending.overrides(
                    serverSays: present, messageId: ids[key.messageTimetoken], type: key.type, value: key.value, user: key.user)
            }
            var remote: [ReactionKey: ChatMessageAction] = [:]
            for action in server {
                guard let tt = action.messageTimetoken, let value = Int64(exactly: tt.rawValue), (low...high).contains(value)
                else { continue }
                remote[ReactionKey(messageTimetoken: value, type: action.type, value: action.value, user: action.userId)] = action
            }
            var local: [ReactionKey: (rowId: Int64, actionTimetoken: Int64?)] = [:]
            for row in try tx.messageActions.actions(channel: channel, window: low...high) {
                local[ReactionKey(messageTimetoken: row.messageTimetoken, type: row.type, value: row.value, user: row.userId)] =
                    (row.rowId, row.actionTimetoken)
            }
            for (key, stored) in local where remote[key] == nil {
                if overridden(key, serverSays: false) { result.keptPending += 1; continue }
                if let tt = stored.actionTimetoken, tt >= snapshotValue { result.keptPending += 1; continue }
                try tx.messageActions.deleteAction(rowId: stored.rowId)
                result.removed += 1
            }
            for (key, action) in remote {
                if overridden(key, serverSays: true) { result.keptPending += 1; continue }
                var attached = action
                attached.messageId = ids[key.messageTimetoken]
                if try tx.upsert(action: attached) == .inserted { result.added += 1 }
            }
            return result
        }
    }
}
