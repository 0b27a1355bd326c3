// Chat benchmark: `swift run -c release --package-path Benchmarks --scratch-path .build ChatBenchmarks [messages] [channels]`.
//
// Fills a store with N messages (default 100,000) across C channels (default 200) from 50 users,
// a membership of "me" in every channel read up to the middle of it, a reaction on every 10th
// message and a soft delete on every 100th. Then times `queries.unreadCounts(for:)` (the
// median of 51 runs) against the raw limit measured in the same run: one prepared
// `count(*)` per channel over the same index, through the SQLite C API, with the read positions
// already known. Prints both and their ratio. Run by hand; never part of `swift test`.
import BenchmarkSupport
import Foundation
import GRDB
import GRDBSQLite
import ReplicaModel
import ReplicaStore

let arguments = CommandLine.arguments.dropFirst()
let count = arguments.first.flatMap(Int.init) ?? 100_000
let channelCount = arguments.dropFirst().first.flatMap(Int.init) ?? 200
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pnreplicate-chat-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }

func timetoken(_ i: Int) -> Timetoken { Timetoken(rawValue: 17_000_000_000_000_000 + UInt64(i) * 10_000) }

let path = directory.appendingPathComponent("chat.sqlite").path
let store = try ChatStore<DefaultChatCustom>.open(at: path)
// The fixture's memberships and the raw limit go through a raw connection to the same file.
let rawDatabase = try rawConnection(toStoreAt: path)
let messages = try (0..<count).map { i in
    try ChatMessage<FlatCustom>(
        id: "m\(i)", text: "message \(i)", createdAt: ISOTimestamp(date: timetoken(i).date), timetoken: timetoken(i),
        userId: i % 7 == 0 ? "me" : "user-\(i % 50)", channelId: "channel-\(i % channelCount)")
}
let loaded = try await store.load(messages: messages)
precondition(loaded.succeeded, "load failed")
var actions: [ChatMessageAction] = []
for i in stride(from: 0, to: count, by: 10) {
    actions.append(try ChatMessageAction(
        type: ChatSDKFormat.reactionType, value: "👍", userId: "user-1", channelId: "channel-\(i % channelCount)",
        messageTimetoken: timetoken(i), actionTimetoken: Timetoken(rawValue: timetoken(i).rawValue + 1)))
    if i % 100 == 0 {
        actions.append(try ChatMessageAction(
            type: ChatSDKFormat.deletedType, value: ChatSDKFormat.deletedValue, userId: "user-2", channelId: "channel-\(i % channelCount)",
            messageTimetoken: timetoken(i), actionTimetoken: Timetoken(rawValue: timetoken(i).rawValue + 2)))
    }
}
_ = try await store.load(messageActions: actions)
// "me" reads each channel up to its middle message.
var positions: [String: Int64] = [:]
try rawDatabase.write { db in
    try db.execute(sql: "INSERT INTO users (id) VALUES ('me')")
    for c in 0..<channelCount {
        let channel = "channel-\(c)"
        let middle = Int64(timetoken(count / 2 - (count / 2) % channelCount + c).rawValue)
        positions[channel] = middle
        try db.execute(sql: "INSERT INTO channels (id, type) VALUES (?, 'group')", arguments: [channel])
        try db.execute(
            sql: "INSERT INTO members (channel_id, user_id, custom) VALUES (?, 'me', ?)",
            arguments: [channel, #"{"\#(ChatSDKFormat.lastReadKey)":"\#(middle)","role":"member"}"#])
    }
}

func milliseconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18) * 1000
}
func median(_ runs: Int, _ body: () throws -> Void) rethrows -> Double {
    var samples: [Double] = []
    for _ in 0..<runs { samples.append(try milliseconds(body)) }
    return samples.sorted()[runs / 2]
}

// 1. The library query.
var counts: [String: Int] = [:]
let query = store.queries.unreadCounts(for: "me")
let library = try median(51) { counts = try store.fetchNow(query) }
precondition(counts.count == channelCount, "counts of \(counts.count) channels")

// 2. The raw limit: count the index range after each known position, nothing else.
var rawTotal = 0
let raw = try median(51) {
    rawTotal = try rawDatabase.read { db in
        let connection = db.sqliteConnection
        var statement: OpaquePointer?
        let sql = "SELECT count(*) FROM messages WHERE channel_id = ? AND timetoken > ?"
        guard sqlite3_prepare_v3(connection, sql, -1, 0, &statement, nil) == SQLITE_OK else {
            fatalError(String(cString: sqlite3_errmsg(connection)))
        }
        defer { sqlite3_finalize(statement) }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        var total = 0
        for (channel, position) in positions {
            sqlite3_bind_text(statement, 1, channel, -1, transient)
            sqlite3_bind_int64(statement, 2, position)
            guard sqlite3_step(statement) == SQLITE_ROW else { fatalError(String(cString: sqlite3_errmsg(connection))) }
            total += Int(sqlite3_column_int64(statement, 0))
            sqlite3_reset(statement)
        }
        return total
    }
}
let unread = counts.values.reduce(0, +)
print("messages                    \(count) in \(channelCount) channels; \(actions.count) actions")
print("unread (library, exact)     \(unread) (own and soft-deleted left out); raw range count \(rawTotal)")
print("unreadCounts(for:)          \(String(format: "%.2f", library)) ms (median of 51)")
print("raw count(*) per channel    \(String(format: "%.2f", raw)) ms (median of 51)")
print("ratio library/raw           \(String(format: "%.2f", library / raw))")
print("target                      under 10 ms: \(library < 10 ? "met" : "NOT met")")
