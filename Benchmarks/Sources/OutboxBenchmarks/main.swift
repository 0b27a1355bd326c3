// Outbox benchmark: `swift run -c release --package-path Benchmarks --scratch-path .build OutboxBenchmarks [messages]`.
//
// 1. Durable enqueue: `Outbox.send` (message row + outbox row in one transaction) against raw
//    single-row SQLite transactions of a similar row, both on disk in WAL mode, one commit each.
// 2. Drain: messages/s that `Outbox.drain` publishes to the loopback Hummingbird simulator
//    (AsyncHTTPClient transport) against the same transport's raw publish rate, in the same run,
//    on 1 channel (one lane: strictly sequential) and on 8 channels (8 lanes in parallel) against
//    8 concurrent raw publishers. The raw publishes send what the drain sends (the message payload
//    and `meta.pnr_op`), so the ratio is the outbox's cost, not the server's cost of a bigger body.
//    Run by hand; never part of `swift test`.
import Foundation
import GRDB
import PubNubSimulator
import PubNubWire
import PubNubWireNIO
import ReplicaModel
import ReplicaStore
import Replicator
import SimulatorHTTP

let total = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 2000

func seconds(_ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

func temporaryPath(_ name: String) -> String {
    NSTemporaryDirectory() + "pnreplicate-bench-\(name)-\(UUID().uuidString).sqlite"
}

func line(_ name: String, _ count: Int, _ time: Double) -> Double {
    let rate = Double(count) / time
    print("\(name.padding(toLength: 40, withPad: " ", startingAt: 0)) \(Int(rate)) /s")
    return rate
}

// The simulator on a loopback port.
let server = PubNubServer()
let (ports, continuation) = AsyncStream<Int>.makeStream()
let serverTask = Task {
    try await SimulatorHTTPServer.run(server: server, plan: FaultPlan(seed: 0, profile: .none)) { continuation.yield($0) }
}
func firstPort(_ ports: AsyncStream<Int>) async -> Int? {
    for await port in ports { return port }
    return nil
}
guard let port = await firstPort(ports) else { fatalError("the simulator did not start") }
let transport = AsyncHTTPClientTransport(connectionsPerHost: 16)
let client = PubNubClient(
    configuration: try PubNubConfiguration(
        publishKey: "demo", subscribeKey: "demo", userId: "bench", origin: "http://127.0.0.1:\(port)"),
    transport: transport)

// 1. Durable enqueue.
let store = try ChatStore<DefaultChatCustom>.open(at: temporaryPath("enqueue"))
let outbox = Outbox(store: store, client: client)
let enqueueTime = try await seconds {
    for i in 0..<total { _ = try await outbox.messages.send(text: "message \(i) " + String(repeating: "x", count: 40), to: "c\(i % 8)") }
}
let raw = try DatabasePool(path: temporaryPath("raw"))
try raw.write { try $0.execute(sql: "CREATE TABLE t (id TEXT PRIMARY KEY, channel TEXT, body TEXT, seq INTEGER)") }
let rawTime = try await seconds {
    for i in 0..<total {
        try await raw.write { db in
            try db.execute(
                sql: "INSERT INTO t VALUES (?, ?, ?, ?)",
                arguments: [UUID().uuidString, "c\(i % 8)", "message \(i) " + String(repeating: "x", count: 40), i])
        }
    }
}
let enqueueRate = line("enqueue (message + op, 1 commit each)", total, enqueueTime)
let rawRate = line("raw single-row SQLite transactions", total, rawTime)
print(String(format: "enqueue / raw commit ratio: %.2f\n", enqueueRate / rawRate))
print("bench: enqueue \(enqueueRate)")  // for pnreplicate-bench
print("bench: enqueue-raw \(rawRate)")

// 2. Drain vs raw publishes, same run, same transport.
for lanes in [1, 8] {
    let drainStore = try ChatStore<DefaultChatCustom>.open(at: temporaryPath("drain"))
    let drainOutbox = Outbox(store: drainStore, client: client)
    for i in 0..<total { _ = try await drainOutbox.messages.send(text: "drained \(i)", to: "drain\(lanes)-\(i % lanes)") }
    var report = DrainReport()
    let drainTime = try await seconds { report = try await drainOutbox.drain() }
    precondition(report.completed == total && report.remaining == 0, "drain left \(report)")
    let rawPublishTime = try await seconds {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<lanes {
                group.addTask {
                    for i in stride(from: worker, to: total, by: lanes) {
                        // The request the drain sends for the same message: its payload, `meta.pnr_op`.
                        let payload = try MessagePayload<FlatCustom>(
                            id: UUID().uuidString.lowercased(), text: "drained \(i)", createdAt: ISOTimestamp(date: Date()))
                        _ = try await client.publish(PublishRequest(
                            channel: "raw\(lanes)-\(worker)", message: try payload.jsonValue(),
                            meta: ["pnr_op": .string(UUID().uuidString.lowercased())]))
                    }
                }
            }
            try await group.waitForAll()
        }
    }
    let drainRate = line("drain, \(lanes) channel(s)", total, drainTime)
    let publishRate = line("raw publish, \(lanes) concurrent", total, rawPublishTime)
    print(String(format: "drain / raw publish ratio (%d lanes): %.2f\n", lanes, drainRate / publishRate))
    print("bench: drain-\(lanes) \(drainRate)")
    print("bench: publish-\(lanes) \(publishRate)")
}
try await transport.shutdown()
serverTask.cancel()
