import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator
import Testing

/// The files issue's scenario (docs/files.md): two devices send files offline and online through
/// the `flaky` profile, each process killed after a seeded number of requests and restarted on
/// its store and attachment area as they were; at the end each file message exists exactly once
/// on the server and in both stores, every file downloads byte-identical on the other device, and
/// no orphaned upload remains. `scripts/soak files N` runs N seeds (release build).
@Suite("Files: two devices, flaky network, restarts during uploads")
struct FileScenarioTests {
    static var seeds: ClosedRange<UInt64> { SoakSeeds.range("PNREPLICATE_FILES_SEEDS", default: 8) }

    /// One device's process: it may die after a seeded number of requests.
    struct Process {
        var device: SimulatedDevice<DefaultChatCustom>

        /// Runs a drain that dies after `requests` requests; returns the process restarted on a
        /// copy of its store and attachment area as the dead process left them.
        mutating func drainDying(after requests: Int, seed: UInt64) async throws {
            device.transport.crash(afterRequests: device.transport.records.count + requests)
            let finished = Flag()
            let outbox = device.outbox
            let drain = Task {
                _ = try? await outbox.drain()
                finished.set()
            }
            while !device.transport.crashed && !finished.isSet { await Task.yield() }
            drain.cancel()
            while device.transport.requestsAtServer > 0 { await Task.yield() }
            let copy = SimulatedDevice<DefaultChatCustom>.temporaryStorePath()
            try device.store.backup(to: copy)
            try? FileManager.default.copyItem(at: device.store.attachments.root, to: URL(fileURLWithPath: copy + ".files"))
            device = try device.reopened(plan: FaultPlan(seed: seed, profile: .flaky), seed: seed, storePath: copy)
        }
    }

    @Test("every file message once on the server and in both stores, bytes identical, no orphan", arguments: seeds)
    func scenario(seed: UInt64) async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        var random = SplitMix64(seed: seed)
        var devices = [
            Process(device: try SimulatedDevice(server: server, clock: clock, userId: "alice", plan: FaultPlan(seed: seed, profile: .offline), seed: seed)),
            Process(device: try SimulatedDevice(server: server, clock: clock, userId: "bob", plan: FaultPlan(seed: seed &+ 1, profile: .offline), seed: seed &+ 1)),
        ]
        var sent: [String: (channel: String, bytes: [Data])] = [:]
        func send(_ index: Int, round: Int) async throws {
            let channel = random.next() % 2 == 0 ? "room-a" : "room-b"
            let chat = random.next() % 3 == 0
            let count = chat ? 1 + Int(random.next() % 2) : 1
            let files = (0..<count).map { n in
                let size = 500 + Int(random.next() % 40_000)
                let data = Data((0..<size).map { _ in UInt8(truncatingIfNeeded: random.next()) })
                return OutgoingFile(data: data, name: "f\(index)-\(round)-\(n).bin")
            }
            let receipt = try await devices[index].device.outbox.send(
                files: files, text: "r\(round)", to: channel, shape: chat ? .chatText : .fileMessage)
            sent[try #require(receipt.value?.id)] = (channel, files.map { if case .data(let d) = $0.source { d } else { Data() } })
        }
        // Offline: each device queues files.
        for round in 0..<2 { for index in devices.indices { try await send(index, round: round) } }
        // Online, flaky, each process killed after a few requests, several times; more files meanwhile.
        for round in 2..<6 {
            for index in devices.indices {
                try await devices[index].drainDying(after: 1 + Int(random.next() % 6), seed: seed &+ UInt64(round * 2 + index))
                if round % 2 == 0 { try await send(index, round: round) }
                if random.next() % 3 == 0 { clock.advance(by: .seconds(90)) }
            }
        }
        for index in devices.indices {
            let report = try await devices[index].device.outbox.drain()
            #expect(report.remaining == 0 && report.deadLetters == 0, "seed \(seed) device \(index): \(report)")
        }
        // Orphans are deleted after a drain; a flaky delete may need the next one.
        for index in devices.indices where try await devices[index].device.store.reading({ try $0.fileOrphans().count }) > 0 {
            devices[index].device.transport.use(FaultPlan(seed: 0, profile: .none))
            _ = try await devices[index].device.outbox.drain()
        }

        let observer = try devices[0].device.observer()
        var onServer: [String: Int] = [:]
        var fileIds: Set<String> = []
        for channel in ["room-a", "room-b"] {
            let history = try await observer.fetchHistory(HistoryQuery(channels: [channel], max: 100)).channels[channel] ?? []
            for entry in history {
                let (body, files) = ChatFile.split(payload: entry.message, messageType: entry.messageType)
                if let id = body.objectValue?["id"]?.stringValue { onServer[id, default: 0] += 1 }
                fileIds.formUnion(files.compactMap(\.id))
            }
            let stored = try await FileSendTests.serverFiles(observer, channel)
            #expect(stored.count == Set(stored.map(\.id)).count, "seed \(seed): \(channel) lists a file twice")
            for file in stored { #expect(fileIds.contains(file.id), "seed \(seed): orphan \(file.id) on \(channel)") }
        }
        #expect(onServer.count == sent.count && onServer.values.allSatisfy { $0 == 1 }, "seed \(seed): \(onServer) for \(sent.count) sends")

        // Reading back over a quiet network: the other device's copy and the bytes.
        for index in devices.indices {
            let device = devices[index].device
            device.transport.use(FaultPlan(seed: 0, profile: .none))
            for channel in ["room-a", "room-b"] { _ = try await device.reconciler.markHot(channel) }
            _ = try await device.sync()
            let cache = FileCache(store: device.store, client: device.client, clock: clock)
            for (id, expected) in sent {
                let message = try #require(try await device.store.fetch(device.store.queries.message(id: id)), "seed \(seed): \(id) not on device \(index)")
                #expect(message.delivery == .sent && message.files.count == expected.bytes.count, "seed \(seed): \(message.files)")
                for (file, bytes) in zip(message.files, expected.bytes) {
                    #expect(try await cache.data(of: file, channel: expected.channel) == bytes, "seed \(seed): \(file.name) on device \(index)")
                }
            }
        }
    }
}
