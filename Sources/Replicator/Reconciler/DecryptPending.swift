import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

/// What ``Reconciler/decryptPending()`` did.
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

extension Reconciler {
    /// Reads again every stored message whose payload could not be decrypted
    /// (``undecryptableContentType``) with the client's crypto module: each one that decrypts now
    /// replaces its marked row with the message it holds, all in one transaction. Run it after
    /// the app supplies the right cipher key (`pnreplicate decrypt-pending`);
    /// ``sync(pushDeadline:deadline:full:progress:)`` runs it before its history pull, and a pull
    /// or live event that brings a marked message again, readable now, replaces it as well.
    public func decryptPending() async throws -> DecryptPendingReport {
        guard let crypto = client.crypto else { return DecryptPendingReport() }
        let marked = try await store.fetch(store.queries.messages(withContentType: Self.undecryptableContentType))
        var readable: [Message] = []
        for stored in marked {
            guard let timetoken = stored.timetoken, let payload = stored.content,
                  case (let plaintext, nil) = crypto.decryptKeepingPayload(payload)
            else { continue }
            let publisher = stored.userId == Self.unknownPublisher ? nil : stored.userId
            readable.append(try Self.message(
                HistoryMessage(message: plaintext, timetoken: timetoken, uuid: publisher), channel: stored.channelId))
        }
        if !readable.isEmpty {
            let logger = logger, messages = readable
            try await store.storeTransaction { tx in
                let ops = OpTransaction<Custom>(tx)
                var result = HistoryPageResult()  // `apply` replaces each marked row
                var lookups = try ServerMessageLookups(prefetching: messages, tx: tx)
                for message in messages { try Self.apply(message, ops: ops, lookups: &lookups, into: &result, logger: logger) }
            }
        }
        return DecryptPendingReport(decrypted: readable.count, stillUndecryptable: marked.count - readable.count)
    }
}
