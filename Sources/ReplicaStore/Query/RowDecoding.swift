import Foundation
import GRDB
import ReplicaModel

/// Column lists and row readers, kept side by side so that a select list and its reader cannot
/// drift apart.
enum Columns {
    /// A user's columns (``EntityRows``, from ``ChatUser``'s field table).
    static func user(_ alias: String) -> String { UserRows.select(alias) }
    static let userCount = UserRows.count

    /// A channel's columns (``EntityRows``, from ``ChatChannel``'s field table).
    static func channel(_ alias: String) -> String { ChannelRows.select(alias) }
    static let channelCount = ChannelRows.count

    /// Memberships with their channel and user, in the column order `StoreCoding.member` reads.
    static let memberSelect = """
        SELECT \(channel("c")), \(user("u")), \(member)
        FROM members m JOIN channels c ON c.id = m.channel_id JOIN users u ON u.id = m.user_id
        """

    /// A membership's own columns: its fields (``MemberSQL/fieldColumns``), then the version and presence.
    static let member = (MemberSQL.fieldColumns + ["updated", "etag", "is_present", "presence_state"] + MetadataColumns.read)
        .map { "m.\($0)" }.joined(separator: ", ")

    /// A message's columns, then what its Chat SDK actions make of it (``MessageColumn/selectList``).
    /// `msg` must alias `messages`.
    static let message = MessageColumn.selectList
}

extension StoreCoding {
    func user<C: CustomData>(_ row: Row, at i: Int) throws -> ChatUser<C> {
        try UserRows.rows(C.self).read(row, at: i, coding: self)
    }

    func channel<C: CustomData>(_ row: Row, at i: Int) throws -> ChatChannel<C> {
        try ChannelRows.rows(C.self).read(row, at: i, coding: self)
    }

    /// Reads `Columns.channel("c")`, `Columns.user("u")`, `Columns.member` in that order.
    func member<C: ChatCustomData>(_ row: Row) throws -> ChatMember<C> {
        let channel: ChatChannel<C.Channel> = try self.channel(row, at: 0)
        let user: ChatUser<C.User> = try self.user(row, at: Columns.channelCount)
        let i = Columns.channelCount + Columns.userCount
        let key = "\(channel.id)/\(user.id)"
        var member = ChatMember<C>(channel: channel, user: user)
        try member.readColumns(row, at: i, coding: self, table: "members", key: key)
        let j = i + MemberSQL.fieldColumns.count
        member.updated = try StoreCoding.timestamp(row[j], table: "members", column: "updated", key: key)
        member.eTag = row[j + 1]
        member.isPresent = row[j + 2]
        member.presenceState = try decode(JSONValue.self, row[j + 3], table: "members", column: "presence_state", key: key)
        member.metadata = try MetadataColumns.metadata(row, at: j + 4, table: "members", key: key)
        return member
    }

    /// Reads a row selected with ``Columns/message``: each stored column at its
    /// ``MessageColumn`` raw value, then the computed ones.
    func message<C: CustomData>(_ row: Row) throws -> ChatMessage<C> {
        typealias Column = MessageColumn
        let id: String = row[Column.id.rawValue]
        let delivery = DeliveryState(rawValue: row[Column.delivery.rawValue] ?? "") ?? .pending
        guard let createdAt = try StoreCoding.timestamp(row[Column.createdAt.rawValue], table: "messages", column: "created_at", key: id)
        else {
            throw StoreError.corruptValue(table: "messages", column: "created_at", key: id, message: "missing")
        }
        do {
            var message = try ChatMessage<C>(
                id: id, text: row[Column.text.rawValue], contentType: row[Column.contentType.rawValue],
                content: try decode(JSONValue.self, row[Column.content.rawValue], table: "messages", column: "content", key: id),
                custom: try decode(C.self, row[Column.custom.rawValue], table: "messages", column: "custom", key: id),
                createdAt: createdAt, timetoken: StoreCoding.timetoken(row[Column.timetoken.rawValue]),
                userId: row[Column.userId.rawValue], channelId: row[Column.channelId.rawValue], delivery: delivery)
            for column in Column.readAfterward { try column.read(row, into: &message, coding: self) }
            message.editedText = row[Column.Computed.editedText.index]
            message.isDeleted = row[Column.Computed.isDeleted.index] ?? false
            message.isFromMutedUser = row[Column.Computed.isFromMutedUser.index] ?? false
            message.hasThread = row[Column.Computed.hasThread.index] ?? false
            return message
        } catch let error as ModelValidationError {
            throw StoreError.corruptValue(table: "messages", column: error.field, key: id, message: error.description)
        }
    }
}
