import Foundation

/// What a mention (a link in a draft or a message) points at: a user, a channel or a URL. The
/// Chat SDK's `MentionTarget`.
public enum MentionTarget: Sendable, Hashable, Codable, CustomStringConvertible {
    /// A user, rendered `pn-user://<id>`.
    case user(String)
    /// A channel, rendered `pn-channel://<id>`.
    case channel(String)
    /// Any other link, rendered as is (not validated, as in the Chat SDK).
    case url(String)

    /// The link target as rendered: `pn-user://id`, `pn-channel://id` or the URL.
    public var description: String {
        switch self {
        case .user(let id): MessageDraft.userScheme + id
        case .channel(let id): MessageDraft.channelScheme + id
        case .url(let url): url
        }
    }

    /// The target a rendered link names: `pn-user://` and `pn-channel://` prefixes, else a URL.
    public init(link: String) {
        // Compared scalar by scalar: an id that starts with a combining mark still follows the scheme.
        func rest(after scheme: String) -> String? {
            let scalars = Array(link.unicodeScalars), prefix = Array(scheme.unicodeScalars)
            guard scalars.starts(with: prefix) else { return nil }
            var view = String.UnicodeScalarView()
            view.append(contentsOf: scalars[prefix.count...])
            return String(view)
        }
        if let id = rest(after: MessageDraft.userScheme) {
            self = .user(id)
        } else if let id = rest(after: MessageDraft.channelScheme) {
            self = .channel(id)
        } else {
            self = .url(link)
        }
    }
}

/// A part of a message's text: plain text, or a link (a user mention, a channel reference or a
/// URL) with the text it is shown as. The Chat SDK's `MessageElement`.
public enum MessageElement: Sendable, Hashable, Codable {
    /// Text shown as is.
    case plainText(String)
    /// `text` linked to `target`.
    case link(text: String, target: MentionTarget)

    /// The text shown.
    public var text: String {
        switch self {
        case .plainText(let text), .link(let text, _): text
        }
    }
}

/// A mention in a draft: `length` UTF-16 code units from `offset`, linked to `target`.
public struct DraftMention: Sendable, Hashable, Codable {
    /// Where it starts, in UTF-16 code units.
    public var offset: Int
    /// How long it is, in UTF-16 code units.
    public var length: Int
    /// What it links to.
    public var target: MentionTarget

    /// A mention.
    public init(offset: Int, length: Int, target: MentionTarget) {
        self.offset = offset
        self.length = length
        self.target = target
    }

    /// One past its last code unit.
    public var end: Int { offset + length }
}

/// A message a draft quotes, as the Chat SDK sends it in the publish `meta` (`quotedMessage`).
public struct QuotedMessage: Sendable, Hashable, Codable {
    /// The quoted message's timetoken (sent as a string).
    public var timetoken: Timetoken
    /// The quoted message's text.
    public var text: String
    /// Who wrote it.
    public var userId: String

    /// A quote.
    public init(timetoken: Timetoken, text: String, userId: String) {
        self.timetoken = timetoken
        self.text = text
        self.userId = userId
    }

    /// `{"timetoken":"<tt>","text":…,"userId":…}`.
    public var meta: JSONValue {
        ["timetoken": .string(String(timetoken.rawValue)), "text": .string(text), "userId": .string(userId)]
    }
}

/// A mention the suggestions offer for a trigger (`@ali`): replace `replaceFrom` at `offset`
/// with `replaceWith` linked to `target`. The Chat SDK's `SuggestedMention`.
public struct SuggestedMention: Sendable, Hashable, Codable {
    /// Where the trigger starts (UTF-16 code units).
    public var offset: Int
    /// The trigger as typed, sigil included (`@ali`).
    public var replaceFrom: String
    /// What to show instead: the user's or channel's name, else its id.
    public var replaceWith: String
    /// What the mention links to.
    public var target: MentionTarget

    /// A suggestion.
    public init(offset: Int, replaceFrom: String, replaceWith: String, target: MentionTarget) {
        self.offset = offset
        self.replaceFrom = replaceFrom
        self.replaceWith = replaceWith
        self.target = target
    }
}

/// Why a draft edit was refused. The draft is unchanged.
public enum MessageDraftError: Error, Sendable, Hashable, CustomStringConvertible {
    /// An offset or range outside the text (UTF-16 code units).
    case outOfRange(offset: Int, length: Int, textLength: Int)
    /// An offset that falls between the two UTF-16 code units of one character (an emoji, say).
    case splitsCharacter(offset: Int)
    /// A new mention would overlap an existing one.
    case mentionOverlaps(DraftMention)
    /// A mention must cover at least one code unit.
    case emptyMention
    /// A suggested mention no longer matches the text at its offset (the user typed on).
    case suggestionOutdated(SuggestedMention)
    /// A mentioned user or referenced channel id the model refuses (`""`, `.`, `..`, one with a
    /// `,` or `/`, ...): its mention event would go to the wrong channel or endpoint.
    case invalidTarget(MentionTarget, reason: ModelValidationError)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .outOfRange(let offset, let length, let textLength):
            // Described without adding: offset + length may not fit an Int.
            "range of \(length) from \(offset) is outside the text (\(textLength) UTF-16 code units)"
        case .splitsCharacter(let offset): "offset \(offset) falls inside a character (between its UTF-16 code units)"
        case .mentionOverlaps(let other): "the mention would overlap the mention at \(other.offset)..<\(other.end)"
        case .emptyMention: "a mention must cover at least one character"
        case .suggestionOutdated(let suggestion): "the text at \(suggestion.offset) is no longer \"\(suggestion.replaceFrom)\""
        case .invalidTarget(let target, let reason): "cannot mention \(target): \(reason)"
        }
    }
}

/// A message being written: text with mentions of users and channels and links, and a quoted
/// message, with the PubNub Chat SDK's semantics (`MessageDraft`), as a value. See `docs/drafts.md`.
///
/// Offsets and lengths count **UTF-16 code units**, as the Chat SDK's Kotlin strings do: "é" is 1,
/// "👍" is 2, "e" + a combining acute accent is 2. An offset between the two units of one
/// character is refused (``MessageDraftError/splitsCharacter(offset:)``).
///
/// ```swift
/// var draft = MessageDraft()
/// try draft.insertText(offset: 0, text: "Hi Alice!")
/// try draft.addMention(offset: 3, length: 5, target: .user("alice"))
/// draft.render()                 // "Hi [Alice](pn-user://alice)!"
/// draft.update(text: "Hi Alice, hi!")   // the mention survives: its text was not touched
/// ```
///
/// The edit rules, for a mention over `start..<end`:
/// - inserting strictly inside it removes it; at or before `start` shifts it; at `end` or after
///   leaves it (typing after a mention does not extend it);
/// - removing a range that touches it (`offset <= end && offset + length > start`) removes it (so
///   deleting the character right after a mention removes the mention); a removal before it shifts it;
/// - ``update(text:)`` diffs the old text to the new one (diff-match-patch with semantic cleanup,
///   `TextDiff`) and replays the edits, so every mention whose text was not touched survives.
public struct MessageDraft: Sendable, Hashable, Codable {
    /// `pn-user://`.
    public static let userScheme = "pn-user://"
    /// `pn-channel://`.
    public static let channelScheme = "pn-channel://"

    /// The text, as UTF-16 code units (the unit of every offset).
    private var units: [UInt16]
    /// The mentions, sorted by offset, never overlapping.
    public private(set) var mentions: [DraftMention]
    /// The quoted message, if any.
    public var quotedMessage: QuotedMessage?
    /// The files attached (the Chat SDK's `MessageDraft.files`): sent with the text, in the Chat SDK's shape.
    public var files: [DraftFile] = []

    /// An empty draft.
    public init() {
        units = []
        mentions = []
    }

    /// A draft of `text` with `mentions` (checked: in range, not splitting a character, not
    /// overlapping) and a quote.
    public init(text: String, mentions: [DraftMention] = [], quotedMessage: QuotedMessage? = nil) throws(MessageDraftError) {
        units = Array(text.utf16)
        self.mentions = []
        self.quotedMessage = quotedMessage
        for mention in mentions { try addMention(offset: mention.offset, length: mention.length, target: mention.target) }
    }

    /// The text (plain: mentions show as their text).
    public var text: String { String(decoding: units, as: UTF16.self) }

    /// The text's length in UTF-16 code units.
    public var length: Int { units.count }

    /// Whether there is no text.
    public var isEmpty: Bool { units.isEmpty }

    // MARK: Editing

    /// Inserts `text` at `offset` (UTF-16 code units).
    public mutating func insertText(offset: Int, text: String) throws(MessageDraftError) {
        try check(offset: offset, length: 0)
        insert(Array(text.utf16), at: offset)
    }

    /// Removes `length` code units from `offset`.
    public mutating func removeText(offset: Int, length: Int) throws(MessageDraftError) {
        try check(offset: offset, length: length)
        remove(offset: offset, length: length)
    }

    /// Links `length` code units from `offset` to `target`. Refused when it would overlap
    /// another mention, is empty, or falls outside the text.
    public mutating func addMention(offset: Int, length: Int, target: MentionTarget) throws(MessageDraftError) {
        guard length > 0 else { throw .emptyMention }
        try check(offset: offset, length: length)
        try Self.validate(target)
        let mention = DraftMention(offset: offset, length: length, target: target)
        if let other = mentions.first(where: { !(mention.offset >= $0.end || mention.end <= $0.offset) }) {
            throw .mentionOverlaps(other)
        }
        mentions.append(mention)
        mentions.sort { $0.offset < $1.offset }
    }

    /// Removes the mention that contains `offset` (its text stays, as plain text).
    public mutating func removeMention(offset: Int) {
        mentions.removeAll { $0.offset <= offset && offset < $0.end }
    }

    /// Replaces `suggestion.replaceFrom` at its offset with `text` (no sigil) linked to the
    /// suggestion's target. Refused when the text there is no longer `replaceFrom`.
    public mutating func insertSuggestedMention(_ suggestion: SuggestedMention, text: String) throws(MessageDraftError) {
        let from = Array(suggestion.replaceFrom.utf16)
        guard suggestion.offset >= 0, suggestion.offset + from.count <= units.count,
              Array(units[suggestion.offset..<(suggestion.offset + from.count)]) == from
        else { throw .suggestionOutdated(suggestion) }
        try check(offset: suggestion.offset, length: from.count)
        let inserted = Array(text.utf16)
        var copy = self
        copy.remove(offset: suggestion.offset, length: from.count)
        copy.insert(inserted, at: suggestion.offset)
        try copy.addMention(offset: suggestion.offset, length: inserted.count, target: suggestion.target)
        self = copy
    }

    /// Makes the text `text`, keeping every mention whose text the change did not touch: the
    /// old text is diffed to the new one (`TextDiff.semanticDiff(from:to:halfMatch:)`) and each deletion
    /// and insertion is replayed left to right through the edit rules. Call it with the whole
    /// text field's content after each change when the UI gives no finer edits.
    ///
    /// The diff is bounded: past ``updateDiffBudget`` (the product of the changed middles'
    /// lengths, once the common prefix and suffix are set aside) the middle is replaced whole
    /// instead, so a paste over a long draft costs a copy, not minutes of diffing. Mentions in the
    /// common prefix and suffix are kept either way.
    public mutating func update(text: String) {
        let target = Array(text.utf16)
        let (prefix, suffix) = Self.commonEnds(units, target)
        let oldMiddle = units.count - prefix - suffix, newMiddle = target.count - prefix - suffix
        let (cost, overflow) = oldMiddle.multipliedReportingOverflow(by: newMiddle)
        if overflow || cost > Self.updateDiffBudget {
            remove(offset: prefix, length: oldMiddle)
            insert(Array(target[prefix..<(prefix + newMiddle)]), at: prefix)
            return
        }
        var cursor = 0
        for edit in TextDiff.semanticDiff(from: units, to: target) {
            switch edit.operation {
            case .equal: cursor += edit.text.count
            case .delete: remove(offset: cursor, length: edit.text.count)
            case .insert:
                insert(edit.text, at: cursor)
                cursor += edit.text.count
            }
        }
        // The replay rebuilds `target` exactly; this only guards against a diff that did not.
        if units != target {
            units = target
            mentions.removeAll { $0.end > units.count }
        }
    }

    /// The largest diff ``update(text:)`` runs: the product of the old and new changed middles'
    /// lengths (UTF-16 code units). 4,000,000 (two middles of 2,000) diffs in milliseconds.
    public static let updateDiffBudget = 4_000_000

    /// The lengths of the common prefix and of the common suffix (not overlapping the prefix).
    static func commonEnds(_ a: [UInt16], _ b: [UInt16]) -> (prefix: Int, suffix: Int) {
        let limit = min(a.count, b.count)
        var prefix = 0
        while prefix < limit && a[prefix] == b[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < limit - prefix && a[a.count - 1 - suffix] == b[b.count - 1 - suffix] { suffix += 1 }
        return (prefix, suffix)
    }

    // MARK: Elements and the wire form

    /// The text as elements: plain text between the mentions, each mention a link.
    public var elements: [MessageElement] {
        var result: [MessageElement] = []
        var consumed = 0
        for mention in mentions {
            if mention.offset > consumed { result.append(.plainText(Self.string(units[consumed..<mention.offset]))) }
            result.append(.link(text: Self.string(units[mention.offset..<mention.end]), target: mention.target))
            consumed = mention.end
        }
        if consumed < units.count { result.append(.plainText(Self.string(units[consumed...]))) }
        return result
    }

    /// The text as sent: plain text as is, each link `[text](target)` with `\` and `]` escaped in
    /// the text and `\` and `)` in the target (the Chat SDK's rendering).
    public func render() -> String { Self.render(elements) }

    /// Renders elements as the Chat SDK sends them.
    public static func render(_ elements: [MessageElement]) -> String {
        var text = ""
        for element in elements {
            switch element {
            case .plainText(let plain): text += plain
            case .link(let shown, let target):
                text += "[" + escapeLinkText(shown) + "](" + escapeLinkTarget(target.description) + ")"
            }
        }
        return text
    }

    /// The elements of a received message's text: every `[text](target)` is a link (with the
    /// escapes undone), the rest plain text. The reverse of ``render(_:)``; read scalar by scalar,
    /// so a `]` followed by a combining mark still closes a link, as in the Chat SDK's pattern.
    public static func elements(parsing text: String) -> [MessageElement] {
        let scalars = Array(text.unicodeScalars)
        var result: [MessageElement] = []
        var plain = String.UnicodeScalarView()
        var index = 0
        while index < scalars.count {
            if scalars[index] == "[", let (shown, target, next) = link(in: scalars, at: index) {
                if !plain.isEmpty { result.append(.plainText(String(plain))) }
                plain = String.UnicodeScalarView()
                result.append(.link(text: shown, target: MentionTarget(link: target)))
                index = next
            } else {
                plain.append(scalars[index])
                index += 1
            }
        }
        if !plain.isEmpty { result.append(.plainText(String(plain))) }
        return result
    }

    /// A link starting at `start` (a `[`): its unescaped text and target, and where it ends.
    /// The text runs to the first `]` not escaped by `\`, which must be followed by `(`; the
    /// target to the first `)` not escaped. Either may be empty, as the Chat SDK's pattern allows.
    private static func link(in scalars: [Unicode.Scalar], at start: Int) -> (String, String, Int)? {
        func scan(from index: Int, until close: Unicode.Scalar) -> (String, Int)? {
            var value = String.UnicodeScalarView()
            var i = index
            while i < scalars.count {
                let c = scalars[i]
                if c == "\\", i + 1 < scalars.count, scalars[i + 1] == "\\" || scalars[i + 1] == close {
                    value.append(scalars[i + 1])
                    i += 2
                    continue
                }
                if c == close { return (String(value), i + 1) }
                value.append(c)
                i += 1
            }
            return nil
        }
        guard let (shown, afterText) = scan(from: start + 1, until: "]"),
              afterText < scalars.count, scalars[afterText] == "(",
              let (target, end) = scan(from: afterText + 1, until: ")")
        else { return nil }
        return (shown, target, end)
    }

    /// `\` → `\\` and `]` → `\]`, scalar by scalar (a `]` followed by a combining mark is one
    /// `Character` but still closes a link).
    static func escapeLinkText(_ text: String) -> String { escape(text, closing: "]") }

    /// `\` → `\\` and `)` → `\)`, scalar by scalar.
    static func escapeLinkTarget(_ text: String) -> String { escape(text, closing: ")") }

    private static func escape(_ text: String, closing: Unicode.Scalar) -> String {
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar == "\\" || scalar == closing { result.append("\\") }
            result.append(scalar)
        }
        return String(result)
    }

    // MARK: The edit rules

    /// Refuses a user or channel id that is no valid identifier (URLs are not validated, as in
    /// the Chat SDK).
    static func validate(_ target: MentionTarget) throws(MessageDraftError) {
        do {
            switch target {
            case .user(let id): try Validation.validateIdentifier(id, field: "mention.user")
            case .channel(let id): try Validation.validateIdentifier(id, field: "mention.channel")
            case .url: break
            }
        } catch {
            throw .invalidTarget(target, reason: error)
        }
    }

    private func check(offset: Int, length: Int) throws(MessageDraftError) {
        guard offset >= 0, length >= 0, offset <= units.count, length <= units.count - offset else {
            throw .outOfRange(offset: offset, length: length, textLength: units.count)
        }
        for boundary in [offset, offset + length] where boundary > 0 && boundary < units.count {
            if UTF16.isLeadSurrogate(units[boundary - 1]) && UTF16.isTrailSurrogate(units[boundary]) {
                throw .splitsCharacter(offset: boundary)
            }
        }
    }

    /// Inserts code units: a mention containing the offset strictly inside is removed, one at or
    /// after the offset shifts, one before it stays.
    private mutating func insert(_ inserted: [UInt16], at offset: Int) {
        units.insert(contentsOf: inserted, at: offset)
        mentions = mentions.compactMap { mention in
            if offset > mention.offset && offset < mention.end { return nil }
            var moved = mention
            if offset <= mention.offset { moved.offset += inserted.count }
            return moved
        }
    }

    /// Removes code units: a mention the range touches (`offset <= end && offset + length >
    /// start`) is removed; one after the range shifts left.
    private mutating func remove(offset: Int, length: Int) {
        units.removeSubrange(offset..<(offset + length))
        mentions = mentions.compactMap { mention in
            if offset <= mention.end && offset + length > mention.offset { return nil }
            var moved = mention
            if offset < mention.offset { moved.offset -= min(length, mention.offset - offset) }
            return moved
        }
    }

    private static func string(_ slice: ArraySlice<UInt16>) -> String { String(decoding: slice, as: UTF16.self) }

    // MARK: Codable: the text as a string

    enum CodingKeys: String, CodingKey { case text, mentions, quotedMessage, files }

    /// Decodes `{text, mentions, quotedMessage}`, checking the mentions as ``init(text:mentions:quotedMessage:)`` does.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let text = try container.decode(String.self, forKey: .text)
        let mentions = try container.decodeIfPresent([DraftMention].self, forKey: .mentions) ?? []
        let quote = try container.decodeIfPresent(QuotedMessage.self, forKey: .quotedMessage)
        do {
            try self.init(text: text, mentions: mentions, quotedMessage: quote)
        } catch {
            throw DecodingError.dataCorruptedError(forKey: .mentions, in: container, debugDescription: error.description)
        }
        files = try container.decodeIfPresent([DraftFile].self, forKey: .files) ?? []
    }

    /// Encodes `{text, mentions, quotedMessage, files}` (`files` only when there are some).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(text, forKey: .text)
        try container.encode(mentions, forKey: .mentions)
        try container.encodeIfPresent(quotedMessage, forKey: .quotedMessage)
        if !files.isEmpty { try container.encode(files, forKey: .files) }
    }
}
