import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

/// Users and channels: their metadata, created, edited and removed through the outbox.
///
/// Each edit is sent with the stored eTag, so that a concurrent change is a conflict settled by the configured policy (`docs/conflicts.md`).
///
/// ```swift
/// try await replica.objects.setUser(id: "alice", edit: UserEdit(name: .set("Alice")))
/// ```
///
/// Reached through ``Replica/objects``: a value made per access, holding only the replica.
public struct ReplicaObjects<Custom: ChatCustomData>: Sendable {
    /// The replica these calls go through.
    let replica: Replica<Custom>

    /// Creates or edits a user's metadata (sent with the stored eTag: a concurrent change is a
    /// conflict settled by the configured policy).
    public func setUser(id: String, edit: UserEdit<Custom.User>) async throws -> OutboxReceipt<ChatUser<Custom.User>> {
        try await replica.write { try await $0.metadata.setUser(id: id, edit: edit) }
    }

    /// Deletes a user's metadata.
    @discardableResult
    public func removeUser(id: String) async throws -> OutboxReceipt<ChatUser<Custom.User>> {
        try await replica.write { try await $0.metadata.removeUser(id: id) }
    }

    /// Creates or edits a channel's metadata (sent with the stored eTag, as ``setUser(id:edit:)``).
    public func setChannel(id: String, edit: ChannelEdit<Custom.Channel>) async throws -> OutboxReceipt<ChatChannel<Custom.Channel>> {
        try await replica.write { try await $0.metadata.setChannel(id: id, edit: edit) }
    }

    /// Deletes a channel's metadata.
    @discardableResult
    public func removeChannel(id: String) async throws -> OutboxReceipt<ChatChannel<Custom.Channel>> {
        try await replica.write { try await $0.metadata.removeChannel(id: id) }
    }
}

extension Replica {
    /// Users and channels: their metadata, created, edited and removed through the outbox.
    public nonisolated var objects: ReplicaObjects<Custom> { ReplicaObjects(replica: self) }
}
