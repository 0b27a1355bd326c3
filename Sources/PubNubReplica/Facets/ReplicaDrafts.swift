import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

/// Drafts: what the user is typing, kept in the store edit by edit, and the files attached to it.
///
/// A draft lives in the store (each edit one transaction), so a crash or a kill loses nothing typed; sending it is ``ReplicaMessages/send(draft:custom:meta:)`` (`docs/drafts.md`).
///
/// ```swift
/// let key = DraftKey(channelId: "general")
/// try await replica.drafts.edit(key) { try $0.insertText(offset: 0, text: "Hi ") }
/// ```
///
/// Reached through ``Replica/drafts``: a value made per access, holding only the replica.
public struct ReplicaDrafts<Custom: ChatCustomData>: Sendable {
    /// The replica these calls go through.
    let replica: Replica<Custom>

    /// Edits the stored draft of `key` (a channel, or a thread of it) in one transaction and
    /// returns it: call it for each user edit, so that a crash or a kill loses nothing typed. An
    /// error thrown by `edit` (a refused mention, say) leaves the stored draft as it was.
    ///
    /// ```swift
    /// let key = DraftKey(channelId: "general")
    /// try await replica.editDraft(key) { try $0.insertText(offset: 0, text: "Hi ") }
    /// for try await draft in replica.observe(replica.queries.draft(key)) { show(draft) }
    /// ```
    @discardableResult
    public func edit(_ key: DraftKey, _ edit: @escaping @Sendable (inout MessageDraft) throws -> Void) async throws -> MessageDraft {
        try await replica.openStore().drafts.edit(key, edit)
    }

    /// Replaces the stored draft of `key` with `draft` (an empty draft deletes it).
    public func save(_ draft: MessageDraft, for key: DraftKey) async throws {
        try await replica.openStore().drafts.save(draft, for: key)
    }

    /// Deletes the stored draft of `key` (its attached files stay until the draft is sent or
    /// they are detached); returns whether there was one.
    @discardableResult
    public func remove(_ key: DraftKey) async throws -> Bool {
        try await replica.openStore().drafts.remove(key)
    }

    /// Attaches a file to the draft of `key`: its bytes are copied into the store's files area at
    /// once (the original can go), and uploaded when the draft is sent.
    ///
    /// ```swift
    /// try await replica.attach(OutgoingFile(url: photoURL), toDraft: key)
    /// ```
    @discardableResult
    public func attach(_ file: OutgoingFile, toDraft key: DraftKey) async throws -> MessageDraft {
        try await replica.write { try await $0.messages.attach(file, toDraft: key) }
    }

    /// Detaches the file named `name` (every file when nil) from the draft of `key`.
    @discardableResult
    public func detach(fileNamed name: String? = nil, fromDraft key: DraftKey) async throws -> MessageDraft {
        try await replica.write { try await $0.messages.detach(fileNamed: name, fromDraft: key) }
    }
}

extension Replica {
    /// Drafts: what the user is typing, kept in the store edit by edit, and the files attached to it.
    public nonisolated var drafts: ReplicaDrafts<Custom> { ReplicaDrafts(replica: self) }
}
