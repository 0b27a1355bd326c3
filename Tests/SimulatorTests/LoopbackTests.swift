import Foundation
import Testing
import PubNubSimulator
import PubNubWire
import PubNubWireNIO
import ReplicaModel
import SimulatorHTTP

/// Runs `body` against the Hummingbird simulator on an ephemeral port.
func withHTTPSimulator(
    plan: FaultPlan = FaultPlan(seed: 0, profile: .none), _ body: (Int, PubNubServer) async throws -> Void
) async throws {
    let server = PubNubServer()
    let (ports, continuation) = AsyncStream<Int>.makeStream()
    let task = Task {
        try await SimulatorHTTPServer.run(server: server, plan: plan, port: 0) { port in continuation.yield(port) }
    }
    var iterator = ports.makeAsyncIterator()
    let port = try #require(await iterator.next())
    do {
        try await body(port, server)
    } catch {
        task.cancel()
        _ = await task.result
        throw error
    }
    task.cancel()
    _ = await task.result
}

enum TransportKind: String, CaseIterable, Sendable {
    case asyncHTTPClient, urlSession

    /// A transport of this kind with a whole-request deadline of `seconds`. The loopback tests
    /// check what comes back, not how fast: they give a minute by default, because the suite runs
    /// them beside tests that load both cores (5,000 channels live), where 10 s was exceeded in CI.
    func make(timeout seconds: Int = 60) -> (any Transport, @Sendable () async -> Void) {
        switch self {
        case .asyncHTTPClient:
            let transport = AsyncHTTPClientTransport(timeout: .seconds(seconds))
            return (transport, { try? await transport.shutdown() })
        case .urlSession:
            return (URLSessionTransport(timeout: TimeInterval(seconds)), {})
        }
    }
}

@Suite("Every endpoint round-trips over loopback HTTP")
struct LoopbackTests {
    @Test("publish, history, actions, App Context, memberships and time", arguments: TransportKind.allCases)
    func roundTrip(kind: TransportKind) async throws {
        try await withHTTPSimulator { port, server in
            let (transport, shutdown) = kind.make()
            defer { Task { await shutdown() } }
            let configuration = try PubNubConfiguration(
                publishKey: "demo", subscribeKey: "demo", userId: "me", origin: "http://127.0.0.1:\(port)")
            let pubnub = PubNubClient(configuration: configuration, transport: transport)

            #expect(try await pubnub.time().rawValue > 16_000_000_000_000_000)
            let big = JSONValue.string(String(repeating: "x", count: 5000))
            let t1 = try await pubnub.publish(PublishRequest(channel: "a/b", message: ["id": "1", "text": "hi +"], method: .get, meta: ["op": "o1"]))
            let t2 = try await pubnub.publish(PublishRequest(channel: "a/b", message: ["id": "2"], method: .post))
            let t3 = try await pubnub.publish(PublishRequest(channel: "a/b", message: big, method: .postGzip))
            #expect(t1 < t2 && t2 < t3)

            let history = try await pubnub.history.fetchHistory(HistoryQuery(channels: ["a/b"]))
            let entries = try #require(history.channels["a/b"])
            #expect(entries.map(\.timetoken) == [t1, t2, t3])
            #expect(entries[0].message == ["id": "1", "text": "hi +"] && entries[0].meta == ["op": "o1"] && entries[0].uuid == "me")
            #expect(entries[2].message == big && entries[1].meta == nil)

            let action = try await pubnub.messageActions.addMessageAction(channel: "a/b", messageTimetoken: t1, type: "reaction", value: "👍")
            let withActions = try await pubnub.history.fetchHistoryWithActions(HistoryQuery(channels: ["a/b"]))
            #expect(withActions.channels["a/b"]?[0].actions?["reaction"]?["👍"]?.map(\.uuid) == ["me"])
            #expect(try await pubnub.messageActions.listMessageActions(channel: "a/b").data == [action])
            try await pubnub.messageActions.removeMessageAction(channel: "a/b", messageTimetoken: t1, actionTimetoken: action.actionTimetoken)
            #expect(try await pubnub.messageActions.listMessageActions(channel: "a/b").data.isEmpty)

            let legacy = try await pubnub.history.fetchLegacyHistory(LegacyHistoryQuery(channel: "a/b", count: 2, reverse: true))
            #expect(legacy.messages.map(\.timetoken) == [t1, t2])
            #expect(try await pubnub.history.messageCounts(channels: ["a/b"], since: [t1]) == ["a/b": 2])

            var user = UserEdit<FlatCustom>()
            user.name = .set("Jane")
            user.custom = .set(["title": "Assistant"])
            let jane = try await pubnub.appContext.setUser(id: "jane", fields: user)
            #expect(try await pubnub.appContext.getUser(id: "jane") == jane)
            var channel = ChannelEdit<FlatCustom>()
            channel.name = .set("Off-topic")
            channel.details = .set("random")
            let offTopic = try await pubnub.appContext.setChannel(id: "off-topic", fields: channel, ifMatch: nil)
            #expect(offTopic.details == "random")
            channel.name = .set("Off topic")
            let stale = await serviceError { _ = try await pubnub.appContext.setChannel(id: "off-topic", fields: channel, ifMatch: "stale") }
            #expect(stale?.status == 412 && stale?.message == "Channel to update has been modified after it was read.")
            #expect(try await pubnub.appContext.listUsers(ObjectListQuery(count: true)).totalCount == 1)
            #expect(try await pubnub.appContext.listChannels().data.map(\.id) == ["off-topic"])

            let memberships = try await pubnub.appContext.setMemberships(
                userId: "jane", set: [MembershipSet<FlatCustom>(id: "off-topic", status: "active")], as: DefaultChatCustom.self)
            #expect(memberships.data.map(\.channel.id) == ["off-topic"] && memberships.data[0].channel.name == "Off-topic")
            let members = try await pubnub.appContext.getMembers(channelId: "off-topic", as: DefaultChatCustom.self)
            #expect(members.data.map(\.uuid.id) == ["jane"] && members.data[0].uuid.name == "Jane")
            _ = try await pubnub.appContext.setMembers(channelId: "off-topic", set: [], remove: ["jane"], as: DefaultChatCustom.self)
            #expect(try await pubnub.appContext.getMemberships(userId: "jane", as: DefaultChatCustom.self).data.isEmpty)

            try await pubnub.appContext.removeUser(id: "jane")
            let gone = await serviceError { _ = try await pubnub.appContext.getUser(id: "jane") }
            #expect(gone?.status == 404)
            try await pubnub.appContext.removeChannel(id: "off-topic")
            #expect(await serviceError { _ = try await pubnub.appContext.getChannel(id: "off-topic") }?.status == 404)
            try await pubnub.history.deleteMessages(channel: "a/b")
            #expect(try await pubnub.history.fetchHistory(HistoryQuery(channels: ["a/b"])).channels.isEmpty)

            let wrongKeys = try PubNubConfiguration(
                publishKey: "nope", subscribeKey: "nope", userId: "me", origin: "http://127.0.0.1:\(port)")
            let intruder = PubNubClient(configuration: wrongKeys, transport: transport)
            let invalid = await serviceError { _ = try await intruder.publish(PublishRequest(channel: "c", message: 1)) }
            #expect(invalid?.status == 400 && invalid?.message == "Invalid Key" && invalid?.family == .publishArray)
            #expect(await server.requestCount > 20)
        }
    }

    @Test("a refused connection is not sent; a response lost after the server applied it is outcome unknown",
          arguments: TransportKind.allCases)
    func transportSplit(kind: TransportKind) async throws {
        let (transport, shutdown) = kind.make()
        defer { Task { await shutdown() } }
        // A port nothing listens on: bind then close to find one.
        var closedPort = 0
        try await withHTTPSimulator { port, _ in closedPort = port }
        let refused = PubNubClient(
            configuration: try PubNubConfiguration(publishKey: "demo", subscribeKey: "demo", userId: "me",
                                                   origin: "http://127.0.0.1:\(closedPort)"),
            transport: transport)
        await #expect {
            _ = try await refused.time()
        } throws: { error in
            if case WireError.transport(.notSent) = error { return true }
            return false
        }
        try await withHTTPSimulator(plan: FaultPlan(seed: 1, profile: FaultProfile(name: "lossy", dropResponse: 1))) { port, server in
            let pubnub = PubNubClient(
                configuration: try PubNubConfiguration(publishKey: "demo", subscribeKey: "demo", userId: "me",
                                                       origin: "http://127.0.0.1:\(port)"),
                transport: transport)
            await #expect {
                _ = try await pubnub.publish(PublishRequest(channel: "c", message: 1))
            } throws: { error in
                if case WireError.transport(.outcomeUnknown) = error { return true }
                return false
            }
            #expect(await server.storedMessages(channel: "c").count == 1)
        }
    }
}
