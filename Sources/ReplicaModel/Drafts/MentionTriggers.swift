import Foundation

/// A word that asks for mention suggestions: `@` (users) or `#` (channels) at the start of the
/// text or after whitespace, followed by letters, digits or `-` (the Chat SDK's pattern
/// `(?<=^|\p{Space})(@[\p{Alpha}\-\d]+)`, with Unicode classes as on iOS and the JVM).
public struct MentionTrigger: Sendable, Hashable, Codable {
    /// What a trigger looks for.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// `@`: users.
        case user
        /// `#`: channels.
        case channel
    }

    /// Where the sigil is, in UTF-16 code units.
    public var offset: Int
    /// The trigger as typed, sigil included (`@ali`): what a ``SuggestedMention`` replaces.
    public var text: String
    /// Users or channels.
    public var kind: Kind

    /// A trigger.
    public init(offset: Int, text: String, kind: Kind) {
        self.offset = offset
        self.text = text
        self.kind = kind
    }

    /// What to search for: the text without its sigil.
    public var searchText: String { String(text.dropFirst()) }

    /// The shortest trigger that is looked up, sigil included: the Chat SDK looks one up only when
    /// it is longer than 3 UTF-16 code units (three characters typed after the sigil).
    public static let minimumLength = 4

    /// Every trigger in `text`, in order, whatever its length.
    public static func all(in text: String) -> [MentionTrigger] {
        var result: [MentionTrigger] = []
        let scalars = Array(text.unicodeScalars)
        var offset = 0
        var index = 0
        var previous: Unicode.Scalar?
        while index < scalars.count {
            let scalar = scalars[index]
            let kind: Kind? = scalar == "@" ? .user : scalar == "#" ? .channel : nil
            if let kind, previous.map({ $0.properties.isWhitespace }) ?? true {
                var end = index + 1
                var units = scalar.utf16.count
                while end < scalars.count, isTriggerCharacter(scalars[end]) {
                    units += scalars[end].utf16.count
                    end += 1
                }
                if end > index + 1 {
                    var word = String.UnicodeScalarView()
                    word.append(contentsOf: scalars[index..<end])
                    result.append(MentionTrigger(offset: offset, text: String(word), kind: kind))
                    offset += units
                    previous = scalars[end - 1]
                    index = end
                    continue
                }
            }
            offset += scalar.utf16.count
            previous = scalar
            index += 1
        }
        return result
    }

    /// `\p{Alpha}`, `\d` or `-`.
    static func isTriggerCharacter(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "-" || scalar.properties.isAlphabetic || scalar.properties.generalCategory == .decimalNumber
    }
}

extension MessageDraft {
    /// The triggers that want suggestions now: long enough (``MentionTrigger/minimumLength``)
    /// and not already the start of a mention of their kind (the Chat SDK's rule).
    public var mentionTriggers: [MentionTrigger] {
        MentionTrigger.all(in: text).filter { trigger in
            guard trigger.text.utf16.count >= MentionTrigger.minimumLength else { return false }
            return !mentions.contains { mention in
                guard mention.offset == trigger.offset else { return false }
                switch (mention.target, trigger.kind) {
                case (.user, .user), (.channel, .channel): return true
                default: return false
                }
            }
        }
    }
}
