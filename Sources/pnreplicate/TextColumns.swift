import Foundation
import ReplicaModel

extension Output {
    /// Left-aligned columns under a header; the last column is not padded. Prints `empty`
    /// instead when there are no rows.
    static func columns(_ header: [String], _ rows: [[String]], empty: String) {
        guard !rows.isEmpty else { return print(empty) }
        let all = [header] + rows
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
}
