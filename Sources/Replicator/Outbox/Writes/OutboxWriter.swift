import Foundation
import ReplicaModel
import ReplicaStore

/// One feature's writes, as outbox ops: a value over the ``Outbox`` they are queued in
/// (``Outbox/messages``, ``Outbox/memberships``, ``Outbox/metadata``, ``Outbox/conversations``,
/// ``Outbox/moderation``, ``Outbox/push``). Each write is one transaction, the local change and
/// its op together, through the outbox's `commit`.
public protocol OutboxWriter: Sendable {
    /// The custom data types of the store.
    associatedtype Custom: ChatCustomData
    /// The outbox the ops are queued in.
    var outbox: Outbox<Custom> { get }
}

extension OutboxWriter {
    var store: ChatStore<Custom> { outbox.store }
    var clock: any ReplicaClock { outbox.clock }
    var userId: String { outbox.userId }

    /// One transaction of the outbox (``Outbox/commit(_:)``).
    func commit<T: Sendable>(_ body: @escaping @Sendable (OpTransaction<Custom>) throws -> T) async throws -> T {
        try await outbox.commit(body)
    }
}
