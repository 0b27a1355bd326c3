// Transport benchmark: `swift run -c release --package-path Benchmarks --scratch-path .build WireBenchmarks [requests]`.
//
// Starts the Hummingbird simulator on a loopback ephemeral port in this process and measures
// requests/s of each transport (AsyncHTTPClient, URLSession), sequential and 16 concurrent, for
// `time` (a tiny body: the transport's own rate) and a history page of 100 messages (about 9 KB:
// encoding and decoding included). Run by hand; never part of `swift test`.
import Foundation
import PubNubSimulator
import PubNubWire
import PubNubWireNIO
import ReplicaModel
import SimulatorHTTP

let total = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 5000
let server = PubNubServer()
let plan = FaultPlan(seed: 0, profile: .none)
let (ports, continuation) = AsyncStream<Int>.makeStream()
let serverTask = Task { try await SimulatorHTTPServer.run(server: server, plan: plan) { continuation.yield($0) } }
func firstPort(_ ports: AsyncStream<Int>) async -> Int? {
    for await port in ports { return port }
    return nil
}
guard let port = await firstPort(ports) else { fatalError("the simulator did not start") }

func client(_ transport: any Transport) throws -> PubNubClient {
    PubNubClient(
        configuration: try PubNubConfiguration(publishKey: "demo", subscribeKey: "demo", userId: "bench", origin: "http://127.0.0.1:\(port)"),
        transport: transport)
}

// A history page of 100 messages of ~80 bytes.
let seeder = try client(URLSessionTransport())
for i in 0..<100 {
    _ = try await seeder.publish(PublishRequest(channel: "bench", message: ["id": .string("m\(i)"), "text": .string(String(repeating: "x", count: 60))]))
}
let query = HistoryQuery(channels: ["bench"])

enum Call: String { case time, history }

func call(_ kind: Call, _ pubnub: PubNubClient) async throws {
    switch kind {
    case .time: _ = try await pubnub.time()
    case .history:
        let page = try await pubnub.history.fetchHistory(query)
        precondition(page.channels["bench"]?.count == 100)
    }
}

func measure(_ name: String, _ pubnub: PubNubClient, concurrency: Int, _ kind: Call) async throws {
    for _ in 0..<200 { try await call(kind, pubnub) }  // warm-up
    let start = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for worker in 0..<concurrency {
            group.addTask {
                for _ in stride(from: worker, to: total, by: concurrency) {
                    try await call(kind, pubnub)
                }
            }
        }
        try await group.waitForAll()
    }
    let elapsed = ContinuousClock.now - start
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    print("\(name.padding(toLength: 16, withPad: " ", startingAt: 0)) \(kind.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)) c\(concurrency)\t\(Int(Double(total) / seconds)) req/s")
}

let ahc = AsyncHTTPClientTransport(connectionsPerHost: 16)
let session = URLSessionTransport()
for kind in [Call.time, .history] {
    for concurrency in [1, 16] {
        try await measure("AsyncHTTPClient", try client(ahc), concurrency: concurrency, kind)
        try await measure("URLSession", try client(session), concurrency: concurrency, kind)
    }
}
try await ahc.shutdown()
serverTask.cancel()
