import Foundation
import Logging
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

/// How many fuzz cases run, from which seed. `swift test` runs 60 replicator cases (about 1 s of
/// CPU each in debug, in chunks of 10 that run beside the other tests) and 500 decoder cases; the long run
/// is `scripts/soak fuzz 10000` (docs/reliability.md, "Soaks"). A failure names its seed and case;
/// `PNREPLICATE_FUZZ_SEED=S PNREPLICATE_FUZZ_CASE=I swift test --filter Fuzz` replays that case alone.
enum FuzzConfig {
    static let environment = ProcessInfo.processInfo.environment
    static let seed: UInt64 = environment["PNREPLICATE_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0xF022_5EED
    /// Cases 1 to 60 (indices 0 to 59) in `swift test`; a count or a range of cases (``SoakSeeds``).
    static let cases = SoakSeeds.range("PNREPLICATE_FUZZ_CASES", default: 40)
    static let only: Int? = environment["PNREPLICATE_FUZZ_CASE"].flatMap { Int($0) }
    /// `PNREPLICATE_FUZZ_TRACE=1` prints each case's start and end on stderr (to find a hanging case).
    static let trace = environment["PNREPLICATE_FUZZ_TRACE"] == "1"
    /// Requests one case may make before it counts as a loop without progress (it then goes offline).
    static let requestBudget = 2_000

    /// The case indices to run.
    static var indices: [Int] { only.map { [$0] } ?? cases.map { Int($0) - 1 } }

    /// The decoder fuzz's indices: 500 unless a count, range or case is given (a decoder case
    /// costs a fraction of a replicator case, and 200 are needed to meet every mutation).
    static var wireIndices: [Int] {
        only != nil || environment["PNREPLICATE_FUZZ_CASES"] != nil ? indices : Array(0..<500)
    }

    /// The indices in chunks of 10, one parameterized test case each (so each has its own time
    /// limit, and the chunks spread over the cores beside the other tests instead of running one
    /// after another at the end of the suite: serialized chunks of 25 were its last 75 s).
    static var chunks: [ClosedRange<Int>] {
        let all = indices
        return stride(from: 0, to: all.count, by: 10).map { all[$0]...all[min(all.count, $0 + 10) - 1] }
    }

    /// How to rerun one case.
    static func replay(_ index: Int) -> String {
        "[replay: PNREPLICATE_FUZZ_SEED=\(seed) PNREPLICATE_FUZZ_CASE=\(index) swift test --filter Fuzz]"
    }
}

/// The hostile transport of one case, with a request budget: a client that keeps asking past it
/// is looping without progress; from then on it is offline, so that the case still ends.
final class BudgetTransport: Transport, @unchecked Sendable {
    let inner: InProcessTransport
    private let lock = NSLock()
    private var count = 0

    init(_ inner: InProcessTransport) { self.inner = inner }

    var requests: Int { lock.withLock { count } }
    var overBudget: Bool { requests > FuzzConfig.requestBudget }

    func send(_ request: WireRequest, to origin: Origin) async throws(TransportFailure) -> WireResponse {
        let made = lock.withLock {
            count += 1
            return count
        }
        guard made <= FuzzConfig.requestBudget else { throw .notSent(reason: "fuzz: request budget spent") }
        return try await inner.send(request, to: origin)
    }
}

/// Collects what the library logs at warning level and above.
final class LogCapture: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [String] = []

    var lines: [String] { lock.withLock { entries } }
    func append(_ line: String) { lock.withLock { entries.append(line) } }

    func logger(_ label: String) -> Logger {
        Logger(label: label) { _ in Handler(capture: self) }
    }

    struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .warning
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let error = event.metadata?["error"].map { "\($0)" } ?? ""
            capture.append("\(event.message)|\(error)")
        }
    }
}

enum FuzzCheck {
    /// Whether an error is one of the library's own types (what the API promises to throw).
    static func isTyped(_ error: any Error) -> Bool {
        error is WireError || error is ReconcilerError || error is OutboxError || error is StoreError
            || error is ModelValidationError || error is CancellationError || error is TimetokenError
            || error is ISOTimestampError || error is PagingError
    }

    /// Whether a stored or logged error text is a foreign error's description that escaped
    /// untyped (a bare `DecodingError` or `NSError`), rather than a library error's.
    static func looksUntyped(_ text: String) -> Bool {
        let foreign = ["typeMismatch(", "valueNotFound(", "keyNotFound(", "dataCorrupted(", "DecodingError", "EncodingError"]
        return foreign.contains { text.hasPrefix($0) } || text.contains("Error Domain=")
    }
}
