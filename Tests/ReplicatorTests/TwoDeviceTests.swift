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

    /// Seeds: 20 in `swift test`, the same on both backends (ObjectSeamTests runs the same story
    /// through the object-backend seam); `scripts/soak objects N` (`PNREPLICATE_OBJECT_SEEDS`,
    /// ``SoakSeeds``) for a long run.
    static var seeds: ClosedRange<UInt64> { SoakSeeds.range("PNREPLICATE_OBJECT_SEEDS", default: 20) }

    /// The object backend a run of the story uses: App Context (the Chat SDK's), or DataSync
    /// through ``Replicator/DataSyncBackend`` (the same story, same seeds: its third client writes
    /// raw DataSync as an app's server would).
    enum Backend: String, CustomTestStringConvertible, Sendable {
        case appContext = "app-context"
        case dataSync = "datasync"

        var testDescription: String { rawValue }

        /// The objects both devices start from: c1, c2, user me, and me's memberships of both.
        func seed(_ server: PubNubServer, observer: PubNubClient) async throws {
            switch self {
            case .appContext:
                await server.remoteEditChannel(id: "c1", fields: ["name": "Base", "custom": ["k": 1, "j": 1]])
                await server.remoteEditChannel(id: "c2", fields: ["name": "Second"])
                await server.remoteEditUser(id: "me", fields: ["name": "Me", "status": "here"])
                _ = try await observer.perform(try observer.appContext.setMembershipsRequest(
                    userId: "me", set: [MembershipSet<JSONValue>(id: "c1", status: "base"), MembershipSet<JSONValue>(id: "c2", status: "base")],
                    remove: []))
            case .dataSync:
                // Access is not the subject here (DataSyncBackendTests and the peer test run with it).
                var choices = DataSyncChoices()
                choices.requiresAccessManager = false
                await server.configureDataSync(choices)
                let admin = observer.dataSync
                for (resource, object) in [
                    (DataSyncResource.channels, DataSyncObject(id: "c1", payload: ["name": "Base", "custom": ["k": 1, "j": 1]])),
                    (.channels, DataSyncObject(id: "c2", payload: ["name": "Second"])),
                    (.users, DataSyncObject(id: "me", status: "here", payload: ["name": "Me"])),
                    // Another client's membership ids: the devices find them by their pair.
                    (.memberships, DataSyncObject(id: "m-c1-me", channelId: "c1", userId: "me", status: "base")),
                    (.memberships, DataSyncObject(id: "m-c2-me", channelId: "c2", userId: "me", status: "base")),
                ] {
                    let answer = await server.dataSyncAsAdmin(try admin.createRequest(resource, object))
                    try #require(answer.status == 201, "seeding \(resource) \(object.id ?? "-"): \(answer.status)")
                }
            }
        }

        /// The third client's edits of the same objects while both devices are offline.
        func remoteEdits(_ server: PubNubServer, observer: PubNubClient) async throws {
            switch self {
            case .appContext:
                await server.remoteEditChannel(id: "c1", fields: ["name": "Remote", "custom": ["k": 1, "j": 2]])
                await server.remoteEditUser(id: "me", fields: ["status": "remote", "name": "Me too"])
                _ = try await observer.perform(try observer.appContext.setMembershipsRequest(
                    userId: "me", set: [MembershipSet<JSONValue>(id: "c1", status: "remote")], remove: []))
            case .dataSync:
                let admin = observer.dataSync
                func patch(_ resource: DataSyncResource, _ id: String, _ operations: [JSONPatchOperation]) async throws {
                    let answer = await server.dataSyncAsAdmin(try admin.patchRequest(resource, id: id, operations))
                    try #require(answer.status == 200, "patching \(resource) \(id): \(answer.status)")
                }
                try await patch(.channels, "c1", [
                    .add(JSONPointer(["payload", "name"]), "Remote"), .add(JSONPointer(["payload", "custom"]), ["k": 1, "j": 2]),
                ])
                try await patch(.users, "me", [.add(JSONPointer(["status"]), "remote"), .add(JSONPointer(["payload", "name"]), "Me too")])
                try await patch(.memberships, "m-c1-me", [.add(JSONPointer(["status"]), "remote")])
            }
        }

        /// A device of "me" on this backend.
        func device(seed: UInt64, clock: VirtualClock, server: PubNubServer, policy: ConflictPolicy) throws -> World {
            switch self {
            case .appContext: return try World(seed: seed, clock: clock, server: server, policy: policy)
            case .dataSync:
                var options = ReconcilerOptions()
                options.conflicts = ConflictPolicies(all: policy)
                return try World(
                    server: server, clock: clock, plan: FaultPlan(seed: seed, profile: .none), seed: seed, reconcilerOptions: options,
                    objects: { DataSyncBackend(client: $0) })
            }
        }

        /// What the server holds, as a device's snapshot compares. On DataSync the objects are
        /// read by a fresh device's full pull (App Context's listing has none), and its key
        /// fields are checked against the raw records.
        func serverState(_ server: PubNubServer, clock: VirtualClock, channels: [String]) async throws -> ReplicaSnapshot {
            var state = try await ReplicaSnapshot(server: server, userId: "me", channels: channels)
            guard self == .dataSync else { return state }
            let reader = try device(seed: 9999, clock: clock, server: server, policy: .serverWins)
            _ = try await reader.reconciler.pullObjects(full: true)
            let read = try await reader.snapshot(channels: channels)
            (state.users, state.channels, state.memberships) = (read.users, read.channels, read.memberships)
            let c1 = try #require(await server.dataSyncRecord(.channels, id: "c1")?.objectValue)
            #expect(state.channels["c1"]?.objectValue?["name"] == c1["payload"]?.objectValue?["name"] ?? .null)
            let me = try #require(await server.dataSyncRecord(.users, id: "me")?.objectValue)
            #expect(state.users["me"]?.objectValue?["status"] == me["status"] ?? .null)
            #expect(state.users["me"]?.objectValue?["eTag"] == me["eTag"] ?? .null)
            let m1 = try #require(await server.dataSyncRecord(.memberships, id: "m-c1-me")?.objectValue)
            #expect(state.memberships["c1"]?.objectValue?["status"] == m1["status"] ?? .null)
            return state
        }
    }


    @Test("concurrent offline edits on two devices and a third client converge, one log entry per conflicting edit",
          arguments: seeds)
    func converge(seed: UInt64) async throws {
        try await story(seed: seed, backend: .appContext)
    }

    @Test("on DataSync: the same story converges, one log entry per conflicting edit", arguments: seeds)
    func convergeOnDataSync(seed: UInt64) async throws {
        try await story(seed: seed, backend: .dataSync)
    }

    func story(seed: UInt64, backend: Backend) async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        let dice = Dice(seed: seed)
        let policies: [ConflictPolicy] = [.fieldMerge(tie: .lastWriter), .serverWins, .clientWins, .lastWriterWins, .fieldMerge(tie: .local)]
        let policy = policies[Int(seed) % policies.count]
        // What both devices start from: channel and user metadata, two memberships, messages with reactions.
        let observer = try World.client(InProcessTransport(server: server), userId: "other")
        try await backend.seed(server, observer: observer)
        let tts = await server.seedMessages(channel: "c1", (0..<4).map { chatPayload("m\($0)") }, publisher: "other")
        let me = try World.client(InProcessTransport(server: server), userId: "me")
        _ = try await me.messageActions.addMessageAction(channel: "c1", messageTimetoken: Timetoken(rawValue: tts[0]), type: "reaction", value: "❤️")

        let a = try backend.device(seed: seed, clock: clock, server: server, policy: policy)
        let b = try backend.device(seed: seed &+ 1000, clock: clock, server: server, policy: policy)
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
                _ = try await device.outbox.metadata.setChannel(id: "c1", edit: edit)
                expectedConflicts += 1
            }
            if dice.roll(0.75) {
                var edit = UserEdit<FlatCustom>()
                edit.status = .set("\(name)-status")
                _ = try await device.outbox.metadata.setUser(id: "me", edit: edit)
                expectedConflicts += 1
            }
            if dice.roll(0.75) {
                _ = try await device.outbox.memberships.setMembership(channel: "c1", edit: MemberEdit(status: "\(name)-\(seed)"))
                expectedConflicts += 1
            }
            if name == "A", dice.roll(0.5) {
                // Nobody else touches c2: no conflict.
                _ = try await device.outbox.memberships.removeMembership(channel: "c2")
            }
            let messages = try await device.store.fetch(device.store.queries.messages(inChannel: "c1"))
            let target = messages[dice.pick(messages.count)].id
            _ = try await device.outbox.messages.addReaction(["👍", "🎉", "❤️"][dice.pick(3)], toMessage: target)
            if dice.roll(0.5) { _ = try await device.outbox.messages.removeReaction("❤️", fromMessage: messages[0].id) }
            for index in 0..<(1 + dice.pick(2)) { _ = try await device.outbox.messages.send(text: "\(name) \(index)", to: "c1") }
        }
        clock.advance(by: 1)
        try await backend.remoteEdits(server, observer: observer)

        // Back on a flaky network first: requests dropped, answers lost, 5xx (the outbox probes
        // what may have gone and resends what did not; nothing is applied twice).
        a.transport.use(FaultPlan(seed: seed, profile: .flaky))
        b.transport.use(FaultPlan(seed: seed &+ 7, profile: .flaky))
        for _ in 0..<2 {
            clock.advance(by: 1)
            _ = try await a.sync()
            _ = try await b.sync()
        }
        try await World.healAndSyncUntilQuiet(a, b, clock: clock, seed: seed)
        let serverState = try await backend.serverState(server, clock: clock, channels: Self.channels)
        let stateA = try await a.snapshot(channels: Self.channels), stateB = try await b.snapshot(channels: Self.channels)
        #expect(serverState.users["me"] != nil && serverState.channels.count == 2 && serverState.memberships["c1"] != nil)
        #expect((serverState.messages["c1"]?.count ?? 0) >= 6 && !serverState.reactions.isEmpty)
        #expect(stateA == serverState, "seed \(seed) (\(policy.name), \(backend.rawValue)): device A differs from the server\nA: \(stateA)\nserver: \(serverState)")
        #expect(stateB == serverState, "seed \(seed) (\(policy.name), \(backend.rawValue)): device B differs from the server\nB: \(stateB)\nserver: \(serverState)")
        let log = try await a.store.fetch(a.store.queries.conflicts())
            + (try await b.store.fetch(b.store.queries.conflicts()))
        #expect(log.count == expectedConflicts, "seed \(seed) (\(backend.rawValue)): \(log.count) log entries for \(expectedConflicts) conflicting edits: \(log.map { "\($0.entityKind) \($0.entityId) op \($0.opId ?? "-") base \($0.base ?? "-") local \($0.local ?? "-") remote \($0.remote ?? "-") result \($0.result ?? "-")" })")
        #expect(log.allSatisfy { $0.automatic && !$0.isOpen && $0.policy == policy.name }, "seed \(seed): \(log.map(\.policy))")
        if backend == .dataSync {
            #expect(a.transport.requests.allSatisfy { !$0.pathSegments.starts(with: ["v2", "objects"]) }, "nothing goes to App Context")
        }
    }
}
