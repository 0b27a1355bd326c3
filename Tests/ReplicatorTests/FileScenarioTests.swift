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
            try await device.drainUntilCrash()
            let copy = SimulatedDevice<DefaultChatCustom>.temporaryStorePath()
            try device.store.maintenance.backup(to: copy)
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
            let receipt = try await devices[index].device.outbox.messages.send(
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
        for index in devices.indices where try await devices[index].device.store.reading({ try $0.files.fileOrphans().count }) > 0 {
            devices[index].device.transport.use(FaultPlan(seed: 0, profile: .none))
            _ = try await devices[index].device.outbox.drain()
        }

        let observer = try devices[0].device.observer()
        var onServer: [String: Int] = [:]
        var fileIds: Set<String> = []
        for channel in ["room-a", "room-b"] {
            let history = try await observer.history.fetchHistory(HistoryQuery(channels: [channel], max: 100)).channels[channel] ?? []
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

        // A peer forges a copy of one of alice's file messages; bob, through the flaky network
        // and a process death, hard-deletes the copy and one of his own file messages: alice's
        // file stays, bob's goes, and no orphan row is left once a quiet drain has run.
        let aliceSent = try #require(try await sentFiles(of: devices[0].device, among: sent.keys).first, "seed \(seed)")
        let bobSent = try #require(try await sentFiles(of: devices[1].device, among: sent.keys).first, "seed \(seed)")
        let peer = try PubNubClient.simulated(InProcessTransport(server: server), userId: "mallory")
        _ = try await peer.files.publishFile(PublishFileRequest(
            channel: aliceSent.channelId, fileId: aliceSent.files[0].id ?? "", fileName: aliceSent.files[0].name))
        let bob = devices[1].device
        _ = try await bob.sync()
        let forged = try #require(try await bob.store.fetch(bob.store.queries.messages(inChannel: aliceSent.channelId))
            .first { $0.userId == "mallory" }, "seed \(seed)")
        bob.transport.use(FaultPlan(seed: seed, profile: .flaky))
        _ = try await bob.outbox.messages.deleteMessage(id: forged.id, hard: true)
        _ = try await bob.outbox.messages.deleteMessage(id: bobSent.id, hard: true)
        try await devices[1].drainDying(after: 1 + Int(random.next() % 4), seed: seed &+ 99)
        devices[1].device.transport.use(FaultPlan(seed: 0, profile: .none))
        for _ in 0..<3 where try await devices[1].device.store.reading({ try $0.files.fileOrphans().count + $0.outbox.ops(states: [.pending, .ambiguous, .inflight]).count }) > 0 {
            _ = try await devices[1].device.outbox.drain()
        }
        #expect(try await devices[1].device.store.reading { try $0.files.fileOrphans().count } == 0, "seed \(seed)")
        let remaining = Set(try await FileSendTests.serverFiles(observer, aliceSent.channelId).map(\.id))
            .union(try await FileSendTests.serverFiles(observer, bobSent.channelId).map(\.id))
        #expect(aliceSent.files.allSatisfy { remaining.contains($0.id ?? "") }, "seed \(seed): alice's file was deleted")
        #expect(bobSent.files.allSatisfy { !remaining.contains($0.id ?? "") }, "seed \(seed): bob's own file stayed")
        let aliceIds = Set(aliceSent.files.compactMap(\.id))
        #expect((bob.transport.requests + devices[1].device.transport.requests).filter { request in
            request.method == .delete && request.pathSegments.contains { aliceIds.contains($0) }
        }.isEmpty, "seed \(seed)")
    }

    /// The file messages `device` sent (its user's, with files), oldest first.
    private func sentFiles(of device: SimulatedDevice<DefaultChatCustom>, among ids: Dictionary<String, (channel: String, bytes: [Data])>.Keys)
        async throws -> [ChatMessage<FlatCustom>]
    {
        var messages: [ChatMessage<FlatCustom>] = []
        for id in ids.sorted() {
            if let message = try await device.store.fetch(device.store.queries.message(id: id)),
               message.userId == device.client.configuration.userId, !message.files.isEmpty
            {
                messages.append(message)
            }
        }
        return messages
    }
}
