import Foundation
import ReplicaModel

extension Output {
    /// Left-aligned columns under a header; the last column is not padded. Prints `empty`
    /// instead when there are no rows.
    static func columns(_ header: [String], _ rows: [[String]], empty: String) {
        guard !rows.isEmpty else { return print(empty) }
        // Each cell on one line: a newline in another user's text would forge a row.
        let all = [header] + rows.map { $0.map(safeCell) }
        var widths = Array(repeating: 0, count: header.count)
        for row in all {
            for (index, cell) in row.enumerated() where index < widths.count { widths[index] = max(widths[index], cell.count) }
        }
        for row in all {
            let cells = row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index] + 2, withPad: " ", startingAt: 0)
            }
            print(cells.joined())
        }
    }

    /// Text other users wrote as one table cell: terminal-safe (``terminalSafe(_:)``), on one line
    /// (``oneLine(_:)``), tabs written `\t`.
    static func safeCell(_ text: String) -> String {
        terminalSafe(oneLine(text)).replacingOccurrences(of: "\t", with: "\\t")
    }

    /// An optional value as a cell: `-` for nil.
    static func cell(_ value: (any CustomStringConvertible)?) -> String {
        value.map(\.description) ?? "-"
    }

    /// A date as ISO 8601 UTC with milliseconds.
    static func time(_ date: Date) -> String {
        ISOTimestamp(date: date, fractionDigits: 3).description
    }

    /// Text on one line: line breaks shown as `⏎`.
    static func oneLine(_ text: String) -> String {
        text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).joined(separator: "⏎")
    }

    /// Text other users wrote (message text, names, ids), made safe to print on a terminal: every
    /// control character but newline and tab (C0, DEL, C1: escape sequences that could clear the
    /// screen, set the title or move the cursor) and the bidirectional overrides (which reorder
    /// what is shown) are written as `\u{…}`. Human output only: JSON output stays exact (its
    /// encoder escapes C0 itself).
    static func terminalSafe(_ text: String) -> String {
        // Printable ASCII (most text, and every line of a `--dry-run`) is safe: one pass over its bytes.
        if text.utf8.allSatisfy({ (0x20..<0x7F).contains($0) || $0 == 0x0A || $0 == 0x09 }) { return text }
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var safe = ""
        for scalar in text.unicodeScalars {
            if isUnsafe(scalar) {
                safe += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                safe.unicodeScalars.append(scalar)
            }
        }
        return safe
    }

    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: false
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
