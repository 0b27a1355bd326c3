import Foundation
import GRDB
import ReplicaModel

/// One table's rows within one ``StoreTransaction``, as a value over it (`tx.messages`,
/// `tx.messageActions`, `tx.outbox`, `tx.files`, `tx.moderation`): made per call, living only as
/// long as the transaction, writing through its database connection.
///
/// A table type declares only its transaction; the entity types' names, the connection and the
/// row coding come from here.
package protocol TransactionTable {
    /// The custom data types of the store.
    associatedtype Custom: ChatCustomData
    /// The transaction the rows are read and written in.
    var tx: StoreTransaction<Custom> { get }
}

extension TransactionTable {
    package typealias User = ChatUser<Custom.User>
    package typealias Channel = ChatChannel<Custom.Channel>
    package typealias Member = ChatMember<Custom>
    package typealias Message = ChatMessage<Custom.Message>
    typealias Store = ChatStore<Custom>

    /// The transaction's connection.
    var db: Database { tx.db }
    /// The transaction's row coding.
    var coding: StoreCoding { tx.coding }
}
