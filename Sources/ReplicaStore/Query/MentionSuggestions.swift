import Foundation
import GRDB
import ReplicaModel

/// Where user suggestions come from: the channel's members (the Chat SDK's default) or every
/// stored user.
public enum UserSuggestionSource: String, Sendable, Hashable, Codable {
    /// The members of the draft's channel (of the parent channel, for a thread's draft).
    case channel
    /// Every user in the store.
    case global
}

/// How many suggestions, and from where. The Chat SDK's defaults: members of the channel, 10
/// users, 10 channels.
public struct SuggestionOptions: Sendable, Hashable {
    /// Members of the channel, or every user.
    public var userSource: UserSuggestionSource = .channel
    /// At most this many users per trigger (1-100; default 10).
    public var userLimit = 10
    /// At most this many channels per trigger (1-100; default 10).
    public var channelLimit = 10

    /// The Chat SDK's defaults.
    public init() {}
}

extension ChatQueries {
    /// Suggestions for the draft's triggers (``ReplicaModel/MessageDraft/mentionTriggers``), read
    /// from the store alone, so they work offline: for `@word`, users whose name starts with
    /// `word` (then users whose id does), from `channelId`'s members or from all users; for
    /// `#word`, channels likewise. Each list is ordered by name, then id; a suggestion shows the
    /// name, else the id. The match ignores ASCII case (SQLite `LIKE`).
    ///
    /// ```swift
    /// let draft = try await store.fetch(store.queries.draft(key)) ?? MessageDraft()
    /// let suggestions = try await store.fetch(store.queries.mentionSuggestions(for: draft, inChannel: key.channelId))
    /// // user picks one:
    /// try await store.editDraft(key) { try $0.insertSuggestedMention(picked, text: picked.replaceWith) }
    /// ```
    public func mentionSuggestions(
        for draft: MessageDraft, inChannel channelId: String, options: SuggestionOptions = SuggestionOptions()
    ) -> StoreQuery<[SuggestedMention]> {
        let triggers = draft.mentionTriggers
        return StoreQuery { db in
            var result: [SuggestedMention] = []
            for trigger in triggers {
                let pattern = Self.likePrefix(trigger.searchText)
                switch trigger.kind {
                case .user:
                    let limit = min(max(options.userLimit, 1), 100)
                    let from = options.userSource == .channel
                        ? "users u JOIN members m ON m.user_id = u.id AND m.channel_id = ?1" : "users u"
                    let rows = try Row.fetchAll(
                        db,
                        sql: """
                            SELECT u.id, u.name FROM \(from)
                            WHERE u.name LIKE ?2 ESCAPE '\\' OR u.id LIKE ?2 ESCAPE '\\'
                            ORDER BY CASE WHEN u.name LIKE ?2 ESCAPE '\\' THEN 0 ELSE 1 END, u.name, u.id LIMIT ?3
                            """, arguments: [channelId, pattern, limit])
                    for row in rows {
                        let id: String = row[0]
                        let name: String? = row[1]
                        result.append(SuggestedMention(offset: trigger.offset, replaceFrom: trigger.text, replaceWith: name ?? id, target: .user(id)))
                    }
                case .channel:
                    let limit = min(max(options.channelLimit, 1), 100)
                    let rows = try Row.fetchAll(
                        db,
                        sql: """
                            SELECT id, name FROM channels
                            WHERE name LIKE ?1 ESCAPE '\\' OR id LIKE ?1 ESCAPE '\\'
                            ORDER BY CASE WHEN name LIKE ?1 ESCAPE '\\' THEN 0 ELSE 1 END, name, id LIMIT ?2
                            """, arguments: [pattern, limit])
                    for row in rows {
                        let id: String = row[0]
                        let name: String? = row[1]
                        result.append(SuggestedMention(
                            offset: trigger.offset, replaceFrom: trigger.text, replaceWith: name ?? id, target: .channel(id)))
                    }
                }
            }
            return result
        }
    }

    /// `text%` for `LIKE ? ESCAPE '\'`.
    static func likePrefix(_ text: String) -> String { likeEscaped(text) + "%" }

    /// `text` with `%`, `_` and `\` escaped for `LIKE ? ESCAPE '\'`: the one place that escapes a
    /// `LIKE` pattern.
    static func likeEscaped(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            if scalar == "%" || scalar == "_" || scalar == "\\" { escaped.unicodeScalars.append("\\") }
            escaped.unicodeScalars.append(scalar)
        }
        return escaped
    }
}
