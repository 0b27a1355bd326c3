import Foundation

/// How message text and search queries are prepared for the full-text index (`docs/search.md`):
/// the one place that decides what a "word" is for search.
///
/// SQLite's `unicode61` tokenizer (with `remove_diacritics 2`) already splits on spaces and
/// punctuation, folds case and removes diacritics (`Café` is found by `cafe`). What it cannot do
/// is split languages written without spaces: `我住在東京都` would be one token. So before
/// indexing, each run of letters of such a script (Chinese, Japanese kana, Hangul, Thai, Lao,
/// Khmer, Burmese) is written as its overlapping pairs, then its last letter alone
/// (`東京都` → `東京 京都 都`): a word of two letters or more is the phrase of its pairs, and one
/// letter is a prefix of a pair (``matchExpression(for:)``). Compatibility forms are folded first
/// (NFKC: full-width `ＡＢＣ` is `ABC`).
///
/// ```swift
/// SearchFolding.fold("我住在東京都")              // "我住 住在 在東 東京 京都 都"
/// SearchFolding.matchExpression(for: "東京 reco") // "\"東京\" \"reco\"*"
/// ```
package enum SearchFolding {
    /// `text` as the index stores it. ASCII text is returned as it is (the tokenizer does the rest).
    package static func fold(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text }
        let normalized = text.precomposedStringWithCompatibilityMapping
        var out = String.UnicodeScalarView()
        var run: [Unicode.Scalar] = []
        func flush() {
            guard !run.isEmpty else { return }
            if !out.isEmpty { out.append(" ") }
            if run.count == 1 {
                out.append(run[0])
            } else {
                for index in 0..<(run.count - 1) {
                    if index > 0 { out.append(" ") }
                    out.append(run[index])
                    out.append(run[index + 1])
                }
                out.append(" ")
                out.append(run[run.count - 1])
            }
            out.append(" ")
            run.removeAll(keepingCapacity: true)
        }
        for scalar in normalized.unicodeScalars {
            if isUnspaced(scalar) {
                run.append(scalar)
            } else {
                flush()
                out.append(scalar)
            }
        }
        flush()
        return String(out)
    }

    /// The FTS5 query for what a user typed: every word must occur (a word of an unspaced script
    /// as the phrase of its pairs), the last one as a prefix (`reco` finds `reconnect`) when it
    /// has two characters or more, or is one letter of an unspaced script. Every word is quoted,
    /// so FTS5's operators (`AND`, `NEAR`, `*`, `"`, `:`) typed by a user are only text. Nil when
    /// nothing searchable is left (only spaces and punctuation).
    package static func matchExpression(for query: String) -> String? {
        // Runs of unspaced letters, folded as the index folds them, but without the last letter
        // alone (a phrase of pairs matches the pairs in order).
        var terms: [(text: String, unspaced: Bool)] = []
        var word = String.UnicodeScalarView()
        var run: [Unicode.Scalar] = []
        func endWord() {
            if !word.isEmpty { terms.append((String(word), false)) }
            word = String.UnicodeScalarView()
        }
        func endRun() {
            guard !run.isEmpty else { return }
            if run.count == 1 {
                terms.append((String(String.UnicodeScalarView(run)), true))
            } else {
                var pairs = String.UnicodeScalarView()
                for index in 0..<(run.count - 1) {
                    if index > 0 { pairs.append(" ") }
                    pairs.append(run[index])
                    pairs.append(run[index + 1])
                }
                terms.append((String(pairs), false))
            }
            run.removeAll()
        }
        for scalar in query.precomposedStringWithCompatibilityMapping.unicodeScalars {
            if isUnspaced(scalar) {
                endWord()
                run.append(scalar)
            } else if scalar.properties.isAlphabetic || scalar.properties.numericType != nil || scalar.properties.generalCategory == .nonspacingMark {
                endRun()
                word.append(scalar)
            } else {
                endRun()
                endWord()
            }
        }
        endRun()
        endWord()
        guard !terms.isEmpty else { return nil }
        return terms.enumerated().map { index, term in
            let quoted = "\"" + term.text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            let isLast = index == terms.count - 1
            let prefix = isLast && (term.unspaced || (term.text.unicodeScalars.count >= 2 && !term.text.contains(" ")))
            return prefix ? quoted + "*" : quoted
        }.joined(separator: " ")
    }

    /// Whether `scalar` is a letter of a script written without spaces between words.
    static func isUnspaced(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0E01...0x0E5B: true      // Thai
        case 0x0E81...0x0EDF: true      // Lao
        case 0x1000...0x109F: true      // Myanmar
        case 0x1780...0x17FF: true      // Khmer
        case 0x3041...0x309F: true      // Hiragana
        case 0x30A0...0x30FF: true      // Katakana
        case 0x3400...0x4DBF: true      // CJK Extension A
        case 0x4E00...0x9FFF: true      // CJK Unified Ideographs
        case 0xAC00...0xD7AF: true      // Hangul syllables
        case 0xF900...0xFAFF: true      // CJK Compatibility Ideographs
        case 0xFF66...0xFF9F: true      // half-width Katakana (NFKC makes them full-width first)
        case 0x20000...0x3134F: true    // CJK Extensions B-G
        default: false
        }
    }
}
