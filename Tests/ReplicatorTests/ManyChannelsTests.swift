import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
@testable import Replicator
import Testing

/// Live sync on thousands of channels (`docs/live.md`, "Many channels"): the followed channels
/// are cut into subscribe loops whose request lines stay under the simulator's default limit
/// (PubNub's ~32 KiB; a longer one is answered 414), each with its own cursor.
@Suite("Live sync on thousands of channels")
struct ManyChannelsTests {
    /// `count` channel ids of 20 characters each.
    static func channels(_ count: Int) -> [String] { (0..<count).map { "support-room-" + String(format: "%07d", $0) } }

    @Test("5,000 channels of 20 characters: several loops under the limit, a message in the 4,999th arrives live, a reconnect with nothing new costs at most 20 requests")
    func fiveThousandChannels() async throws {
        let world = try await LiveWorld()
        #expect(await world.server.maximumRequestLine == PubNubServer.requestLineLimit)
        let channels = Self.channels(5000)
        #expect(channels.allSatisfy { $0.count == 20 })
        for start in stride(from: 0, to: channels.count, by: 100) {
            try await world.join(["agent"], Array(channels[start..<start + 100]))
        }
        let (device, live) = try world.device("agent")
        let report = try await device.sync()
        #expect(report.errors.isEmpty, "\(report.errors)")
        for _ in 0..<40 where await !live.isReadyToPoll { try await live.step() }
        #expect(await live.isReadyToPoll)
        #expect(await live.subscribed.count >= 5000)
        let loops = await live.subscribeLoops
        #expect(loops == 4, "\(loops) loops")
        #expect(await live.statistics.failures == 0, "a subscribe was refused")

        // A message in the 4,999th channel, live.
        let target = channels[4998]
        _ = try await world.web.publish(PublishRequest(channel: target, message: .object(["type": "text", "text": "are you there?"])))
        for _ in 0..<(loops * 2) {
            if try await device.store.fetch(device.store.queries.messages(inChannel: target)).isEmpty == false { break }
            try await live.step()
        }
        let received = try await device.store.fetch(device.store.queries.messages(inChannel: target))
        #expect(received.map(\.text) == ["are you there?"])
        #expect(await live.statistics.events >= 1)

        // A reconnect with nothing new: a new live sync from its handshakes to ready-to-poll.
        var options = LiveSyncOptions()
        options.pipelinePolls = false
        let again = LiveSync(reconciler: device.reconciler, options: options, clock: world.clock, random: SplitMix64(seed: 2))
        let before = device.transport.records.count
        for _ in 0..<40 where await !again.isReadyToPoll { try await again.step() }
        let cost = device.transport.records.count - before
        #expect(await again.isReadyToPoll)
        #expect(cost <= 20, "a reconnect on 5,000 channels cost \(cost) requests")
        let longest = device.transport.records.map { record in
            record.request.encodedPath.utf8.count + record.request.encodedQuery.utf8.count
        }.max() ?? 0
        #expect(longest < PubNubServer.requestLineLimit)
    }

    @Test("loops keep their channels: a channel that comes joins a loop with room, one that goes leaves only its own loop")
    func stableAssignment() {
        let channels = Self.channels(300)
        let budget = 21 * 100   // 100 channels of 20 characters (and a comma) a loop
        var loops = SubscribeLoop.assign(channels: channels, presence: [], to: [], budget: budget)
        #expect(loops.map(\.channels.count) == [100, 100, 100])
        for index in loops.indices { loops[index].cursor = SubscribeCursor(timetoken: Timetoken(rawValue: UInt64(index + 1)), region: 1) }
        // One goes from the first loop, two come: the first takes one back, the new one starts a loop.
        var next = channels.filter { $0 != channels[10] } + ["new-room-00000000001", "new-room-00000000002"]
        next.sort()
        let after = SubscribeLoop.assign(channels: next, presence: [], to: loops, budget: budget)
        #expect(after.map(\.channels.count) == [100, 100, 100, 1])
        #expect(after[1].channels == loops[1].channels && after[2].channels == loops[2].channels)
        #expect(after.prefix(3).map(\.cursor) == loops.map(\.cursor))
        #expect(after[3].cursor == nil)
        #expect(Set(after.flatMap(\.channels)) == Set(next))
        // Presence goes with its channel when it fits, else to a loop with room.
        let withPresence = SubscribeLoop.assign(channels: Array(channels.prefix(10)), presence: [channels[3]], to: [], budget: budget)
        #expect(withPresence.count == 1 && withPresence[0].presence == [channels[3]])
        // A single name longer than the budget still gets a loop of its own.
        let lone = SubscribeLoop.assign(channels: ["x"], presence: [], to: [], budget: 1)
        #expect(lone.map(\.channels) == [["x"]])
    }

    @Test("a subscribe the server refuses as too long (414) halves the budget: more loops, then live")
    func refusedAsTooLong() async throws {
        let world = try await LiveWorld()
        let channels = Self.channels(600)
        for start in stride(from: 0, to: channels.count, by: 100) {
            try await world.join(["agent"], Array(channels[start..<start + 100]))
        }
        // A server stricter than the default: 12 KiB request lines (a shared history request of
        // 500 of these channels fits; one subscribe naming all 600 does not).
        await world.server.configureRequestLine(maximum: 12 * 1024)
        #expect(SubscribeLoop.cost(channels) > 12 * 1024 && SubscribeLoop.cost(channels) < LiveSyncOptions().subscribeBytes)
        let (device, live) = try world.device("agent")
        _ = try await device.sync()
        #expect(await live.subscribeLoops == 0)
        for _ in 0..<60 where await !live.isReadyToPoll { try await live.step() }
        #expect(await live.isReadyToPoll)
        #expect(await live.subscribeLoops >= 2)
        #expect(await live.statistics.failures >= 1)
        #expect(await live.subscription.budget < LiveSyncOptions().subscribeBytes)
    }
}
