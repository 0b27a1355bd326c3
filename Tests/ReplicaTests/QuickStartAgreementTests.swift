import Foundation
import Testing

/// README's "Quick start" is the program that `Examples/` builds and tests (CI runs
/// `swift test --package-path Examples`): the two must not drift apart.
@Suite("README's Quick start is Examples/Sources/ChatExample/QuickStart.swift")
struct QuickStartAgreementTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test("the README's Quick start block and the example's source are the same, line for line")
    func agree() throws {
        let readme = try String(contentsOf: Self.root.appending(path: "README.md"), encoding: .utf8)
        let example = try String(
            contentsOf: Self.root.appending(path: "Examples/Sources/ChatExample/QuickStart.swift"), encoding: .utf8)
        let block = try #require(Self.firstSwiftBlock(after: "## Quick start", in: readme), "README has no Quick start block")
        #expect(block == example.trimmingCharacters(in: .newlines))
    }

    /// The first ```swift block after the line `heading`, without its fences.
    static func firstSwiftBlock(after heading: String, in text: String) -> String? {
        let lines = text.components(separatedBy: "\n")
        guard let start = lines.firstIndex(of: heading),
            let open = lines[start...].firstIndex(of: "```swift"),
            let close = lines[(open + 1)...].firstIndex(of: "```")
        else { return nil }
        return lines[(open + 1)..<close].joined(separator: "\n").trimmingCharacters(in: .newlines)
    }
}
