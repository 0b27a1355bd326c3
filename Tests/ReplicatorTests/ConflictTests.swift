import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator
import Testing

@Suite("Three-way merge")
struct ThreeWayMergeTests {
    let base: [String: JSONValue] = ["name": "Base", "status": "active", "custom": ["a": 1, "b": 1, "c": 1]]

    @Test("a field changed on one side takes that side; on both, the tie rule", arguments: [TieRule.local, .remote])
    func fields(tie: TieRule) {
        let local: [String: JSONValue] = ["name": "Local", "status": "active", "custom": ["a": 2, "b": 1, "c": 1]]
        let remote: [String: JSONValue] = ["name": "Remote", "status": "away", "custom": ["a": 1, "b": 3, "c": 1]]
        let merged = ThreeWayMerge.merge(base: base, local: local, remote: remote, tie: tie, localIsLater: false)
        #expect(merged["name"] == (tie == .local ? "Local" : "Remote"))
        #expect(merged["status"] == "away")
        #expect(merged["custom"] == ["a": 2, "b": 3, "c": 1])
    }

    @Test("custom is merged per key: a key removed on one side is removed, both sides' new keys kept")
    func customKeys() {
        let local: [String: JSONValue] = ["custom": ["a": 1, "b": 1, "c": 1, "local": true]]
        let remote: [String: JSONValue] = ["custom": ["a": 1, "b": 1, "remote": true]]
        let merged = ThreeWayMerge.merge(base: base, local: local, remote: remote, tie: .local, localIsLater: true)
        #expect(merged["custom"] == ["a": 1, "b": 1, "local": true, "remote": true])
    }

    @Test("both sides made the same change: no tie to break")
    func sameChange() {
        let change: [String: JSONValue] = ["name": "Same", "custom": ["a": 1, "b": 1, "c": 1]]
        let merged = ThreeWayMerge.merge(base: base, local: change, remote: change, tie: .remote, localIsLater: false)
        #expect(merged["name"] == "Same")
    }

    @Test("lastWriter tie rule follows the edit times")
    func lastWriter() {
        let local: [String: JSONValue] = ["name": "Local"], remote: [String: JSONValue] = ["name": "Remote"]
        #expect(ThreeWayMerge.merge(base: base, local: local, remote: remote, tie: .lastWriter, localIsLater: true)["name"] == "Local")
        #expect(ThreeWayMerge.merge(base: base, local: local, remote: remote, tie: .lastWriter, localIsLater: false)["name"] == "Remote")
    }

    @Test("with no base (new on both sides) absent fields count as null: a set field on both sides is a tie")
    func noBase() {
        let merged = ThreeWayMerge.merge(
            base: nil, local: ["name": "L", "status": .null], remote: ["name": "R", "status": "x"], tie: .local, localIsLater: false)
        #expect(merged["name"] == "L" && merged["status"] == "x")
    }
}

/// A user and a membership synced to the store, then edited locally (offline) and on the server.
struct ConflictFixture {
    let world: World
    let reconciler: Reconciler<DefaultChatCustom>
    let observer: PubNubClient

    static let base: [String: JSONValue] = ["name": "Base", "status": "active", "custom": ["a": 1, "b": 1]]

    /// `remoteFirst`: the server's edit is made before the local one (so the local edit is later).
    init(policy: ConflictPolicy, remoteFirst: Bool = false, profile: FaultProfile = .none) async throws {
        world = try World(profile: profile)
        var options = ReconcilerOptions()
        options.conflicts = ConflictPolicies(all: policy)
        reconciler = try world.reconciler(options: options)
        observer = try world.observer()
        await world.server.remoteEditUser(id: "u1", fields: Self.base)
        _ = try await observer.perform(
            try observer.appContext.setMembershipsRequest(
                userId: "me", set: [MembershipSet<JSONValue>(id: "general", status: "base", custom: ["m": 1])], remove: []))
        _ = try await reconciler.pullObjects(full: true)
        world.clock.advance(by: 1)
        if remoteFirst {
            try await remoteEdit()
            world.clock.advance(by: 1)
        }
        var edit = UserEdit<FlatCustom>()
        edit.name = .set("Local")
        edit.custom = .set(["a": 2, "b": 1])
        _ = try await world.outbox.metadata.setUser(id: "u1", edit: edit)
        _ = try await world.outbox.memberships.setMembership(channel: "general", edit: MemberEdit(status: "local"))
        world.clock.advance(by: 1)
        if !remoteFirst { try await remoteEdit() }
    }

    func remoteEdit() async throws {
        await world.server.remoteEditUser(id: "u1", fields: ["name": "Remote", "status": "away", "custom": ["a": 1, "b": 3]])
        _ = try await observer.perform(
            try observer.appContext.setMembershipsRequest(
                userId: "me", set: [MembershipSet<JSONValue>(id: "general", status: "remote", custom: ["m": 2])], remove: []))
    }

    func serverUser() async throws -> ChatUser<JSONValue> { try await observer.appContext.getUser(id: "u1", as: JSONValue.self) }

    func serverMembership() async throws -> WireMembership<DefaultChatCustom>? {
        try await observer.appContext.getMemberships(userId: "me", as: DefaultChatCustom.self).data.first { $0.channel.id == "general" }
    }

    func localUser() async throws -> ChatUser<FlatCustom>? { try await world.store.fetch(world.store.queries.user(id: "u1")) }

    /// Drain (412 / membership pre-check), settle, drain again.
    func run() async throws -> ConflictReport {
        let first = try await world.outbox.drain(until: world.clock.now.addingTimeInterval(60))
        #expect(first.conflicts == 2, "both edits should conflict, got \(first.conflicts)")
        let report = try await reconciler.resolveConflicts()
        _ = try await world.outbox.drain(until: world.clock.now.addingTimeInterval(60))
        return report
    }

    func log() async throws -> [ConflictRecord] { try await world.store.fetch(world.store.queries.conflicts()) }

    /// After settling, a pull leaves the local copy equal to the server's.
    func expectConverged() async throws {
        _ = try await reconciler.pullObjects(full: true)
        let server = try await serverUser()
        let local = try #require(try await localUser())
        #expect(local.name == server.name && local.status == server.status && local.eTag == server.eTag)
        #expect(try JSONValue(encoding: local.custom) == (try JSONValue(encoding: server.custom)))
        let member = try await world.store.fetch(world.store.queries.member(channelId: "general", userId: "me"))
        #expect(member?.status == (try await serverMembership())?.status)
        #expect(try await world.entries().isEmpty)
    }
}

@Suite("Conflict policies")
struct ConflictPolicyTests {
    @Test("serverWins drops the local edit and keeps the server's version")
    func serverWins() async throws {
        let f = try await ConflictFixture(policy: .serverWins)
        #expect(try await f.run().resolved == 2)
        let user = try await f.serverUser()
        #expect(user.name == "Remote" && user.custom == ["a": 1, "b": 3])
        #expect(try await f.serverMembership()?.status == "remote")
        let log = try await f.log()
        #expect(log.count == 2 && log.allSatisfy { $0.policy == "serverWins" && $0.automatic && !$0.isOpen })
        let userEntry = try #require(log.first { $0.entityKind == "user" })
        #expect(userEntry.base?.contains("\"Base\"") == true && userEntry.local?.contains("\"Local\"") == true)
        #expect(userEntry.remote?.contains("\"Remote\"") == true && userEntry.result?.contains("\"Remote\"") == true)
        try await f.expectConverged()
    }

    @Test("clientWins resends the local edit over the server's new eTag")
    func clientWins() async throws {
        let f = try await ConflictFixture(policy: .clientWins)
        #expect(try await f.run().resolved == 2)
        let user = try await f.serverUser()
        #expect(user.name == "Local" && user.status == "away" && user.custom == ["a": 2, "b": 1])
        #expect(try await f.serverMembership()?.status == "local")
        try await f.expectConverged()
    }

    @Test("lastWriterWins: the server's later edit wins")
    func lastWriterRemote() async throws {
        let f = try await ConflictFixture(policy: .lastWriterWins)
        _ = try await f.run()
        #expect(try await f.serverUser().name == "Remote")
        try await f.expectConverged()
    }

    @Test("lastWriterWins: the later local edit wins")
    func lastWriterLocal() async throws {
        let f = try await ConflictFixture(policy: .lastWriterWins, remoteFirst: true)
        _ = try await f.run()
        #expect(try await f.serverUser().name == "Local")
        #expect(try await f.serverMembership()?.status == "local")
        try await f.expectConverged()
    }

    @Test("fieldMerge merges fields and custom per key; the tie rule decides a field both changed")
    func fieldMerge() async throws {
        let f = try await ConflictFixture(policy: .fieldMerge(tie: .local))
        _ = try await f.run()
        let user = try await f.serverUser()
        #expect(user.name == "Local")  // both changed: tie → local
        #expect(user.status == "away")  // only the server changed it
        #expect(user.custom == ["a": 2, "b": 3])  // a from local, b from the server
        let member = try #require(try await f.serverMembership())
        #expect(member.status == "local" && member.custom == ["m": 2])  // status tie → local; custom only remote
        let entry = try #require(try await f.log().first { $0.entityKind == "user" })
        #expect(entry.policy == "fieldMerge(local)")
        #expect(try JSONValue(jsonData: Data(try #require(entry.result).utf8)).objectValue?["custom"] == ["a": 2, "b": 3])
        try await f.expectConverged()
    }

    @Test("a custom resolver's decision is applied and logged")
    func custom() async throws {
        let f = try await ConflictFixture(policy: .custom { context in
            context.entity == .user ? .merged((context.remote ?? [:]).merging(["name": "Chosen"]) { _, new in new }) : .takeRemote
        })
        _ = try await f.run()
        #expect(try await f.serverUser().name == "Chosen")
        #expect(try await f.log().allSatisfy { $0.policy == "custom" })
        try await f.expectConverged()
    }

    @Test("manual leaves the edit in conflict with an open log entry until a person takes a side")
    func manual() async throws {
        let f = try await ConflictFixture(policy: .manual)
        let report = try await f.run()
        #expect(report.waiting == 2 && report.resolved == 0)
        let open = try await f.log()
        #expect(open.count == 2 && open.allSatisfy(\.isOpen))
        #expect(try await f.world.entries().allSatisfy { $0.state == .conflict })
        // Settling again does not log again while the entry is open.
        #expect(try await f.reconciler.resolveConflicts().waiting == 2)
        #expect(try await f.log().count == 2)
        for entry in open { try await f.reconciler.resolve(conflictId: entry.id, take: .merged) }
        _ = try await f.world.outbox.drain(until: f.world.clock.now.addingTimeInterval(60))
        #expect(try await f.serverUser().custom == ["a": 2, "b": 3])
        let closed = try await f.log()
        #expect(closed.count == 2 && closed.allSatisfy { !$0.isOpen && $0.policy == "take:merged" && !$0.automatic })
        try await f.expectConverged()
    }

    @Test("a 412 storm ends in conflict for a person after the bounded attempts")
    func storm() async throws {
        let race = FaultProfile(name: "race", preconditionRace: 1.0)
        let f = try await ConflictFixture(policy: .clientWins, profile: race)
        var options = ReconcilerOptions()
        options.conflicts = ConflictPolicies(all: .clientWins)
        options.conflicts.maxAutomaticAttempts = 2
        let reconciler = try f.world.reconciler(options: options)
        let report = try await reconciler.sync(pushDeadline: f.world.clock.now.addingTimeInterval(60))
        let userOps = try await f.world.entries().filter { $0.kind == .setUser }
        #expect(userOps.count == 1 && userOps[0].state == .conflict)
        let log = try await f.log().filter { $0.entityKind == "user" }
        #expect(log.filter(\.automatic).count == 2)
        #expect(log.last?.isOpen == true && log.last?.policy == "attempts exhausted")
        #expect(report.conflicts.waiting == 1)
    }

    @Test("a conflicted membership removal is decided by the tie rule, not silently undone")
    func removal() async throws {
        let f = try await ConflictFixture(policy: .fieldMerge(tie: .local))
        _ = try await f.world.outbox.memberships.removeMembership(channel: "general")
        _ = try await f.run()
        #expect(try await f.serverMembership() == nil)
        let entry = try #require(try await f.log().first { $0.entityKind == "membership" })
        #expect(!entry.isOpen && entry.automatic)
        try await f.expectConverged()
    }

    @Test("retrying a conflicted membership edit sends it over the server's version and closes its log entry")
    func retryMembership() async throws {
        let f = try await ConflictFixture(policy: .manual)
        _ = try await f.run()
        let op = try #require(try await f.world.entries().first { $0.kind == .setMembership })
        try await f.world.outbox.retry(opId: op.id)
        _ = try await f.world.outbox.drain(until: f.world.clock.now.addingTimeInterval(60))
        #expect(try await f.serverMembership()?.status == "local")
        #expect(try await f.world.entries().allSatisfy { $0.kind != .setMembership })
        let entry = try #require(try await f.log().first { $0.opId == op.id })
        #expect(!entry.isOpen && entry.policy == "outbox retry")
    }
}

@Suite("Membership writes")
struct MembershipWriteTests {
    @Test("a status-only membership edit keeps the custom data the base version had (PubNub replaces all three fields)")
    func keepsUntouchedFields() async throws {
        let world = try World()
        let observer = try world.observer()
        _ = try await observer.perform(
            try observer.appContext.setMembershipsRequest(
                userId: "me", set: [MembershipSet<JSONValue>(id: "general", status: "base", type: "team", custom: ["m": 1])],
                remove: []))
        _ = try await world.reconciler().pullObjects(full: true)
        _ = try await world.outbox.memberships.setMembership(channel: "general", edit: MemberEdit(status: "away"))
        _ = try await world.outbox.drain(until: world.clock.now.addingTimeInterval(60))
        let member = try await observer.appContext.getMemberships(userId: "me", as: DefaultChatCustom.self).data.first
        #expect(member?.status == "away" && member?.type == "team" && member?.custom == ["m": 1])
    }
}
