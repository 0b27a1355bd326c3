import Foundation
import GRDB
import ReplicaModel

/// Who may change what a message shows through the PubNub Chat SDK's `edited` and `deleted`
/// message actions (its edits, soft deletes and restores).
///
/// Any key holder can add a message action to any message. The Chat SDK shows the newest `edited`
/// action and hides a message with a `deleted` action whoever added them; pnreplicate's default is
/// safer: only the message's author changes it. Actions by anybody else are still stored (so
/// nothing is lost, and the choice can change later), they just do not count. Set it once per
/// store; every process that opens the store reads the same setting.
///
/// ```swift
/// try await store.setEditAuthority(.authorAndModerators(["mod-ann", "mod-bo"]))
/// try await store.setEditAuthority(.anyone)          // the Chat SDK's rule
/// ```
///
/// See docs/chat.md, "Who may edit and delete".
public enum EditAuthority: Sendable, Hashable {
    /// Only the message's author (the default).
    case author
    /// The author and these users (an app's moderators).
    case authorAndModerators(Set<String>)
    /// Anyone: the PubNub Chat SDK's rule.
    case anyone

    /// The row of `message_editors` that means anyone (`*` is never a valid user id).
    static let anyoneRow = "*"
}

extension ChatStore {
    /// Sets who may change what a message shows (``EditAuthority``); takes effect for every query
    /// and observation at once.
    public func setEditAuthority(_ authority: EditAuthority) async throws(StoreError) {
        var rows: [String] = []
        switch authority {
        case .author: break
        case .anyone: rows = [EditAuthority.anyoneRow]
        case .authorAndModerators(let users):
            for user in users.sorted() {
                do {
                    try Validation.validateIdentifier(user, field: "moderator")
                } catch {
                    throw StoreError.invalidInput("\(error)")
                }
            }
            rows = users.sorted()
        }
        let editors = rows
        try await write { db in
            try db.execute(sql: "DELETE FROM message_editors")
            for row in editors { try db.execute(sql: "INSERT INTO message_editors (user_id) VALUES (?)", arguments: [row]) }
        }
    }

    /// Who may change what a message shows (``EditAuthority``), as the store holds it.
    public func editAuthority() async throws(StoreError) -> EditAuthority {
        let rows = try await read { db in try String.fetchAll(db, sql: "SELECT user_id FROM message_editors") }
        if rows.contains(EditAuthority.anyoneRow) { return .anyone }
        return rows.isEmpty ? .author : .authorAndModerators(Set(rows))
    }
}
