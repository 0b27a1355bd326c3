import Foundation
import GRDB
import ReplicaModel

/// Where a draft belongs: a channel, or a thread of it (the root message's timetoken).
public struct DraftKey: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The channel.
    public var channelId: String
    /// The thread's root message, or nil for the channel itself.
    public var threadRoot: Timetoken?

    /// The draft of `channelId` (or of the thread under `threadRoot`).
    public init(channelId: String, threadRoot: Timetoken? = nil) {
        self.channelId = channelId
        self.threadRoot = threadRoot
    }

    /// `channel` or `channel/threadRoot`.
    public var description: String { threadRoot.map { "\(channelId)/\($0)" } ?? channelId }
}

/// A draft as stored, with when it last changed.
public struct StoredDraft: Sendable, Hashable {
    /// Where it belongs.
    public var key: DraftKey
    /// The draft.
    public var draft: MessageDraft
    /// When it was last saved.
    public var updatedAt: Date
}

/// The drafts of a store (`store.drafts`): what the user is typing in each channel or thread,
/// saved on every edit so that nothing typed is lost to a crash or a kill (`docs/drafts.md`).
///
/// ```swift
/// let key = DraftKey(channelId: "general")
/// try await store.drafts.edit(key) { try $0.insertText(offset: 0, text: "Hi ") }
/// ```
public struct DraftStore<Custom: ChatCustomData>: Sendable {
    /// The store the drafts are kept in.
    public let store: ChatStore<Custom>
}

extension ChatStore {
    /// The drafts (``DraftStore``): edit, save and remove one.
    public var drafts: DraftStore<Custom> { DraftStore(store: self) }
}

extension DraftStore {
    /// Changes the draft of `key`: reads it (an empty draft when there is none), runs `edit` on it,
    /// and saves the result, or deletes the row when the result is empty (no text, no quote).
    /// Returns the saved draft.
    ///
    /// `edit` runs **outside** the write transaction (a text diff of a long draft must not block
    /// every other writer): the save commits only if the stored draft is still the one `edit`
    /// started from; if another writer changed it meanwhile, `edit` runs again on the new one
    /// (up to 8 times, then ``StoreError/busy(message:)``).
    ///
    /// Call it once per user edit (each keystroke's `insertText`/`removeText`, or `update(text:)`
    /// with the field's content): nothing is debounced, so nothing typed is ever only in memory.
    /// A transaction per keystroke costs well under a millisecond; an app that wants fewer writes
    /// must batch the edits itself and accept losing the batch in progress on a crash.
    ///
    /// ```swift
    /// let key = DraftKey(channelId: "general")
    /// try await store.drafts.edit(key) { try $0.insertText(offset: 0, text: "Hi ") }
    /// ```
    ///
    /// An error thrown by `edit` (a refused mention, say) is rethrown as is: the stored draft is
    /// unchanged. The draft's `updatedAt` is `date`, or the store's ``ChatStore/clock`` when nil.
    @discardableResult
    public func edit(
        _ key: DraftKey, at date: Date? = nil, _ edit: @escaping @Sendable (inout MessageDraft) throws -> Void
    ) async throws -> MessageDraft {
        let stamp = date ?? store.clock.now
        for _ in 0..<8 {
            let base = try await store.read { db in try Self.draft(key, db: db) }
            var draft = base ?? MessageDraft()
            try edit(&draft)
            let edited = draft
            let saved = try await store.write { db -> Bool in
                // Compare-and-set: only over the draft the edit started from.
                guard try Self.draft(key, db: db) == base else { return false }
                try Self.save(edited, key: key, at: stamp, db: db)
                return true
            }
            if saved { return edited }
        }
        throw StoreError.busy(message: "the draft of \(key) kept changing while it was edited")
    }

    /// Replaces the draft of `key` (deletes it when `draft` is empty), stamped `date` (default:
    /// the store's ``ChatStore/clock``).
    public func save(_ draft: MessageDraft, for key: DraftKey, at date: Date? = nil) async throws(StoreError) {
        let stamp = date ?? store.clock.now
        try await store.write { db in try Self.save(draft, key: key, at: stamp, db: db) }
    }

    /// Deletes the draft of `key`; returns whether there was one.
    @discardableResult
    public func remove(_ key: DraftKey) async throws(StoreError) -> Bool {
        try await store.write { db in try StoreTransaction<Custom>(db).deleteDraft(key) }
    }

    static func threadColumn(_ key: DraftKey) throws(StoreError) -> Int64 {
        try StoreCoding.column(key.threadRoot, field: "draft.threadRoot") ?? 0
    }

    static func save(_ draft: MessageDraft, key: DraftKey, at date: Date, db: Database) throws {
        let thread = try threadColumn(key)
        if draft.isEmpty && draft.quotedMessage == nil && draft.files.isEmpty {
            try StoreTransaction<Custom>(db).deleteDraft(key)
            return
        }
        let json = try StoreCoding().json(draft) ?? "{}"
        try db.execute(
            sql: """
                INSERT INTO drafts (channel_id, thread_root, text, draft, updated_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (channel_id, thread_root) DO UPDATE SET
                    text = excluded.text, draft = excluded.draft, updated_at = excluded.updated_at
                """, arguments: [key.channelId, thread, draft.text, json, date.milliseconds])
    }

    static func draft(_ key: DraftKey, db: Database) throws -> MessageDraft? {
        let thread = try threadColumn(key)
        guard let text = try String.fetchOne(
            db, sql: "SELECT draft FROM drafts WHERE channel_id = ? AND thread_root = ?", arguments: [key.channelId, thread])
        else { return nil }
        return try StoreCoding().decode(MessageDraft.self, text, table: "drafts", column: "draft", key: key.description)
    }
}

extension ChatQueries {
    /// The draft of `key`, or nil. Observe it (`store.observe(...)`) to show the draft wherever it
    /// was last edited.
    public func draft(_ key: DraftKey) -> StoreQuery<MessageDraft?> {
        StoreQuery { db in try DraftStore<Custom>.draft(key, db: db) }
    }

    /// Every stored draft, most recently changed first.
    public func drafts() -> StoreQuery<[StoredDraft]> {
        StoreQuery { db in
            let coding = StoreCoding()
            return try Row.fetchAll(
                db, sql: "SELECT channel_id, thread_root, draft, updated_at FROM drafts ORDER BY updated_at DESC, channel_id, thread_root"
            ).map { row in
                let channel: String = row[0]
                let thread: Int64 = row[1]
                let key = DraftKey(channelId: channel, threadRoot: thread > 0 ? Timetoken(rawValue: UInt64(thread)) : nil)
                let draft = try coding.decode(MessageDraft.self, row[2], table: "drafts", column: "draft", key: key.description)
                    ?? MessageDraft()
                return StoredDraft(key: key, draft: draft, updatedAt: Date(milliseconds: row[3]))
            }
        }
    }
}

extension StoreTransaction {
    /// The stored draft of `key`, or nil (for a write that sends it in the same transaction).
    package func draft(_ key: DraftKey) throws -> MessageDraft? {
        try DraftStore<Custom>.draft(key, db: db)
    }

    /// Deletes the draft of `key` in this transaction; returns whether there was one.
    @discardableResult
    package func deleteDraft(_ key: DraftKey) throws -> Bool {
        try db.execute(
            sql: "DELETE FROM drafts WHERE channel_id = ? AND thread_root = ?", arguments: [key.channelId, try DraftStore<Custom>.threadColumn(key)])
        return db.changesCount > 0
    }
}
