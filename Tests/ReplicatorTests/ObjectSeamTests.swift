import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator
import Testing

// The object scenarios run through the object-backend seam alone: every device's users, channels
// and memberships go to a test double (InMemoryObjects.swift), never to App Context. Each runs in
// both semantic families a backend can have: App Context's (no If-Match on memberships: the
// outbox reads first) and a conditional one (If-Match everywhere, as DataSync).

/// A device whose objects live in an ``InMemoryObjectServer``.
struct SeamDevice {
    let world: World
    let link: ObjectLink

    init(objects: InMemoryObjectServer, server: PubNubServer, clock: VirtualClock, capabilities: ObjectBackendCapabilities,
         policy: ConflictPolicy, seed: UInt64 = 1, maxAutomaticAttempts: Int? = nil) throws {
        var options = ReconcilerOptions()
        options.conflicts = ConflictPolicies(all: policy)
        if let maxAutomaticAttempts { options.conflicts.maxAutomaticAttempts = maxAutomaticAttempts }
        let link = ObjectLink()
        self.link = link
        world = try World(
            server: server, clock: clock, plan: FaultPlan(seed: seed, profile: .none), seed: seed, reconcilerOptions: options,
            objects: { _ in InMemoryObjects(server: objects, capabilities: capabilities, link: link) })
    }

    /// Whether any object request reached App Context (the simulator): none may.
    func objectRequestsAtAppContext() -> Int {
        world.transport.requests.filter { $0.pathSegments.starts(with: ["v2", "objects"]) }.count
    }

    /// The stored users, channels and memberships of "me", as comparable values.
    func objects(channels: [String]) async throws -> SeamSnapshot {
        let store = world.store
        var snapshot = SeamSnapshot()
        for id in ["u1", "me"] {
            // Server objects only (a membership's stub of its user or channel has no eTag).
            if let user = try await store.fetch(store.queries.user(id: id)), user.eTag != nil {
                snapshot.users[id] = [Self.text(user.name), Self.text(user.status), try Self.json(user.custom), Self.text(user.eTag)]
            }
        }
        for id in channels {
            if let channel = try await store.fetch(store.queries.channel(id: id)), channel.eTag != nil {
                snapshot.channels[id] = [Self.text(channel.name), try Self.json(channel.custom), Self.text(channel.eTag)]
            }
            if let member = try await store.fetch(store.queries.member(channelId: id, userId: "me")) {
                snapshot.memberships[id] = [Self.text(member.status), try Self.json(member.custom), Self.text(member.eTag)]
            }
        }
        return snapshot
    }

    static func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
    static func json(_ value: (some Encodable)?) throws -> JSONValue { try value.map { try JSONValue(encoding: $0) } ?? .null }
}

/// Objects as the assertions compare them (name, status, custom, eTag).
struct SeamSnapshot: Equatable, CustomStringConvertible {
    var users: [String: [JSONValue]] = [:]
    var channels: [String: [JSONValue]] = [:]
    var memberships: [String: [JSONValue]] = [:]

    /// The double's objects in the same shape.
    init() {}

    init(server: InMemoryObjectServer, channels ids: [String]) async {
        for (id, record) in await server.users where id == "u1" || id == "me" {
            users[id] = [record.fields["name"] ?? .null, record.fields["status"] ?? .null, record.fields["custom"] ?? .null, .string(record.eTag)]
        }
        for (id, record) in await server.channels where ids.contains(id) {
            channels[id] = [record.fields["name"] ?? .null, record.fields["custom"] ?? .null, .string(record.eTag)]
        }
        for (key, record) in await server.memberships(of: .user("me")) where ids.contains(key.channel) {
            memberships[key.channel] = [record.fields["status"] ?? .null, record.fields["custom"] ?? .null, .string(record.eTag)]
        }
    }

    var description: String { "users \(users) channels \(channels) memberships \(memberships)" }
}

/// ConflictFixture's story over the double: a user and a membership synced, edited locally
/// (offline) and by another client.
struct SeamConflictFixture {
    let objects: InMemoryObjectServer
    let device: SeamDevice
    var world: World { device.world }

    static let base: [String: JSONValue] = ["name": "Base", "status": "active", "custom": ["a": 1, "b": 1]]

    init(policy: ConflictPolicy, capabilities: ObjectBackendCapabilities, remoteFirst: Bool = false, maxAutomaticAttempts: Int? = nil)
        async throws
    {
        let clock = VirtualClock()
        objects = InMemoryObjectServer(clock: clock)
        device = try SeamDevice(
            objects: objects, server: PubNubServer(clock: clock), clock: clock, capabilities: capabilities, policy: policy,
            maxAutomaticAttempts: maxAutomaticAttempts)
        await objects.editUser("u1", Self.base)
        await objects.editMembership(channel: "general", user: "me", ["status": "base", "custom": ["m": 1]])
        _ = try await device.world.reconciler.pullObjects(full: true)
        clock.advance(by: 1)
        if remoteFirst {
            await remoteEdit()
            clock.advance(by: 1)
        }
        var edit = UserEdit<FlatCustom>()
        edit.name = .set("Local")
        edit.custom = .set(["a": 2, "b": 1])
        _ = try await world.outbox.metadata.setUser(id: "u1", edit: edit)
        _ = try await world.outbox.memberships.setMembership(channel: "general", edit: MemberEdit(status: "local"))
        clock.advance(by: 1)
        if !remoteFirst { await remoteEdit() }
    }

    func remoteEdit() async {
        await objects.editUser("u1", ["name": "Remote", "status": "away", "custom": ["a": 1, "b": 3]])
        await objects.editMembership(channel: "general", user: "me", ["status": "remote", "custom": ["m": 2]])
    }

    func serverUser() async -> InMemoryObjectServer.Record? { await objects.users["u1"] }

    func serverMembership() async -> InMemoryObjectServer.Record? {
        await objects.memberships[InMemoryObjectServer.MemberKey(channel: "general", user: "me")]
    }

    /// Drain (412 / membership pre-check), settle, drain again.
    func run() async throws -> ConflictReport {
        let first = try await world.outbox.drain(until: world.clock.now.addingTimeInterval(60))
        #expect(first.conflicts == 2, "both edits should conflict, got \(first.conflicts)")
        let report = try await world.reconciler.resolveConflicts()
        _ = try await world.outbox.drain(until: world.clock.now.addingTimeInterval(60))
        return report
    }

    func log() async throws -> [ConflictRecord] { try await world.store.fetch(world.store.queries.conflicts()) }

    /// After settling, a pull leaves the local copy equal to the double's, and nothing went to App Context.
    func expectConverged() async throws {
        _ = try await world.reconciler.pullObjects(full: true)
        let local = try await device.objects(channels: ["general"]), server = await SeamSnapshot(server: objects, channels: ["general"])
        #expect(local == server, "device \(local)\nserver \(server)")
        #expect(try await world.entries().isEmpty)
        #expect(device.objectRequestsAtAppContext() == 0)
    }
}

extension ObjectBackendCapabilities: CustomTestStringConvertible {
    public var testDescription: String { conditionalMembershipWrites ? "conditional" : "app-context-like" }
}

@Suite("Object-backend seam: conflict policies over a test double")
struct ObjectSeamConflictTests {
    static let families = [InMemoryObjects.appContextLike, InMemoryObjects.conditional]

    @Test("serverWins keeps the other client's version", arguments: families)
    func serverWins(_ capabilities: ObjectBackendCapabilities) async throws {
        let f = try await SeamConflictFixture(policy: .serverWins, capabilities: capabilities)
        #expect(try await f.run().resolved == 2)
        #expect(await f.serverUser()?.fields["name"] == "Remote")
        #expect(await f.serverMembership()?.fields["status"] == "remote")
        let log = try await f.log()
        #expect(log.count == 2 && log.allSatisfy { $0.policy == "serverWins" && $0.automatic && !$0.isOpen })
        try await f.expectConverged()
    }

    @Test("clientWins resends the local edit over the server's new version", arguments: families)
    func clientWins(_ capabilities: ObjectBackendCapabilities) async throws {
        let f = try await SeamConflictFixture(policy: .clientWins, capabilities: capabilities)
        #expect(try await f.run().resolved == 2)
        let user = try #require(await f.serverUser())
        #expect(user.fields["name"] == "Local" && user.fields["status"] == "away" && user.fields["custom"] == ["a": 2, "b": 1])
        #expect(await f.serverMembership()?.fields["status"] == "local")
        try await f.expectConverged()
    }

    @Test("lastWriterWins: the later edit wins, either way", arguments: families)
    func lastWriter(_ capabilities: ObjectBackendCapabilities) async throws {
        let remoteLater = try await SeamConflictFixture(policy: .lastWriterWins, capabilities: capabilities)
        _ = try await remoteLater.run()
        #expect(await remoteLater.serverUser()?.fields["name"] == "Remote")
        try await remoteLater.expectConverged()
        let localLater = try await SeamConflictFixture(policy: .lastWriterWins, capabilities: capabilities, remoteFirst: true)
        _ = try await localLater.run()
        #expect(await localLater.serverUser()?.fields["name"] == "Local")
        #expect(await localLater.serverMembership()?.fields["status"] == "local")
        try await localLater.expectConverged()
    }

    @Test("fieldMerge merges fields and custom per key", arguments: families)
    func fieldMerge(_ capabilities: ObjectBackendCapabilities) async throws {
        let f = try await SeamConflictFixture(policy: .fieldMerge(tie: .local), capabilities: capabilities)
        _ = try await f.run()
        let user = try #require(await f.serverUser())
        #expect(user.fields["name"] == "Local" && user.fields["status"] == "away" && user.fields["custom"] == ["a": 2, "b": 3])
        let member = try #require(await f.serverMembership())
        #expect(member.fields["status"] == "local" && member.fields["custom"] == ["m": 2])
        try await f.expectConverged()
    }

    @Test("manual waits for a person; taking a side closes the entries", arguments: families)
    func manual(_ capabilities: ObjectBackendCapabilities) async throws {
        let f = try await SeamConflictFixture(policy: .manual, capabilities: capabilities)
        let report = try await f.run()
        #expect(report.waiting == 2 && report.resolved == 0)
        let open = try await f.log()
        #expect(open.count == 2 && open.allSatisfy(\.isOpen))
        for entry in open { try await f.world.reconciler.resolve(conflictId: entry.id, take: .local) }
        _ = try await f.world.outbox.drain(until: f.world.clock.now.addingTimeInterval(60))
        #expect(await f.serverUser()?.fields["name"] == "Local")
        #expect(await f.serverMembership()?.fields["status"] == "local")
        #expect(try await f.log().allSatisfy { !$0.isOpen })
        try await f.expectConverged()
    }

    @Test("a conflicted membership removal is decided by the tie rule", arguments: families)
    func removal(_ capabilities: ObjectBackendCapabilities) async throws {
        let f = try await SeamConflictFixture(policy: .fieldMerge(tie: .local), capabilities: capabilities)
        _ = try await f.world.outbox.memberships.removeMembership(channel: "general")
        _ = try await f.run()
        #expect(await f.serverMembership() == nil)
        #expect(try await f.log().first { $0.entityKind == "membership" }.map { !$0.isOpen && $0.automatic } == true)
        try await f.expectConverged()
    }

    @Test("a precondition storm ends in conflict for a person after the bounded attempts", arguments: families)
    func storm(_ capabilities: ObjectBackendCapabilities) async throws {
        let f = try await SeamConflictFixture(policy: .clientWins, capabilities: capabilities, maxAutomaticAttempts: 2)
        await f.objects.setPreconditionRace(true)
        let report = try await f.world.reconciler.sync(pushDeadline: f.world.clock.now.addingTimeInterval(60))
        let userOps = try await f.world.entries().filter { $0.kind == .setUser }
        #expect(userOps.count == 1 && userOps.first?.state == .conflict)
        let log = try await f.log().filter { $0.entityKind == "user" }
        #expect(log.filter(\.automatic).count == 2)
        #expect(log.last?.isOpen == true && log.last?.policy == "attempts exhausted")
        #expect(report.conflicts.waiting >= 1)
        #expect(f.device.objectRequestsAtAppContext() == 0)
    }

    @Test("an edit whose answer was lost is found applied by the probe, not sent twice", arguments: families)
    func lostAnswer(_ capabilities: ObjectBackendCapabilities) async throws {
        let f = try await SeamConflictFixture(policy: .serverWins, capabilities: capabilities)
        _ = try await f.run()
        let before = await f.objects.requests.count
        var edit = UserEdit<FlatCustom>()
        edit.name = .set("Again")
        _ = try await f.world.outbox.metadata.setUser(id: "u1", edit: edit)
        f.device.link.loseAnswers(1)
        _ = try await f.world.outbox.drain(until: f.world.clock.now.addingTimeInterval(60))
        f.world.clock.advance(by: 600)
        _ = try await f.world.outbox.drain(until: f.world.clock.now.addingTimeInterval(60))
        #expect(try await f.world.entries().isEmpty)
        let requests = await f.objects.requests.dropFirst(before)
        #expect(requests.filter { $0.hasPrefix("patch users/u1") }.count == 1, "\(requests)")
        #expect(requests.contains("getUser u1"), "the probe reads the user: \(requests)")
        #expect(await f.serverUser()?.fields["name"] == "Again")
        try await f.expectConverged()
    }
}

extension ObjectSeamConflictTests {
    @Test("a membership edit whose answer was lost settles as sent: no conflict with itself, with or without If-Match",
          arguments: families)
    func lostMembershipAnswer(_ capabilities: ObjectBackendCapabilities) async throws {
        let f = try await SeamConflictFixture(policy: .serverWins, capabilities: capabilities)
        _ = try await f.run()
        let logged = try await f.log().count
        _ = try await f.world.outbox.memberships.setMembership(channel: "general", edit: MemberEdit(status: "after the loss"))
        f.device.link.loseAnswers(1)
        _ = try await f.world.outbox.drain(until: f.world.clock.now.addingTimeInterval(60))
        f.world.clock.advance(by: 600)
        _ = try await f.world.outbox.drain(until: f.world.clock.now.addingTimeInterval(60))
        #expect(try await f.world.entries().isEmpty, "settled, not parked as a conflict")
        #expect(try await f.log().count == logged, "no conflict entry for a write that arrived")
        #expect(await f.serverMembership()?.fields["status"] == "after the loss")
        try await f.expectConverged()
    }
}

@Suite("Object-backend seam: two devices over a test double")
struct ObjectSeamTwoDeviceTests {
    @Test("offline edits on two devices and a third client converge, one log entry per conflicting edit",
          arguments: SoakSeeds.range("PNREPLICATE_OBJECT_SEEDS", default: 12))
    func converge(seed: UInt64) async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        let objects = InMemoryObjectServer(clock: clock)
        let dice = Dice(seed: seed)
        let policies: [ConflictPolicy] = [.fieldMerge(tie: .lastWriter), .serverWins, .clientWins, .lastWriterWins, .fieldMerge(tie: .local)]
        let policy = policies[Int(seed) % policies.count]
        let capabilities = seed % 2 == 0 ? InMemoryObjects.appContextLike : InMemoryObjects.conditional
        let channels = ["c1", "c2"]
        await objects.editChannel("c1", ["name": "Base", "custom": ["k": 1, "j": 1]])
        await objects.editChannel("c2", ["name": "Second"])
        await objects.editUser("me", ["name": "Me", "status": "here"])
        await objects.editMembership(channel: "c1", user: "me", ["status": "base"])
        await objects.editMembership(channel: "c2", user: "me", ["status": "base"])
        let a = try SeamDevice(objects: objects, server: server, clock: clock, capabilities: capabilities, policy: policy, seed: seed)
        let b = try SeamDevice(objects: objects, server: server, clock: clock, capabilities: capabilities, policy: policy, seed: seed &+ 1000)
        _ = try await a.world.sync()
        _ = try await b.world.sync()
        #expect(try await a.objects(channels: channels) == (try await b.objects(channels: channels)))

        var expectedConflicts = 0
        for (name, device) in [("A", a), ("B", b)] {
            device.link.offline = true
            clock.advance(by: 1)
            if dice.roll(0.75) {
                var edit = ChannelEdit<FlatCustom>()
                edit.name = .set("\(name)-\(seed)")
                edit.custom = .set(["k": .string(name), "j": 1])
                _ = try await device.world.outbox.metadata.setChannel(id: "c1", edit: edit)
                expectedConflicts += 1
            }
            if dice.roll(0.75) {
                var edit = UserEdit<FlatCustom>()
                edit.status = .set("\(name)-status")
                _ = try await device.world.outbox.metadata.setUser(id: "me", edit: edit)
                expectedConflicts += 1
            }
            if dice.roll(0.75) {
                _ = try await device.world.outbox.memberships.setMembership(channel: "c1", edit: MemberEdit(status: "\(name)-\(seed)"))
                expectedConflicts += 1
            }
            if name == "A", dice.roll(0.5) {
                _ = try await device.world.outbox.memberships.removeMembership(channel: "c2")  // nobody else touches c2
            }
            // An offline drain attempt fails without sending anything.
            _ = try await device.world.outbox.drain(until: clock.now.addingTimeInterval(5))
        }
        clock.advance(by: 1)
        await objects.editChannel("c1", ["name": "Remote", "custom": ["k": 1, "j": 2]])
        await objects.editUser("me", ["status": "remote", "name": "Me too"])
        await objects.editMembership(channel: "c1", user: "me", ["status": "remote"])

        a.link.offline = false
        b.link.offline = false
        var quiet = false
        for _ in 0..<6 {
            clock.advance(by: 1)
            let ra = try await a.world.sync(), rb = try await b.world.sync()
            #expect(ra.errors.isEmpty && rb.errors.isEmpty, "seed \(seed): \(ra.errors) \(rb.errors)")
            let left = try await a.world.entries().count + b.world.entries().count
            if !ra.changedAnything && !rb.changedAnything && left == 0 {
                quiet = true
                break
            }
        }
        #expect(quiet, "seed \(seed): still changing after 6 rounds")
        let serverState = await SeamSnapshot(server: objects, channels: channels)
        #expect(serverState.users["me"] != nil && serverState.channels.count == 2 && serverState.memberships["c1"] != nil)
        #expect(try await a.objects(channels: channels) == serverState, "seed \(seed) (\(policy.name), \(capabilities.testDescription))")
        #expect(try await b.objects(channels: channels) == serverState, "seed \(seed) (\(policy.name), \(capabilities.testDescription))")
        let log = try await a.world.store.fetch(a.world.store.queries.conflicts()) + (try await b.world.store.fetch(b.world.store.queries.conflicts()))
        #expect(log.count == expectedConflicts, "seed \(seed): \(log.count) log entries for \(expectedConflicts) conflicting edits")
        #expect(log.allSatisfy { $0.automatic && !$0.isOpen && $0.policy == policy.name }, "seed \(seed): \(log.map(\.policy))")
        #expect(a.objectRequestsAtAppContext() == 0 && b.objectRequestsAtAppContext() == 0)
    }
}
