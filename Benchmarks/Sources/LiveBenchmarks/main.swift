// Live sync benchmark: `swift run -c release --package-path Benchmarks --scratch-path .build LiveBenchmarks [messages]` (default 10,000).
//
// Starts the Hummingbird simulator on a loopback ephemeral port in this process (PubNub's
// buffer rules, long polls held until an event arrives). Device A runs a `LiveSync` over its own
// store and AsyncHTTPClient transport; device B is a plain client.
//
// 1. Latency: B publishes one chat message at a time; the time from the publish call to the row
//    being visible to a `ValueObservation` on A's store. p50, p99 and max over `messages`.
// 2. Live ingest: batches of 99 messages (under the 100 that would mean an overflow) published
//    by 8 publishers while A waits; then A's one long poll receives and applies the batch. Only
//    A's steps are timed: the rate of the live path itself, not of the publishers. Against it,
//    history ingest: a fresh device C pulls the same messages (`Reconciler.catchUp`, 100 per
//    page), timed the same way, over the same loopback.
//
// Run by hand; never part of `swift test`.
import Foundation
import GRDB
import PubNubSimulator
import PubNubWire
import PubNubWireNIO
import ReplicaModel
import ReplicaStore
import Replicator
import SimulatorHTTP

let count = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 10_000
let server = PubNubServer()
let (ports, portContinuation) = AsyncStream<Int>.makeStream()
let serverTask = Task {
    try await SimulatorHTTPServer.run(server: server, plan: FaultPlan(seed: 0, profile: .none)) { portContinuation.yield($0) }
}
func firstPort(_ ports: AsyncStream<Int>) async -> Int? {
    for await port in ports { return port }
    return nil
}
guard let port = await firstPort(ports) else { fatalError("the simulator did not start") }

/// One transport per device (A's long poll holds a connection), shut down at the end.
let transportA = AsyncHTTPClientTransport(timeout: .seconds(30)), transportB = AsyncHTTPClientTransport(timeout: .seconds(30))
let transportC = AsyncHTTPClientTransport(timeout: .seconds(30))

func client(_ userId: String, _ transport: AsyncHTTPClientTransport) throws -> PubNubClient {
    PubNubClient(
        configuration: try PubNubConfiguration(publishKey: "demo", subscribeKey: "demo", userId: userId, origin: "http://127.0.0.1:\(port)"),
        transport: transport)
}

func seconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

func payload(_ prefix: String, _ i: Int) -> JSONValue {
    ["id": .string(String(format: "\(prefix)%08x-0000-4000-8000-%012x", i, i)), "text": .string("message \(i) " + String(repeating: "x", count: 40)),
     "contentType": "none", "createdAt": "2026-01-01T00:00:00.000Z"]
}

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pnreplicate-live-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }

// Device A, live on both channels (the membership makes them channels of interest).
let b = try client("b", transportB)
let a = try client("a", transportA)
_ = try await a.perform(try a.appContext.setMembershipsRequest(
    userId: "a", set: [MembershipSet<JSONValue>(id: "latency"), MembershipSet<JSONValue>(id: "ingest")], remove: []))
let storeA = try ChatStore<DefaultChatCustom>.open(at: directory.appendingPathComponent("a.sqlite").path)
let live = LiveSync(reconciler: Reconciler(store: storeA, client: a))
let states = live.states()
let running = Task { try await live.run() }
for await state in states where state == .live { break }

func countQuery(_ channel: String) -> StoreQuery<Int> {
    StoreQuery { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM messages WHERE channel_id = ?", arguments: [channel]) ?? 0 }
}

// 1. Latency, one message at a time.
func measureLatencies() async throws -> [Double] {
    var latencies: [Double] = []
    latencies.reserveCapacity(count)
    var observed = storeA.observe(countQuery("latency")).makeAsyncIterator()
    for i in 0..<count {
        let start = ContinuousClock.now
        _ = try await b.publish(PublishRequest(channel: "latency", message: payload("l", i)))
        while let seen = try await observed.next(), seen < i + 1 {}
        latencies.append(seconds(since: start) * 1000)
    }
    return latencies.sorted()
}
let latencies = try await measureLatencies()
func percentile(_ p: Double) -> Double { latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] }
let latencyFills = await live.statistics.fills
print("messages                      \(count)")

print(String(format: "publish → observed on A (ms)  p50 %.2f  p99 %.2f  max %.2f", percentile(0.5), percentile(0.99), latencies.last ?? 0))
print("A's fills during latency      \(latencyFills.map { "\($0.key.rawValue)=\($0.value)" }.sorted())")
print("bench: live-p50 \(percentile(0.5))")  // for pnreplicate-bench
print("bench: live-p99 \(percentile(0.99))")

// 2. Live ingest (see the top of this file).
running.cancel()
try? await running.value
// Stepped by hand, one batch per step: a pipelined poll would be sent before the next batch is
// published and answer with its first event, so the steps are not pipelined here.
var stepperOptions = LiveSyncOptions()
stepperOptions.pipelinePolls = false
let stepper = LiveSync(reconciler: Reconciler(store: storeA, client: a), options: stepperOptions)
while await !stepper.isReadyToPoll { try await stepper.step() }
let before = await stepper.statistics
var liveSeconds = 0.0
var published = 0
let publishers = 8
while published < count {
    let batch = min(99, count - published)
    let first = published
    try await withThrowingTaskGroup(of: Void.self) { group in
        for p in 0..<publishers {
            group.addTask {
                for i in stride(from: first + p, to: first + batch, by: publishers) {
                    _ = try await b.publish(PublishRequest(channel: "ingest", message: payload("i", i)))
                }
            }
        }
        try await group.waitForAll()
    }
    published += batch
    let start = ContinuousClock.now
    try await stepper.step()
    liveSeconds += seconds(since: start)
}
let after = await stepper.statistics
let stored = try await storeA.fetch(countQuery("ingest"))
precondition(stored == count, "A stored \(stored) of \(count)")

// History ingest of the same messages by a fresh device C.
let storeC = try ChatStore<DefaultChatCustom>.open(at: directory.appendingPathComponent("c.sqlite").path)
let c = Reconciler(store: storeC, client: try client("c", transportC))
let historyStart = ContinuousClock.now
let pulled = try await c.catchUp(channel: "ingest")
let historySeconds = seconds(since: historyStart)
precondition(pulled.inserted == count, "C pulled \(pulled.inserted) of \(count)")

let liveRate = Double(count) / liveSeconds, historyRate = Double(count) / historySeconds
print(String(format: "live ingest on A              %.0f messages/s  (%.2f s in %d polls of up to 99 events)", liveRate, liveSeconds, after.answers - before.answers))
print(String(format: "history ingest on C           %.0f messages/s  (%.2f s, catchUp)", historyRate, historySeconds))
print(String(format: "ratio live/history            %.2f", liveRate / historyRate))
print("bench: live-ingest \(liveRate)")
print("bench: history-ingest \(historyRate)")
print("A during ingest               \(after.answers - before.answers) answers, \(after.events - before.events) events, fills \(after.fills.map { "\($0.key.rawValue)=\($0.value - (before.fills[$0.key] ?? 0))" }.sorted()), \(after.recoveredMessages - before.recoveredMessages) messages recovered by fills")
for transport in [transportA, transportB, transportC] { try await transport.shutdown() }
serverTask.cancel()
