import Foundation
import GRDB
import ReplicaModel

/// The rows of `user_events`: the `mention` and `invite` events the Chat SDK publishes on a
/// user's own channel (`docs/conversations.md`). Written when a server message turns out to be
/// one (the replicator's `ServerMessages`), never as a chat message.
enum UserEventRows {
    static let select =
        "SELECT user_id, timetoken, kind, publisher, channel_id, message_timetoken, parent_channel, channel_type FROM user_events"

    /// Reads a row of ``select``; nil for one a later version would write differently.
    static func read(_ row: Row) -> ChatUserEvent? {
        let timetoken: Int64 = row[1]
        guard let tt = UInt64(exactly: timetoken) else { return nil }
        let kind: ChatUserEvent.Kind
        switch row[2] as String {
        case ChatSDKFormat.mentionType:
            let message: Int64? = row[5]
            guard let message, let messageTT = UInt64(exactly: message) else { return nil }
            kind = .mention(messageTimetoken: Timetoken(rawValue: messageTT), channel: row[4], parentChannel: row[6])
        case ChatConversations.inviteType:
            kind = .invite(channelType: row[7] ?? ChatConversations.unknownType, channel: row[4])
        default:
            return nil
        }
        return ChatUserEvent(userId: row[0], timetoken: Timetoken(rawValue: tt), publisher: row[3], kind: kind)
    }
}

extension StoreTransaction {
    /// Stores an event of a user's own channel (once per channel and timetoken; the same event
    /// again changes nothing).
    @discardableResult
    package func write(userEvent event: ChatUserEvent) throws -> UpsertOutcome {
        guard let timetoken = Int64(exactly: event.timetoken.rawValue) else {
            throw StoreError.invalidInput("event timetoken \(event.timetoken) is out of range")
        }
        var messageTimetoken: Int64?, parent: String?, channelType: String?
        let kindName: String, channel: String
        switch event.kind {
        case .mention(let tt, let ch, let parentChannel):
            guard let value = Int64(exactly: tt.rawValue) else {
                throw StoreError.invalidInput("mention of message timetoken \(tt) is out of range")
            }
            kindName = ChatSDKFormat.mentionType
            channel = ch
            messageTimetoken = value
            parent = parentChannel
        case .invite(let type, let ch):
            kindName = ChatConversations.inviteType
            channel = ch
            channelType = type
        }
        try db.execute(
            sql: """
                INSERT OR IGNORE INTO user_events
                    (user_id, timetoken, kind, publisher, channel_id, message_timetoken, parent_channel, channel_type, body)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                event.userId, timetoken, kindName, event.publisher, channel, messageTimetoken, parent, channelType,
                try event.body.jsonString(),
            ])
        return db.changesCount > 0 ? .inserted : .unchanged
    }
}

extension StoreTransaction {
    /// The newest stored message's timetoken in each channel `userId` is a member of (channels
    /// without a sent message are left out): what "mark all read" reads up to.
    package func newestTimetokens(inChannelsOf userId: String) throws -> [String: Timetoken] {
        var newest: [String: Timetoken] = [:]
        for row in try Row.fetchAll(
            db,
            sql: """
                SELECT m.channel_id, (SELECT max(msg.timetoken) FROM messages msg WHERE msg.channel_id = m.channel_id)
                FROM members m WHERE m.user_id = ?
                """, arguments: [userId])
        {
            let value: Int64? = row[1]
            if let value, let tt = UInt64(exactly: value) { newest[row[0]] = Timetoken(rawValue: tt) }
        }
        return newest
    }
}
