import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
@testable import Replicator
import Testing

/// Channel groups (`docs/live.md`, "Channel groups"): the channel registry on the wire and in the
/// simulator, and live sync following thousands of memberships through groups the app's server
/// keeps, with one subscribe.
@Suite("Channel groups")
struct ChannelGroupTests {
    @Test("the registry's answers as PubNub records them; requests split at 200 channels; names no path may carry are refused")
    func wire() async throws {
        // Recorded from the real service (the Python SDK's native_sync/channel_groups fixtures).
        let listed = WireResponse(status: 200, headers: [:], body: Data(#"{"status": 200, "payload": {"channels": ["channel-groups-unit-ch"], "group": "channel-groups-unit-cg"}, "service": "channel-registry", "error": false}"#.utf8))
        #expect(try PubNubChannelGroups.channelList(from: listed) == ["channel-groups-unit-ch"])
        let empty = WireResponse(status: 200, headers: [:], body: Data(#"{"status": 200, "payload": {"channels": [], "group": "channel-groups-unit-cg"}, "service": "channel-registry", "error": false}"#.utf8))
        #expect(try PubNubChannelGroups.channelList(from: empty) == [])
        let ok = WireResponse(status: 200, headers: [:], body: Data(#"{"status": 200, "message": "OK", "service": "channel-registry", "error": false}"#.utf8))
        try PubNubChannelGroups.acknowledgement(from: ok, operation: "addChannelsToGroup")
        #expect(throws: WireError.self) { try PubNubChannelGroups.channelList(from: ok) }
        #expect(throws: WireError.self) {
            try PubNubChannelGroups.channelList(from: WireResponse(status: 200, headers: [:], body: Data(#"{"error":false,"payload":{"channels":[1]}}"#.utf8)))
        }

        let client = try PubNubClient.simulated(InProcessTransport(server: PubNubServer(clock: VirtualClock())), userId: "me")
        let add = try client.channelGroups.changeRequest(group: "desk", add: ["a", "b"])
        #expect(add.pathSegments == ["v1", "channel-registration", "sub-key", client.configuration.subscribeKey, "channel-group", "desk"])
        #expect(add.query.contains { $0.name == "add" && $0.value == "a,b" })
        #expect(try client.channelGroups.deleteRequest(group: "desk").pathSegments.last == "remove")
        #expect(throws: WireError.self) { try client.channelGroups.listRequest(group: "..") }
        #expect(throws: WireError.self) { try client.channelGroups.changeRequest(group: "desk", add: (0..<201).map { "c\($0)" }) }
        #expect(throws: WireError.self) { try client.channelGroups.changeRequest(group: "desk", add: ["a,b"]) }
        // Listing or changing a group needs its manage; subscribing to it, its read.
        #expect(AccessNeed.of(add) == .all([AccessRequirement(.group, "desk", .manage)]))
        var subscribe = SubscribeRequest(channels: [])
        subscribe.channelGroups = ["desk"]
        let request = try client.subscribeRequest(subscribe)
        #expect(request.pathSegments[3] == "," && AccessNeed.of(request) == .all([AccessRequirement(.group, "desk", .read)]))
    }

    @Test("the simulator's registry: 450 channels added in 3 requests, listed, removed, the group deleted")
    func registry() async throws {
        let server = PubNubServer(clock: VirtualClock())
        let client = try PubNubClient.simulated(InProcessTransport(server: server), userId: "app-server")
        let channels = (0..<450).map { "room-\($0)" }
        try await client.channelGroups.add(channels, to: "desk")
        #expect(try await client.channelGroups.channels(in: "desk") == channels)
        try await client.channelGroups.remove(["room-0", "room-1", "nowhere"], from: "desk")
        #expect(try await client.channelGroups.channels(in: "desk").count == 448)
        try await client.channelGroups.delete(group: "desk")
        #expect(try await client.channelGroups.channels(in: "desk") == [])
    }

    @Test("2,500 memberships in 2 groups the server keeps: live in one group subscribe (plus one for the user's own channels), a message in the 2,499th arrives, a reconnect costs at most 20 requests")
    func thousandsThroughGroups() async throws {
        let world = try await LiveWorld()
        let channels = ManyChannelsTests.channels(2500)
        for start in stride(from: 0, to: channels.count, by: 100) {
            try await world.join(["agent"], Array(channels[start..<start + 100]))
        }
        // The app's server keeps the agent's groups (at most 2,000 channels each, PubNub's limit).
        let groups = ["desk-agent-0", "desk-agent-1"]
        for (index, group) in groups.enumerated() {
            try await world.web.channelGroups.add(Array(channels[(index * 2000)..<min(channels.count, (index + 1) * 2000)]), to: group)
        }
        let device = try SimulatedDevice<DefaultChatCustom>(server: world.server, clock: world.clock, userId: "agent")
        var options = LiveSyncOptions()
        options.pipelinePolls = false
        options.channelGroups = groups
        let live = LiveSync(reconciler: device.reconciler, options: options, clock: world.clock, random: SplitMix64(seed: 1))
        let report = try await device.sync()
        #expect(report.errors.isEmpty, "\(report.errors)")
        for _ in 0..<40 where await !live.isReadyToPoll { try await live.step() }
        #expect(await live.isReadyToPoll)
        #expect(await live.subscribeLoops == 2, "the groups' loop and one naming the user's own channels")
        let subscribes = device.transport.records.filter { $0.request.operation == "handshake" }
        #expect(subscribes.contains { $0.request.query.contains { $0.name == "channel-group" && $0.value == groups.joined(separator: ",") } })
        #expect(subscribes.allSatisfy { $0.request.encodedPath.utf8.count < 1_000 }, "no subscribe names the memberships")

        let target = channels[2498]
        _ = try await world.web.publish(PublishRequest(channel: target, message: .object(["type": "text", "text": "through the group"])))
        for _ in 0..<4 {
            if try await device.store.fetch(device.store.queries.messages(inChannel: target)).isEmpty == false { break }
            try await live.step()
        }
        #expect(try await device.store.fetch(device.store.queries.messages(inChannel: target)).map(\.text) == ["through the group"])

        let again = LiveSync(reconciler: device.reconciler, options: options, clock: world.clock, random: SplitMix64(seed: 2))
        let before = device.transport.records.count
        for _ in 0..<40 where await !again.isReadyToPoll { try await again.step() }
        let cost = device.transport.records.count - before
        #expect(await again.isReadyToPoll)
        #expect(cost <= 20, "a reconnect through groups cost \(cost) requests")
    }

    @Test("the groups' loop holds the covered channels and names none; a channel that leaves the memberships leaves it")
    func assignment() {
        let loops = SubscribeLoop.assign(channels: ["a", "b", "me"], presence: [], groups: ["g"], covered: ["a", "b"], to: [], budget: 1_000)
        #expect(loops.count == 2 && loops[0].groups == ["g"] && loops[0].channels == ["a", "b"] && loops[0].named.isEmpty)
        #expect(loops[1].channels == ["me"] && loops[1].groups.isEmpty)
        var connected = loops
        connected[0].cursor = SubscribeCursor(timetoken: 5, region: 1)
        let after = SubscribeLoop.assign(channels: ["a", "me", "z"], presence: [], groups: ["g"], covered: ["a"], to: connected, budget: 1_000)
        #expect(after[0].channels == ["a"] && after[0].cursor == connected[0].cursor, "the groups' stream goes on")
        #expect(after[1].channels == ["me", "z"])
    }
}
