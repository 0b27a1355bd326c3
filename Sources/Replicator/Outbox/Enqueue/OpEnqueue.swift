import Foundation
import ReplicaModel
import ReplicaStore

/// The outbox's enqueues: each local write as an op, filed in its lane with what it changes
/// locally, inside one ``OpTransaction`` (`transaction.enqueue.send(...)`).
///
/// One function per kind of write (a message, a reaction, an object, a membership, a Chat SDK
/// convention); each checks what it may, changes the local rows through the overlay and files
/// the op through the transaction's coalescing rules (``OpTransaction/insert(_:id:now:)`` and
/// its siblings), so a write and its op commit together or not at all.
struct OpEnqueue<Custom: ChatCustomData> {

    /// The transaction the ops are filed in.
    let transaction: OpTransaction<Custom>
    /// Its store transaction.
    var tx: StoreTransaction<Custom> { transaction.tx }
    /// Its overlay (the local rows a write changes).
    var overlay: LocalOverlay<Custom> { transaction.overlay }
}

extension OpTransaction {
    /// The enqueues (`transaction.enqueue.send(...)`).
    var enqueue: OpEnqueue<Custom> { OpEnqueue(transaction: self) }
}
