import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
@testable import Replicator
import Testing

/// Three devices follow presence on three channels through cut long polls, lost answers, 5xx,
/// 429, forgotten cursors and overflowing buffers; they go offline, are killed without a leave,
/// leave on purpose, change their state, and time passes (timeouts of 20 to 60 s). Afterwards
/// every device's member rows must say exactly who the server says is here, with their state.
@Suite("Presence scenario")
struct PresenceScenarioTests {
    /// Seeds: 10 in `swift test`; `PNREPLICATE_PRESENCE_SEEDS=10000` (or a range, ``SoakSeeds``) for the long run.
    static var seeds: ClosedRange<UInt64> { SoakSeeds.range("PNREPLICATE_PRESENCE_SEEDS", default: 10) }

    static let users = ["u0", "u1", "u2"]
    static let channels = ["p0", "p1", "p2"]

    final class Device {
        var device: SimulatedDevice<DefaultChatCustom>
        var live: LiveSync<DefaultChatCustom>
        var offline = false
        let userId: String
        let options: LiveSyncOptions

        init(_ device: SimulatedDevice<DefaultChatCustom>, _ live: LiveSync<DefaultChatCustom>, userId: String, options: LiveSyncOptions) {
            self.device = device
            self.live = live
            self.userId = userId
            self.options = options
        }
    }

    @Test("every device's member rows equal the server's occupants and states", arguments: seeds)
    func converge(seed: UInt64) async throws {
        let world = try await LiveWorld()
        let server = world.server
        try await world.join(Self.users, Self.channels)
        var random = SplitMix64(seed: seed)
        func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }
        func plan(_ d: Device, _ step: Int) -> FaultPlan {
            FaultPlan(seed: seed &* 1000 &+ UInt64(step), profile: d.offline ? .offline : .live)
        }
        var devices: [Device] = []
        for (index, user) in Self.users.enumerated() {
            let device = try SimulatedDevice<DefaultChatCustom>(
                server: server, clock: world.clock, userId: user, plan: FaultPlan(seed: seed &* 16 &+ UInt64(index), profile: .live),
                seed: seed &* 16 &+ UInt64(index))
            var options = LiveSyncOptions()
            options.presence = PresenceOptions(timeout: 20 + 20 * index, heartbeatInterval: 0)
            let live = LiveSync(reconciler: device.reconciler, options: options, clock: world.clock, random: SplitMix64(seed: seed ^ UInt64(index)))
            devices.append(Device(device, live, userId: user, options: options))
        }
        var presenceEvents = 0
        for step in 0..<120 {
            let d = devices[Int(random.next() % UInt64(devices.count))]
            switch Int(random.next() % 100) {
            case 0..<50:
                try await d.live.step()
            case 50..<58:
                d.offline.toggle()
                d.device.transport.use(plan(d, step))
            case 58..<63:
                // Killed: no leave; the server times the user out.
                presenceEvents += await d.live.statistics.events
                d.device = try d.device.reopened(plan: plan(d, step), seed: seed &+ UInt64(step))
                d.live = LiveSync(reconciler: d.device.reconciler, options: d.options, clock: world.clock, random: SplitMix64(seed: seed &+ UInt64(step)))
            case 63..<68:
                try? await d.device.client.presence.leave(channels: [pick(Self.channels)])
            case 68..<74:
                _ = try? await d.device.client.presence.setPresenceState(["step": .int(Int64(step))], channels: [pick(Self.channels)])
            case 74..<80:
                _ = try? await world.web.publish(PublishRequest(channel: pick(Self.channels), message: .string("m\(step)")))
            default:
                world.clock.advance(by: TimeInterval(1 + random.next() % 45))
            }
        }
        for d in devices {
            d.offline = false
            d.device.transport.use(FaultPlan(seed: seed, profile: .none))
        }
        // Every device settles; then, with time standing still, one more round so that each
        // hears the joins of the others that came back last.
        for d in devices { try await LiveWorld.settle(d.live) }
        for d in devices { try await LiveWorld.settle(d.live) }
        for d in devices {
            for channel in Self.channels {
                let here = Set(await server.occupants(of: channel))
                let members = try await d.device.store.fetch(d.device.store.queries.members(ofChannel: channel))
                for member in members {
                    #expect(member.isPresent == here.contains(member.userId),
                            "seed \(seed): \(d.userId) sees \(member.userId) \(member.isPresent == true ? "present" : "absent") on \(channel); the server: \(here.sorted())")
                    if here.contains(member.userId) {
                        let state = try await world.web.presence.presenceState(userId: member.userId, channels: [channel])[channel]
                        let expected = state == .object([:]) ? nil : state
                        #expect(member.presenceState == expected,
                                "seed \(seed): \(d.userId) holds \(member.userId)'s state on \(channel) as \(String(describing: member.presenceState)), the server \(String(describing: expected))")
                    }
                }
            }
            presenceEvents += await d.live.statistics.events
        }
        #expect(presenceEvents > 0, "seed \(seed): nothing arrived live")
    }
}
