import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
@testable import Replicator
import Testing

/// A server and devices on a clock that only the test moves (timers wait for `advance`), with
/// long polls answered at once and live syncs stepped by hand.
struct PresenceWorld {
    let clock = VirtualClock(sleeps: .untilAdvanced)
    let server: PubNubServer
    let web: PubNubClient

    init() async throws {
        server = PubNubServer(clock: clock)
        await server.configureSubscribe(SubscribeSettings(hold: .zero))
        web = try PubNubClient.simulated(InProcessTransport(server: server), userId: "web")
    }

    /// A device of `userId` whose live sync follows presence with the given timeout.
    func device(_ userId: String, seed: UInt64, timeout: Int = 300) throws
        -> (SimulatedDevice<DefaultChatCustom>, LiveSync<DefaultChatCustom>)
    {
        // The room is on screen: its members are listed (presence is shown on member rows).
        var reconciler = ReconcilerOptions()
        reconciler.everyChannelHot = true
        let device = try SimulatedDevice<DefaultChatCustom>(
            server: server, clock: clock, userId: userId, plan: FaultPlan(seed: seed, profile: .none), seed: seed,
            reconcilerOptions: reconciler)
        var options = LiveSyncOptions()
        options.pipelinePolls = false  // step by step: "the next poll" is the one the test sends
        options.presence = PresenceOptions(timeout: timeout, heartbeatInterval: 0)
        return (device, LiveSync(reconciler: device.reconciler, options: options, clock: clock, random: SplitMix64(seed: seed)))
    }

    func join(_ users: [String], _ channel: String) async throws {
        for user in users {
            _ = try await web.perform(try web.appContext.setMembershipsRequest(
                userId: user, set: [MembershipSet<JSONValue>(id: channel, status: "joined")], remove: []))
        }
    }
}

/// Reads a `StoreObservation` one value at a time.
final class Observed<Value: Sendable & Equatable>: @unchecked Sendable {
    private var iterator: StoreObservation<Value>.AsyncIterator

    init(_ observation: StoreObservation<Value>) { iterator = observation.makeAsyncIterator() }

    /// The next value that satisfies `condition` (values in between are skipped).
    func next(where condition: (Value) -> Bool) async throws -> Value? {
        while let value = try await iterator.next() {
            if condition(value) { return value }
        }
        return nil
    }
}

@Suite("Presence and typing")
struct PresenceTests {
    typealias Member = ChatMember<DefaultChatCustom>

    static func present(_ members: [Member]) -> [String] { members.map(\.userId) }

    @Test("join, state change, leave and heartbeat timeout reach the member rows and an observation of present members",
          .timeLimit(.minutes(10)))
    func presenceLifecycle() async throws {
        let world = try await PresenceWorld()
        try await world.join(["a", "b"], "room")
        let (a, liveA) = try world.device("a", seed: 1)
        let (_, liveB) = try world.device("b", seed: 2, timeout: 20)
        let present = Observed(a.store.observe(a.store.queries.members(ofChannel: "room", onlyPresent: true)))

        try await LiveWorld.settle(liveA)
        #expect(try await present.next { Self.present($0) == ["a"] } != nil)
        #expect(try await a.store.fetch(a.store.queries.member(channelId: "room", userId: "b"))?.isPresent == false)

        // b connects: its subscribe is a join, which a hears live.
        try await LiveWorld.settle(liveB)
        try await liveA.step()
        #expect(try await present.next { Self.present($0) == ["a", "b"] } != nil)

        // A state change arrives with its state.
        _ = try await liveB.reconciler.client.presence.setPresenceState(["mood": "busy"], channels: ["room"])
        try await liveA.step()
        let withState = try await present.next { $0.first { $0.userId == "b" }?.presenceState != nil }
        #expect(withState?.first { $0.userId == "b" }?.presenceState == ["mood": "busy"])

        // An explicit leave: b is absent at once, and its state is gone.
        try await liveB.reconciler.client.presence.leave(channels: ["room"])
        try await liveA.step()
        #expect(try await present.next { Self.present($0) == ["a"] } != nil)
        let left = try await a.store.fetch(a.store.queries.member(channelId: "room", userId: "b"))
        #expect(left?.isPresent == false && left?.presenceState == nil)

        // b polls again (a join), then goes silent: 20 s later PubNub announces a timeout.
        try await liveB.step()
        try await liveA.step()
        #expect(try await present.next { Self.present($0) == ["a", "b"] } != nil)
        world.clock.advance(by: 19)
        try await liveA.step()
        #expect(try await a.store.fetch(a.store.queries.member(channelId: "room", userId: "b"))?.isPresent == true)
        world.clock.advance(by: 2)
        try await liveA.step()
        #expect(try await present.next { Self.present($0) == ["a"] } != nil)
        let kinds = await world.server.occupants(of: "room")
        #expect(kinds == ["a"])
    }

    @Test("a member that timed out while the device was away shows as absent after catch-up (here-now after the gap)",
          .timeLimit(.minutes(10)))
    func timeoutWhileAway() async throws {
        let world = try await PresenceWorld()
        try await world.join(["a", "b"], "room")
        let (a, liveA) = try world.device("a", seed: 3)
        let (_, liveB) = try world.device("b", seed: 4, timeout: 20)
        try await LiveWorld.settle(liveB)
        try await LiveWorld.settle(liveA)
        #expect(try await a.store.fetch(a.store.queries.member(channelId: "room", userId: "b"))?.isPresent == true)
        let refreshes = await liveA.statistics.presenceRefreshes

        // a is away: b times out (the event is announced at once), then ages out of every buffer.
        world.clock.advance(by: 21)
        await world.server.sweepPresence()
        world.clock.advance(by: 21 * 60)
        let events = liveA.activity()
        try await LiveWorld.settle(liveA)
        #expect(try await a.store.fetch(a.store.queries.member(channelId: "room", userId: "b"))?.isPresent == false)
        #expect(try await a.store.fetch(a.store.queries.member(channelId: "room", userId: "a"))?.isPresent == true)
        // A here-now was read (so the loop below ends at its report).
        try #require(await liveA.statistics.presenceRefreshes > refreshes)
        // The timeout itself never arrived live: the here-now after the gap told it.
        var heardTimeout = false
        var sawRefresh = false
        for await item in events {
            if case .event(let record) = item, record.kind == "presence-timeout", record.subject == "b" { heardTimeout = true }
            if case .presenceRefreshed(let counts) = item {
                sawRefresh = counts["room"] == 1
                break
            }
        }
        #expect(!heardTimeout && sawRefresh)
    }

    @Test("a member row a live membership event adds gets its presence from a here-now", .timeLimit(.minutes(10)))
    func newMemberRowReadsPresence() async throws {
        let world = try await PresenceWorld()
        try await world.join(["a"], "room")
        let (a, liveA) = try world.device("a", seed: 10)
        try await LiveWorld.settle(liveA)
        // c is on the channel (subscribed) before it becomes a member: its join found no row.
        let c = try PubNubClient.simulated(InProcessTransport(server: world.server), userId: "c")
        _ = try await c.subscribe(SubscribeRequest(channels: ["room"]))
        try await LiveWorld.settle(liveA)
        #expect(try await a.store.fetch(a.store.queries.member(channelId: "room", userId: "c")) == nil)
        try await world.join(["c"], "room")
        try await LiveWorld.settle(liveA)
        #expect(try await a.store.fetch(a.store.queries.member(channelId: "room", userId: "c"))?.isPresent == true)
    }

    @Test("heartbeats keep a quiet device present past its timeout; without them it times out", .timeLimit(.minutes(10)))
    func heartbeatsKeepPresence() async throws {
        let world = try await PresenceWorld()
        try await world.join(["a", "b"], "room")
        let (_, liveA) = try world.device("a", seed: 5, timeout: 20)
        let (b, liveB) = try world.device("b", seed: 6, timeout: 20)
        try await LiveWorld.settle(liveA)
        try await LiveWorld.settle(liveB)
        // a heartbeats every 15 s of the 20 s timeout; its polls stop (a long poll held elsewhere).
        for _ in 0..<4 {
            world.clock.advance(by: 15)
            await liveA.sendHeartbeat()
            try await liveB.step()
        }
        #expect(await liveA.statistics.heartbeats == 4)
        #expect(try await b.store.fetch(b.store.queries.member(channelId: "room", userId: "a"))?.isPresent == true)
        world.clock.advance(by: 21)
        try await liveB.step()
        #expect(try await b.store.fetch(b.store.queries.member(channelId: "room", userId: "a"))?.isPresent == false)
    }

    @Test("a running live sync heartbeats on the injected clock and leaves when stopped", .timeLimit(.minutes(10)))
    func runHeartbeatsAndLeaves() async throws {
        let world = try await PresenceWorld()
        await world.server.configureSubscribe(SubscribeSettings(hold: .seconds(30)))
        try await world.join(["a"], "room")
        let device = try SimulatedDevice<DefaultChatCustom>(
            server: world.server, clock: world.clock, userId: "a", plan: FaultPlan(seed: 7, profile: .none), seed: 7)
        _ = try await device.reconciler.pullObjects()       // the membership is known before the first subscribe
        var options = LiveSyncOptions()
        options.presence = PresenceOptions(timeout: 60)     // heartbeats every 29 s
        let live = LiveSync(reconciler: device.reconciler, options: options, clock: world.clock)
        let states = live.states()
        let running = Task { try await live.run() }
        for await state in states where state == .live { break }
        #expect(await world.server.occupants(of: "room") == ["a"])
        // The heartbeat timer waits for the clock; each advance of 29 s sends one.
        for round in 1...3 {
            while world.clock.waitingSleepers == 0 { await Task.yield() }
            world.clock.advance(by: 29)
            while await live.statistics.heartbeats < round { await Task.yield() }
        }
        #expect(await world.server.occupants(of: "room") == ["a"])
        running.cancel()
        try await running.value
        #expect(await world.server.occupants(of: "room") == [])
        #expect(await live.state == .stopped)
    }

    @Test("typing: B sees A within one event, drops A after the timeout, and a stop is heard; throttled as the Chat SDK",
          .timeLimit(.minutes(10)))
    func typingBetweenTwoDevices() async throws {
        let world = try await PresenceWorld()
        try await world.join(["a", "b"], "room")
        let (_, liveA) = try world.device("a", seed: 8)
        let (_, liveB) = try world.device("b", seed: 9)
        try await LiveWorld.settle(liveA)
        try await LiveWorld.settle(liveB)
        var typers = liveB.typing.typers(in: "room").makeAsyncIterator()
        #expect(await typers.next() == [])

        #expect(try await liveA.typing.startTyping(in: "room"))
        let signalledAt = world.clock.now
        try await liveB.step()                       // one answer, carrying the signal
        #expect(await typers.next() == ["a"])
        // Throttled: a second start within timeout − 0.5 s sends nothing.
        world.clock.advance(by: 1)
        #expect(try await !liveA.typing.startTyping(in: "room"))

        // No `false` comes: B drops A 5 s + 10 ms after the `true`, not before.
        world.clock.advance(to: signalledAt.addingTimeInterval(5))
        #expect(await liveB.typing.typers(inChannel: "room") == ["a"])
        world.clock.advance(by: 0.02)
        #expect(await typers.next() == [])
        #expect(world.clock.now.timeIntervalSince(signalledAt) >= 5.01)

        // After timeout − 0.5 s a start sends again; a stop within the timeout sends `false`.
        #expect(try await liveA.typing.startTyping(in: "room"))
        try await liveB.step()
        #expect(await typers.next() == ["a"])
        #expect(try await liveA.typing.stopTyping(in: "room"))
        try await liveB.step()
        #expect(await typers.next() == [])
        // A stop with no `true` in the timeout sends nothing.
        #expect(try await !liveA.typing.stopTyping(in: "room"))
        // Typing never touched the durable outbox.
        #expect(try await liveA.reconciler.store.fetch(liveA.reconciler.store.queries.outbox()).isEmpty)
    }

    @Test("a signal over 64 bytes is refused before anything is sent; typing on a public channel is refused")
    func signalLimitAndPublicChannel() async throws {
        let world = try await PresenceWorld()
        let before = await world.server.requestCount
        let big = SignalRequest(channel: "room", message: .string(String(repeating: "x", count: 63)))   // 65 bytes of JSON
        await #expect(throws: WireError.payloadTooLarge(operation: "signal", bytes: 65, limit: 64)) {
            _ = try await world.web.signal(big)
        }
        #expect(await world.server.requestCount == before)
        let fits = SignalRequest(channel: "room", message: .string(String(repeating: "x", count: 62)))  // 64 bytes
        _ = try await world.web.signal(fits)
        #expect(await world.server.requestCount == before + 1)

        let typing = TypingIndicators(client: world.web, clock: world.clock, channelType: { _ in "public" })
        await #expect(throws: TypingError.publicChannel("lobby")) { try await typing.startTyping(in: "lobby") }
    }
}

extension VirtualClock {
    /// Moves the clock to `date` (nothing when it is already later).
    func advance(to date: Date) { advance(by: date.timeIntervalSince(now)) }
}
