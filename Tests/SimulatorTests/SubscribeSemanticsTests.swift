import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import Testing

@Suite("Simulator subscribe")
struct SubscribeSemanticsTests {
    /// A server whose idle long polls answer at once.
    static func world(hold: Duration = .zero) async throws -> InProcess {
        let world = try InProcess()
        await world.server.configureSubscribe(SubscribeSettings(hold: hold))
        return world
    }

    @Test("a handshake answers at once with the present and no events; a receive returns what came after the cursor, in order")
    func handshakeThenReceive() async throws {
        let world = try await Self.world()
        _ = try await world.publish(2, to: "c", prefix: "before")
        let cursor = try await world.client.handshake(["c"])
        #expect(cursor.region == 12)
        let tts = try await world.publish(3, to: "c")
        _ = try await world.publish(1, to: "other")
        let answer = try await world.client.subscribe(SubscribeRequest(channels: ["c"], cursor: cursor))
        #expect(answer.envelopes.map(\.payload) == ["m0", "m1", "m2"])
        #expect(answer.envelopes.map(\.timetoken) == tts)
        #expect(answer.envelopes.allSatisfy { $0.publisher == "me" && $0.subscription == "c" })
        #expect(answer.cursor.timetoken >= tts.last!)
        let empty = try await world.client.subscribe(SubscribeRequest(channels: ["c"], cursor: answer.cursor))
        #expect(empty.envelopes.isEmpty && empty.cursor.timetoken >= answer.cursor.timetoken)
    }

    @Test("a wildcard channel (poll.*) takes every channel under its prefix, its events' b naming the wildcard; pollx.1 is not under it")
    func wildcard() async throws {
        let world = try await Self.world()
        let cursor = try await world.client.handshake(["poll.*", "direct"])
        _ = try await world.publish(1, to: "poll.1", prefix: "a")
        _ = try await world.publish(1, to: "pollx.1", prefix: "b")
        _ = try await world.publish(1, to: "poll.2.votes", prefix: "c")
        _ = try await world.publish(1, to: "direct", prefix: "d")
        _ = try await world.publish(1, to: "poll", prefix: "e")
        let answer = try await world.client.subscribe(SubscribeRequest(channels: ["poll.*", "direct"], cursor: cursor))
        #expect(answer.envelopes.map(\.payload) == ["a0", "c0", "d0"])
        #expect(answer.envelopes.map(\.channel) == ["poll.1", "poll.2.votes", "direct"])
        #expect(answer.envelopes.map(\.subscription) == ["poll.*", "poll.*", "direct"])
    }

    @Test("under Access Manager a wildcard subscribe needs read on the wildcard's own name: a pattern covering it grants it, a grant of one channel under it does not")
    func wildcardAccess() async throws {
        let clock = VirtualClock()
        let server = PubNubServer(subscribeKey: "sub", clock: clock, secretKey: "sec")
        await server.configureSubscribe(SubscribeSettings(hold: .zero))
        func client(_ grants: AccessGrants) async throws -> PubNubClient {
            let token = try await server.grantToken(grants: grants, authorizedUserId: "me")
            return try PubNubClient.simulated(InProcessTransport(server: server), userId: "me", subscribeKey: "sub", authToken: token, clock: clock)
        }
        let covered = try await client(AccessGrants(patterns: [.channel: [#"^poll\..*$"#: .read]]))
        _ = try await covered.handshake(["poll.*"])
        let one = try await client(AccessGrants(resources: [.channel: ["poll.1": .read]]))
        let refused = await server.respond(try one.subscribeRequest(SubscribeRequest(channels: ["poll.*"], cursor: nil)))
        #expect(refused.status == 403)
    }

    @Test("a publish in the same instant as the cursor is still delivered (the cursor reserves its timetoken)")
    func sameInstant() async throws {
        let world = try await Self.world()
        let cursor = try await world.client.handshake(["c"])
        let tt = try await world.client.publish(PublishRequest(channel: "c", message: "now"))
        #expect(tt > cursor.timetoken)
        #expect(try await world.client.subscribe(SubscribeRequest(channels: ["c"], cursor: cursor)).envelopes.count == 1)
    }

    @Test("a held long poll wakes when an event arrives", .timeLimit(.minutes(10)))
    func wakes() async throws {
        let world = try await Self.world(hold: .seconds(60))
        let cursor = try await world.client.handshake(["c"])
        let client = world.client
        let poll = Task { try await client.subscribe(SubscribeRequest(channels: ["c"], cursor: cursor)) }
        // Publish only once the poll is waiting at the server.
        while await world.server.waitingPolls == 0 { await Task.yield() }
        _ = try await world.publish(1, to: "c")
        #expect(try await poll.value.envelopes.count == 1)
    }

    @Test("a hold timed on the server's clock ends when that clock passes it, with an empty answer", .timeLimit(.minutes(10)))
    func holdOnServerClock() async throws {
        let world = try InProcess()
        await world.server.configureSubscribe(SubscribeSettings(hold: .seconds(280), holdClock: .server))
        let cursor = try await world.client.handshake(["c"])
        let start = world.clock.date
        // The virtual clock moves to a sleeper's deadline at once: the hold passes without real waiting.
        let answer = try await world.client.subscribe(SubscribeRequest(channels: ["c"], cursor: cursor))
        #expect(answer.envelopes.isEmpty)
        #expect(world.clock.date.timeIntervalSince(start) >= 280)
        #expect(answer.cursor.timetoken >= cursor.timetoken)
    }

    @Test("one buffer of 100 events per connection, shared by its channels; the oldest are dropped and counted")
    func sharedBuffer() async throws {
        let world = try await Self.world()
        let cursor = try await world.client.handshake(["a", "b"])
        _ = try await world.publish(70, to: "a")
        _ = try await world.publish(60, to: "b", prefix: "n")
        let answer = try await world.client.subscribe(SubscribeRequest(channels: ["a", "b"], cursor: cursor))
        #expect(answer.envelopes.count == 100 && answer.mayHaveOverflowed)
        #expect(answer.envelopes.first?.payload == "m30", "the 30 oldest were dropped")
        #expect(await world.server.bufferDrops == 30)
    }

    @Test("events older than 20 minutes are gone from the buffer")
    func retention() async throws {
        let world = try await Self.world()
        let cursor = try await world.client.handshake(["c"])
        _ = try await world.publish(1, to: "c", prefix: "old")
        world.clock.advance(by: 20 * 60 + 1)
        _ = try await world.publish(1, to: "c", prefix: "new")
        let answer = try await world.client.subscribe(SubscribeRequest(channels: ["c"], cursor: cursor))
        #expect(answer.envelopes.map(\.payload) == ["new0"])
    }

    @Test("message actions and App Context changes are events on the right channels; a set carries only what changed")
    func eventKinds() async throws {
        let world = try await Self.world()
        let cursor = try await world.client.handshake(["c", "me"])
        let tt = try await world.publish(1, to: "c")[0]
        let action = try await world.client.messageActions.addMessageAction(channel: "c", messageTimetoken: tt, type: "reaction", value: "👍")
        try await world.client.messageActions.removeMessageAction(channel: "c", messageTimetoken: tt, actionTimetoken: action.actionTimetoken)
        await world.server.remoteEditUser(id: "me", fields: ["name": "Me", "email": "me@example.com"])
        await world.server.remoteEditUser(id: "me", fields: ["name": "Me Too"])
        _ = try await world.client.perform(try world.client.appContext.setMembershipsRequest(
            userId: "me", set: [MembershipSet<JSONValue>(id: "c", status: "joined")], remove: []))
        let answer = try await world.client.subscribe(SubscribeRequest(channels: ["c", "me"], cursor: cursor))
        let events = answer.envelopes.map { ($0.channel, $0.event) }
        #expect(events.count == 7)
        guard events.count == 7 else { return }
        #expect(events[1].0 == "c" && events[1].1 == .messageAction(MessageActionEvent(added: true, action: action)))
        #expect(events[2].1 == .messageAction(MessageActionEvent(added: false, action: action)))
        guard case .appContext(.userSet(let id, let fields, _, let eTag)) = events[4].1 else {
            Issue.record("expected a user set, got \(events[4])")
            return
        }
        #expect(events[4].0 == "me" && id == "me" && fields == ["name": "Me Too"] && eTag != nil)
        // A membership change reaches both the user's channel and the channel.
        #expect(Set([events[5].0, events[6].0]) == ["c", "me"])
    }

    @Test("faults: a forgotten cursor answers from another region with nothing; an overflow fills the answer with a burst")
    func faults() async throws {
        let world = try await Self.world()
        let transport = InProcessTransport(server: world.server)
        let client = try PubNubClient.simulated(transport, userId: "me")
        let cursor = try await client.handshake(["c"])
        _ = try await world.publish(3, to: "c")
        transport.script(.staleCursor)
        let stale = try await client.subscribe(SubscribeRequest(channels: ["c"], cursor: cursor))
        #expect(stale.envelopes.isEmpty && stale.cursor.region != cursor.region)
        transport.script(.bufferOverflow)
        let full = try await client.subscribe(SubscribeRequest(channels: ["c"], cursor: cursor))
        #expect(full.mayHaveOverflowed && full.envelopes.allSatisfy { $0.event == .signal })
        #expect(await world.server.bufferDrops == 3)
    }

    @Test("leave and heartbeat are acknowledged; a bad subscribe key or timetoken is a 400")
    func presenceAndErrors() async throws {
        let world = try await Self.world()
        try await world.client.presence.leave(channels: ["c"])
        let bad = WireRequest(method: .get, pathSegments: ["v2", "subscribe", "demo", "c", "0"], query: [QueryItem("tt", "x")], operation: "subscribe")
        #expect(await world.server.respond(bad).status == 400)
        let wrongKey = WireRequest(method: .get, pathSegments: ["v2", "subscribe", "nope", "c", "0"], operation: "subscribe")
        #expect(await world.server.respond(wrongKey).status == 400)
    }
}
