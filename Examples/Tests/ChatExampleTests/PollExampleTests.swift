import ChatExample
import Foundation
import PubNubReplica
import PubNubSimulator
import PubNubSimulatorTesting
import Testing

/// The poll example (docs/app-data.md) as an app's test runs it, against the in-process
/// simulator: two devices vote offline, one adds an option while the other closes the poll, both
/// come back through a flaky network and converge, with the conflict logged.
@Suite("The poll example against the in-process simulator")
struct PollExampleTests {
    /// A device of `user` whose network `transport` the test switches.
    static func device(_ user: String, server: PubNubServer, clock: VirtualClock, seed: UInt64) throws
        -> (Replica<DefaultChatCustom>, InProcessTransport)
    {
        let transport = InProcessTransport(server: server)
        var configuration = ReplicaConfiguration(
            publishKey: "demo", subscribeKey: "demo", userId: user, store: .file(SimulatedDevice<DefaultChatCustom>.temporaryStorePath()))
        configuration.origin = "http://sim.invalid"
        configuration.transport = transport
        configuration.clock = clock
        configuration.seed = seed
        PollExample.declare(in: &configuration)
        return (try Replica<DefaultChatCustom>(configuration), transport)
    }

    @Test("two devices vote offline; one adds an option while the other closes the poll; a flaky network; they converge, one conflict logged",
          arguments: [1, 2, 3] as [UInt64])
    func convergeOffline(seed: UInt64) async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        var choices = DataSyncChoices()
        choices.requiresAccessManager = false
        await server.configureDataSync(choices)
        // The team defines its classes on PubNub (the Admin API; here, the simulator's own call).
        await server.defineDataSyncClass(DataSyncClass(name: "Poll", properties: [
            DataSyncProperty(name: "question", pointer: JSONPointer(["payload", "question"]), valueKind: .string, filtering: .simple),
            DataSyncProperty(name: "closed", pointer: JSONPointer(["payload", "closed"]), valueKind: .boolean, filtering: .simple),
        ]))
        await server.defineDataSyncClass(DataSyncClass(name: "Vote", kind: .relationship, ends: ("Poll", "User")))
        let admin = try PubNubClient.simulated(InProcessTransport(server: server), userId: "admin", clock: clock).dataSync
        for user in ["alice", "bob"] {
            let made = await server.dataSyncAsAdmin(try admin.createRequest(.users, DataSyncObject(id: user, payload: ["name": .string(user)])))
            #expect(made.status == 201)
        }

        let (alice, aliceNet) = try Self.device("alice", server: server, clock: clock, seed: seed)
        let (bob, bobNet) = try Self.device("bob", server: server, clock: clock, seed: seed &+ 100)
        let poll = try await PollExample.create(Poll(question: "Lunch?", options: ["pizza", "sushi"]), on: alice)
        _ = try await alice.sync(pushDeadline: clock.now.addingTimeInterval(60))
        _ = try await bob.sync(pushDeadline: clock.now.addingTimeInterval(60))
        #expect(try await PollExample.results(of: poll, on: bob)?.poll.options == ["pizza", "sushi"], "bob sees alice's poll")

        // Offline: both vote; alice adds an option, bob closes the poll.
        aliceNet.use(FaultPlan(seed: seed, profile: .offline))
        bobNet.use(FaultPlan(seed: seed, profile: .offline))
        try await PollExample.vote(0, in: poll, as: "alice", on: alice)
        try await PollExample.addOption("tacos", to: poll, on: alice)
        clock.advance(by: 1)
        try await PollExample.vote(1, in: poll, as: "bob", on: bob)
        try await PollExample.close(poll, on: bob)
        #expect(try await PollExample.results(of: poll, on: alice)?.votes == ["pizza": 1], "shown at once, offline")
        #expect(try await PollExample.results(of: poll, on: bob)?.poll.closed == true)

        // Back through a flaky network (lost answers, dropped requests, 5xx), then a good one.
        aliceNet.use(FaultPlan(seed: seed, profile: .flaky))
        bobNet.use(FaultPlan(seed: seed &+ 7, profile: .flaky))
        for _ in 0..<2 {
            clock.advance(by: 1)
            _ = try? await alice.sync(pushDeadline: clock.now.addingTimeInterval(60))
            _ = try? await bob.sync(pushDeadline: clock.now.addingTimeInterval(60))
        }
        aliceNet.use(FaultPlan(seed: seed, profile: .none))
        bobNet.use(FaultPlan(seed: seed, profile: .none))
        for _ in 0..<3 {
            clock.advance(by: 1)
            _ = try await alice.sync(pushDeadline: clock.now.addingTimeInterval(60))
            _ = try await bob.sync(pushDeadline: clock.now.addingTimeInterval(60))
        }

        let expected = Poll(question: "Lunch?", options: ["pizza", "sushi", "tacos"], closed: true)
        for (name, replica) in [("alice", alice), ("bob", bob)] {
            let shown = try #require(try await PollExample.results(of: poll, on: replica), "seed \(seed): \(name)")
            #expect(shown.poll == expected, "seed \(seed): \(name) shows \(shown.poll)")
            #expect(shown.votes == ["pizza": 1, "sushi": 1], "seed \(seed): \(name) counts \(shown.votes)")
            #expect(try await replica.fetch(replica.queries.outbox()).isEmpty, "seed \(seed): \(name) has nothing left to send")
        }
        let onServer = await server.dataSyncAsAdmin(try admin.getRequest(.entities, id: poll))
        let record = try PubNubDataSync.row(from: onServer, operation: "get")
        #expect(record.payload?["options"] == ["pizza", "sushi", "tacos"] && record.payload?["closed"] == true, "seed \(seed)")
        let log = try await alice.fetch(alice.queries.conflicts()) + (try await bob.fetch(bob.queries.conflicts()))
        #expect(log.count == 1 && log.first?.entityId == "Poll/\(poll)" && log.first?.policy == "fieldMerge(lastWriter)",
                "seed \(seed): one conflict, merged: \(log.map { "\($0.entityKind) \($0.entityId) \($0.policy)" })")
    }
}
