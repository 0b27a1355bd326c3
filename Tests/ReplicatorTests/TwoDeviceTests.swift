import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator
import Testing

extension SimulatedDevice where Custom == DefaultChatCustom {
    /// A device of "me" on a shared server and clock, settling conflicts with `policy`.
    init(seed: UInt64, clock: VirtualClock, server: PubNubServer, policy: ConflictPolicy) throws {
        var options = ReconcilerOptions()
        options.conflicts = ConflictPolicies(all: policy)
        try self.init(server: server, clock: clock, plan: FaultPlan(seed: seed, profile: .none), seed: seed, reconcilerOptions: options)
    }
}

extension SimulatedDevice where Custom == DefaultChatCustom {
    /// Takes both devices back online and syncs them in turn until a round changes nothing and
    /// both outboxes are empty (at most 6 rounds, each a virtual second apart).
    static func healAndSyncUntilQuiet(_ a: World, _ b: World, clock: VirtualClock, seed: UInt64) async throws {
        a.transport.use(FaultPlan(seed: seed, profile: .none))
        b.transport.use(FaultPlan(seed: seed, profile: .none))
        for _ in 0..<6 {
            clock.advance(by: 1)
            let ra = try await a.sync()
            let rb = try await b.sync()
            #expect(ra.errors.isEmpty && rb.errors.isEmpty, "seed \(seed): \(ra.errors) \(rb.errors)")
            let outboxes = try await a.entries().count + b.entries().count
            if !ra.changedAnything && !rb.changedAnything && outboxes == 0 { return }
        }
        Issue.record("seed \(seed): still changing after 6 rounds")
    }
}

@Suite("Two devices")
struct TwoDeviceTests {
    static let channels = ["c1", "c2"]

    /// Seeds: 50 in `swift test` (ObjectSeamTests runs the same story through the object-backend
    /// seam); `scripts/soak objects N` (`PNREPLICATE_OBJECT_SEEDS`, ``SoakSeeds``) for a long run.
    static var seeds: ClosedRange<UInt64> { SoakSeeds.range("PNREPLICATE_OBJECT_SEEDS", default: 50) }

    @Test("concurrent offline edits on two devices and a third client converge, one log entry per conflicting edit",
          arguments: seeds)
    func converge(seed: UInt64) async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        let dice = Dice(seed: seed)
        let policies: [ConflictPolicy] = [.fieldMerge(tie: .lastWriter), .serverWins, .clientWins, .lastWriterWins, .fieldMerge(tie: .local)]
        let policy = policies[Int(seed) % policies.count]
        // What both devices start from: channel and user metadata, two memberships, messages with reactions.
        await server.remoteEditChannel(id: "c1", fields: ["name": "Base", "custom": ["k": 1, "j": 1]])
        await server.remoteEditChannel(id: "c2", fields: ["name": "Second"])
        await server.remoteEditUser(id: "me", fields: ["name": "Me", "status": "here"])
        let observer = try World.client(InProcessTransport(server: server), userId: "other")
        _ = try await observer.perform(try observer.setMembershipsRequest(
            userId: "me", set: [MembershipSet<JSONValue>(id: "c1", status: "base"), MembershipSet<JSONValue>(id: "c2", status: "base")],
            remove: []))
        let tts = await server.seedMessages(channel: "c1", (0..<4).map { chatPayload("m\($0)") }, publisher: "other")
        let me = try World.client(InProcessTransport(server: server), userId: "me")
        _ = try await me.addMessageAction(channel: "c1", messageTimetoken: Timetoken(rawValue: tts[0]), type: "reaction", value: "❤️")

        let a = try World(seed: seed, clock: clock, server: server, policy: policy)
        let b = try World(seed: seed &+ 1000, clock: clock, server: server, policy: policy)
        // The channels on screen: kept complete (reactions and members too).
        for channel in Self.channels {
            try await a.reconciler.markHot(channel)
            try await b.reconciler.markHot(channel)
        }
        _ = try await a.sync()
        _ = try await b.sync()
        #expect(try await a.snapshot(channels: Self.channels) == (try await b.snapshot(channels: Self.channels)), "seed \(seed): devices differ before going offline")

        // Offline: each device edits; the same objects change on the server meanwhile.
        a.transport.use(FaultPlan(seed: seed, profile: .offline))
        b.transport.use(FaultPlan(seed: seed, profile: .offline))
        var expectedConflicts = 0
        for (name, device) in [("A", a), ("B", b)] {
            clock.advance(by: 1)
            if dice.roll(0.75) {
                var edit = ChannelEdit<FlatCustom>()
                edit.name = .set("\(name)-\(seed)")
                edit.custom = .set(["k": .string(name), "j": 1])
                _ = try await device.outbox.setChannel(id: "c1", edit: edit)
                expectedConflicts += 1
            }
            if dice.roll(0.75) {
                var edit = UserEdit<FlatCustom>()
                edit.status = .set("\(name)-status")
                _ = try await device.outbox.setUser(id: "me", edit: edit)
                expectedConflicts += 1
            }
            if dice.roll(0.75) {
                _ = try await device.outbox.setMembership(channel: "c1", edit: MemberEdit(status: "\(name)-\(seed)"))
                expectedConflicts += 1
            }
            if name == "A", dice.roll(0.5) {
                // Nobody else touches c2: no conflict.
                _ = try await device.outbox.removeMembership(channel: "c2")
            }
            let messages = try await device.store.fetch(device.store.queries.messages(inChannel: "c1"))
            let target = messages[dice.pick(messages.count)].id
            _ = try await device.outbox.addReaction(["👍", "🎉", "❤️"][dice.pick(3)], toMessage: target)
            if dice.roll(0.5) { _ = try await device.outbox.removeReaction("❤️", fromMessage: messages[0].id) }
            for index in 0..<(1 + dice.pick(2)) { _ = try await device.outbox.send(text: "\(name) \(index)", to: "c1") }
        }
        clock.advance(by: 1)
        await server.remoteEditChannel(id: "c1", fields: ["name": "Remote", "custom": ["k": 1, "j": 2]])
        await server.remoteEditUser(id: "me", fields: ["status": "remote", "name": "Me too"])
        _ = try await observer.perform(try observer.setMembershipsRequest(
            userId: "me", set: [MembershipSet<JSONValue>(id: "c1", status: "remote")], remove: []))

        try await World.healAndSyncUntilQuiet(a, b, clock: clock, seed: seed)
        let serverState = try await ReplicaSnapshot(server: server, userId: "me", channels: Self.channels)
        let stateA = try await a.snapshot(channels: Self.channels), stateB = try await b.snapshot(channels: Self.channels)
        #expect(serverState.users["me"] != nil && serverState.channels.count == 2 && serverState.memberships["c1"] != nil)
        #expect((serverState.messages["c1"]?.count ?? 0) >= 6 && !serverState.reactions.isEmpty)
        #expect(stateA == serverState, "seed \(seed) (\(policy.name)): device A differs from the server\nA: \(stateA)\nserver: \(serverState)")
        #expect(stateB == serverState, "seed \(seed) (\(policy.name)): device B differs from the server\nB: \(stateB)\nserver: \(serverState)")
        let log = try await a.store.fetch(a.store.queries.conflicts())
            + (try await b.store.fetch(b.store.queries.conflicts()))
        #expect(log.count == expectedConflicts, "seed \(seed): \(log.count) log entries for \(expectedConflicts) conflicting edits")
        #expect(log.allSatisfy { $0.automatic && !$0.isOpen && $0.policy == policy.name }, "seed \(seed): \(log.map(\.policy))")
    }
}
