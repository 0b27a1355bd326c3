import Foundation

/// The PubNub Chat SDK's wire shapes that pnreplicate writes and reads, in one place: the text
/// message body, the quote in `meta`, the mention event and the thread channel's name.
///
/// Sources: the KMP Chat SDK's `BaseChannel.sendTextInternal` and `emitUserMention`,
/// `EventContent.TextMessageContent` and `EventContent.Mention`, `Constants.kt` (`pubnub/kmp-chat`,
/// `pubnub-chat-impl/src/commonMain`; `docs/chat.md`). The Chat SDK decodes a body by
/// the fields it knows and ignores the rest, so a message pnreplicate sends carries both its own
/// fields (`id`, `createdAt`, …) and the Chat SDK's (`type`, `text`, `files`): either reader
/// understands it.
///
/// ```swift
/// let body = ChatSDKFormat.textBody(["id": "m1"], text: draft.render())
/// // {"files":[],"id":"m1","text":"Hi [Alice](pn-user://alice)","type":"text"}
/// ```
public enum ChatSDKFormat {
    /// The content type pnreplicate gives a message in the Chat SDK's text format: its text is
    /// the payload's `text` (mentions, references and links rendered in it).
    public static let textContentType = "pubnub/chat-text"
    /// The `type` of a text message body.
    public static let textType = "text"
    /// The `type` of a mention event.
    public static let mentionType = "mention"
    /// The message action type the Chat SDK adds to a thread's root message, its value the
    /// thread channel's id.
    public static let threadRootType = "threadRootId"
    /// The message action type of an edit; its value is the whole new text.
    public static let editedType = "edited"
    /// The message action type of a soft delete.
    public static let deletedType = "deleted"
    /// The value of a soft delete's action.
    public static let deletedValue = "deleted"
    /// The message action type of an emoji reaction (the Chat SDK's default; configurable there).
    public static let reactionType = "reactions"
    /// The `type` of a read receipt signal.
    public static let receiptType = "receipt"
    /// The membership custom data key of the read position (a timetoken as a string).
    public static let lastReadKey = "lastReadMessageTimetoken"
    /// The membership status a join writes when the app gives none. The Chat SDK 1.0's `join`
    /// (`pubnub/kmp-chat`, `BaseChannel.join`) writes an empty status instead; to the Chat SDK
    /// both read as "joined, not invited" (it gives meaning only to ``pendingStatus``). pnreplicate
    /// writes the word so that the membership says what it is. Change it here to write `""`.
    public static let joinedStatus = "joined"
    /// The membership status of an invitation not yet accepted (the Chat SDK's
    /// `MEMBERSHIP_PENDING_STATUS`); a join replaces it.
    public static let pendingStatus = "pending"
    /// The channel custom data key of the pinned message's timetoken (a string).
    public static let pinnedTimetokenKey = "pinnedMessageTimetoken"
    /// The channel custom data key of the pinned message's channel.
    public static let pinnedChannelKey = "pinnedMessageChannelID"
    /// The publish `meta` key that holds a quote.
    public static let quotedMessageKey = "quotedMessage"
    /// The prefix of a thread channel's id: `PUBNUB_INTERNAL_THREAD_<channel>_<root timetoken>`.
    public static let threadChannelPrefix = "PUBNUB_INTERNAL_THREAD_"

    /// `payload` with the Chat SDK's text fields added: `type` `"text"`, `text`, and `files`
    /// (always present: `files` in the Chat SDK's form, ``ChatFile/chatSDKValue``; a send that
    /// uploads files has them filled in once uploaded: `docs/files.md`).
    public static func textBody(_ payload: [String: JSONValue], text: String, files: [ChatFile] = []) -> JSONValue {
        var body = payload
        body["type"] = .string(textType)
        body["text"] = .string(text)
        body["files"] = .array(files.map(\.chatSDKValue))
        return .object(body)
    }

    /// The text of a body in the Chat SDK's text format (`{"type":"text","text":…}`), else nil.
    public static func text(ofBody body: JSONValue) -> String? {
        guard case .object(let object) = body, object["type"] == .string(textType) else { return nil }
        return object["text"]?.stringValue
    }

    /// The quote a publish `meta` holds (`quotedMessage`), or nil when it has none or it does not
    /// read as one (a timetoken given as a string or a number).
    public static func quotedMessage(inMeta meta: JSONValue?) -> QuotedMessage? {
        guard case .object(let quote)? = meta?.objectValue?[quotedMessageKey],
              let text = quote["text"]?.stringValue, let userId = quote["userId"]?.stringValue
        else { return nil }
        let timetoken: Timetoken?
        switch quote["timetoken"] {
        case .string(let raw)?: timetoken = UInt64(raw).map(Timetoken.init(rawValue:))
        case .int(let number)? where number >= 0: timetoken = Timetoken(rawValue: UInt64(number))
        default: timetoken = nil
        }
        return timetoken.map { QuotedMessage(timetoken: $0, text: text, userId: userId) }
    }

    /// The mention event published on the mentioned user's channel (named after the user's id)
    /// after the message: `{"type":"mention","messageTimetoken":"<tt>","channel":"<channel>"}`, with
    /// `parentChannel` when the message is in a thread. The timetoken is a string, as the Chat SDK
    /// writes it.
    public static func mentionEvent(messageTimetoken: Timetoken, channel: String, parentChannel: String?) -> JSONValue {
        var body: [String: JSONValue] = [
            "type": .string(mentionType),
            "messageTimetoken": .string(String(messageTimetoken.rawValue)),
            "channel": .string(channel),
        ]
        if let parentChannel { body["parentChannel"] = .string(parentChannel) }
        return .object(body)
    }

    /// The read receipt signal: `{"type":"receipt","messageTimetoken":"<tt>"}`, sent on the
    /// channel after the read position is written (57 bytes, under the 64-byte signal limit).
    public static func receiptSignal(messageTimetoken: Timetoken) -> JSONValue {
        ["type": .string(receiptType), "messageTimetoken": .string(String(messageTimetoken.rawValue))]
    }

    /// The id of the thread channel under the message `root` of `channel`, as the Chat SDK names it.
    public static func threadChannel(of channel: String, root: Timetoken) -> String {
        "\(threadChannelPrefix)\(channel)_\(root.rawValue)"
    }

    /// The prefix of a direct conversation's channel id.
    public static let directChannelPrefix = "direct."

    /// The id the Chat SDK gives the direct conversation of two users (`createDirectConversation`
    /// without an id): `direct.` + ``cyrb53a(_:)`` of the two ids sorted as Kotlin sorts strings
    /// (by UTF-16 code unit, which Swift's `<` on `String` does not: it orders by Unicode scalar,
    /// so an astral character and one in U+E000–U+FFFF swap) and joined with `&`. Either user
    /// computes the same id.
    ///
    /// ```swift
    /// ChatSDKFormat.directChannelId("bob", "alice")   // "direct.6290047293405539"
    /// ```
    public static func directChannelId(_ first: String, _ second: String) -> String {
        let sorted = second.utf16.lexicographicallyPrecedes(first.utf16) ? [second, first] : [first, second]
        return directChannelPrefix + String(cyrb53a(sorted[0] + "&" + sorted[1]))
    }

    /// The Chat SDK's 53-bit string hash (cyrb53a, seed 0, over the UTF-16 code units as Kotlin's
    /// `Char.code` reads them; `pubnub/kmp-chat`, `internal/utils/hashes.kt`).
    ///
    /// ```swift
    /// ChatSDKFormat.cyrb53a("mo3k2 ok")   // 5914255141804885
    /// ```
    public static func cyrb53a(_ text: String) -> UInt64 {
        var h1: UInt32 = 0xdead_beef, h2: UInt32 = 0x41c6_ce57
        for unit in text.utf16 {
            h1 = (h1 ^ UInt32(unit)) &* 0x85eb_ca77
            h2 = (h2 ^ UInt32(unit)) &* 0xc2b2_ae3d
        }
        h1 ^= (h1 ^ (h2 >> 15)) &* 0x735a_2d97
        h2 ^= (h2 ^ (h1 >> 15)) &* 0xcaf6_49a9
        h1 ^= h2 >> 16
        h2 ^= h1 >> 16
        let low = UInt64(h1) >> 11
        return 2_097_152 * UInt64(h2) + low
    }

    /// The parent channel of a thread channel (`PUBNUB_INTERNAL_THREAD_<channel>_<root timetoken>`),
    /// or nil when `id` is not one.
    public static func threadParent(ofChannel id: String) -> String? {
        guard id.hasPrefix(threadChannelPrefix) else { return nil }
        let rest = id.dropFirst(threadChannelPrefix.count)
        guard let underscore = rest.lastIndex(of: "_"), underscore > rest.startIndex,
              UInt64(rest[rest.index(after: underscore)...]) != nil
        else { return nil }
        return String(rest[..<underscore])
    }
}
