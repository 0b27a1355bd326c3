import ChatExample
import Foundation
import PubNubReplica
import PubNubSimulator
import PubNubSimulatorTesting
import Testing

/// README's Quick start, run as an app's test would run it: the same `run(_:)`, with only the
/// configuration swapped for the in-process simulator.
@Suite("README's Quick start against the in-process simulator")
struct QuickStartTests {
    @Test("offline sends, start, a suspend in the middle of a send, resume, a live event: every message arrives once",
          .timeLimit(.minutes(4)))
    func quickStart() async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        await server.configureSubscribe(SubscribeSettings(hold: .seconds(1)))
        let web = try PubNubClient.simulated(InProcessTransport(server: server), userId: "web")
        _ = try await web.perform(try web.appContext.setMembershipsRequest(
            userId: "alice", set: [MembershipSet<JSONValue>(id: "general", status: "joined")], remove: []))

        // The app's configuration, with the simulator in place of PubNub.
        let transport = InProcessTransport(server: server, plan: FaultPlan(seed: 1, profile: .offline))
        let path = SimulatedDevice<DefaultChatCustom>.temporaryStorePath()
        var configuration = ReplicaConfiguration(publishKey: "demo", subscribeKey: "demo", userId: "alice", store: .file(path))
        configuration.origin = "http://sim.invalid"
        configuration.transport = transport
        configuration.clock = clock
        configuration.seed = 1
        let replica = try Replica<DefaultChatCustom>(configuration)

        // Two messages written offline, before the app runs.
        for text in ["written offline 1", "written offline 2"] { _ = try await replica.messages.send(text: text, to: "general") }
        let expected = ["written offline 1", "written offline 2", "Hello from pnreplicate", "from the web"]
        let app = Task {
            try await run(replica) { messages in
                expected.allSatisfy { text in messages.contains { $0.text == text && $0.timetoken != nil } }
            }
        }
        let offline = await waitForStatus(of: replica) { $0.isOffline && $0.pending == 3 }
        #expect(offline.pending == 3, "nothing leaves while offline")

        // The network comes back; the first publish leaves, and the app is suspended before its
        // answer comes (iOS took the app to the background).
        let gate = RequestGate { $0.pathSegments.first == "publish" }
        transport.onRequest { await gate.pass($0) }
        transport.use(FaultPlan(seed: 1, profile: .none))
        await replica.networkIsBack()
        await gate.waitUntilHolding()
        await replica.suspend()
        #expect(await replica.status.connection == .suspended)
        await gate.open()
        try await replica.resume()

        // Live again; then a message from another device arrives live (there is no sync call).
        await waitForStatus(of: replica) { $0.connection == .live && $0.pending == 0 && $0.sending == 0 }
        _ = try await web.publish(PublishRequest(channel: "general", message: .string("from the web")))
        try await app.value

        let onServer = await server.storedMessages(channel: "general").map { stored -> String in
            if case .object(let fields) = stored.message, case .string(let text)? = fields["text"] { return text }
            if case .string(let text) = stored.message { return text }
            return "\(stored.message)"
        }
        #expect(onServer.sorted() == expected.sorted(), "each message reached PubNub exactly once: \(onServer)")
        let stored = try await replica.fetch(replica.queries.messages(inChannel: "general"))
        #expect(stored.map(\.text).sorted() == expected.sorted(), "each message is stored once")
        #expect(stored.allSatisfy { $0.timetoken != nil })
        #expect(await replica.status.waiting == 0)
        await replica.stop()
    }
}

/// Waits, on the replica's own status sequence (never on time), until `predicate` holds.
@discardableResult
func waitForStatus(of replica: Replica<DefaultChatCustom>, where predicate: (ReplicaStatus) -> Bool) async -> ReplicaStatus {
    for await status in replica.statuses() where predicate(status) { return status }
    return await replica.status
}
