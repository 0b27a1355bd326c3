import Foundation
import Testing

/// The seeds of a seeded scenario: a small count in `swift test`, any count or range from an
/// environment variable for a soak.
///
/// `PNREPLICATE_LIVE_SEEDS=10000` runs seeds 1 to 10,000; `PNREPLICATE_LIVE_SEEDS=5001-10000` runs
/// only that range, so that `scripts/soak` can split one long run over several processes (one per
/// core). A value that is neither stops the run: a soak that silently fell back to the small
/// default would be recorded as a long run it never was.
enum SoakSeeds {
    static let environment = ProcessInfo.processInfo.environment

    /// The seeds that `variable` names, or `1...defaultCount` when it is unset.
    static func range(_ variable: String, default defaultCount: UInt64) -> ClosedRange<UInt64> {
        guard let text = environment[variable], !text.isEmpty else { return 1...max(1, defaultCount) }
        guard let range = parse(text) else {
            preconditionFailure("\(variable)=\(text): expected a count (10000) or a range of seeds (5001-10000)")
        }
        return range
    }

    /// `N` as `1...N`, `A-B` as `A...B`; nil for anything else (zero, a reversed range, text).
    static func parse(_ text: String) -> ClosedRange<UInt64>? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        switch parts.count {
        case 1:
            guard let count = UInt64(parts[0]), count > 0 else { return nil }
            return 1...count
        case 2:
            guard let low = UInt64(parts[0]), let high = UInt64(parts[1]), low > 0, low <= high else { return nil }
            return low...high
        default:
            return nil
        }
    }
}

@Suite("Soak seed counts and ranges")
struct SoakSeedsTests {
    @Test("a count starts at seed 1, a range is taken as given, anything else is refused")
    func parse() {
        #expect(SoakSeeds.parse("10000") == 1...10000)
        #expect(SoakSeeds.parse("5001-10000") == 5001...10000)
        #expect(SoakSeeds.parse("7-7") == 7...7)
        for bad in ["0", "0-5", "9-5", "ten", "1-2-3", "-5", "5-", " 5"] {
            #expect(SoakSeeds.parse(bad) == nil, "\(bad)")
        }
    }
}
