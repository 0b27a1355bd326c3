// Reconciler benchmark: `swift run -c release --package-path Benchmarks --scratch-path .build ReconcilerBenchmarks [messages] [--rss]`.
//
// Ingest (default, 100,000 messages): `Reconciler.catchUp` pulls one channel's whole history page
// by page (100 per page) from a transport that answers with prepared history bodies, so the time
// is the reconciler's: the client, JSON decoding, conversion and one transaction per page with its
// checkpoint. Then the same rows go into a fresh store through one prepared raw SQLite INSERT in
// one transaction. Prints both rates and their ratio.
//
// `--rss` (e.g. 1,000,000 messages): the same catch-up with pages made on demand (the fake server
// holds nothing), printing the process's peak resident set size before and after.
//
// `--encryption`: the catch-up again on history whose payloads are encrypted (the ACRH cryptor,
// as PubNub's SDKs publish them) with a client that decrypts, into a fresh store; prints both rates
// and the ratio encrypted/plain (docs/encryption.md; goal ≥ 0.8).
// Run by hand; never part of `swift test`.
import BenchmarkSupport
import Foundation
import GRDB
import GRDBSQLite
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

let arguments = CommandLine.arguments.dropFirst()
let count = arguments.first.flatMap(Int.init) ?? 100_000
let rssMode = arguments.contains("--rss")
let encryptionMode = arguments.contains("--encryption")
let benchCrypto = CryptoModule(cipherKey: "benchmark cipher key")
let channel = "bench"
let firstTimetoken: UInt64 = 17_000_000_000_000_000

/// The history body of messages `range` (oldest first), as PubNub sends it.
func historyBody(_ range: Range<Int>, encrypted: Bool = false) -> Data {
    var items: [String] = []
    items.reserveCapacity(range.count)
    for i in range {
        let id = String(format: "%08x-0000-4000-8000-%012x", i, i)
        let text = String(repeating: "lorem ipsum ", count: 8) + String(i)
        var message = #"{"id":"\#(id)","text":"\#(text)","contentType":"none","custom":{"lang":"en","priority":\#(i % 3)},"createdAt":"2026-01-01T00:00:00.000Z"}"#
        if encrypted { message = "\"" + (try! benchCrypto.encrypt(Data(message.utf8))).base64EncodedString() + "\"" }
        items.append(
            #"{"message":\#(message),"timetoken":"\#(firstTimetoken + UInt64(i) * 10_000)","uuid":"user-\#(i % 50)","meta":""}"#)
    }
    let body = #"{"status":200,"error":false,"error_message":"","channels":{"\#(channel)":[\#(items.joined(separator: ","))]}}"#
    return Data(body.utf8)
}

/// Answers history requests for `count` messages (timetoken = first + i × 10,000): the newest
/// `max` with `end ≤ tt < start`. Pages are prepared up front (`prepared`) or made on demand.
final class SyntheticHistory: Transport, @unchecked Sendable {
    let count: Int
    let encrypted: Bool
    private var pages: [Int: Data] = [:]

    init(count: Int, prepare: Bool, encrypted: Bool = false) {
        self.count = count
        self.encrypted = encrypted
        if prepare {
            var upper = count
            while upper > 0 {
                pages[upper] = historyBody(max(0, upper - 100)..<upper, encrypted: encrypted)
                upper -= 100
            }
        }
    }

    func index(_ value: String?, default fallback: Int) -> Int {
        guard let value, let tt = UInt64(value) else { return fallback }
        return tt <= firstTimetoken ? 0 : Int((tt - firstTimetoken + 9_999) / 10_000)
    }

    func send(_ request: WireRequest, to origin: Origin) async throws(TransportFailure) -> WireResponse {
        let upper = min(count, index(request.queryValue("start"), default: count))
        let lower = max(index(request.queryValue("end"), default: 0), upper - (Int(request.queryValue("max") ?? "100") ?? 100))
        let body = upper <= lower ? historyBody(0..<0) : (pages[upper] ?? historyBody(lower..<upper, encrypted: encrypted))
        return WireResponse(status: 200, headers: ["Content-Type": "application/json"], body: body)
    }
}

func seconds(_ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

func peakRSSMegabytes() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024  // kilobytes on Linux
}

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pnreplicate-rbench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }

let transport = SyntheticHistory(count: count, prepare: !rssMode)
let client = PubNubClient(
    configuration: try PubNubConfiguration(publishKey: "demo", subscribeKey: "demo", userId: "me", origin: "http://bench.invalid"),
    transport: transport)
let store = try ChatStore<DefaultChatCustom>.open(at: directory.appendingPathComponent("pull.sqlite").path)
var benchOptions = ReconcilerOptions()
if let index = arguments.firstIndex(of: "--pages-per-commit"),
   let pages = arguments[arguments.index(after: index)...].first.flatMap(Int.init)
{
    benchOptions.pagesPerCommit = pages
}
let reconciler = Reconciler(store: store, client: client, options: benchOptions)
let rssBefore = peakRSSMegabytes()
var report = ChannelPullReport(channel: channel)
let pullSeconds = try await seconds { report = try await reconciler.catchUp(channel: channel) }
precondition(report.inserted == count, "pulled \(report.inserted) of \(count)")
let rssAfter = peakRSSMegabytes()
let pullRate = Double(count) / pullSeconds
print("messages                  \(count)")
print("catchUp (decode + apply)  \(Int(pullRate)) messages/s  (\(String(format: "%.2f", pullSeconds)) s, \(report.pages) pages)")
if rssMode {
    print("peak RSS                  \(String(format: "%.1f", rssBefore)) MB before, \(String(format: "%.1f", rssAfter)) MB after")
    exit(0)
}
if encryptionMode {
    let encryptedClient = PubNubClient(
        configuration: try PubNubConfiguration(publishKey: "demo", subscribeKey: "demo", userId: "me", origin: "http://bench.invalid"),
        transport: SyntheticHistory(count: count, prepare: true, encrypted: true), crypto: benchCrypto)
    let encryptedStore = try ChatStore<DefaultChatCustom>.open(at: directory.appendingPathComponent("encrypted.sqlite").path)
    let encryptedReconciler = Reconciler(store: encryptedStore, client: encryptedClient)
    var encryptedReport = ChannelPullReport(channel: channel)
    let encryptedSeconds = try await seconds { encryptedReport = try await encryptedReconciler.catchUp(channel: channel) }
    precondition(encryptedReport.inserted == count, "pulled \(encryptedReport.inserted) of \(count) encrypted")
    let encryptedRate = Double(count) / encryptedSeconds
    print("catchUp, encrypted        \(Int(encryptedRate)) messages/s  (\(String(format: "%.2f", encryptedSeconds)) s, ACRH, decrypted)")
    print("ratio encrypted/plain     \(String(format: "%.2f", encryptedRate / pullRate))  (goal ≥ 0.8)")
    exit(0)
}

// The raw limit: the same rows, one prepared INSERT, one transaction.
let rows: [(id: String, text: String, custom: String, user: String, tt: Int64)] = (0..<count).map { i in
    (String(format: "%08x-0000-4000-8000-%012x", i, i), String(repeating: "lorem ipsum ", count: 8) + String(i),
     #"{"lang":"en","priority":\#(i % 3)}"#, "user-\(i % 50)", Int64(firstTimetoken + UInt64(i) * 10_000))
}
let rawStore = try rawConnection(toStoreAt: directory.appendingPathComponent("raw.sqlite").path)
let rawSeconds = try await seconds {
    try await rawStore.write { db in
        let connection = db.sqliteConnection
        let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        var statement: OpaquePointer?
        let sql = """
            INSERT INTO messages (id, channel_id, user_id, text, content_type, content, custom, created_at, timetoken,
                                  delivery, local_seq) VALUES (?, ?, ?, ?, 'none', NULL, ?, '2026-01-01T00:00:00.000Z', ?, 'sent', ?)
            """
        guard sqlite3_prepare_v3(connection, sql, -1, 0, &statement, nil) == SQLITE_OK else {
            fatalError(String(cString: sqlite3_errmsg(connection)))
        }
        defer { sqlite3_finalize(statement) }
        for (index, row) in rows.enumerated() {
            sqlite3_bind_text(statement, 1, row.id, -1, SQLITE_TRANSIENT)
            sqlite3_bind_text(statement, 2, channel, -1, SQLITE_TRANSIENT)
            sqlite3_bind_text(statement, 3, row.user, -1, SQLITE_TRANSIENT)
            sqlite3_bind_text(statement, 4, row.text, -1, SQLITE_TRANSIENT)
            sqlite3_bind_text(statement, 5, row.custom, -1, SQLITE_TRANSIENT)
            sqlite3_bind_int64(statement, 6, row.tt)
            sqlite3_bind_int64(statement, 7, Int64(index + 1))
            guard sqlite3_step(statement) == SQLITE_DONE else { fatalError(String(cString: sqlite3_errmsg(connection))) }
            sqlite3_reset(statement)
        }
    }
}
let rawRate = Double(count) / rawSeconds
print("raw SQLite insert         \(Int(rawRate)) rows/s  (\(String(format: "%.2f", rawSeconds)) s, one transaction)")
print("ratio catchUp/raw         \(String(format: "%.2f", pullRate / rawRate))")
// For pnreplicate-bench.
print("bench: ingest \(pullRate)")
print("bench: ingest-raw \(rawRate)")
