// Diagnostics report benchmark (issue 53): `DiagnosticsBenchmarks [messages] [ops] [channels]`,
// default 100,000 messages, 1,000 queued ops and 500 channels, release build, by hand
// (docs/diagnostics.md, docs/performance.md).
//
// Fills a store through `ChatStore.load(messages:)`, gives each channel its history and live
// checkpoints (a raw insert, as a synced store holds them), queues the ops through a replica that
// never goes online, then times `replica.diagnostics.report()` 40 times (and 40 with ids hashed). The raw
// limit is the report's store reads alone on a raw connection: the row counts, the outbox's
// states, the checkpoints. Prints p50 and p95, the JSON's size, and the ratio.
import BenchmarkSupport
import Foundation
import GRDB
import PubNubReplica
import ReplicaStore

let arguments = CommandLine.arguments.dropFirst()
let count = arguments.first.flatMap(Int.init) ?? 100_000
let opCount = arguments.dropFirst().first.flatMap(Int.init) ?? 1_000
let channelCount = arguments.dropFirst(2).first.flatMap(Int.init) ?? 500
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pnreplicate-diagnostics-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let path = directory.appendingPathComponent("diagnostics.sqlite").path

func millis(_ d: Duration) -> Double { Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15 }
func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
}

// 1. Fill: messages, checkpoints, ops.
do {
    let store = try ChatStore<DefaultChatCustom>.open(at: path)
    var written = 0
    while written < count {
        let end = min(count, written + 20_000)
        let messages = try (written..<end).map { i in
            try ChatMessage<FlatCustom>(
                id: "m\(i)", text: "message number \(i) of the benchmark",
                createdAt: ISOTimestamp(nanoseconds: Int64(1_700_000_000 + i) * 1_000_000_000, fractionDigits: 3),
                timetoken: Timetoken(rawValue: 17_000_000_000_000_000 + UInt64(i) * 10_000), userId: "user-\(i % 200)",
                channelId: "channel-\(i % channelCount)")
        }
        let report = try await store.load(messages: messages)
        precondition(report.succeeded, "load failed: \(report.failedBatches)")
        written = end
    }
}
let raw = try rawConnection(toStoreAt: path)
try raw.write { db in
    for channel in 0..<channelCount {
        for scope in ["history", "live"] {
            try db.execute(
                sql: "INSERT INTO sync_checkpoints (scope, cursor, updated_at) VALUES (?, ?, ?)",
                arguments: ["\(scope):channel-\(channel)", "\(17_000_000_000_000_000 + UInt64(channel) * 7)", 1_700_000_000_000 + channel])
        }
    }
}
var configuration = ReplicaConfiguration(publishKey: "pub-c-bench", subscribeKey: "sub-c-bench", userId: "me", store: .file(path))
configuration.origin = "http://127.0.0.1:9"   // never reached: the replica is never started
let replica = try Replica<DefaultChatCustom>(configuration)
for i in 0..<opCount {
    _ = try await replica.messages.send(text: "queued \(i)", to: "channel-\(i % channelCount)")
}

// 2. Reports.
let clock = ContinuousClock()
var plain: [Double] = []
var hashed: [Double] = []
var rawTimes: [Double] = []
var bytes = 0
_ = try await replica.diagnostics.report()   // warm: statements prepared, pages cached
for _ in 0..<40 {
    var report: DiagnosticsReport?
    plain.append(millis(try await clock.measure { report = try await replica.diagnostics.report() }))
    bytes = try report!.json().count
    hashed.append(millis(try await clock.measure { _ = try await replica.diagnostics.report(hashingIdentifiers: true) }))
    rawTimes.append(millis(try await clock.measure {
        _ = try await raw.read { db in
            let rows = try Int.fetchOne(db, sql: "SELECT count(*) FROM messages")
            let states = try Row.fetchAll(db, sql: "SELECT state, count(*) FROM outbox GROUP BY state")
            let checkpoints = try Row.fetchAll(db, sql: "SELECT scope, cursor, updated_at FROM sync_checkpoints")
            return (rows, states.count, checkpoints.count)
        }
    }))
}
let p95 = percentile(plain, 0.95), rawP95 = percentile(rawTimes, 0.95)
print("store: \(count) messages, \(opCount) ops, \(channelCount) channels; report JSON \(bytes) bytes")
print("")
print("| report | p50 | p95 | raw p95 | p95 ÷ raw |")
print("|---|---|---|---|---|")
print("| diagnostics() | \(String(format: "%.1f", percentile(plain, 0.5))) ms | \(String(format: "%.1f", p95)) ms | \(String(format: "%.1f", rawP95)) ms | \(String(format: "%.1f", p95 / max(rawP95, 0.001))) |")
print("| diagnostics(hashingIdentifiers: true) | \(String(format: "%.1f", percentile(hashed, 0.5))) ms | \(String(format: "%.1f", percentile(hashed, 0.95))) ms | | |")
print("")
print("bench: diagnostics_p95_ms \(String(format: "%.1f", p95))")
print("bench: diagnostics_json_bytes \(bytes)")
