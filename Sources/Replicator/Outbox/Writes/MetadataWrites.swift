import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

/// The writes of user and channel metadata (App Context or DataSync objects): set with an edit,
/// or removed. Each is one transaction through the outbox, needing no network.
///
/// ```swift
/// var edit = UserEdit<DefaultChatCustom.User>()
/// edit.name = .set("Alice")
/// try await outbox.metadata.setUser(id: "alice", edit: edit)
/// ```
public struct MetadataWrites<Custom: ChatCustomData>: OutboxWriter {
    /// The outbox the ops are queued in.
    public let outbox: Outbox<Custom>

    /// Edits a user's metadata; sent with the stored eTag as `If-Match`.
    public func setUser(id: String, edit: UserEdit<Custom.User>) async throws -> OutboxReceipt<ChatUser<Custom.User>> {
        let opId = Outbox<Custom>.newOpId(), now = clock.now, fields = try edit.fields()
        return try await commit { try $0.enqueue.setUser(opId: opId, id: id, fields: fields, now: now) }
    }

    /// Deletes a user's metadata.
    public func removeUser(id: String) async throws -> OutboxReceipt<ChatUser<Custom.User>> {
        let opId = Outbox<Custom>.newOpId(), now = clock.now
        return try await commit { try $0.enqueue.removeUser(opId: opId, id: id, now: now) }
    }

    /// Edits a channel's metadata; sent with the stored eTag as `If-Match`.
    public func setChannel(id: String, edit: ChannelEdit<Custom.Channel>) async throws
        -> OutboxReceipt<ChatChannel<Custom.Channel>>
    {
        let opId = Outbox<Custom>.newOpId(), now = clock.now, fields = try edit.fields()
        return try await commit { try $0.enqueue.setChannel(opId: opId, id: id, fields: fields, now: now) }
    }

    /// Deletes a channel's metadata.
    public func removeChannel(id: String) async throws -> OutboxReceipt<ChatChannel<Custom.Channel>> {
        let opId = Outbox<Custom>.newOpId(), now = clock.now
        return try await commit { try $0.enqueue.removeChannel(opId: opId, id: id, now: now) }
    }
}
