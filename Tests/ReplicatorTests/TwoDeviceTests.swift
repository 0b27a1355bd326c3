import Foundation
import PubNubSimulator
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator
import Testing

/// One device: a store, an outbox and a reconciler on a shared server and clock.
struct Device {
    let world: World
    let reconciler: Reconciler<DefaultChatCustom>

    init(seed: UInt64, clock: VirtualClock, server: PubNubServer, policy: ConflictPolicy) throws {
        world = try World(seed: seed, clock: clock, server: server)
        var options = ReconcilerOptions()
        options.conflicts = ConflictPolicies(all: policy)
        reconciler = try world.reconciler(options: options, seed: seed)
    }

    func sync() async throws -> SyncReport {
        try await reconciler.sync(pushDeadline: world.clock.now.addingTimeInterval(120))
    }

    /// Everything the device holds, in a comparable form.
    func snapshot() async throws -> ReplicaSnapshot {
        let store = world.store, q = store.queries
        var snapshot = ReplicaSnapshot()
        for user in try await store.fetch(q.users()) where user.eTag != nil {
            snapshot.users[user.id] = try ReplicaSnapshot.object(user)
        }
        for channel in try await store.fetch(q.channels()) where channel.eTag != nil {
            snapshot.channels[channel.id] = try ReplicaSnapshot.object(channel)
        }
        for member in try await store.fetch(q.memberships(ofUser: "me")) {
            snapshot.memberships[member.channelId] = [
                "status": member.status.map(JSONValue.string) ?? .null, "eTag": member.eTag.map(JSONValue.string) ?? .null,
                "custom": try JSONValue(encoding: member.custom),
            ]
        }
        for channel in TwoDeviceTests.channels {
            let messages = try await store.fetch(q.messages(inChannel: channel))
            snapshot.messages[channel] = messages.map { "\($0.id)@\($0.timetoken?.description ?? "pending")" }
            for message in messages {
                for action in try await store.fetch(q.actions(ofMessage: message.id)) {
                    snapshot.reactions.insert(
                        "\(channel)/\(action.messageTimetoken?.description ?? "-")/\(action.type)/\(action.value)/\(action.userId)")
                }
            }
        }
        return snapshot
    }
}

/// What a replica holds, for comparing devices with each other and with the server.
struct ReplicaSnapshot: Equatable, CustomStringConvertible {
    var users: [String: JSONValue] = [:]
    var channels: [String: JSONValue] = [:]
    var memberships: [String: JSONValue] = [:]
    var messages: [String: [String]] = [:]
    var reactions: Set<String> = []

    /// The replicated fields of a user or channel, with its eTag (`updated` is compared through it).
    static func object(_ value: some Encodable) throws -> JSONValue {
        var fields = try JSONValue(encoding: value).objectValue ?? [:]
        fields["updated"] = nil
        if fields["custom"] == .object([:]) { fields["custom"] = nil }
        return .object(fields)
    }

    var description: String {
        "users \(users)\nchannels \(channels)\nmemberships \(memberships)\nmessages \(messages)\nreactions \(reactions.sorted())"
    }

    /// What the server holds, read through a fault-free client.
    static func server(_ client: PubNubClient) async throws -> ReplicaSnapshot {
        var snapshot = ReplicaSnapshot()
        for user in try await client.listUsers(as: JSONValue.self).data { snapshot.users[user.id] = try object(user) }
        for channel in try await client.listChannels(as: JSONValue.self).data {
            snapshot.channels[channel.id] = try object(channel)
        }
        for member in try await client.getMemberships(userId: "me", as: DefaultChatCustom.self).data {
            snapshot.memberships[member.channel.id] = [
                "status": member.status.map(JSONValue.string) ?? .null, "eTag": member.eTag.map(JSONValue.string) ?? .null,
                "custom": try JSONValue(encoding: member.custom),
            ]
        }
        for channel in TwoDeviceTests.channels {
            let page = try await client.fetchHistory(HistoryQuery(channels: [channel], max: 100))
            snapshot.messages[channel] = (page.channels[channel] ?? []).map { entry in
                let id = entry.message.objectValue?["id"]?.stringValue ?? "pn:\(channel):\(entry.timetoken)"
                return "\(id)@\(entry.timetoken)"
            }
            for action in try await client.listMessageActions(channel: channel, limit: 100).data {
                snapshot.reactions.insert(
                    "\(channel)/\(action.messageTimetoken)/\(action.type)/\(action.value)/\(action.uuid)")
            }
        }
        return snapshot
    }
}

@Suite("Two devices")
struct TwoDeviceTests {
    static let channels = ["c1", "c2"]

    @Test("concurrent offline edits on two devices and a third client converge, one log entry per conflicting edit",
          arguments: 1...200)
    func converge(seed: UInt64) async throws {
        let clock = VirtualClock()
        let server = PubNubServer(time: FollowClock(clock: clock))
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

        let a = try Device(seed: seed, clock: clock, server: server, policy: policy)
        let b = try Device(seed: seed &+ 1000, clock: clock, server: server, policy: policy)
        _ = try await a.sync()
        _ = try await b.sync()
        #expect(try await a.snapshot() == (try await b.snapshot()), "seed \(seed): devices differ before going offline")

        // Offline: each device edits; the same objects change on the server meanwhile.
        a.world.transport.use(FaultPlan(seed: seed, profile: .offline))
        b.world.transport.use(FaultPlan(seed: seed, profile: .offline))
        var expectedConflicts = 0
        for (name, device) in [("A", a), ("B", b)] {
            clock.advance(by: 1)
            if dice.roll(0.75) {
                var edit = ChannelEdit<FlatCustom>()
                edit.name = .set("\(name)-\(seed)")
                edit.custom = .set(["k": .string(name), "j": 1])
                _ = try await device.world.outbox.setChannel(id: "c1", edit: edit)
                expectedConflicts += 1
            }
            if dice.roll(0.75) {
                var edit = UserEdit<FlatCustom>()
                edit.status = .set("\(name)-status")
                _ = try await device.world.outbox.setUser(id: "me", edit: edit)
                expectedConflicts += 1
            }
            if dice.roll(0.75) {
                _ = try await device.world.outbox.setMembership(channel: "c1", edit: MemberEdit(status: "\(name)-\(seed)"))
                expectedConflicts += 1
            }
            if name == "A", dice.roll(0.5) {
                // Nobody else touches c2: no conflict.
                _ = try await device.world.outbox.removeMembership(channel: "c2")
            }
            let messages = try await device.world.store.fetch(device.world.store.queries.messages(inChannel: "c1"))
            let target = messages[dice.pick(messages.count)].id
            _ = try await device.world.outbox.addReaction(["👍", "🎉", "❤️"][dice.pick(3)], toMessage: target)
            if dice.roll(0.5) { _ = try await device.world.outbox.removeReaction("❤️", fromMessage: messages[0].id) }
            for index in 0..<(1 + dice.pick(2)) { _ = try await device.world.outbox.send(text: "\(name) \(index)", to: "c1") }
        }
        clock.advance(by: 1)
        await server.remoteEditChannel(id: "c1", fields: ["name": "Remote", "custom": ["k": 1, "j": 2]])
        await server.remoteEditUser(id: "me", fields: ["status": "remote", "name": "Me too"])
        _ = try await observer.perform(try observer.setMembershipsRequest(
            userId: "me", set: [MembershipSet<JSONValue>(id: "c1", status: "remote")], remove: []))

        // Heal; sync until a round changes nothing.
        a.world.transport.use(FaultPlan(seed: seed, profile: .none))
        b.world.transport.use(FaultPlan(seed: seed, profile: .none))
        var quiet = false
        for _ in 0..<6 {
            clock.advance(by: 1)
            let ra = try await a.sync()
            let rb = try await b.sync()
            #expect(ra.errors.isEmpty && rb.errors.isEmpty, "seed \(seed): \(ra.errors) \(rb.errors)")
            let outboxes = try await a.world.entries().count + b.world.entries().count
            if !ra.changedAnything && !rb.changedAnything && outboxes == 0 {
                quiet = true
                break
            }
        }
        #expect(quiet, "seed \(seed): still changing after 6 rounds")
        let serverState = try await ReplicaSnapshot.server(observer)
        let stateA = try await a.snapshot(), stateB = try await b.snapshot()
        #expect(serverState.users["me"] != nil && serverState.channels.count == 2 && serverState.memberships["c1"] != nil)
        #expect((serverState.messages["c1"]?.count ?? 0) >= 6 && !serverState.reactions.isEmpty)
        #expect(stateA == serverState, "seed \(seed) (\(policy.name)): device A differs from the server\nA: \(stateA)\nserver: \(serverState)")
        #expect(stateB == serverState, "seed \(seed) (\(policy.name)): device B differs from the server\nB: \(stateB)\nserver: \(serverState)")
        let log = try await a.world.store.fetch(a.world.store.queries.conflicts())
            + (try await b.world.store.fetch(b.world.store.queries.conflicts()))
        #expect(log.count == expectedConflicts, "seed \(seed): \(log.count) log entries for \(expectedConflicts) conflicting edits")
        #expect(log.allSatisfy { $0.automatic && !$0.isOpen && $0.policy == policy.name }, "seed \(seed): \(log.map(\.policy))")
    }
}
