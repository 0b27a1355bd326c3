import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

// MARK: Messages stored undecryptable, read again

/// What `Reconciler.decryptPending()` did.
public struct DecryptPendingReport: Sendable, Hashable, Codable {
    /// Messages now readable.
    public var decrypted = 0
    /// Messages that still do not decrypt (a wrong key, or not encrypted at all).
    public var stillUndecryptable = 0

    /// A report with these counts (nothing done when both are 0).
    public init(decrypted: Int = 0, stillUndecryptable: Int = 0) {
        self.decrypted = decrypted
        self.stillUndecryptable = stillUndecryptable
    }
}

extension HistorySync {
    /// What ``Reconciler/decryptPending`` does (its doc says how).
    func decryptPending() async throws -> DecryptPendingReport {
        guard let crypto = client.crypto else { return DecryptPendingReport() }
        let marked = try await store.fetch(store.queries.messages(withContentType: Reconciler<Custom>.undecryptableContentType))
        var readable: [Message] = []
        for stored in marked {
            guard let timetoken = stored.timetoken, let payload = stored.content,
                  case (let plaintext, nil) = crypto.decryptKeepingPayload(payload)
            else { continue }
            let publisher = stored.userId == Reconciler<Custom>.unknownPublisher ? nil : stored.userId
            readable.append(try Self.message(
                HistoryMessage(message: plaintext, timetoken: timetoken, uuid: publisher), channel: stored.channelId))
        }
        if !readable.isEmpty {
            let logger = logger, messages = readable
            try await store.storeTransaction { tx in
                let ops = OpTransaction<Custom>(tx)
                var result = HistoryPageResult()  // `apply` replaces each marked row
                var lookups = try ServerMessageLookups(prefetching: messages, tx: tx)
                for message in messages { try ServerMessages<Custom>.apply(message, ops: ops, lookups: &lookups, into: &result, logger: logger) }
            }
        }
        return DecryptPendingReport(decrypted: readable.count, stillUndecryptable: marked.count - readable.count)
    }
}

// Applying a history page: its messages and the checkpoint in one transaction.
extension HistorySync {
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
            let applied = try await ops.commit { ops in
                let tx = ops.tx
                var result = HistoryPageResult()
                var lookups = try ServerMessageLookups(prefetching: messages, tx: tx)
                for message in messages { try ServerMessages<Custom>.apply(message, ops: ops, lookups: &lookups, into: &result, logger: logger) }
                if let checkpoint { try tx.write(checkpoint) }
                try beforeCommit?()
                return result
            }
            // Stored messages' timetokens are server times this device may trust (TrustedTime).
            if let newest = messages.lazy.compactMap(\.timetoken).max() { context.serverTime.stored(messages: [newest]) }
            return applied
        } catch {
            throw StoreError.wrapping(error)
        }
    }
}
