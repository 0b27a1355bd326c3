import Foundation

/// The differences between two texts, computed exactly as the PubNub Chat SDK computes them: a
/// port of the diff half of Neil Fraser's diff-match-patch ("DMP", Apache 2.0,
/// github.com/google/diff-match-patch), following the Kotlin translation that the Chat SDK bundles
/// (`pubnub-3p-diff-match-patch`, itself a translation of DMP's Java).
///
/// ## What a diff is
///
/// A diff is a list of ``Edit``s that turns the old text into the new one when read left to right:
/// an ``Operation/equal`` edit keeps its text, ``Operation/delete`` drops it from the old text and
/// ``Operation/insert`` adds it. Dropping the insertions gives back the old text; dropping the
/// deletions gives the new one.
///
/// ```swift
/// let old = Array("Hi Alice!".utf16), new = Array("Hi Alice, hi!".utf16)
/// TextDiff.semanticDiff(from: old, to: new)
/// // [equal "Hi Alice", insert ", hi", equal "!"]
/// ```
///
/// `MessageDraft.update(text:)` in the Chat SDK replays such a list over its text: it walks a cursor
/// (`consumed`) through the text, skips each equality, removes each deletion at the cursor and
/// inserts each insertion there. So the exact cut points matter: they decide which mentions a
/// change touches. Hence this port reproduces DMP's choices, not just *a* correct diff.
///
/// ## Units
///
/// Everything works on **UTF-16 code units** (`Array(string.utf16)`), because the Chat SDK's
/// offsets are Kotlin `String` indices, which count UTF-16 code units. An edit may therefore start
/// or end between the two halves of a surrogate pair (as DMP's may), and any sequence of units is
/// accepted, lone surrogates included; ``Edit/string`` decodes leniently (U+FFFD for a lone half).
///
/// ## How `diff_main` works (``diff(from:to:checkLines:halfMatch:)``)
///
/// 1. Equal texts give one equality (none when empty). The common prefix and suffix are cut off
///    (they are equalities) and the middle is diffed:
/// 2. an empty side is a pure insertion or deletion; a side found whole inside the other gives
///    `edit, equal, edit`; a one-unit side is a deletion plus an insertion;
/// 3. *half-match*: if both sides share a run at least half as long as the longer side, that run
///    is taken as an equality and the two halves are diffed separately (fast, not always minimal);
/// 4. *line mode* (`checkLines`, both sides over 100 units): each distinct line is replaced by one
///    code unit, those are diffed, the lines are put back, the result is semantically cleaned and
///    every deletion+insertion block is diffed again unit by unit;
/// 5. otherwise Myers' O(ND) algorithm (*bisect*) finds the middle snake and recurses on both parts;
/// 6. finally *cleanupMerge* merges adjacent edits of one kind, factors common prefixes and suffixes
///    of a deletion/insertion pair out into the neighbouring equalities, and slides single edits
///    sideways to eliminate equalities (`a<ins>ba</ins>c` → `<ins>ab</ins>ac`).
///
/// ## How `diff_cleanupSemantic` works (``cleanupSemantic(_:)``)
///
/// A minimal diff of prose is full of tiny coincidental equalities ("e" in "Apple"/"Banana").
/// `cleanupSemantic` turns every equality no longer than the edits on both of its sides into a
/// deletion plus an insertion (re-examining the previous equality each time), then merges, then
/// slides each single edit between two equalities to the boundary that scores best
/// (*cleanupSemanticLossless*: 6 at the text's edge, 5 at a blank line, 4 at a line break, 3 at the
/// end of a sentence, 2 at whitespace, 1 at other punctuation, 0 inside a word), and finally
/// extracts an overlap between a deletion and the following insertion as an equality when it is at
/// least half as long as either (`<del>abcxxx</del><ins>xxxdef</ins>` →
/// `<del>abc</del>xxx<ins>def</ins>`).
///
/// ## Choices and deviations (read before relying on exactness)
///
/// - **No deadline.** DMP gives up refining after `Diff_Timeout` seconds of wall time (the Chat SDK
///   keeps the default, 1 s) and then returns a coarser diff. A result that depends on the clock is
///   not testable, so this port never gives up: it is DMP with an infinite deadline. It equals the
///   Chat SDK's result whenever the Chat SDK finishes within its second (always, for texts of
///   message size); on huge, very different texts it can take long (O(N·D)) where DMP would bail.
/// - **Half-match is on by default.** In DMP a `Diff_Timeout` of 0 means both "no deadline" *and*
///   "no half-match speedup". The Chat SDK runs with 1 s, so its diffs *do* use half-match; keeping
///   it (`halfMatch: true`, the default) is what makes the results equal the Chat SDK's. Pass
///   `halfMatch: false` for DMP's exact `Diff_Timeout = 0` behaviour (as DMP's own tests use).
/// - **The Chat SDK's Kotlin scoring, quirk included.** The boundary score uses Kotlin's
///   `Char.isLetterOrDigit()` (Unicode letters and decimal digits), `Char.isWhitespace()` (Java's
///   `isWhitespace` or `isSpaceChar`, so no-break spaces count) and `isISOControl()` for line breaks,
///   and blank lines as the Kotlin port tests them: the text before the boundary *ends* with
///   `"\n\n"` or `"\n\r\n"`, or — a slip in the Kotlin translation, reproduced on purpose — the text
///   before the boundary *starts* with `"\n\n"` or `"\r\n\r\n"` while the text after it starts with
///   a line break (Java DMP tests the text after the boundary there, with `\Z`/`\A` regexes).
///   Letter and digit classes come from Swift's Unicode tables, which may be a newer Unicode version
///   than the Chat SDK's runtime: characters assigned since could score differently.
/// - Java/Kotlin throw on a few impossible states (an index past the end); this port never traps:
///   it stops or skips instead.
public enum TextDiff {
    /// What an ``Edit`` does with its text.
    public enum Operation: Sendable, Hashable {
        /// The text is in both the old and the new text.
        case equal
        /// The text is only in the new text.
        case insert
        /// The text is only in the old text.
        case delete
    }

    /// One step of a diff: keep, insert or delete `text` (UTF-16 code units).
    public struct Edit: Sendable, Hashable, CustomStringConvertible {
        /// Keep, insert or delete.
        public var operation: Operation
        /// The text kept, inserted or deleted, in UTF-16 code units.
        public var text: [UInt16]

        /// An edit of `text` (UTF-16 code units).
        public init(_ operation: Operation, _ text: [UInt16]) {
            self.operation = operation
            self.text = text
        }

        /// An edit of the UTF-16 code units of `string`.
        public init(_ operation: Operation, _ string: String) {
            self.init(operation, Array(string.utf16))
        }

        /// The text as a string, decoded leniently: a lone surrogate half (an edit may cut a
        /// surrogate pair) becomes U+FFFD.
        public var string: String { String(decoding: text, as: UTF16.self) }

        /// `insert("abc")`, for test failures and logs.
        public var description: String { "\(operation)(\(string.debugDescription))" }
    }

    /// `diff_main(old, new, checklines: true)` then `diff_cleanupSemantic`, as the Chat SDK's
    /// `MessageDraft.update(text:)` does (with `Diff_EditCost` 4, which neither step reads).
    ///
    /// `halfMatch` (default `true`, as the Chat SDK's `Diff_Timeout` of 1 s implies) is explained in
    /// the type's documentation; the deadline is always infinite.
    public static func semanticDiff(from old: [UInt16], to new: [UInt16], halfMatch: Bool = true) -> [Edit] {
        let diffs = diffMain(old, new, checkLines: true, halfMatch: halfMatch)
        cleanupSemantic(diffs)
        return diffs.edits
    }

    /// DMP's `diff_main(old, new, checklines)`, without a deadline: a list of edits turning `old`
    /// into `new`, cleaned by `diff_cleanupMerge` but not semantically.
    ///
    /// - Parameters:
    ///   - checkLines: diff line by line first when both middles are over 100 units (faster, maybe
    ///     less minimal), as DMP's `checklines`.
    ///   - halfMatch: allow the half-match speedup (DMP does unless `Diff_Timeout` is 0).
    public static func diff(
        from old: [UInt16], to new: [UInt16], checkLines: Bool = true, halfMatch: Bool = true
    ) -> [Edit] {
        diffMain(old, new, checkLines: checkLines, halfMatch: halfMatch).edits
    }

    /// DMP's `diff_cleanupSemantic`: eliminates semantically trivial equalities, slides edits to
    /// word and line boundaries and extracts deletion/insertion overlaps (see the type's
    /// documentation).
    public static func cleanupSemantic(_ diffs: inout [Edit]) {
        let list = DiffList(diffs)
        cleanupSemantic(list)
        diffs = list.edits
    }
}

// MARK: - The diff list (DMP's LinkedList<Diff> and its ListIterator)

extension TextDiff {
    /// One diff in a ``DiffList``: a reference, like DMP's Java `Diff` objects, because the cleanup
    /// passes keep references to diffs (a stack of equalities, the previous equality) and compare
    /// them by identity while the list changes around them.
    final class Node {
        var operation: Operation
        var text: [UInt16]

        init(_ operation: Operation, _ text: [UInt16]) {
            self.operation = operation
            self.text = text
        }
    }

    /// A list of diffs with Java's list-iterator semantics, so that DMP's cursor manipulations port
    /// line by line (the Kotlin translation runs them on an `ArrayList`, as this does).
    final class DiffList {
        var nodes: [Node]

        init(nodes: [Node] = []) { self.nodes = nodes }

        convenience init(_ edits: [Edit]) { self.init(nodes: edits.map { Node($0.operation, $0.text) }) }

        var edits: [Edit] { nodes.map { Edit($0.operation, $0.text) } }

        func listIterator() -> ListIterator { ListIterator(list: self) }
    }

    /// `java.util.ListIterator` over a ``DiffList``: a cursor between elements and the element last
    /// returned. Where Java would throw (no such element, no element to remove), this returns nil or
    /// does nothing instead of trapping.
    struct ListIterator {
        let list: DiffList
        /// Index of the element `next()` returns.
        private(set) var cursor = 0
        /// Index of the element last returned by `next()` or `previous()`, or -1.
        private var lastReturned = -1

        init(list: DiffList) { self.list = list }

        var hasNext: Bool { cursor < list.nodes.count }
        var hasPrevious: Bool { cursor > 0 }

        mutating func next() -> Node? {
            guard cursor >= 0, cursor < list.nodes.count else { return nil }
            lastReturned = cursor
            cursor += 1
            return list.nodes[lastReturned]
        }

        mutating func previous() -> Node? {
            guard cursor > 0, cursor <= list.nodes.count else { return nil }
            cursor -= 1
            lastReturned = cursor
            return list.nodes[cursor]
        }

        /// Removes the element last returned.
        mutating func remove() {
            guard lastReturned >= 0, lastReturned < list.nodes.count else { return }
            list.nodes.remove(at: lastReturned)
            cursor = lastReturned
            lastReturned = -1
        }

        /// Replaces the element last returned.
        mutating func set(_ node: Node) {
            guard lastReturned >= 0, lastReturned < list.nodes.count else { return }
            list.nodes[lastReturned] = node
        }

        /// Inserts before the cursor (the next `next()` is unaffected, `previous()` returns it).
        mutating func add(_ node: Node) {
            let index = min(max(cursor, 0), list.nodes.count)
            list.nodes.insert(node, at: index)
            cursor = index + 1
            lastReturned = -1
        }
    }
}

// MARK: - diff_main and its parts

extension TextDiff {
    /// `diff_main(text1, text2, checklines, deadline = never)`.
    static func diffMain(_ text1: [UInt16], _ text2: [UInt16], checkLines: Bool, halfMatch: Bool) -> DiffList {
        // Check for equality (speedup).
        if text1 == text2 {
            return DiffList(nodes: text1.isEmpty ? [] : [Node(.equal, text1)])
        }

        // Trim off the common prefix (speedup).
        let prefixLength = commonPrefix(text1[...], text2[...])
        let commonPrefix = Array(text1[..<prefixLength])
        var middle1 = text1[prefixLength...]
        var middle2 = text2[prefixLength...]

        // Trim off the common suffix (speedup).
        let suffixLength = commonSuffix(middle1, middle2)
        let commonSuffix = Array(middle1.suffix(suffixLength))
        middle1 = middle1.dropLast(suffixLength)
        middle2 = middle2.dropLast(suffixLength)

        // Compute the diff on the middle block.
        let diffs = compute(Array(middle1), Array(middle2), checkLines: checkLines, halfMatch: halfMatch)

        // Restore the prefix and suffix.
        if !commonPrefix.isEmpty { diffs.nodes.insert(Node(.equal, commonPrefix), at: 0) }
        if !commonSuffix.isEmpty { diffs.nodes.append(Node(.equal, commonSuffix)) }

        cleanupMerge(diffs)
        return diffs
    }

    /// `diff_compute`: the middle block, which has no common prefix or suffix.
    static func compute(_ text1: [UInt16], _ text2: [UInt16], checkLines: Bool, halfMatch: Bool) -> DiffList {
        if text1.isEmpty {
            // Just add some text (speedup).
            return DiffList(nodes: [Node(.insert, text2)])
        }
        if text2.isEmpty {
            // Just delete some text (speedup).
            return DiffList(nodes: [Node(.delete, text1)])
        }

        let (longText, shortText) = text1.count > text2.count ? (text1, text2) : (text2, text1)
        if let i = indexOf(longText[...], shortText[...]) {
            // The shorter text is inside the longer one (speedup).
            let operation: Operation = text1.count > text2.count ? .delete : .insert
            return DiffList(nodes: [
                Node(operation, Array(longText[..<i])),
                Node(.equal, shortText),
                Node(operation, Array(longText[(i + shortText.count)...])),
            ])
        }

        if shortText.count == 1 {
            // A single unit; after the previous speedup it cannot be an equality.
            return DiffList(nodes: [Node(.delete, text1), Node(.insert, text2)])
        }

        // Check whether the problem can be split in two.
        if let hm = self.halfMatch(text1, text2, enabled: halfMatch) {
            // Send both pairs off for separate processing, then merge the results.
            let diffs = diffMain(hm.text1A, hm.text2A, checkLines: checkLines, halfMatch: halfMatch)
            let diffsB = diffMain(hm.text1B, hm.text2B, checkLines: checkLines, halfMatch: halfMatch)
            diffs.nodes.append(Node(.equal, hm.common))
            diffs.nodes.append(contentsOf: diffsB.nodes)
            return diffs
        }

        if checkLines && text1.count > 100 && text2.count > 100 {
            return lineMode(text1, text2, halfMatch: halfMatch)
        }

        return bisect(text1, text2, halfMatch: halfMatch)
    }

    /// `diff_lineMode`: a quick line-level diff, then a unit-level re-diff of each replaced block.
    /// Can give a non-minimal diff.
    static func lineMode(_ text1: [UInt16], _ text2: [UInt16], halfMatch: Bool) -> DiffList {
        // Scan the texts line by line first.
        let encoded = linesToChars(text1, text2)
        let diffs = diffMain(encoded.chars1, encoded.chars2, checkLines: false, halfMatch: halfMatch)

        // Convert the diff back to the original text, and eliminate freak matches (blank lines).
        charsToLines(diffs, encoded.lineArray)
        cleanupSemantic(diffs)

        // Rediff any replacement blocks, this time unit by unit. Add a dummy entry at the end.
        diffs.nodes.append(Node(.equal, []))
        var countDelete = 0
        var countInsert = 0
        var textDelete: [UInt16] = []
        var textInsert: [UInt16] = []
        var pointer = diffs.listIterator()
        var thisDiff = pointer.next()
        while let current = thisDiff {
            switch current.operation {
            case .insert:
                countInsert += 1
                textInsert += current.text
            case .delete:
                countDelete += 1
                textDelete += current.text
            case .equal:
                // Upon reaching an equality, check for prior redundancies.
                if countDelete >= 1 && countInsert >= 1 {
                    // Delete the offending records and add the merged ones.
                    _ = pointer.previous()
                    for _ in 0..<(countDelete + countInsert) {
                        _ = pointer.previous()
                        pointer.remove()
                    }
                    let replacement = diffMain(textDelete, textInsert, checkLines: false, halfMatch: halfMatch)
                    for node in replacement.nodes { pointer.add(node) }
                }
                countInsert = 0
                countDelete = 0
                textDelete = []
                textInsert = []
            }
            thisDiff = pointer.hasNext ? pointer.next() : nil
        }
        // Remove the dummy entry at the end.
        if !diffs.nodes.isEmpty { diffs.nodes.removeLast() }
        return diffs
    }

    /// `diff_bisect`: finds the "middle snake" of Myers' O(ND) algorithm (Myers 1986, "An O(ND)
    /// Difference Algorithm and Its Variations"), splits the problem there and recurses. Never
    /// gives up early (no deadline).
    static func bisect(_ text1: [UInt16], _ text2: [UInt16], halfMatch: Bool) -> DiffList {
        let text1Length = text1.count
        let text2Length = text2.count
        let maxD = (text1Length + text2Length + 1) / 2
        let vOffset = maxD
        let vLength = 2 * maxD
        // Two spare slots past DMP's `vLength`: DMP writes `v[vOffset + 1]` even when that is past
        // its arrays' end (texts of one unit each, which diff_compute handles before it gets here).
        // The spares are never written again and stay -1, which DMP's range checks treat alike.
        var v1 = [Int](repeating: -1, count: vLength + 2)
        var v2 = [Int](repeating: -1, count: vLength + 2)
        v1[vOffset + 1] = 0
        v2[vOffset + 1] = 0
        let delta = text1Length - text2Length
        // If the total number of units is odd, the front path collides with the reverse path.
        let front = delta % 2 != 0
        // Offsets for the start and end of the k loops; they prevent mapping space beyond the grid.
        var k1Start = 0
        var k1End = 0
        var k2Start = 0
        var k2End = 0
        var d = 0
        while d < maxD {
            // Walk the front path one step.
            var k1 = -d + k1Start
            while k1 <= d - k1End {
                let k1Offset = vOffset + k1
                var x1: Int
                if k1 == -d || (k1 != d && v1[k1Offset - 1] < v1[k1Offset + 1]) {
                    x1 = v1[k1Offset + 1]
                } else {
                    x1 = v1[k1Offset - 1] + 1
                }
                var y1 = x1 - k1
                while x1 >= 0, y1 >= 0, x1 < text1Length, y1 < text2Length, text1[x1] == text2[y1] {
                    x1 += 1
                    y1 += 1
                }
                v1[k1Offset] = x1
                if x1 > text1Length {
                    // Ran off the right of the graph.
                    k1End += 2
                } else if y1 > text2Length {
                    // Ran off the bottom of the graph.
                    k1Start += 2
                } else if front {
                    let k2Offset = vOffset + delta - k1
                    if k2Offset >= 0 && k2Offset < vLength && v2[k2Offset] != -1 {
                        // Mirror x2 onto the top-left coordinate system.
                        let x2 = text1Length - v2[k2Offset]
                        if x1 >= x2 {
                            // Overlap detected.
                            return bisectSplit(text1, text2, x1, y1, halfMatch: halfMatch)
                        }
                    }
                }
                k1 += 2
            }

            // Walk the reverse path one step.
            var k2 = -d + k2Start
            while k2 <= d - k2End {
                let k2Offset = vOffset + k2
                var x2: Int
                if k2 == -d || (k2 != d && v2[k2Offset - 1] < v2[k2Offset + 1]) {
                    x2 = v2[k2Offset + 1]
                } else {
                    x2 = v2[k2Offset - 1] + 1
                }
                var y2 = x2 - k2
                while x2 >= 0, y2 >= 0, x2 < text1Length, y2 < text2Length,
                    text1[text1Length - x2 - 1] == text2[text2Length - y2 - 1]
                {
                    x2 += 1
                    y2 += 1
                }
                v2[k2Offset] = x2
                if x2 > text1Length {
                    // Ran off the left of the graph.
                    k2End += 2
                } else if y2 > text2Length {
                    // Ran off the top of the graph.
                    k2Start += 2
                } else if !front {
                    let k1Offset = vOffset + delta - k2
                    if k1Offset >= 0 && k1Offset < vLength && v1[k1Offset] != -1 {
                        let x1 = v1[k1Offset]
                        let y1 = vOffset + x1 - k1Offset
                        // Mirror x2 onto the top-left coordinate system.
                        x2 = text1Length - x2
                        if x1 >= x2 {
                            // Overlap detected.
                            return bisectSplit(text1, text2, x1, y1, halfMatch: halfMatch)
                        }
                    }
                }
                k2 += 2
            }
            d += 1
        }
        // The number of diffs equals the number of units: no commonality at all. (In DMP also
        // reached when the deadline passes; here it never does.)
        return DiffList(nodes: [Node(.delete, text1), Node(.insert, text2)])
    }

    /// `diff_bisectSplit`: diffs the parts before and after `(x, y)` separately.
    static func bisectSplit(_ text1: [UInt16], _ text2: [UInt16], _ x: Int, _ y: Int, halfMatch: Bool) -> DiffList {
        let x = min(max(x, 0), text1.count)
        let y = min(max(y, 0), text2.count)
        // Compute both diffs serially.
        let diffs = diffMain(Array(text1[..<x]), Array(text2[..<y]), checkLines: false, halfMatch: halfMatch)
        let diffsB = diffMain(Array(text1[x...]), Array(text2[y...]), checkLines: false, halfMatch: halfMatch)
        diffs.nodes.append(contentsOf: diffsB.nodes)
        return diffs
    }
}

// MARK: - Line mode encoding

extension TextDiff {
    /// `diff_linesToChars`'s result: each text as one code unit per line, and the lines (index 0 is
    /// the intentionally blank entry, so no line maps to unit 0).
    struct LinesToChars: Equatable {
        var chars1: [UInt16]
        var chars2: [UInt16]
        var lineArray: [[UInt16]]
    }

    /// `diff_linesToChars`: each distinct line (through its `"\n"`) becomes one code unit, its
    /// index in `lineArray`. As in DMP, text1 may use indices up to 40 000 and both texts together
    /// up to 65 535; when a text runs out, its whole remainder becomes one last "line". So every
    /// index fits a `UInt16` and every input round-trips, whatever units it holds (the encoded
    /// texts are only ever compared unit by unit, never decoded).
    static func linesToChars(_ text1: [UInt16], _ text2: [UInt16]) -> LinesToChars {
        var lineArray: [[UInt16]] = [[]]
        var lineHash: [[UInt16]: Int] = [:]
        // Allocate 2/3rds of the space for text1, the rest for text2.
        let chars1 = linesToCharsMunge(text1, &lineArray, &lineHash, maxLines: 40_000)
        let chars2 = linesToCharsMunge(text2, &lineArray, &lineHash, maxLines: 65_535)
        return LinesToChars(chars1: chars1, chars2: chars2, lineArray: lineArray)
    }

    /// `diff_linesToCharsMunge`.
    static func linesToCharsMunge(
        _ text: [UInt16], _ lineArray: inout [[UInt16]], _ lineHash: inout [[UInt16]: Int], maxLines: Int
    ) -> [UInt16] {
        var lineStart = 0
        var lineEnd = -1
        var chars: [UInt16] = []
        // Walk the text, pulling out a line at a time.
        while lineEnd < text.count - 1 {
            lineEnd = indexOf(text[...], 0x0A, from: lineStart) ?? (text.count - 1)
            var line = Array(text[lineStart...lineEnd])
            if let index = lineHash[line] {
                chars.append(UInt16(truncatingIfNeeded: index))
            } else {
                if lineArray.count == maxLines {
                    // Bail out at 65535: one more index would not fit a code unit.
                    line = Array(text[lineStart...])
                    lineEnd = text.count
                }
                lineArray.append(line)
                lineHash[line] = lineArray.count - 1
                chars.append(UInt16(truncatingIfNeeded: lineArray.count - 1))
            }
            lineStart = lineEnd + 1
        }
        return chars
    }

    /// `diff_charsToLines`: puts the lines back in place of their code units.
    static func charsToLines(_ diffs: DiffList, _ lineArray: [[UInt16]]) {
        for node in diffs.nodes {
            var text: [UInt16] = []
            for unit in node.text {
                let index = Int(unit)
                if index < lineArray.count { text += lineArray[index] }
            }
            node.text = text
        }
    }
}

// MARK: - Common prefix, suffix, overlap; half-match

extension TextDiff {
    /// `diff_commonPrefix`: the number of units common to the start of both texts.
    static func commonPrefix(_ text1: ArraySlice<UInt16>, _ text2: ArraySlice<UInt16>) -> Int {
        let n = min(text1.count, text2.count)
        var i = 0
        while i < n && text1[text1.startIndex + i] == text2[text2.startIndex + i] { i += 1 }
        return i
    }

    /// `diff_commonSuffix`: the number of units common to the end of both texts.
    static func commonSuffix(_ text1: ArraySlice<UInt16>, _ text2: ArraySlice<UInt16>) -> Int {
        let n = min(text1.count, text2.count)
        var i = 0
        while i < n && text1[text1.endIndex - 1 - i] == text2[text2.endIndex - 1 - i] { i += 1 }
        return i
    }

    static func commonPrefix(_ text1: [UInt16], _ text2: [UInt16]) -> Int { commonPrefix(text1[...], text2[...]) }
    static func commonSuffix(_ text1: [UInt16], _ text2: [UInt16]) -> Int { commonSuffix(text1[...], text2[...]) }

    /// `diff_commonOverlap`: the length of the longest suffix of `text1` that is a prefix of
    /// `text2`.
    static func commonOverlap(_ text1: [UInt16], _ text2: [UInt16]) -> Int {
        let text1Length = text1.count
        let text2Length = text2.count
        // Eliminate the null case.
        if text1Length == 0 || text2Length == 0 { return 0 }
        // Truncate the longer string.
        var t1 = text1[...]
        var t2 = text2[...]
        if text1Length > text2Length {
            t1 = text1.suffix(text2Length)
        } else if text1Length < text2Length {
            t2 = text2.prefix(text1Length)
        }
        let textLength = min(text1Length, text2Length)
        // Quick check for the worst case.
        if t1 == t2 { return textLength }

        // Start by looking for a single unit match and increase the length until no match is found.
        var best = 0
        var length = 1
        while length <= textLength {
            let pattern = t1.suffix(length)
            guard let found = indexOf(t2, pattern) else { return best }
            length += found
            if found == 0 || t1.suffix(length) == t2.prefix(length) {
                best = length
                length += 1
            }
        }
        return best
    }

    /// `diff_halfMatch`'s result: text1 = `text1A + common + text1B`, text2 likewise.
    struct HalfMatch: Equatable, CustomStringConvertible {
        var text1A: [UInt16]
        var text1B: [UInt16]
        var text2A: [UInt16]
        var text2B: [UInt16]
        var common: [UInt16]

        init(text1A: [UInt16], text1B: [UInt16], text2A: [UInt16], text2B: [UInt16], common: [UInt16]) {
            self.text1A = text1A
            self.text1B = text1B
            self.text2A = text2A
            self.text2B = text2B
            self.common = common
        }

        /// DMP's five-string form: prefix of text1, suffix of text1, prefix of text2, suffix of
        /// text2, common middle.
        init(_ strings: [String]) {
            let units = strings.map { Array($0.utf16) }
            self.init(
                text1A: units.count > 0 ? units[0] : [], text1B: units.count > 1 ? units[1] : [],
                text2A: units.count > 2 ? units[2] : [], text2B: units.count > 3 ? units[3] : [],
                common: units.count > 4 ? units[4] : [])
        }

        var description: String {
            [text1A, text1B, text2A, text2B, common].map { String(decoding: $0, as: UTF16.self).debugDescription }
                .joined(separator: ", ")
        }
    }

    /// `diff_halfMatch`: do the texts share a run at least half as long as the longer one? Can give
    /// a non-minimal diff. `enabled: false` is DMP with `Diff_Timeout` 0 ("don't risk returning a
    /// non-optimal diff if we have unlimited time"), which always answers nil.
    static func halfMatch(_ text1: [UInt16], _ text2: [UInt16], enabled: Bool = true) -> HalfMatch? {
        guard enabled else { return nil }
        let (longText, shortText) = text1.count > text2.count ? (text1, text2) : (text2, text1)
        if longText.count < 4 || shortText.count * 2 < longText.count {
            return nil  // Pointless.
        }

        // First check if the second quarter is the seed for a half-match, then the third quarter.
        let hm1 = halfMatchI(longText, shortText, (longText.count + 3) / 4)
        let hm2 = halfMatchI(longText, shortText, (longText.count + 1) / 2)
        let hm: HalfMatch
        switch (hm1, hm2) {
        case (nil, nil): return nil
        case (let one?, nil): hm = one
        case (nil, let two?): hm = two
        case (let one?, let two?): hm = one.common.count > two.common.count ? one : two  // The longest.
        }

        // hm is in (long, short) order; put it in (text1, text2) order.
        if text1.count > text2.count { return hm }
        return HalfMatch(text1A: hm.text2A, text1B: hm.text2B, text2A: hm.text1A, text2B: hm.text1B, common: hm.common)
    }

    /// `diff_halfMatchI`: does a run of `shortText` that is at least half as long as `longText`
    /// contain the quarter of `longText` starting at `i`? The result is in (long, short) order.
    static func halfMatchI(_ longText: [UInt16], _ shortText: [UInt16], _ i: Int) -> HalfMatch? {
        let seedEnd = i + longText.count / 4
        guard i >= 0, seedEnd <= longText.count else { return nil }
        // Start with a 1/4 length substring at position i as a seed.
        let seed = longText[i..<seedEnd]
        var j = -1
        var bestCommon: [UInt16] = []
        var bestLongA: [UInt16] = []
        var bestLongB: [UInt16] = []
        var bestShortA: [UInt16] = []
        var bestShortB: [UInt16] = []
        while let found = indexOf(shortText[...], seed, from: j + 1) {
            j = found
            let prefixLength = commonPrefix(longText[i...], shortText[j...])
            let suffixLength = commonSuffix(longText[..<i], shortText[..<j])
            if bestCommon.count < suffixLength + prefixLength {
                bestCommon = Array(shortText[(j - suffixLength)..<(j + prefixLength)])
                bestLongA = Array(longText[..<(i - suffixLength)])
                bestLongB = Array(longText[(i + prefixLength)...])
                bestShortA = Array(shortText[..<(j - suffixLength)])
                bestShortB = Array(shortText[(j + prefixLength)...])
            }
        }
        guard bestCommon.count * 2 >= longText.count else { return nil }
        return HalfMatch(text1A: bestLongA, text1B: bestLongB, text2A: bestShortA, text2B: bestShortB, common: bestCommon)
    }

    /// Java's `haystack.indexOf(needle, from)`, relative to the haystack's start: the first offset
    /// at or after `from` where `needle` occurs.
    static func indexOf(_ haystack: ArraySlice<UInt16>, _ needle: ArraySlice<UInt16>, from: Int = 0) -> Int? {
        let n = haystack.count
        let m = needle.count
        let start = max(from, 0)
        if m == 0 { return start <= n ? start : nil }
        guard start <= n - m, let first = needle.first else { return nil }
        let base = haystack.startIndex
        var i = start
        while i <= n - m {
            if haystack[base + i] == first
                && haystack[(base + i)..<(base + i + m)].elementsEqual(needle)
            {
                return i
            }
            i += 1
        }
        return nil
    }

    /// Java's `text.indexOf(unit, from)`, relative to the text's start.
    static func indexOf(_ text: ArraySlice<UInt16>, _ unit: UInt16, from: Int) -> Int? {
        let start = max(from, 0)
        guard start < text.count else { return nil }
        guard let index = text[(text.startIndex + start)...].firstIndex(of: unit) else { return nil }
        return index - text.startIndex
    }
}

// MARK: - Cleanup

extension TextDiff {
    /// `diff_cleanupSemantic` on a list.
    static func cleanupSemantic(_ diffs: DiffList) {
        if diffs.nodes.isEmpty { return }
        var changes = false
        // Stack of equalities (DMP's ArrayDeque used with push/peek/pop: the top is `last`).
        var equalities: [Node] = []
        // Always equal to equalities.last?.text, until reset.
        var lastEquality: [UInt16]? = nil
        var pointer = diffs.listIterator()
        // Number of units that changed before the equality.
        var lengthInsertions1 = 0
        var lengthDeletions1 = 0
        // Number of units that changed after the equality.
        var lengthInsertions2 = 0
        var lengthDeletions2 = 0
        var thisDiff = pointer.next()
        while let current = thisDiff {
            if current.operation == .equal {
                // Equality found.
                equalities.append(current)
                lengthInsertions1 = lengthInsertions2
                lengthDeletions1 = lengthDeletions2
                lengthInsertions2 = 0
                lengthDeletions2 = 0
                lastEquality = current.text
            } else {
                // An insertion or deletion.
                if current.operation == .insert {
                    lengthInsertions2 += current.text.count
                } else {
                    lengthDeletions2 += current.text.count
                }
                // Eliminate an equality that is smaller than or equal to the edits on both sides.
                if let equality = lastEquality,
                    equality.count <= max(lengthInsertions1, lengthDeletions1),
                    equality.count <= max(lengthInsertions2, lengthDeletions2)
                {
                    // Walk back to the offending equality.
                    var walker: Node? = current
                    while let node = walker, node !== equalities.last { walker = pointer.previous() }
                    _ = pointer.next()

                    // Replace the equality with a deletion, and add a corresponding insertion.
                    pointer.set(Node(.delete, equality))
                    pointer.add(Node(.insert, equality))

                    // Throw away the equality just deleted, and the previous one (it needs to be
                    // reevaluated).
                    if !equalities.isEmpty { equalities.removeLast() }
                    if !equalities.isEmpty { equalities.removeLast() }
                    if let safe = equalities.last {
                        // Fall back to the safe equality (it is read again, and pushed again).
                        while let node = pointer.previous(), node !== safe {}
                    } else {
                        // No previous equalities: walk back to the start.
                        while pointer.hasPrevious { _ = pointer.previous() }
                    }

                    lengthInsertions1 = 0  // Reset the counters.
                    lengthInsertions2 = 0
                    lengthDeletions1 = 0
                    lengthDeletions2 = 0
                    lastEquality = nil
                    changes = true
                }
            }
            thisDiff = pointer.hasNext ? pointer.next() : nil
        }

        // Normalize the diff.
        if changes { cleanupMerge(diffs) }
        cleanupSemanticLossless(diffs)

        // Find any overlaps between deletions and insertions, e.g.
        //   <del>abcxxx</del><ins>xxxdef</ins> -> <del>abc</del>xxx<ins>def</ins>
        //   <del>xxxabc</del><ins>defxxx</ins> -> <ins>def</ins>xxx<del>abc</del>
        // Only extract an overlap if it is as big as the edit ahead or behind it.
        pointer = diffs.listIterator()
        var prevDiff: Node? = nil
        thisDiff = nil
        if pointer.hasNext {
            prevDiff = pointer.next()
            if pointer.hasNext { thisDiff = pointer.next() }
        }
        while let current = thisDiff, let previous = prevDiff {
            if previous.operation == .delete && current.operation == .insert {
                let deletion = previous.text
                let insertion = current.text
                let overlapLength1 = commonOverlap(deletion, insertion)
                let overlapLength2 = commonOverlap(insertion, deletion)
                // `2 * overlap >= length` is DMP's `overlap >= length / 2.0`.
                if overlapLength1 >= overlapLength2 {
                    if overlapLength1 * 2 >= deletion.count || overlapLength1 * 2 >= insertion.count {
                        // Overlap found: insert an equality and trim the surrounding edits.
                        _ = pointer.previous()
                        pointer.add(Node(.equal, Array(insertion[..<overlapLength1])))
                        previous.text = Array(deletion[..<(deletion.count - overlapLength1)])
                        current.text = Array(insertion[overlapLength1...])
                        // add() inserts before the cursor: no need to step past the new element.
                    }
                } else {
                    if overlapLength2 * 2 >= deletion.count || overlapLength2 * 2 >= insertion.count {
                        // Reverse overlap found: insert an equality, swap and trim the edits.
                        _ = pointer.previous()
                        pointer.add(Node(.equal, Array(deletion[..<overlapLength2])))
                        previous.operation = .insert
                        previous.text = Array(insertion[..<(insertion.count - overlapLength2)])
                        current.operation = .delete
                        current.text = Array(deletion[overlapLength2...])
                    }
                }
                thisDiff = pointer.hasNext ? pointer.next() : nil
            }
            prevDiff = thisDiff
            thisDiff = pointer.hasNext ? pointer.next() : nil
        }
    }

    /// `diff_cleanupSemanticLossless`: slides each single edit surrounded by equalities sideways to
    /// the best-scoring boundary, e.g. `The c<ins>at c</ins>ame.` → `The <ins>cat </ins>came.`
    static func cleanupSemanticLossless(_ diffs: DiffList) {
        var pointer = diffs.listIterator()
        var prevDiff = pointer.hasNext ? pointer.next() : nil
        var thisDiff = pointer.hasNext ? pointer.next() : nil
        var nextDiff = pointer.hasNext ? pointer.next() : nil
        // Intentionally ignore the first and last element (they need no checking).
        while let next = nextDiff {
            guard let previous = prevDiff, let current = thisDiff else { break }
            if previous.operation == .equal && next.operation == .equal {
                // A single edit surrounded by equalities. `equality1 + edit + equality2` stays the
                // same text while the edit slides, so it is kept once, with the edit's position.
                var equality1 = previous.text[...]
                var edit = current.text
                var equality2 = next.text

                // First, shift the edit as far left as possible.
                let commonOffset = commonSuffix(equality1, edit[...])
                if commonOffset != 0 {
                    let commonString = edit.suffix(commonOffset)
                    equality1 = equality1.dropLast(commonOffset)
                    edit = Array(commonString) + edit.dropLast(commonOffset)
                    equality2 = Array(commonString) + equality2
                }
                let all = Array(equality1) + edit + equality2
                let editLength = edit.count
                var start = equality1.count

                // Second, step unit by unit right, looking for the best fit.
                var bestStart = start
                var bestScore = semanticScore(all[..<start], all[start..<(start + editLength)])
                    + semanticScore(all[start..<(start + editLength)], all[(start + editLength)...])
                while editLength != 0 && start + editLength < all.count && all[start] == all[start + editLength] {
                    start += 1
                    let score = semanticScore(all[..<start], all[start..<(start + editLength)])
                        + semanticScore(all[start..<(start + editLength)], all[(start + editLength)...])
                    // The >= encourages trailing rather than leading whitespace on edits.
                    if score >= bestScore {
                        bestScore = score
                        bestStart = start
                    }
                }
                let bestEquality1 = Array(all[..<bestStart])
                let bestEdit = Array(all[bestStart..<(bestStart + editLength)])
                let bestEquality2 = Array(all[(bestStart + editLength)...])

                if previous.text != bestEquality1 {
                    // An improvement: save it back to the diff.
                    if !bestEquality1.isEmpty {
                        previous.text = bestEquality1
                    } else {
                        _ = pointer.previous()  // Walk past nextDiff.
                        _ = pointer.previous()  // Walk past thisDiff.
                        _ = pointer.previous()  // Walk past prevDiff.
                        pointer.remove()  // Delete prevDiff.
                        _ = pointer.next()  // Walk past thisDiff.
                        _ = pointer.next()  // Walk past nextDiff.
                    }
                    current.text = bestEdit
                    if !bestEquality2.isEmpty {
                        next.text = bestEquality2
                    } else {
                        pointer.remove()  // Delete nextDiff.
                        nextDiff = thisDiff
                        thisDiff = prevDiff
                    }
                }
            }
            prevDiff = thisDiff
            thisDiff = nextDiff
            nextDiff = pointer.hasNext ? pointer.next() : nil
        }
    }

    /// `diff_cleanupSemanticScore` as the Chat SDK's Kotlin port computes it: how good a boundary
    /// between `one` and `two` is, from 6 (best) to 0 (worst).
    static func semanticScore(_ one: ArraySlice<UInt16>, _ two: ArraySlice<UInt16>) -> Int {
        guard let char1 = one.last, let char2 = two.first else {
            // Edges are the best.
            return 6
        }
        let nonAlphaNumeric1 = !isLetterOrDigit(char1)
        let nonAlphaNumeric2 = !isLetterOrDigit(char2)
        let whitespace1 = nonAlphaNumeric1 && isWhitespace(char1)
        let whitespace2 = nonAlphaNumeric2 && isWhitespace(char2)
        let lineBreak1 = whitespace1 && isISOControl(char1)
        let lineBreak2 = whitespace2 && isISOControl(char2)
        let blankLine1 = lineBreak1 && endsWithBlankLine(one)
        // The Kotlin port tests `one` here where Java DMP tests `two`: reproduced on purpose.
        let blankLine2 = lineBreak2 && startsWithBlankLine(one)

        if blankLine1 || blankLine2 {
            return 5  // Five points for blank lines.
        } else if lineBreak1 || lineBreak2 {
            return 4  // Four points for line breaks.
        } else if nonAlphaNumeric1 && !whitespace1 && whitespace2 {
            return 3  // Three points for the end of a sentence.
        } else if whitespace1 || whitespace2 {
            return 2  // Two points for whitespace.
        } else if nonAlphaNumeric1 || nonAlphaNumeric2 {
            return 1  // One point for non-alphanumeric.
        }
        return 0
    }

    static func semanticScore(_ one: [UInt16], _ two: [UInt16]) -> Int { semanticScore(one[...], two[...]) }

    /// Kotlin's `isBlankLineEnd`: ends with `"\n\r\n"` or `"\n\n"`.
    static func endsWithBlankLine(_ text: ArraySlice<UInt16>) -> Bool {
        text.suffix(3).elementsEqual([0x0A, 0x0D, 0x0A]) || text.suffix(2).elementsEqual([0x0A, 0x0A])
    }

    /// Kotlin's `isBlankLineStart`: starts with `"\r\n\r\n"` or `"\n\n"`.
    static func startsWithBlankLine(_ text: ArraySlice<UInt16>) -> Bool {
        text.starts(with: [0x0D, 0x0A, 0x0D, 0x0A]) || text.starts(with: [0x0A, 0x0A])
    }

    /// Kotlin's `Char.isLetterOrDigit()` (Java's `Character.isLetterOrDigit(char)`): general
    /// category Lu, Ll, Lt, Lm, Lo or Nd. A surrogate half is neither.
    static func isLetterOrDigit(_ unit: UInt16) -> Bool {
        if unit < 0x80 {
            return (0x30...0x39).contains(unit) || (0x41...0x5A).contains(unit) || (0x61...0x7A).contains(unit)
        }
        guard let scalar = Unicode.Scalar(UInt32(unit)) else { return false }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .decimalNumber:
            return true
        default:
            return false
        }
    }

    /// Kotlin's `Char.isWhitespace()`: Java's `Character.isWhitespace(c) || Character.isSpaceChar(c)`
    /// (so the no-break spaces U+00A0, U+2007 and U+202F count), the same table on every Kotlin
    /// platform: U+0009–U+000D, U+001C–U+0020, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029,
    /// U+202F, U+205F, U+3000.
    static func isWhitespace(_ unit: UInt16) -> Bool {
        switch unit {
        case 0x09...0x0D, 0x1C...0x20, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
            return true
        default:
            return false
        }
    }

    /// Kotlin's `Char.isISOControl()` (Java's general category `CONTROL`): U+0000–U+001F and
    /// U+007F–U+009F.
    static func isISOControl(_ unit: UInt16) -> Bool {
        unit <= 0x1F || (0x7F...0x9F).contains(unit)
    }

    /// `diff_cleanupMerge` on a list: merges like edits and equalities, factors common prefixes and
    /// suffixes out of deletion/insertion pairs, and slides single edits over neighbouring
    /// equalities; repeated until a pass shifts nothing (DMP recurses instead).
    static func cleanupMerge(_ diffs: DiffList) {
        while cleanupMergePass(diffs) {}
    }

    /// One `diff_cleanupMerge` pass; whether it shifted an edit (and the diff needs another pass).
    static func cleanupMergePass(_ diffs: DiffList) -> Bool {
        diffs.nodes.append(Node(.equal, []))  // A dummy entry at the end.
        var pointer = diffs.listIterator()
        var countDelete = 0
        var countInsert = 0
        var textDelete: [UInt16] = []
        var textInsert: [UInt16] = []
        var thisDiff = pointer.next()
        var prevEqual: Node? = nil
        while let current = thisDiff {
            switch current.operation {
            case .insert:
                countInsert += 1
                textInsert += current.text
                prevEqual = nil
            case .delete:
                countDelete += 1
                textDelete += current.text
                prevEqual = nil
            case .equal:
                if countDelete + countInsert > 1 {
                    let bothTypes = countDelete != 0 && countInsert != 0
                    // Delete the offending records.
                    _ = pointer.previous()  // Reverse direction.
                    for _ in 0..<countDelete {
                        _ = pointer.previous()
                        pointer.remove()
                    }
                    for _ in 0..<countInsert {
                        _ = pointer.previous()
                        pointer.remove()
                    }
                    if bothTypes {
                        // Factor out any common prefix.
                        var commonLength = commonPrefix(textInsert, textDelete)
                        if commonLength != 0 {
                            if pointer.hasPrevious {
                                // DMP asserts that this is an equality.
                                thisDiff = pointer.previous()
                                thisDiff?.text += textInsert[..<commonLength]
                                _ = pointer.next()
                            } else {
                                pointer.add(Node(.equal, Array(textInsert[..<commonLength])))
                            }
                            textInsert = Array(textInsert[commonLength...])
                            textDelete = Array(textDelete[commonLength...])
                        }
                        // Factor out any common suffix.
                        commonLength = commonSuffix(textInsert, textDelete)
                        if commonLength != 0 {
                            thisDiff = pointer.next()
                            if let node = thisDiff {
                                node.text = Array(textInsert.suffix(commonLength)) + node.text
                            }
                            textInsert = Array(textInsert.dropLast(commonLength))
                            textDelete = Array(textDelete.dropLast(commonLength))
                            _ = pointer.previous()
                        }
                    }
                    // Insert the merged records.
                    if !textDelete.isEmpty { pointer.add(Node(.delete, textDelete)) }
                    if !textInsert.isEmpty { pointer.add(Node(.insert, textInsert)) }
                    // Step forward to the equality.
                    thisDiff = pointer.hasNext ? pointer.next() : nil
                } else if let equal = prevEqual {
                    // Merge this equality with the previous one.
                    equal.text += current.text
                    pointer.remove()
                    thisDiff = pointer.previous()
                    _ = pointer.next()  // Forward direction.
                }
                countInsert = 0
                countDelete = 0
                textDelete = []
                textInsert = []
                prevEqual = thisDiff
            }
            thisDiff = pointer.hasNext ? pointer.next() : nil
        }
        if let last = diffs.nodes.last, last.text.isEmpty {
            diffs.nodes.removeLast()  // Remove the dummy entry at the end.
        }

        // Second pass: look for single edits surrounded on both sides by equalities which can be
        // shifted sideways to eliminate an equality, e.g. A<ins>BA</ins>C -> <ins>AB</ins>AC
        var changes = false
        pointer = diffs.listIterator()
        var prevDiff = pointer.hasNext ? pointer.next() : nil
        thisDiff = pointer.hasNext ? pointer.next() : nil
        var nextDiff = pointer.hasNext ? pointer.next() : nil
        // Intentionally ignore the first and last element (they need no checking).
        while let next = nextDiff {
            guard let previous = prevDiff, let current = thisDiff else { break }
            if previous.operation == .equal && next.operation == .equal {
                // A single edit surrounded by equalities.
                if hasSuffix(current.text, previous.text) {
                    // Shift the edit over the previous equality.
                    current.text = previous.text + current.text.dropLast(previous.text.count)
                    next.text = previous.text + next.text
                    _ = pointer.previous()  // Walk past nextDiff.
                    _ = pointer.previous()  // Walk past thisDiff.
                    _ = pointer.previous()  // Walk past prevDiff.
                    pointer.remove()  // Delete prevDiff.
                    _ = pointer.next()  // Walk past thisDiff.
                    thisDiff = pointer.next()  // Walk past nextDiff.
                    nextDiff = pointer.hasNext ? pointer.next() : nil
                    changes = true
                } else if current.text.starts(with: next.text) {
                    // Shift the edit over the next equality.
                    previous.text += next.text
                    current.text = Array(current.text.dropFirst(next.text.count)) + next.text
                    pointer.remove()  // Delete nextDiff.
                    nextDiff = pointer.hasNext ? pointer.next() : nil
                    changes = true
                }
            }
            prevDiff = thisDiff
            thisDiff = nextDiff
            nextDiff = pointer.hasNext ? pointer.next() : nil
        }
        // If shifts were made, the diff needs reordering and another shift sweep.
        return changes
    }

    /// Java's `text.endsWith(suffix)`.
    static func hasSuffix(_ text: [UInt16], _ suffix: [UInt16]) -> Bool {
        text.count >= suffix.count && text.suffix(suffix.count).elementsEqual(suffix)
    }
}

// MARK: - Array forms, for tests

extension TextDiff {
    /// `diff_cleanupMerge` on an array.
    static func cleanupMerge(_ diffs: inout [Edit]) {
        let list = DiffList(diffs)
        cleanupMerge(list)
        diffs = list.edits
    }

    /// `diff_cleanupSemanticLossless` on an array.
    static func cleanupSemanticLossless(_ diffs: inout [Edit]) {
        let list = DiffList(diffs)
        cleanupSemanticLossless(list)
        diffs = list.edits
    }

    /// `diff_charsToLines` on an array.
    static func charsToLines(_ diffs: inout [Edit], _ lineArray: [[UInt16]]) {
        let list = DiffList(diffs)
        charsToLines(list, lineArray)
        diffs = list.edits
    }

    /// `diff_bisect` with no deadline, as an array.
    static func bisect(_ text1: [UInt16], _ text2: [UInt16], halfMatch: Bool = true) -> [Edit] {
        let list: DiffList = bisect(text1, text2, halfMatch: halfMatch)
        return list.edits
    }
}
