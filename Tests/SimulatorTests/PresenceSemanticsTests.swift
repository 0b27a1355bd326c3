import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import Testing

@Suite("Simulator presence")
struct PresenceSemanticsTests {
    static func world() async throws -> InProcess {
        let world = try InProcess()
        await world.server.configureSubscribe(SubscribeSettings(hold: .zero))
        return world
    }

    /// The presence events on `channel-pnpres` after `cursor`, with the next cursor.
    static func presence(_ client: PubNubClient, _ channel: String, after cursor: SubscribeCursor) async throws
        -> ([PresenceEvent], SubscribeCursor)
    {
        let answer = try await client.subscribe(SubscribeRequest(channels: [channel + "-pnpres"], cursor: cursor))
        return (answer.envelopes.compactMap { if case .presence(let event) = $0.event { event } else { nil } }, answer.cursor)
    }

    @Test("subscribing joins, a heartbeat keeps a user present, silence times them out at their own timeout, leave leaves")
    func lifecycle() async throws {
        let world = try await Self.world()
        let watcher = try world.client(userId: "watcher")
        var cursor = try await watcher.handshake(["room-pnpres"])
        #expect(try await world.client.presence.hereNow(HereNowRequest(channels: ["room"])).channels["room"]?.occupancy == 0)
        let alice = try world.client(userId: "alice")
        var request = SubscribeRequest(channels: ["room"])
        request.heartbeat = 30
        request.state = ["room": ["mood": "ok"]]
        _ = try await alice.subscribe(request)
        var events: [PresenceEvent]
        (events, cursor) = try await Self.presence(watcher, "room", after: cursor)
        #expect(events.map(\.action) == [.join] && events.first?.userId == "alice" && events.first?.occupancy == 1)
        #expect(events.first?.state == ["mood": "ok"])
        // The watcher listens on room-pnpres only: it is not present on room.
        #expect(await world.server.occupants(of: "room") == ["alice"])

        world.clock.advance(by: 25)
        try await alice.presence.heartbeat(channels: ["room"], timeout: 30)
        world.clock.advance(by: 25)
        (events, cursor) = try await Self.presence(watcher, "room", after: cursor)
        #expect(events.isEmpty)
        world.clock.advance(by: 6)
        (events, cursor) = try await Self.presence(watcher, "room", after: cursor)
        #expect(events.map(\.action) == [.timeout] && events.first?.userId == "alice" && events.first?.occupancy == 0)

        _ = try await alice.subscribe(request)
        try await alice.presence.leave(channels: ["room"])
        (events, cursor) = try await Self.presence(watcher, "room", after: cursor)
        #expect(events.map(\.action) == [.join, .leave])
        #expect(try await world.client.presence.whereNow(userId: "alice") == [])
    }

    @Test("a subscriber hears its own join: the handshake's cursor comes before it")
    func ownJoin() async throws {
        let world = try await Self.world()
        let cursor = try await world.client.handshake(["room", "room-pnpres"])
        let answer = try await world.client.subscribe(SubscribeRequest(channels: ["room", "room-pnpres"], cursor: cursor))
        #expect(answer.envelopes.map(\.event) == [.presence(PresenceEvent(
            action: .join, channel: "room", userId: "me", occupancy: 1, timestamp: Int64(world.clock.now.timeIntervalSince1970)))])
    }

    @Test("here-now shapes, with state, paging; where-now; set and get state with a state-change event")
    func hereNowAndState() async throws {
        let world = try await Self.world()
        let watcher = try world.client(userId: "watcher")
        var cursor = try await watcher.handshake(["a-pnpres"])
        for user in ["u3", "u1", "u2"] {
            _ = try await world.client(userId: user).subscribe(SubscribeRequest(channels: ["a", "b"]))
        }
        let one = try await world.client.presence.hereNow(HereNowRequest(channels: ["a"]))
        #expect(one.channels["a"]?.occupants.map(\.userId) == ["u1", "u2", "u3"])
        let both = try await world.client.presence.hereNow(HereNowRequest(channels: ["a", "b", "empty"]))
        #expect(both.totalOccupancy == 6 && both.channels["empty"]?.occupancy == 0)
        let global = try await world.client.presence.hereNow(HereNowRequest(channels: []))
        #expect(Set(global.channels.keys) == ["a", "b"])
        var page = HereNowRequest(channels: ["a"])
        page.limit = 2
        #expect(try await world.client.presence.hereNow(page).channels["a"] == ChannelOccupancy(
            occupancy: 3, occupants: [PresentUser(userId: "u1"), PresentUser(userId: "u2")]))
        #expect(try await world.client.presence.hereNowAll(channels: ["a"], includeState: false).channels["a"]?.occupants.count == 3)
        #expect(try await world.client(userId: "u1").presence.whereNow(userId: "u1") == ["a", "b"])

        let u1 = try world.client(userId: "u1")
        #expect(try await u1.presence.setPresenceState(["typing": false], channels: ["a"]) == ["typing": false])
        #expect(try await u1.presence.presenceState(userId: "u1", channels: ["a"]) == ["a": ["typing": false]])
        #expect(try await u1.presence.presenceState(userId: "u1", channels: ["a", "b"]) == ["a": ["typing": false]])
        let withState = try await world.client.presence.hereNow(HereNowRequest(channels: ["a"], includeState: true))
        #expect(withState.channels["a"]?.occupants.first == PresentUser(userId: "u1", state: ["typing": false]))
        let events: [PresenceEvent]
        (events, cursor) = try await Self.presence(watcher, "a", after: cursor)
        #expect(events.map(\.action) == [.join, .join, .join, .stateChange])
        #expect(events.last?.state == ["typing": false])
        // A state request without state is PubNub's 400.
        let noState = WireRequest(method: .get, pathSegments: ["v2", "presence", "sub-key", "demo", "channel", "a", "uuid", "u1", "data"], operation: "set-state")
        #expect(await world.server.handle(noState).status == 400)
    }

    @Test("above the announce maximum a channel sends interval events with the changes, or here_now_refresh when they are many")
    func intervalMode() async throws {
        let world = try await Self.world()
        var settings = PresenceSettings()
        settings.announceMax = 2
        settings.interval = 10
        settings.intervalListLimit = 3
        await world.server.configurePresence(settings)
        let watcher = try world.client(userId: "watcher")
        var cursor = try await watcher.handshake(["big-pnpres"])
        for user in ["u1", "u2", "u3", "u4"] { _ = try await world.client(userId: user).subscribe(SubscribeRequest(channels: ["big"])) }
        var events: [PresenceEvent]
        (events, cursor) = try await Self.presence(watcher, "big", after: cursor)
        #expect(events.map(\.action) == [.join, .join])                       // announced while at most 2
        world.clock.advance(by: 10)
        (events, cursor) = try await Self.presence(watcher, "big", after: cursor)
        #expect(events.count == 1 && events.first?.action == .interval)
        #expect(events.first?.joined == ["u3", "u4"] && events.first?.occupancy == 4 && events.first?.hereNowRefresh == false)
        for user in ["u5", "u6", "u7", "u8"] { _ = try await world.client(userId: user).subscribe(SubscribeRequest(channels: ["big"])) }
        world.clock.advance(by: 10)
        (events, cursor) = try await Self.presence(watcher, "big", after: cursor)
        #expect(events.count == 1 && events.first?.hereNowRefresh == true && events.first?.joined == [])
    }

    @Test("signals reach subscribers live and are never stored; over 64 bytes the server answers 400")
    func signals() async throws {
        let world = try await Self.world()
        let cursor = try await world.client.handshake(["ch"])
        _ = try await world.client.signal(SignalRequest(channel: "ch", message: ["type": "typing", "value": true]))
        let answer = try await world.client.subscribe(SubscribeRequest(channels: ["ch"], cursor: cursor))
        #expect(answer.envelopes.map(\.event) == [.signal] && answer.envelopes.first?.publisher == "me")
        #expect(await world.server.storedMessages(channel: "ch").isEmpty)
        let big = WireRequest(method: .get, pathSegments: ["signal", "demo", "demo", "0", "ch", "0", "\"" + String(repeating: "x", count: 70) + "\""], operation: "signal")
        let refused = await world.server.handle(big)
        #expect(refused.status == 400 && String(decoding: refused.body, as: UTF8.self).contains("Signal size too large"))
    }
}
