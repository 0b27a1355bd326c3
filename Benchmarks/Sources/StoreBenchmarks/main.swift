// Store benchmark: `swift run -c release --package-path Benchmarks --scratch-path .build StoreBenchmarks [rows]`.
//
// Loads N messages (default 100,000) through `ChatStore.load(messages:)` into a fresh on-disk store,
// then inserts the same rows into another fresh store with one prepared statement through the raw
// SQLite C API, one transaction, the way feasibility.md measured the raw limit. Prints both rates
// and their ratio. Run by hand; never part of `swift test`.
import BenchmarkSupport
import Foundation
import GRDB
import GRDBSQLite
import ReplicaModel
import ReplicaStore

let count = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 100_000
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pnreplicate-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }

// Messages shaped like a chat history page: 10 channels, ~100-byte text, a small custom object.
func makeMessage(_ i: Int) throws -> ChatMessage<FlatCustom> {
    let custom: FlatCustom = ["lang": "en", "priority": .int(Int64(i % 3))]
    let createdAt = ISOTimestamp(nanoseconds: Int64(1_700_000_000 + i) * 1_000_000_000, fractionDigits: 3)
    let timetoken = Timetoken(rawValue: 17_000_000_000_000_000 + UInt64(i) * 10_000)
    return try ChatMessage(
        id: UUID().uuidString.lowercased(),
        text: String(repeating: "lorem ipsum ", count: 8) + String(i),
        contentType: "none",
        custom: custom,
        createdAt: createdAt,
        timetoken: timetoken,
        userId: "user-\(i % 50)",
        channelId: "channel-\(i % 10)")
}
let messages = try (0..<count).map(makeMessage)

func seconds(_ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

// 1. The library path.
let store = try ChatStore<DefaultChatCustom>.open(at: directory.appendingPathComponent("load.sqlite").path)
let loadSeconds = try await seconds {
    let report = try await store.load(messages: messages)
    precondition(report.succeeded && report.inserted == count, "load failed: \(report.failedBatches)")
}
let stored = try store.fetchNow(StoreQuery { try Int.fetchOne($0, sql: "SELECT count(*) FROM messages") ?? 0 })
precondition(stored == count, "stored \(stored) of \(count)")

// 2. The raw limit: the same rows, the same schema, one prepared INSERT, one transaction.
let rawStore = try rawConnection(toStoreAt: directory.appendingPathComponent("raw.sqlite").path)
let encoder = JSONEncoder()
encoder.outputFormatting = [.sortedKeys]
let rawSeconds = try await seconds {
    try await rawStore.write { db in
        let connection = db.sqliteConnection
        let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        var statement: OpaquePointer?
        let sql = """
            INSERT INTO messages (id, channel_id, user_id, text, content_type, content, custom, created_at, timetoken,
                                  delivery, local_seq) VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?, 'sent', ?)
            """
        guard sqlite3_prepare_v3(connection, sql, -1, 0, &statement, nil) == SQLITE_OK else {
            fatalError(String(cString: sqlite3_errmsg(connection)))
        }
        defer { sqlite3_finalize(statement) }
        for (index, message) in messages.enumerated() {
            let custom = String(decoding: try encoder.encode(message.custom), as: UTF8.self)
            sqlite3_bind_text(statement, 1, message.id, -1, SQLITE_TRANSIENT)
            sqlite3_bind_text(statement, 2, message.channelId, -1, SQLITE_TRANSIENT)
            sqlite3_bind_text(statement, 3, message.userId, -1, SQLITE_TRANSIENT)
            sqlite3_bind_text(statement, 4, message.text, -1, SQLITE_TRANSIENT)
            sqlite3_bind_text(statement, 5, message.contentType, -1, SQLITE_TRANSIENT)
            sqlite3_bind_text(statement, 6, custom, -1, SQLITE_TRANSIENT)
            sqlite3_bind_text(statement, 7, message.createdAt.description, -1, SQLITE_TRANSIENT)
            sqlite3_bind_int64(statement, 8, Int64(message.timetoken!.rawValue))
            sqlite3_bind_int64(statement, 9, Int64(index + 1))
            guard sqlite3_step(statement) == SQLITE_DONE else { fatalError(String(cString: sqlite3_errmsg(connection))) }
            sqlite3_reset(statement)
        }
    }
}

let loadRate = Double(count) / loadSeconds
let rawRate = Double(count) / rawSeconds
print("rows                      \(count)")
print("load(messages:)           \(Int(loadRate)) rows/s  (\(String(format: "%.2f", loadSeconds)) s, batches of 256)")
print("raw SQLite insert         \(Int(rawRate)) rows/s  (\(String(format: "%.2f", rawSeconds)) s, one transaction)")
print("ratio load/raw            \(String(format: "%.2f", loadRate / rawRate))")

// App-data records (issue 54): N records of one entity class with 3 indexed properties (a string,
// a number, a date-time), through `AppRecordIngest.load` (pages of 100, 32 per transaction, as a
// pull writes them), against one prepared INSERT of the same rows into the same schema, one
// transaction. Target: the ratio ≥ 0.5.
let order = AppClass(entity: "Order", properties: [
    AppProperty("state", kind: .string), AppProperty("amount", kind: .number), AppProperty("placedAt", kind: .datetime),
])
func makeRecord(_ i: Int) -> AppRecord {
    let placed = ISOTimestamp(nanoseconds: Int64(1_700_000_000 + i) * 1_000_000_000, fractionDigits: 6)
    return AppRecord(
        kind: .entity, id: "order.\(i)", className: "Order", status: "active",
        payload: [
            "state": .string(["open", "paid", "shipped"][i % 3]), "amount": .double(Double(i % 1_000) + 0.5),
            "placedAt": .string(placed.description), "customer": .string("customer-\(i % 500)"), "items": .int(Int64(i % 7)),
        ],
        eTag: "e\(i)", createdAt: placed, updatedAt: placed, expiresAt: nil)
}
let records = (0..<count).map(makeRecord)

let appStore = try ChatStore<DefaultChatCustom>.open(at: directory.appendingPathComponent("app.sqlite").path)
try await AppRecordIngest.bind([order], in: appStore)
let appSeconds = try await seconds {
    let outcome = try await AppRecordIngest.load(records, into: appStore)
    precondition(outcome.inserted == count, "app-data load: \(outcome)")
}

let rawApp = try rawConnection(toStoreAt: directory.appendingPathComponent("raw-app.sqlite").path)
let rawAppSeconds = try await seconds {
    try await rawApp.write { db in
        let connection = db.sqliteConnection
        let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        var statement: OpaquePointer?
        let sql = """
            INSERT INTO app_records (resource, id, class_name, class_version, status, payload, etag, created_at, updated_at,
                                     updated_ns, p0, p1, p2) VALUES ('entities', ?, 'Order', 1, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        guard sqlite3_prepare_v3(connection, sql, -1, 0, &statement, nil) == SQLITE_OK else {
            fatalError(String(cString: sqlite3_errmsg(connection)))
        }
        defer { sqlite3_finalize(statement) }
        for record in records {
            let payload = String(decoding: JSONValue.object(record.payload).compactJSONBytes()!, as: UTF8.self)
            let updated = record.updatedAt!
            sqlite3_bind_text(statement, 1, record.id, -1, SQLITE_TRANSIENT)
            sqlite3_bind_text(statement, 2, record.status, -1, SQLITE_TRANSIENT)
            sqlite3_bind_text(statement, 3, payload, -1, SQLITE_TRANSIENT)
            sqlite3_bind_text(statement, 4, record.eTag, -1, SQLITE_TRANSIENT)
            sqlite3_bind_text(statement, 5, record.createdAt!.description, -1, SQLITE_TRANSIENT)
            sqlite3_bind_text(statement, 6, updated.description, -1, SQLITE_TRANSIENT)
            sqlite3_bind_int64(statement, 7, updated.nanoseconds)
            sqlite3_bind_text(statement, 8, record.payload["state"]!.stringValue, -1, SQLITE_TRANSIENT)
            if case .double(let amount) = record.payload["amount"]! { sqlite3_bind_double(statement, 9, amount) }
            sqlite3_bind_int64(statement, 10, updated.nanoseconds)
            guard sqlite3_step(statement) == SQLITE_DONE else { fatalError(String(cString: sqlite3_errmsg(connection))) }
            sqlite3_reset(statement)
        }
    }
}
let appRate = Double(count) / appSeconds
let rawAppRate = Double(count) / rawAppSeconds
print("app records (3 indexed)   \(Int(appRate)) rows/s  (\(String(format: "%.2f", appSeconds)) s, pages of 100, 32 per transaction)")
print("raw app_records insert    \(Int(rawAppRate)) rows/s  (\(String(format: "%.2f", rawAppSeconds)) s, one transaction)")
print("ratio app records/raw     \(String(format: "%.2f", appRate / rawAppRate))")
