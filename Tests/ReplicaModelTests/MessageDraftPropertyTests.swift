import Foundation
import PubNubSimulator
import Testing

@testable import ReplicaModel

// Random edit sequences on a `MessageDraft`: 1,000 seeded sequences of insertText, removeText,
// update(text:), addMention and removeMention, with random offsets (some outside the text, some
// between the two UTF-16 units of an emoji). After every edit, accepted or refused:
//
// 1. every mention still covers exactly the text it was created on (each mention gets a target
//    of its own, `m<N>`, so the text it was created on is known by target);
// 2. the mentions are sorted, do not overlap, are not empty, lie inside the text and do not split
//    a character;
// 3. rendering then parsing gives back the draft's elements, `elements(parsing: render()) ==
//    elements`, checked whenever no plain-text part holds a `[`. Plain text is sent as is, not
//    escaped: the Chat SDK does not escape it either, so a typed "[x](y)" becomes a link on the
//    receiving side, and no parser could tell it from a mention. Link texts and targets are
//    escaped, so `[`, `]`, `(`, `)` and `\` inside a mention are checked.
//
// Besides, the text is always exactly what the edits make it (compared as UTF-16 code units, not
// with String's canonical equivalence); insertText, removeText, addMention and removeMention move
// and drop mentions exactly by the Chat SDK's rules (MessageDraftImpl.insertTextInternal and
// removeTextInternal); a refused edit throws the error its arguments call for and leaves the
// draft unchanged; an update to the same text changes nothing.
//
// A failure names the seed and the edits that led to it.

@Suite("Message drafts: random edit sequences")
struct MessageDraftPropertyTests {
    static let sequencesPerBatch = 125  // × 8 batches = 1,000 sequences

    @Test(
        "after any random sequence of edits, mentions keep their text, stay sorted and apart, and render then parse back to the same elements",
        arguments: 0..<8)
    func randomEditSequences(batch: Int) throws {
        var stats = DraftRunStats()
        for index in 0..<Self.sequencesPerBatch {
            var run = DraftRun(seed: UInt64(batch * Self.sequencesPerBatch + index))
            let steps = 1 + run.random.below(40)
            for _ in 0..<steps { try run.step() }
            stats.add(run.stats)
        }
        // The sequences reach every path, so the properties were not checked vacuously.
        #expect(stats.renderChecks > 100, "\(stats)")
        #expect(stats.mentionsAdded > 0, "\(stats)")
        #expect(stats.mentionsKeptByChangingUpdates > 0, "\(stats)")
        #expect(stats.splitsCharacter > 0, "\(stats)")
        #expect(stats.outOfRange > 0, "\(stats)")
        #expect(stats.mentionOverlaps > 0, "\(stats)")
        #expect(stats.emptyMention > 0, "\(stats)")
    }
}

// MARK: The random runs

// The simulator's seeded `SplitMix64` (so a failing sequence replays from its seed), with the
// helpers below instead of the standard library's `random(in:using:)`, whose algorithm may
// change between toolchains.
extension SplitMix64 {
    /// A number in `0..<bound` (`bound` > 0; the modulo bias does not matter here).
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// True `percent` times in 100.
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
}

/// What random text is made of: letters and spaces mostly, and the troublemakers: an emoji, a
/// flag and a mathematical letter (surrogate pairs), combining marks (they attach to whatever
/// comes before them), precomposed and non-ASCII letters, the characters that rendering and
/// parsing give meaning to, and the mention sigils.
private let textPieces: [String] = [
    "a", "b", "c", "d", "e", "x", "y", "a", "e", "o", " ", " ", " ",
    "é", "ß", "\u{301}", "\u{308}", "👍", "🇵🇱", "𝒳",
    "[", "]", "(", ")", "\\", "@", "#", "-", "1",
]

/// Counts of what the runs did.
private struct DraftRunStats: CustomStringConvertible {
    var renderChecks = 0
    var mentionsAdded = 0
    var mentionsKeptByChangingUpdates = 0
    var splitsCharacter = 0
    var outOfRange = 0
    var mentionOverlaps = 0
    var emptyMention = 0

    mutating func add(_ other: DraftRunStats) {
        renderChecks += other.renderChecks
        mentionsAdded += other.mentionsAdded
        mentionsKeptByChangingUpdates += other.mentionsKeptByChangingUpdates
        splitsCharacter += other.splitsCharacter
        outOfRange += other.outOfRange
        mentionOverlaps += other.mentionOverlaps
        emptyMention += other.emptyMention
    }

    mutating func count(_ error: MessageDraftError) {
        switch error {
        case .splitsCharacter: splitsCharacter += 1
        case .outOfRange: outOfRange += 1
        case .mentionOverlaps: mentionOverlaps += 1
        case .emptyMention: emptyMention += 1
        case .suggestionOutdated, .invalidTarget: break
        }
    }

    var description: String {
        "render checks \(renderChecks), mentions added \(mentionsAdded), kept by changing updates "
            + "\(mentionsKeptByChangingUpdates), refused: splitsCharacter \(splitsCharacter), outOfRange "
            + "\(outOfRange), mentionOverlaps \(mentionOverlaps), emptyMention \(emptyMention)"
    }
}

/// Runs `body`, returning the error it threw, if any.
private func attempt(_ body: () throws(MessageDraftError) -> Void) -> MessageDraftError? {
    do throws(MessageDraftError) {
        try body()
        return nil
    } catch {
        return error
    }
}

/// One random edit sequence, with a model of what the draft must be.
private struct DraftRun {
    let seed: UInt64
    var random: SplitMix64
    var draft = MessageDraft()
    /// The text the edits make, as UTF-16 code units.
    var units: [UInt16] = []
    /// The text each mention was created on, by its target (every mention has a target of its own).
    var created: [MentionTarget: [UInt16]] = [:]
    var mentionCount = 0
    var log: [String] = []
    var stats = DraftRunStats()

    init(seed: UInt64) {
        self.seed = seed
        random = SplitMix64(seed: seed)
    }

    /// The seed and the edits so far, for a failure's message.
    var context: String { "seed \(seed), after:\n" + log.joined(separator: "\n") }

    /// One random edit, then the checks.
    mutating func step() throws {
        if units.count > 64 && random.chance(50) {
            try removeText(large: true)
        } else {
            switch random.below(100) {
            case ..<30: try insertText()
            case ..<50: try removeText(large: false)
            case ..<70: try update()
            case ..<93: try addMention()
            default: try removeMention()
            }
        }
        try checkProperties()
    }

    // MARK: Random input

    /// 0 to `maxPieces` random pieces.
    mutating func randomText(maxPieces: Int) -> String {
        var text = ""
        for _ in 0..<random.below(maxPieces + 1) { text += textPieces[random.below(textPieces.count)] }
        return text
    }

    /// An offset in the text, any code unit boundary (so sometimes inside a surrogate pair), and
    /// now and then one outside it.
    mutating func randomOffset() -> Int {
        if random.chance(3) { return random.chance(50) ? -1 - random.below(3) : units.count + 1 + random.below(3) }
        return random.below(units.count + 1)
    }

    /// Whether `boundary` falls between the two units of a surrogate pair.
    func splits(_ boundary: Int) -> Bool {
        boundary > 0 && boundary < units.count && UTF16.isLeadSurrogate(units[boundary - 1])
            && UTF16.isTrailSurrogate(units[boundary])
    }

    /// The refusal a range calls for: outside the text, or a boundary inside a character.
    func rangeError(offset: Int, length: Int) -> MessageDraftError? {
        if offset < 0 || length < 0 || offset > units.count || length > units.count - offset {
            return .outOfRange(offset: offset, length: length, textLength: units.count)
        }
        for boundary in [offset, offset + length] where splits(boundary) { return .splitsCharacter(offset: boundary) }
        return nil
    }

    // MARK: The edits

    mutating func insertText() throws {
        let offset = randomOffset()
        let text = randomText(maxPieces: 5)
        log.append("insertText(offset: \(offset), text: \(text.debugDescription))")
        let before = draft
        let expectedError = rangeError(offset: offset, length: 0)
        let error = attempt { () throws(MessageDraftError) in try draft.insertText(offset: offset, text: text) }
        try #require(error == expectedError, "\(context)")
        if let error {
            stats.count(error)
            try #require(draft == before, "a refused insertText changed the draft; \(context)")
            return
        }
        let inserted = Array(text.utf16)
        units.insert(contentsOf: inserted, at: offset)
        // insertTextInternal: strictly inside a mention removes it; at or before its start shifts it.
        let expected = before.mentions.compactMap { mention -> DraftMention? in
            if offset > mention.offset && offset < mention.end { return nil }
            var moved = mention
            if offset <= mention.offset { moved.offset += inserted.count }
            return moved
        }
        try #require(draft.mentions == expected, "\(context)")
    }

    mutating func removeText(large: Bool) throws {
        let offset = randomOffset()
        let room = max(0, units.count - offset)
        let length: Int
        if large {
            length = random.below(room + 1)
        } else {
            switch random.below(10) {
            case 0: length = 0
            case 1: length = room + 1  // past the end
            case 2: length = room  // to the end
            default: length = random.below(min(room, 6) + 1)
            }
        }
        log.append("removeText(offset: \(offset), length: \(length))")
        let before = draft
        let expectedError = rangeError(offset: offset, length: length)
        let error = attempt { () throws(MessageDraftError) in try draft.removeText(offset: offset, length: length) }
        try #require(error == expectedError, "\(context)")
        if let error {
            stats.count(error)
            try #require(draft == before, "a refused removeText changed the draft; \(context)")
            return
        }
        units.removeSubrange(offset..<(offset + length))
        // removeTextInternal: a mention the range touches (offset <= end && offset + length > start)
        // goes; one after the range moves left by what was removed before it.
        let expected = before.mentions.compactMap { mention -> DraftMention? in
            if offset <= mention.end && offset + length > mention.offset { return nil }
            var moved = mention
            if offset < mention.offset { moved.offset -= min(length, mention.offset - offset) }
            return moved
        }
        try #require(draft.mentions == expected, "\(context)")
    }

    mutating func update() throws {
        let text: String
        let roll = random.below(100)
        if roll < 10 {
            text = draft.text  // the same text
        } else if roll < 25 {
            text = randomText(maxPieces: 12)  // a new text
        } else {
            // The text with a few splices, at Unicode scalar boundaries, as typing or pasting would make.
            var scalars = Array(draft.text.unicodeScalars)
            for _ in 0..<(1 + random.below(3)) {
                let at = random.below(scalars.count + 1)
                let removed = random.below(min(3, scalars.count - at) + 1)
                scalars.replaceSubrange(at..<(at + removed), with: randomText(maxPieces: 3).unicodeScalars)
            }
            var view = String.UnicodeScalarView()
            view.append(contentsOf: scalars)
            text = String(view)
        }
        log.append("update(text: \(text.debugDescription))")
        let before = draft
        draft.update(text: text)
        let target = Array(text.utf16)
        if target == units {
            try #require(draft == before, "an update to the same text changed the draft; \(context)")
        } else {
            stats.mentionsKeptByChangingUpdates += draft.mentions.count
        }
        units = target
        // Which mentions survive depends on the diff; that they keep their text is checked by checkProperties.
    }

    mutating func addMention() throws {
        let offset = randomOffset()
        let room = max(0, units.count - offset)
        let length: Int
        switch random.below(10) {
        case 0: length = 0
        case 1: length = room + 1  // past the end
        default: length = 1 + random.below(max(1, min(8, room)))
        }
        mentionCount += 1
        let n = mentionCount
        let target: MentionTarget =
            switch n % 3 {
            case 0: .user("m\(n)")
            case 1: .channel("m\(n)")
            default: .url(#"https://example.com/m\#(n)?q=(a)\b]"#)  // ), \ and ] to escape
            }
        log.append("addMention(offset: \(offset), length: \(length), target: \(target))")
        let before = draft
        let expectedError: MessageDraftError? =
            if length <= 0 {
                .emptyMention
            } else if let error = rangeError(offset: offset, length: length) {
                error
            } else if let other = before.mentions.first(where: { !(offset >= $0.end || offset + length <= $0.offset) }) {
                .mentionOverlaps(other)
            } else {
                nil
            }
        let error = attempt { () throws(MessageDraftError) in try draft.addMention(offset: offset, length: length, target: target) }
        try #require(error == expectedError, "\(context)")
        if let error {
            stats.count(error)
            try #require(draft == before, "a refused addMention changed the draft; \(context)")
            return
        }
        stats.mentionsAdded += 1
        created[target] = Array(units[offset..<(offset + length)])
        let expected = (before.mentions + [DraftMention(offset: offset, length: length, target: target)])
            .sorted { $0.offset < $1.offset }
        try #require(draft.mentions == expected, "\(context)")
    }

    mutating func removeMention() throws {
        let offset: Int
        if !draft.mentions.isEmpty && random.chance(60) {
            // At a mention's start, inside it, or at its end (which is not in it).
            let mention = draft.mentions[random.below(draft.mentions.count)]
            offset = mention.offset + random.below(mention.length + 1)
        } else {
            offset = randomOffset()
        }
        log.append("removeMention(offset: \(offset))")
        let before = draft
        draft.removeMention(offset: offset)
        let expected = before.mentions.filter { !($0.offset <= offset && offset < $0.end) }
        try #require(draft.mentions == expected, "\(context)")
        try #require(draft.text == before.text, "\(context)")
    }

    // MARK: The properties

    mutating func checkProperties() throws {
        try #require(Array(draft.text.utf16) == units, "the text is not what the edits make; \(context)")
        try #require(draft.length == units.count, "\(context)")

        var previousEnd = 0
        for mention in draft.mentions {
            // (2) sorted, apart, not empty, inside the text, not splitting a character.
            try #require(mention.length > 0, "empty mention \(mention); \(context)")
            try #require(mention.offset >= previousEnd, "mentions unsorted or overlapping at \(mention); \(context)")
            try #require(mention.end <= units.count, "mention \(mention) past the text; \(context)")
            try #require(!splits(mention.offset) && !splits(mention.end), "mention \(mention) splits a character; \(context)")
            // (1) the text it was created on.
            let createdOn = try #require(created[mention.target], "mention \(mention) was never added; \(context)")
            try #require(
                Array(units[mention.offset..<mention.end]) == createdOn,
                "mention \(mention) no longer covers \(String(decoding: createdOn, as: UTF16.self).debugDescription); \(context)")
            previousEnd = mention.end
        }

        let elements = draft.elements
        try #require(Array(elements.map(\.text).joined().utf16) == units, "the elements do not spell the text; \(context)")

        // (3) render then parse, when no plain text holds a "[" (looked for by scalar: "[" followed
        // by a combining mark is one Character but still opens a link for the parser).
        let plainOpensLink = elements.contains { element in
            if case .plainText(let text) = element { return text.unicodeScalars.contains("[" as Unicode.Scalar) }
            return false
        }
        if !plainOpensLink {
            let rendered = draft.render()
            try #require(
                MessageDraft.elements(parsing: rendered) == elements,
                "rendered \(rendered.debugDescription) parses to other elements; \(context)")
            stats.renderChecks += 1
        }
    }
}
