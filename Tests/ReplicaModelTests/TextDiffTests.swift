import Foundation
import Testing

@testable import ReplicaModel

/// Shorthands for the expected diffs below.
private extension TextDiff.Edit {
    static func equal(_ string: String) -> Self { .init(.equal, string) }
    static func insert(_ string: String) -> Self { .init(.insert, string) }
    static func delete(_ string: String) -> Self { .init(.delete, string) }
    static func equal(_ units: [UInt16]) -> Self { .init(.equal, units) }
    static func insert(_ units: [UInt16]) -> Self { .init(.insert, units) }
    static func delete(_ units: [UInt16]) -> Self { .init(.delete, units) }
}

/// The UTF-16 code units of `string`.
private func utf16(_ string: String) -> [UInt16] { Array(string.utf16) }

/// The two texts a diff was made from: `[old, new]`.
private func rebuildTexts(_ diffs: [TextDiff.Edit]) -> [[UInt16]] {
    var old: [UInt16] = []
    var new: [UInt16] = []
    for edit in diffs {
        if edit.operation != .insert { old += edit.text }
        if edit.operation != .delete { new += edit.text }
    }
    return [old, new]
}

/// The ports of diff-match-patch's own diff tests (`diff_match_patch_test.java`, and its Kotlin
/// translation in the Chat SDK), then checks of this port's choices: the Chat SDK's results on
/// recorded cases, UTF-16 units, no traps.
///
/// DMP's tests run some cases with `Diff_Timeout` 1 s (half-match on) and the "real diff" cases with
/// `Diff_Timeout` 0 (half-match off); here that is `halfMatch: true` / `false`. DMP's two
/// wall-clock tests (`diff_bisect: Timeout`, `diff_main: Timeout min/max`) have no counterpart:
/// this port has no deadline.
@Suite("TextDiff")
struct TextDiffTests {
    // MARK: diff_commonPrefix, diff_commonSuffix, diff_commonOverlap

    @Test("diff_commonPrefix")
    func commonPrefix() {
        #expect(TextDiff.commonPrefix(utf16("abc"), utf16("xyz")) == 0)  // Null case.
        #expect(TextDiff.commonPrefix(utf16("1234abcdef"), utf16("1234xyz")) == 4)  // Non-null case.
        #expect(TextDiff.commonPrefix(utf16("1234"), utf16("1234xyz")) == 4)  // Whole case.
    }

    @Test("diff_commonSuffix")
    func commonSuffix() {
        #expect(TextDiff.commonSuffix(utf16("abc"), utf16("xyz")) == 0)  // Null case.
        #expect(TextDiff.commonSuffix(utf16("abcdef1234"), utf16("xyz1234")) == 4)  // Non-null case.
        #expect(TextDiff.commonSuffix(utf16("1234"), utf16("xyz1234")) == 4)  // Whole case.
    }

    @Test("diff_commonOverlap")
    func commonOverlap() {
        #expect(TextDiff.commonOverlap(utf16(""), utf16("abcd")) == 0)  // Null case.
        #expect(TextDiff.commonOverlap(utf16("abc"), utf16("abcd")) == 3)  // Whole case.
        #expect(TextDiff.commonOverlap(utf16("123456"), utf16("abcd")) == 0)  // No overlap.
        #expect(TextDiff.commonOverlap(utf16("123456xxx"), utf16("xxxabcd")) == 3)  // Overlap.
        // Unicode: a ligature is not its component letters (U+FB01 is not "fi").
        #expect(TextDiff.commonOverlap(utf16("fi"), utf16("\u{FB01}i")) == 0)
    }

    // MARK: diff_halfMatch

    @Test("diff_halfMatch with half-match on (Diff_Timeout 1 s)")
    func halfMatch() {
        typealias HM = TextDiff.HalfMatch
        #expect(TextDiff.halfMatch(utf16("1234567890"), utf16("abcdef")) == nil)  // No match #1.
        #expect(TextDiff.halfMatch(utf16("12345"), utf16("23")) == nil)  // No match #2.
        // Single matches.
        #expect(TextDiff.halfMatch(utf16("1234567890"), utf16("a345678z")) == HM(["12", "90", "a", "z", "345678"]))
        #expect(TextDiff.halfMatch(utf16("a345678z"), utf16("1234567890")) == HM(["a", "z", "12", "90", "345678"]))
        #expect(TextDiff.halfMatch(utf16("abc56789z"), utf16("1234567890")) == HM(["abc", "z", "1234", "0", "56789"]))
        #expect(TextDiff.halfMatch(utf16("a23456xyz"), utf16("1234567890")) == HM(["a", "xyz", "1", "7890", "23456"]))
        // Multiple matches.
        #expect(
            TextDiff.halfMatch(utf16("121231234123451234123121"), utf16("a1234123451234z"))
                == HM(["12123", "123121", "a", "z", "1234123451234"]))
        #expect(
            TextDiff.halfMatch(utf16("x-=-=-=-=-=-=-=-=-=-=-=-="), utf16("xx-=-=-=-=-=-=-="))
                == HM(["", "-=-=-=-=-=", "x", "", "x-=-=-=-=-=-=-="]))
        #expect(
            TextDiff.halfMatch(utf16("-=-=-=-=-=-=-=-=-=-=-=-=y"), utf16("-=-=-=-=-=-=-=yy"))
                == HM(["-=-=-=-=-=", "", "", "y", "-=-=-=-=-=-=-=y"]))
        // Non-optimal halfmatch: the optimal diff would be -q+x=H-i+e=lloHe+Hu=llo-Hew+y, not
        // -qHillo+x=HelloHe-w+Hulloy.
        #expect(
            TextDiff.halfMatch(utf16("qHilloHelloHew"), utf16("xHelloHeHulloy"))
                == HM(["qHillo", "w", "x", "Hulloy", "HelloHe"]))
    }

    @Test("diff_halfMatch with Diff_Timeout 0 never splits (optimal no halfmatch)")
    func halfMatchOff() {
        #expect(TextDiff.halfMatch(utf16("qHilloHelloHew"), utf16("xHelloHeHulloy"), enabled: false) == nil)
        #expect(TextDiff.halfMatch(utf16("1234567890"), utf16("a345678z"), enabled: false) == nil)
    }

    // MARK: diff_linesToChars, diff_charsToLines

    @Test("diff_linesToChars")
    func linesToChars() {
        // Shared lines.
        #expect(
            TextDiff.linesToChars(utf16("alpha\nbeta\nalpha\n"), utf16("beta\nalpha\nbeta\n"))
                == .init(chars1: [1, 2, 1], chars2: [2, 1, 2], lineArray: [[], utf16("alpha\n"), utf16("beta\n")]))
        // Empty string and blank lines.
        #expect(
            TextDiff.linesToChars(utf16(""), utf16("alpha\r\nbeta\r\n\r\n\r\n"))
                == .init(
                    chars1: [], chars2: [1, 2, 3, 3],
                    lineArray: [[], utf16("alpha\r\n"), utf16("beta\r\n"), utf16("\r\n")]))
        // No linebreaks.
        #expect(
            TextDiff.linesToChars(utf16("a"), utf16("b"))
                == .init(chars1: [1], chars2: [2], lineArray: [[], utf16("a"), utf16("b")]))

        // More than 256, to reveal any 8-bit limitation.
        var lineArray: [[UInt16]] = [[]]
        var lines: [UInt16] = []
        var chars: [UInt16] = []
        for i in 1...300 {
            lineArray.append(utf16("\(i)\n"))
            lines += utf16("\(i)\n")
            chars.append(UInt16(i))
        }
        #expect(TextDiff.linesToChars(lines, []) == .init(chars1: chars, chars2: [], lineArray: lineArray))
    }

    @Test("diff_charsToLines")
    func charsToLines() {
        // Edit equality.
        #expect(TextDiff.Edit.equal("a") == TextDiff.Edit.equal("a"))
        #expect(TextDiff.Edit.equal("a") != TextDiff.Edit.insert("a"))

        // Shared lines.
        var diffs: [TextDiff.Edit] = [.equal([1, 2, 1]), .insert([2, 1, 2])]
        TextDiff.charsToLines(&diffs, [[], utf16("alpha\n"), utf16("beta\n")])
        #expect(diffs == [.equal("alpha\nbeta\nalpha\n"), .insert("beta\nalpha\nbeta\n")])

        // More than 256, to reveal any 8-bit limitation.
        var lineArray: [[UInt16]] = [[]]
        var lines: [UInt16] = []
        var chars: [UInt16] = []
        for i in 1...300 {
            lineArray.append(utf16("\(i)\n"))
            lines += utf16("\(i)\n")
            chars.append(UInt16(i))
        }
        diffs = [.delete(chars)]
        TextDiff.charsToLines(&diffs, lineArray)
        #expect(diffs == [.delete(lines)])

        // More than 65536, to verify any 16-bit limitation.
        var many: [UInt16] = []
        for i in 0..<66_000 { many += utf16("\(i)\n") }
        let result = TextDiff.linesToChars(many, [])
        diffs = [.insert(result.chars1)]
        TextDiff.charsToLines(&diffs, result.lineArray)
        #expect(diffs.first?.text == many)
    }

    @Test("diff_linesToChars stays within 16 bits and round-trips when both texts are over the limit")
    func linesToCharsLimit() {
        var text1: [UInt16] = []
        var text2: [UInt16] = []
        for i in 0..<45_000 { text1 += utf16("a\(i)\n") }
        for i in 0..<30_000 { text2 += utf16("b\(i)\n") }
        text2 += utf16("tail without a newline")
        let result = TextDiff.linesToChars(text1, text2)
        // text1 may use indices up to 40 000 (its remainder is one last "line"), both up to 65 535.
        #expect(result.chars1.count == 40_000)
        #expect(result.lineArray.count == 65_536)
        var diffs: [TextDiff.Edit] = [.delete(result.chars1), .insert(result.chars2)]
        TextDiff.charsToLines(&diffs, result.lineArray)
        #expect(diffs == [.delete(text1), .insert(text2)])
    }

    // MARK: diff_cleanupMerge

    @Test("diff_cleanupMerge")
    func cleanupMerge() {
        func merged(_ diffs: [TextDiff.Edit]) -> [TextDiff.Edit] {
            var diffs = diffs
            TextDiff.cleanupMerge(&diffs)
            return diffs
        }
        #expect(merged([]) == [])  // Null case.
        #expect(merged([.equal("a"), .delete("b"), .insert("c")]) == [.equal("a"), .delete("b"), .insert("c")])  // No change.
        #expect(merged([.equal("a"), .equal("b"), .equal("c")]) == [.equal("abc")])  // Merge equalities.
        #expect(merged([.delete("a"), .delete("b"), .delete("c")]) == [.delete("abc")])  // Merge deletions.
        #expect(merged([.insert("a"), .insert("b"), .insert("c")]) == [.insert("abc")])  // Merge insertions.
        // Merge interweave.
        #expect(
            merged([.delete("a"), .insert("b"), .delete("c"), .insert("d"), .equal("e"), .equal("f")])
                == [.delete("ac"), .insert("bd"), .equal("ef")])
        // Prefix and suffix detection.
        #expect(
            merged([.delete("a"), .insert("abc"), .delete("dc")])
                == [.equal("a"), .delete("d"), .insert("b"), .equal("c")])
        // Prefix and suffix detection with equalities.
        #expect(
            merged([.equal("x"), .delete("a"), .insert("abc"), .delete("dc"), .equal("y")])
                == [.equal("xa"), .delete("d"), .insert("b"), .equal("cy")])
        #expect(merged([.equal("a"), .insert("ba"), .equal("c")]) == [.insert("ab"), .equal("ac")])  // Slide edit left.
        #expect(merged([.equal("c"), .insert("ab"), .equal("a")]) == [.equal("ca"), .insert("ba")])  // Slide edit right.
        // Slide edit left recursive.
        #expect(
            merged([.equal("a"), .delete("b"), .equal("c"), .delete("ac"), .equal("x")])
                == [.delete("abc"), .equal("acx")])
        // Slide edit right recursive.
        #expect(
            merged([.equal("x"), .delete("ca"), .equal("c"), .delete("b"), .equal("a")])
                == [.equal("xca"), .delete("cba")])
        #expect(merged([.delete("b"), .insert("ab"), .equal("c")]) == [.insert("a"), .equal("bc")])  // Empty merge.
        #expect(merged([.equal(""), .insert("a"), .equal("b")]) == [.insert("a"), .equal("b")])  // Empty equality.
    }

    // MARK: diff_cleanupSemanticLossless

    @Test("diff_cleanupSemanticLossless")
    func cleanupSemanticLossless() {
        func lossless(_ diffs: [TextDiff.Edit]) -> [TextDiff.Edit] {
            var diffs = diffs
            TextDiff.cleanupSemanticLossless(&diffs)
            return diffs
        }
        #expect(lossless([]) == [])  // Null case.
        // Blank lines.
        #expect(
            lossless([.equal("AAA\r\n\r\nBBB"), .insert("\r\nDDD\r\n\r\nBBB"), .equal("\r\nEEE")])
                == [.equal("AAA\r\n\r\n"), .insert("BBB\r\nDDD\r\n\r\n"), .equal("BBB\r\nEEE")])
        // Line boundaries.
        #expect(
            lossless([.equal("AAA\r\nBBB"), .insert(" DDD\r\nBBB"), .equal(" EEE")])
                == [.equal("AAA\r\n"), .insert("BBB DDD\r\n"), .equal("BBB EEE")])
        // Word boundaries.
        #expect(
            lossless([.equal("The c"), .insert("ow and the c"), .equal("at.")])
                == [.equal("The "), .insert("cow and the "), .equal("cat.")])
        // Alphanumeric boundaries.
        #expect(
            lossless([.equal("The-c"), .insert("ow-and-the-c"), .equal("at.")])
                == [.equal("The-"), .insert("cow-and-the-"), .equal("cat.")])
        #expect(lossless([.equal("a"), .delete("a"), .equal("ax")]) == [.delete("a"), .equal("aax")])  // Hitting the start.
        #expect(lossless([.equal("xa"), .delete("a"), .equal("a")]) == [.equal("xaa"), .delete("a")])  // Hitting the end.
        // Sentence boundaries.
        #expect(
            lossless([.equal("The xxx. The "), .insert("zzz. The "), .equal("yyy.")])
                == [.equal("The xxx."), .insert(" The zzz."), .equal(" The yyy.")])
    }

    // MARK: diff_cleanupSemantic

    @Test("diff_cleanupSemantic")
    func cleanupSemantic() {
        func semantic(_ diffs: [TextDiff.Edit]) -> [TextDiff.Edit] {
            var diffs = diffs
            TextDiff.cleanupSemantic(&diffs)
            return diffs
        }
        #expect(semantic([]) == [])  // Null case.
        // No elimination #1.
        #expect(
            semantic([.delete("ab"), .insert("cd"), .equal("12"), .delete("e")])
                == [.delete("ab"), .insert("cd"), .equal("12"), .delete("e")])
        // No elimination #2.
        #expect(
            semantic([.delete("abc"), .insert("ABC"), .equal("1234"), .delete("wxyz")])
                == [.delete("abc"), .insert("ABC"), .equal("1234"), .delete("wxyz")])
        // Simple elimination.
        #expect(semantic([.delete("a"), .equal("b"), .delete("c")]) == [.delete("abc"), .insert("b")])
        // Backpass elimination.
        #expect(
            semantic([.delete("ab"), .equal("cd"), .delete("e"), .equal("f"), .insert("g")])
                == [.delete("abcdef"), .insert("cdfg")])
        // Multiple eliminations.
        #expect(
            semantic([
                .insert("1"), .equal("A"), .delete("B"), .insert("2"), .equal("_"), .insert("1"), .equal("A"),
                .delete("B"), .insert("2"),
            ]) == [.delete("AB_AB"), .insert("1A2_1A2")])
        // Word boundaries.
        #expect(
            semantic([.equal("The c"), .delete("ow and the c"), .equal("at.")])
                == [.equal("The "), .delete("cow and the "), .equal("cat.")])
        // No overlap elimination.
        #expect(semantic([.delete("abcxx"), .insert("xxdef")]) == [.delete("abcxx"), .insert("xxdef")])
        // Overlap elimination.
        #expect(semantic([.delete("abcxxx"), .insert("xxxdef")]) == [.delete("abc"), .equal("xxx"), .insert("def")])
        // Reverse overlap elimination.
        #expect(semantic([.delete("xxxabc"), .insert("defxxx")]) == [.insert("def"), .equal("xxx"), .delete("abc")])
        // Two overlap eliminations.
        #expect(
            semantic([.delete("abcd1212"), .insert("1212efghi"), .equal("----"), .delete("A3"), .insert("3BC")])
                == [
                    .delete("abcd"), .equal("1212"), .insert("efghi"), .equal("----"), .delete("A"), .equal("3"),
                    .insert("BC"),
                ])
    }

    // MARK: diff_bisect

    @Test("diff_bisect (no deadline)")
    func bisect() {
        // Since the result is not normalized, swapped insertion/deletion pairs would also be fine.
        #expect(
            TextDiff.bisect(utf16("cat"), utf16("map"))
                == [.delete("c"), .insert("m"), .equal("a"), .delete("t"), .insert("p")])
    }

    // MARK: diff_main

    @Test("diff_main: trivial diffs (Diff_Timeout 1 s)")
    func mainTrivial() {
        func diff(_ old: String, _ new: String) -> [TextDiff.Edit] {
            TextDiff.diff(from: utf16(old), to: utf16(new), checkLines: false)
        }
        #expect(diff("", "") == [])  // Null case.
        #expect(diff("abc", "abc") == [.equal("abc")])  // Equality.
        #expect(diff("abc", "ab123c") == [.equal("ab"), .insert("123"), .equal("c")])  // Simple insertion.
        #expect(diff("a123bc", "abc") == [.equal("a"), .delete("123"), .equal("bc")])  // Simple deletion.
        // Two insertions.
        #expect(diff("abc", "a123b456c") == [.equal("a"), .insert("123"), .equal("b"), .insert("456"), .equal("c")])
        // Two deletions.
        #expect(diff("a123b456c", "abc") == [.equal("a"), .delete("123"), .equal("b"), .delete("456"), .equal("c")])
    }

    @Test("diff_main: real diffs (Diff_Timeout 0)")
    func mainReal() {
        func diff(_ old: String, _ new: String) -> [TextDiff.Edit] {
            TextDiff.diff(from: utf16(old), to: utf16(new), checkLines: false, halfMatch: false)
        }
        #expect(diff("a", "b") == [.delete("a"), .insert("b")])  // Simple case #1.
        // Simple case #2.
        #expect(
            diff("Apples are a fruit.", "Bananas are also fruit.")
                == [.delete("Apple"), .insert("Banana"), .equal("s are a"), .insert("lso"), .equal(" fruit.")])
        // Simple case #3.
        #expect(
            diff("ax\t", "\u{0680}x\u{0000}")
                == [.delete("a"), .insert("\u{0680}"), .equal("x"), .delete("\t"), .insert("\u{0000}")])
        // Overlap #1.
        #expect(
            diff("1ayb2", "abxab")
                == [.delete("1"), .equal("a"), .delete("y"), .equal("b"), .delete("2"), .insert("xab")])
        // Overlap #2.
        #expect(diff("abcy", "xaxcxabc") == [.insert("xaxcx"), .equal("abc"), .delete("y")])
        // Overlap #3.
        #expect(
            diff("ABCDa=bcd=efghijklmnopqrsEFGHIJKLMNOefg", "a-bcd-efghijklmnopqrs")
                == [
                    .delete("ABCD"), .equal("a"), .delete("="), .insert("-"), .equal("bcd"), .delete("="),
                    .insert("-"), .equal("efghijklmnopqrs"), .delete("EFGHIJKLMNOefg"),
                ])
        // Large equality.
        #expect(
            diff("a [[Pennsylvania]] and [[New", " and [[Pennsylvania]]")
                == [.insert(" "), .equal("a"), .insert("nd"), .equal(" [[Pennsylvania]]"), .delete(" and [[New")])
    }

    @Test("diff_main: line mode (Diff_Timeout 0)")
    func mainLineMode() {
        func diff(_ old: String, _ new: String, checkLines: Bool) -> [TextDiff.Edit] {
            TextDiff.diff(from: utf16(old), to: utf16(new), checkLines: checkLines, halfMatch: false)
        }
        // Simple line-mode (must be long to pass the 100 unit cutoff).
        var a = String(repeating: "1234567890\n", count: 13)
        var b = String(repeating: "abcdefghij\n", count: 13)
        #expect(diff(a, b, checkLines: true) == diff(a, b, checkLines: false))

        // Single line-mode.
        a = String(repeating: "1234567890", count: 13)
        b = String(repeating: "abcdefghij", count: 13)
        #expect(diff(a, b, checkLines: true) == diff(a, b, checkLines: false))

        // Overlap line-mode: the diffs may differ, the texts they rebuild may not.
        a = String(repeating: "1234567890\n", count: 13)
        b = "abcdefghij\n1234567890\n1234567890\n1234567890\nabcdefghij\n1234567890\n1234567890\n"
            + "1234567890\nabcdefghij\n1234567890\n1234567890\n1234567890\nabcdefghij\n"
        let lineMode = rebuildTexts(diff(a, b, checkLines: true))
        let textMode = rebuildTexts(diff(a, b, checkLines: false))
        #expect(lineMode == textMode)
        #expect(lineMode == [utf16(a), utf16(b)])
    }

    // MARK: The Chat SDK's results

    /// Recorded with DMP's Java on the JVM, with its boundary score changed to the Kotlin port's
    /// (the Chat SDK's), `Diff_Timeout` large enough never to bail: `diff_main(old, new)` then
    /// `diff_cleanupSemantic`, as `MessageDraft.update(text:)` runs it.
    static let chatSDKCases: [(String, String, [TextDiff.Edit])] = [
        ("Hi Alice!", "Hi Alice, hi!", [.equal("Hi Alice"), .insert(", hi"), .equal("!")]),
        (
            "Hello @alice how are you", "Hello @alicia, how are you?",
            [.equal("Hello @alic"), .delete("e"), .insert("ia,"), .equal(" how are you"), .insert("?")]
        ),
        (
            "Ping @bob and @carol today", "Ping @carol and @bob today",
            [
                .equal("Ping @"), .delete("bob"), .insert("carol"), .equal(" and @"), .delete("carol"),
                .insert("bob"), .equal(" today"),
            ]
        ),
        ("The cat came.", "The cow and the cat came.", [.equal("The "), .insert("cow and the "), .equal("cat came.")]),
        (
            "call me at 5pm, ok?", "call me at 6pm tomorrow, ok?",
            [.equal("call me at "), .delete("5"), .insert("6"), .equal("pm"), .insert(" tomorrow"), .equal(", ok?")]
        ),
        (
            "abcdefghij", "xyzdefghuvw",
            [.delete("abc"), .insert("xyz"), .equal("defgh"), .delete("ij"), .insert("uvw")]
        ),
        // Half-match at work (the Chat SDK's Diff_Timeout is 1 s, not 0).
        (
            "qHilloHelloHew", "xHelloHeHulloy",
            [.delete("qHillo"), .insert("x"), .equal("HelloHe"), .delete("w"), .insert("Hulloy")]
        ),
        (
            "👍 the@aali\n\no!Banaand ", "👍 @ali\n\nhello!Banana xx 日本-and ",
            [
                .equal("👍 "), .delete("the@a"), .insert("@"), .equal("ali\n\n"), .insert("hell"), .equal("o!Bana"),
                .insert("na xx 日本-"), .equal("and "),
            ]
        ),
        // The Kotlin port's blank-line test (Java DMP gives "Hi" / "\n\r" / "\n\nthere").
        ("Hi\n\nthere", "Hi\n\r\n\nthere", [.equal("Hi\n"), .insert("\r\n"), .equal("\nthere")]),
        // Line mode (both middles over 100 units).
        (
            "Monday agenda:\n- standup with @alice\n- review the draft\n- lunch\n- ship the release notes\n- retro\nThanks!",
            "Tuesday agenda:\n- standup with @alice and @bob\n- lunch\n- review the final draft\n- ship the release notes\n- retro\nThanks, see you",
            [
                .delete("Mon"), .insert("Tues"), .equal("day agenda:\n- standup with @alice"),
                .insert(" and @bob\n- lunch"), .equal("\n- review the "), .delete("draft\n- lunch"),
                .insert("final draft"), .equal("\n- ship the release notes\n- retro\nThanks"), .delete("!"),
                .insert(", see you"),
            ]
        ),
    ]

    @Test("semanticDiff gives the Chat SDK's results", arguments: 0..<TextDiffTests.chatSDKCases.count)
    func chatSDKResults(index: Int) {
        let (old, new, expected) = Self.chatSDKCases[index]
        #expect(TextDiff.semanticDiff(from: utf16(old), to: utf16(new)) == expected)
    }

    @Test("halfMatch: false is DMP with Diff_Timeout 0, which differs from the Chat SDK")
    func withoutHalfMatch() {
        #expect(
            TextDiff.semanticDiff(from: utf16("qHilloHelloHew"), to: utf16("xHelloHeHulloy"), halfMatch: false)
                == [
                    .delete("qHi"), .insert("xHe"), .equal("lloHe"), .insert("Hu"), .equal("llo"), .delete("Hew"),
                    .insert("y"),
                ])
        // Here the Chat SDK deletes and re-inserts the "@" of "@ali"; without half-match it stays.
        #expect(
            TextDiff.semanticDiff(
                from: utf16("👍 the@aali\n\no!Banaand "), to: utf16("👍 @ali\n\nhello!Banana xx 日本-and "),
                halfMatch: false)
                == [
                    .equal("👍 "), .delete("the"), .equal("@"), .delete("a"), .equal("ali\n\n"), .insert("hell"),
                    .equal("o!Bana"), .insert("na xx 日本-"), .equal("and "),
                ])
    }

    // MARK: Boundary scores and character classes

    @Test("boundary scores, with the Kotlin port's blank-line test")
    func semanticScore() {
        func score(_ one: String, _ two: String) -> Int { TextDiff.semanticScore(utf16(one), utf16(two)) }
        #expect(score("", "abc") == 6)  // Edge.
        #expect(score("abc", "") == 6)
        #expect(score("abc\n\n", "x") == 5)  // Blank line before.
        #expect(score("abc\n\r\n", "x") == 5)
        #expect(score("abc\n", "x") == 4)  // Line break.
        #expect(score("abc.", " x") == 3)  // End of sentence.
        #expect(score("abc", " x") == 2)  // Whitespace.
        #expect(score("abc", "\u{00A0}x") == 2)  // Kotlin's isWhitespace counts no-break spaces.
        #expect(score("abc", "-x") == 1)  // Non-alphanumeric.
        #expect(score("abc", "x") == 0)
        #expect(score("é", "日") == 0)  // Unicode letters.
        // Kotlin tests `one` for a blank line at the start where Java tests `two`:
        #expect(score("abc", "\n\nx") == 4)  // Java: 5.
        #expect(score("\n\nabc", "\nx") == 5)  // Java: 4.
        #expect(score("\r\n\r\nabc", "\rx") == 5)
    }

    @Test("character classes follow Kotlin's Char")
    func characterClasses() {
        #expect(TextDiff.isLetterOrDigit(0x41) && TextDiff.isLetterOrDigit(0x37) && TextDiff.isLetterOrDigit(0xE9))
        #expect(TextDiff.isLetterOrDigit(0x65E5))  // 日
        #expect(TextDiff.isLetterOrDigit(0x0661))  // Arabic-Indic digit one (Nd).
        #expect(!TextDiff.isLetterOrDigit(0x00B2))  // Superscript two (No), not a digit in Java either.
        #expect(!TextDiff.isLetterOrDigit(0x5F) && !TextDiff.isLetterOrDigit(0x20))
        #expect(!TextDiff.isLetterOrDigit(0xD83D) && !TextDiff.isLetterOrDigit(0xDC4D))  // Surrogate halves.
        for unit: UInt16 in [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1F, 0x20, 0xA0, 0x1680, 0x2000, 0x2007, 0x200A,
            0x2028, 0x2029, 0x202F, 0x205F, 0x3000]
        {
            #expect(TextDiff.isWhitespace(unit), "U+\(String(unit, radix: 16))")
        }
        for unit: UInt16 in [0x00, 0x08, 0x0E, 0x85, 0x180E, 0x200B, 0xFEFF, 0x41] {
            #expect(!TextDiff.isWhitespace(unit), "U+\(String(unit, radix: 16))")
        }
        #expect(TextDiff.isISOControl(0x0A) && TextDiff.isISOControl(0x7F) && TextDiff.isISOControl(0x9F))
        #expect(!TextDiff.isISOControl(0x20) && !TextDiff.isISOControl(0xA0))
    }

    // MARK: UTF-16 and robustness

    @Test("works on UTF-16 code units: edits may split a surrogate pair, and decode leniently")
    func utf16Units() {
        let diffs = TextDiff.semanticDiff(from: utf16("I like 👍 and 👎"), to: utf16("I like 👎 and 👍"))
        #expect(
            diffs == [
                .equal(utf16("I like ") + [0xD83D]), .delete([0xDC4D]), .insert([0xDC4E]),
                .equal(utf16(" and ") + [0xD83D]), .delete([0xDC4E]), .insert([0xDC4D]),
            ])
        #expect(diffs[1].string == "\u{FFFD}")
        #expect(TextDiff.Edit.insert("👍").text == [0xD83D, 0xDC4D])
        #expect(TextDiff.Edit.insert("👍").string == "👍")
        #expect(TextDiff.Edit.equal("a").description == "equal(\"a\")")
    }

    @Test("never traps: empty texts, lone surrogates, degenerate calls")
    func noTraps() {
        #expect(TextDiff.semanticDiff(from: [], to: []) == [])
        #expect(TextDiff.semanticDiff(from: [], to: utf16("abc")) == [.insert("abc")])
        #expect(TextDiff.semanticDiff(from: utf16("abc"), to: []) == [.delete("abc")])
        let lone: [UInt16] = [0xD800, 0x0A, 0xDFFF, 0xDFFF, 0x0A, 0x61]
        let diffs = TextDiff.semanticDiff(from: lone, to: lone.reversed())
        #expect(rebuildTexts(diffs) == [lone, Array(lone.reversed())])
        // DMP's bisect indexes past its arrays for texts this short; diff_compute never calls it so.
        #expect(TextDiff.bisect([], []) == [.delete([]), .insert([])])
        #expect(TextDiff.bisect(utf16("a"), utf16("b")) == [.delete("a"), .insert("b")])
        #expect(TextDiff.commonOverlap([], []) == 0)
        #expect(TextDiff.indexOf(utf16("abc")[...], utf16("c")[...], from: 10) == nil)
        #expect(TextDiff.halfMatchI(utf16("abcd"), utf16("ab"), 10) == nil)
        var empty: [TextDiff.Edit] = []
        TextDiff.cleanupSemantic(&empty)
        TextDiff.cleanupMerge(&empty)
        TextDiff.cleanupSemanticLossless(&empty)
        #expect(empty == [])
    }

    @Test("every diff rebuilds both texts (pseudo-random texts, short and long)")
    func rebuildsTexts() {
        // A fixed linear congruential generator: the same texts on every run.
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        let alphabet = utf16("ab c.\n\r") + [0xD83D, 0xDC4D, 0xA0]
        func text(_ maxLength: Int) -> [UInt16] { (0..<next(maxLength + 1)).map { _ in alphabet[next(alphabet.count)] } }
        for round in 0..<300 {
            let old = text(round < 250 ? 40 : 260)
            var new = old
            for _ in 0..<(1 + next(4)) {
                let at = next(new.count + 1)
                let length = min(next(6), new.count - at)
                new.replaceSubrange(at..<(at + length), with: text(8))
            }
            if round % 7 == 0 { new = text(40) }
            for halfMatch in [true, false] {
                let semantic = TextDiff.semanticDiff(from: old, to: new, halfMatch: halfMatch)
                #expect(rebuildTexts(semantic) == [old, new], "round \(round)")
                let raw = TextDiff.diff(from: old, to: new, checkLines: false, halfMatch: halfMatch)
                #expect(rebuildTexts(raw) == [old, new], "round \(round)")
                // Without line mode, a diff_main result holds no empty edit and no two edits of one
                // kind in a row. (With it, DMP can leave an empty edit between two equalities,
                // which cleanupMerge keeps; this port reproduces that too.)
                let hasEmpty = raw.contains { $0.text.isEmpty }
                let hasRepeat = zip(raw, raw.dropFirst()).contains { pair in pair.0.operation == pair.1.operation }
                #expect(!hasEmpty, "round \(round)")
                #expect(!hasRepeat, "round \(round)")
            }
        }
    }
}
