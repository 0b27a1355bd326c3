import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
@testable import Replicator
import Testing

/// Three devices live on four channels through a simulator with cut long polls, lost answers,
/// 5xx, 429, forgotten cursors and overflowing buffers, restarted now and then, while all three
/// publish, react and edit App Context objects and a web client publishes directly (in bursts
/// too). Afterwards, with no `sync`, every store must equal the server.
@Suite("Live sync scenario")
struct LiveScenarioTests {
    /// Seeds: 8 in `swift test`; `PNREPLICATE_LIVE_SEEDS=10000` (or a range, ``SoakSeeds``) for the long run.
    static var seeds: ClosedRange<UInt64> { SoakSeeds.range("PNREPLICATE_LIVE_SEEDS", default: 8) }

    @Test("every store equals the server, no duplicates, and events the buffer dropped came from history", arguments: seeds)
    func converge(seed: UInt64) async throws {
        let outcome = try await LiveScenario(seed: seed).run()
        #expect(outcome.bufferDrops > 0, "seed \(seed): the server's buffer never dropped an event; the test proves nothing")
        #expect(outcome.recovered > 0, "seed \(seed): no fill recovered a dropped message")
        #expect(outcome.liveEvents > 0, "seed \(seed): nothing arrived live")
    }
}

struct LiveScenario {
    let seed: UInt64
    var steps = 160
    static let users = ["u0", "u1", "u2"]
    static let channels = ["ch0", "ch1", "ch2", "ch3"]

    struct Outcome {
        /// Events the server's buffer dropped (overflow) over the run.
        var bufferDrops = 0
        /// Messages the devices' fills stored that their live stream had not delivered.
        var recovered = 0
        /// Envelopes the devices received live.
        var liveEvents = 0
    }

    final class Device {
        var device: SimulatedDevice<DefaultChatCustom>
        var live: LiveSync<DefaultChatCustom>
        var offline = false
        var recovered = 0
        var events = 0
        let userId: String

        init(_ device: SimulatedDevice<DefaultChatCustom>, _ live: LiveSync<DefaultChatCustom>, userId: String) {
            self.device = device
            self.live = live
            self.userId = userId
        }
    }

    func run() async throws -> Outcome {
        let world = try await LiveWorld()
        let server = world.server
        for (index, user) in Self.users.enumerated() { await server.remoteEditUser(id: user, fields: ["name": .string("User \(index)")]) }
        for channel in Self.channels { await server.remoteEditChannel(id: channel, fields: ["name": .string(channel.uppercased())]) }
        try await world.join(Self.users, Self.channels)
        var devices: [Device] = []
        for (index, user) in Self.users.enumerated() {
            // Pipelined polls, as an app runs them: the scenario's faults fall wherever they fall.
            let (device, live) = try world.device(
                user, seed: seed &* 16 &+ UInt64(index), profile: .live, users: Self.users, pipelinePolls: true)
            // The channels the users' screens show: kept complete (reactions and members too).
            for channel in Self.channels { try await device.reconciler.markHot(channel) }
            devices.append(Device(device, live, userId: user))
        }
        var random = SplitMix64(seed: seed)
        func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }
        func livePlan(_ d: Device, _ step: Int) -> FaultPlan {
            FaultPlan(seed: seed &* 1000 &+ UInt64(step), profile: d.offline ? .offline : .live)
        }
        func restart(_ d: Device, step: Int) async throws {
            let reopened = try d.device.reopened(plan: livePlan(d, step), seed: seed &+ UInt64(step))
            for channel in Self.channels { try await reopened.reconciler.markHot(channel) }
            var options = LiveSyncOptions()
            options.users = Self.users
            options.pipelinePolls = true
            d.device = reopened
            d.live = LiveSync(reconciler: reopened.reconciler, options: options, clock: world.clock, random: SplitMix64(seed: seed ^ UInt64(step)))
        }
        func harvest(_ d: Device) async {
            let statistics = await d.live.statistics
            d.recovered += statistics.recoveredMessages
            d.events += statistics.events
        }
        var webCount = 0
        func webPublish(_ count: Int, to channel: String) async throws {
            for _ in 0..<count {
                webCount += 1
                _ = try await world.web.publish(PublishRequest(channel: channel, message: .string("web \(webCount)")))
            }
        }

        for step in 0..<steps {
            let d = devices[Int(random.next() % UInt64(devices.count))]
            let roll = Int(random.next() % 100)
            if step == steps / 2 {
                // A burst of 130 while nobody polls: the next answer of a device that was live
                // overflows (so every seed loses events to the buffer and must recover them).
                let first = devices[0]
                first.device.transport.use(FaultPlan(seed: seed, profile: .none))
                try await LiveWorld.settle(first.live)
                try await webPublish(130, to: pick(Self.channels))
                try await first.live.step()
                first.device.transport.use(livePlan(first, step))
                continue
            }
            switch roll {
            case 0..<22:
                _ = try await d.device.outbox.messages.send(text: "s\(step)", to: pick(Self.channels))
            case 22..<30:
                let channel = pick(Self.channels)
                let stored = try await d.device.store.fetch(d.device.store.queries.messages(inChannel: channel))
                    .filter { $0.timetoken != nil }
                guard !stored.isEmpty else { break }
                let message = pick(stored)
                let value = pick(["👍", "❤️", "😂"])
                let mine = try await d.device.store.fetch(d.device.store.queries.actions(ofMessage: message.id))
                    .contains { $0.userId == d.userId && $0.value == value }
                if mine {
                    _ = try await d.device.outbox.messages.removeReaction(value, fromMessage: message.id)
                } else {
                    _ = try await d.device.outbox.messages.addReaction(value, toMessage: message.id)
                }
            case 30..<34:
                if random.next() % 2 == 0 {
                    var edit = UserEdit<FlatCustom>()
                    edit.name = .set("\(d.userId) at \(step)")
                    _ = try await d.device.outbox.metadata.setUser(id: d.userId, edit: edit)
                } else {
                    var edit = ChannelEdit<FlatCustom>()
                    edit.details = .set("by \(d.userId) at \(step)")
                    _ = try await d.device.outbox.metadata.setChannel(id: pick(Self.channels), edit: edit)
                }
            case 34..<37:
                _ = try await d.device.outbox.memberships.setMembership(channel: pick(Self.channels), edit: MemberEdit(status: pick(["joined", "muted", "away"])))
            case 37..<43:
                try await webPublish(1 + Int(random.next() % 5), to: pick(Self.channels))
            case 43..<45:
                try await webPublish(101 + Int(random.next() % 50), to: pick(Self.channels))
            case 45..<75:
                try await d.live.step()
            case 75..<90:
                _ = try await d.device.outbox.drain(until: world.clock.now.addingTimeInterval(2))
            case 90..<94:
                d.offline.toggle()
                d.device.transport.use(livePlan(d, step))
            case 94..<96:
                await harvest(d)
                try await restart(d, step: step)
            default:
                world.clock.advance(by: TimeInterval(1 + random.next() % 900))
            }
        }

        // The weather clears: every outbox is sent (conflicts settled by the default policies),
        // then every live sync catches up. No `sync` call: only the live path and its fills.
        for d in devices {
            d.offline = false
            d.device.transport.use(FaultPlan(seed: seed, profile: .none))
        }
        for d in devices {
            for _ in 0..<10 {
                _ = try await d.device.reconciler.resolveConflicts()
                _ = try await d.device.outbox.drain(until: world.clock.now.addingTimeInterval(600))
                if try await d.device.outboxEntries().isEmpty { break }
            }
            let left = try await d.device.outboxEntries()
            #expect(left.isEmpty, "seed \(seed): \(d.userId)'s outbox kept \(left.map { "\($0.kind) \($0.state)" })")
        }
        for d in devices { try await LiveWorld.settle(d.live) }
        for d in devices {
            let local = try await d.device.snapshot(channels: Self.channels)
            let remote = try await ReplicaSnapshot(server: server, userId: d.userId, channels: Self.channels)
            #expect(local == remote, "seed \(seed): \(d.userId)'s store differs from the server: \(Self.difference(local, remote))")
            for channel in Self.channels {
                let stored = try await d.device.store.fetch(d.device.store.queries.messages(inChannel: channel))
                #expect(Set(stored.compactMap(\.timetoken)).count == stored.count, "seed \(seed): duplicate timetokens in \(channel)")
            }
            await harvest(d)
        }
        return Outcome(
            bufferDrops: await server.bufferDrops, recovered: devices.map(\.recovered).reduce(0, +),
            liveEvents: devices.map(\.events).reduce(0, +))
    }

    /// What differs between two snapshots, entry by entry.
    static func difference(_ local: ReplicaSnapshot, _ remote: ReplicaSnapshot) -> String {
        var lines: [String] = []
        func compare<V: Equatable>(_ name: String, _ a: [String: V], _ b: [String: V]) {
            for key in Set(a.keys).union(b.keys).sorted() where a[key] != b[key] {
                lines.append("\(name) \(key): store \(a[key].map { "\($0)" } ?? "-") server \(b[key].map { "\($0)" } ?? "-")")
            }
        }
        compare("user", local.users, remote.users)
        compare("channel", local.channels, remote.channels)
        compare("membership", local.memberships, remote.memberships)
        for channel in Set(local.messages.keys).union(remote.messages.keys).sorted() {
            let a = local.messages[channel] ?? [], b = remote.messages[channel] ?? []
            if a != b {
                lines.append("messages \(channel): store has \(Set(a).subtracting(b).sorted()) extra, lacks \(Set(b).subtracting(a).sorted()); counts \(a.count)/\(b.count)")
            }
        }
        let extra = local.reactions.subtracting(remote.reactions), missing = remote.reactions.subtracting(local.reactions)
        if !extra.isEmpty || !missing.isEmpty { lines.append("reactions: extra \(extra.sorted()) missing \(missing.sorted())") }
        return lines.joined(separator: "\n")
    }
}
