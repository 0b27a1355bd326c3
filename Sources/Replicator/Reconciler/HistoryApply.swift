import Foundation
import Logging
import ReplicaModel
import ReplicaStore

/// What applying one history page did.
public struct HistoryPageResult: Sendable, Hashable {
    /// Messages stored for the first time.
    public var inserted = 0
    /// Stored messages that changed (a pending message of ours that got its timetoken counts here).
    public var updated = 0
    /// Messages already stored as they are.
    public var unchanged = 0
    /// Messages left out because another stored message of the channel already has their
    /// timetoken (a server answer that mangled a message's payload, so its id changed): the
    /// stored row is kept rather than show one message twice.
    public var skipped = 0
    /// Our own unsent publishes the page showed had arrived: their outbox ops are finished.
    public var completedSends: [CompletedSend] = []

    /// An empty result.
    public init() {}
}

/// A publish op finished by a pull: the page held its message.
public struct CompletedSend: Sendable, Hashable {
    /// The outbox op that carried the publish.
    public var opId: String
    /// The message id.
    public var messageId: String
    /// The timetoken the server gave it.
    public var timetoken: Timetoken
}

extension Reconciler {
    /// Applies one history page and moves the channel's checkpoint, in one transaction: either both
    /// are stored or neither is, so a checkpoint never passes a page that was not applied. A nil
    /// checkpoint leaves the stored one alone (scroll-back pages below it).
    ///
    /// Messages are upserted by id. A message of ours still pending locally becomes `sent` with
    /// the server's timetoken, and its publish op leaves the outbox (announced by the outbox):
    /// the pull proved it arrived.
    ///
    /// - Parameter beforeCommit: runs inside the transaction after the writes (tests use it to
    ///   fail between applying a page and committing it).
    func applyHistoryPage(
        _ messages: [Message], checkpoint: SyncCheckpoint?, beforeCommit: (@Sendable () throws -> Void)? = nil
    ) async throws(StoreError) -> HistoryPageResult {
        let logger = logger
        do {
            return try await ops.commit { ops in
                let tx = ops.tx
                var result = HistoryPageResult()
                for message in messages { try Self.apply(message, ops: ops, into: &result, logger: logger) }
                if let checkpoint { try tx.write(checkpoint) }
                try beforeCommit?()
                return result
            }
        } catch {
            throw ChatStore<Custom>.storeError(error)
        }
    }

    /// Stores one message from the server (a history page's or a live event's): upserted by id;
    /// a pending message of ours becomes `sent` and its publish op is finished (announced by the
    /// outbox). A message whose timetoken another stored message holds is skipped, unless that
    /// message is one stored undecryptable (``undecryptableContentType``): a payload that decrypts
    /// now replaces it.
    static func apply(_ message: Message, ops: OpTransaction<Custom>, into result: inout HistoryPageResult, logger: Logger) throws {
        let tx = ops.tx
        if try tx.hasOp(target: OutboxKeys.hardDelete(message.id)) {
            // Deleted here; the history delete has not reached PubNub yet.
            result.skipped += 1
            return
        }
        if let timetoken = message.timetoken,
           let holder = try tx.messageId(channel: message.channelId, timetoken: timetoken, other: message.id)
        {
            if message.contentType != undecryptableContentType,
               try tx.message(id: holder)?.contentType == undecryptableContentType
            {
                // The payload stored undecryptable reads now (the right key came): the message it
                // holds replaces the marked row, on a pull, a live event or `decryptPending()` alike.
                try tx.deleteMessage(id: holder)
            } else {
                logger.warning("skipped a message whose timetoken another stored message holds", metadata: [
                    "channel": "\(message.channelId)", "timetoken": "\(timetoken)", "stored": "\(holder)",
                ])
                result.skipped += 1
                return
            }
        }
        switch try tx.upsert(message: message) {
        case .inserted: result.inserted += 1
        case .unchanged: result.unchanged += 1
        case .updated:
            result.updated += 1
            if let timetoken = message.timetoken, let opId = try ops.completeByPull(messageId: message.id, timetoken: timetoken) {
                result.completedSends.append(CompletedSend(opId: opId, messageId: message.id, timetoken: timetoken))
            }
        }
    }
}
