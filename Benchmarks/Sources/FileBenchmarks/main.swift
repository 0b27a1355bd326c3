// File benchmark: `.build/release/FileBenchmarks [rounds]` (default 10).
//
// Starts the Hummingbird simulator on a loopback port in this process and measures, for a 5 MB
// file, the upload (generate an upload URL, the multipart form POST to the simulator's storage)
// and the download (the 307, then the GET of the storage URL) through `client.files`, each against
// a raw request of the same bytes on the same transport in the same run: a raw POST of the 5 MB
// body, a raw GET of the storage URL. Then the cache: reading a cached file through `FileCache`
// against reading the same file with `Data(contentsOf:)`. Ratios only (docs/performance.md).
import Foundation
import PubNubSimulator
import PubNubWire
import PubNubWireNIO
import ReplicaModel
import ReplicaStore
import Replicator
import SimulatorHTTP

let rounds = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 10
let server = PubNubServer()
let (ports, continuation) = AsyncStream<Int>.makeStream()
let serverTask = Task { try await SimulatorHTTPServer.run(server: server, plan: FaultPlan(seed: 0, profile: .none)) { continuation.yield($0) } }
func firstPort(_ ports: AsyncStream<Int>) async -> Int? {
    for await port in ports { return port }
    return nil
}
guard let port = await firstPort(ports) else { fatalError("the simulator did not start") }
let transport = AsyncHTTPClientTransport(connectionsPerHost: 4)
let client = PubNubClient(
    configuration: try PubNubConfiguration(publishKey: "demo", subscribeKey: "demo", userId: "bench", origin: "http://127.0.0.1:\(port)"),
    transport: transport)
var generator = SystemRandomNumberGenerator()
let bytes = Data((0..<5_000_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
let megabytes = Double(bytes.count) / 1_000_000

func seconds(_ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

func report(_ name: String, ours: Double, raw: Double, unit: String = "MB/s", amount: Double = megabytes * Double(rounds)) {
    let pad = { (text: String) in text.padding(toLength: 28, withPad: " ", startingAt: 0) }
    print("\(pad(name)) \(String(format: "%.1f", amount / ours)) \(unit)   raw \(String(format: "%.1f", amount / raw)) \(unit)   ratio \(String(format: "%.2f", raw / ours))")
}

// Upload: generate + form POST, against a raw POST of the same bytes (the simulator reads the body, answers 404).
let raw = WireRequest(method: .post, pathSegments: ["raw-upload"], headers: ["Content-Type": "application/octet-stream"], body: bytes, operation: "raw")
let origin = client.configuration.origin
_ = try? await transport.send(raw, to: origin)
var tickets: [FileUploadTicket] = []
let ourUpload = try await seconds {
    for i in 0..<rounds {
        let ticket = try await client.files.generateUploadURL(channel: "bench", name: "f\(i).bin")
        try await client.files.upload(ticket, bytes: bytes, contentType: "application/octet-stream")
        tickets.append(ticket)
    }
}
let rawUpload = try await seconds { for _ in 0..<rounds { _ = try await transport.send(raw, to: origin) } }
report("upload 5 MB", ours: ourUpload, raw: rawUpload)

// Download: 307 + GET, against a raw GET of the storage URL.
let first = tickets[0]
let location = try await transport.send(try client.files.fileLocationRequest(channel: "bench", id: first.id, name: first.name), to: origin)
guard let url = location.header("location"), let components = URLComponents(string: url) else { fatalError("no Location") }
let storage = Origin(host: components.host ?? "127.0.0.1", port: components.port, secure: false)
let get = WireRequest(
    method: .get, pathSegments: components.path.split(separator: "/").map { String($0).removingPercentEncoding ?? String($0) },
    query: (components.queryItems ?? []).map { QueryItem($0.name, $0.value) }, operation: "raw")
let ourDownload = try await seconds {
    for _ in 0..<rounds {
        let data = try await client.files.downloadFile(channel: "bench", id: first.id, name: first.name)
        precondition(data == bytes)
    }
}
let rawDownload = try await seconds {
    for _ in 0..<rounds {
        let response = try await transport.send(get, to: storage)
        precondition(response.body.count == bytes.count)
    }
}
report("download 5 MB", ours: ourDownload, raw: rawDownload)

// The cache: a cached 5 MB file and a cached 1 KB file, against Data(contentsOf:) of the same file.
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pnr-file-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
let store = try ChatStore<DefaultChatCustom>.open(at: folder.appendingPathComponent("bench.sqlite").path)
let cache = FileCache(store: store, client: client)
let small = try await client.files.generateUploadURL(channel: "bench", name: "small.bin")
try await client.files.upload(small, bytes: bytes.prefix(1000), contentType: "application/octet-stream")
for (name, ticket, count) in [("cache hit 5 MB", first, bytes.count), ("cache hit 1 KB", small, 1000)] {
    let file = ChatFile(id: ticket.id, name: ticket.name)
    _ = try await cache.data(of: file, channel: "bench")
    let lookups = count > 10_000 ? rounds * 10 : 2000
    let cached = try await seconds {
        for _ in 0..<lookups {
            let data = try await cache.data(of: file, channel: "bench")
            precondition(data.count == count)
        }
    }
    let path = try FileManager.default.contentsOfDirectory(at: store.attachments.folder(.cache), includingPropertiesForKeys: nil)
        .first { (try? Data(contentsOf: $0).count) == count }!
    let plain = try await seconds {
        for _ in 0..<lookups {
            let data = try Data(contentsOf: path)
            precondition(data.count == count)
        }
    }
    report(name, ours: cached, raw: plain, unit: "reads/s", amount: Double(lookups))
}
let downloads = await cache.downloadCount
precondition(downloads == 2, "the cache downloaded again")
try? FileManager.default.removeItem(at: folder)
try await transport.shutdown()
serverTask.cancel()
