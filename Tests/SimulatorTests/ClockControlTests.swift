import Foundation
import Testing
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import SimulatorHTTP

/// Runs `body` against `server` served over HTTP on an ephemeral port, with `clockControl`.
private func serving(_ server: PubNubServer, clockControl: OffsetClock?, _ body: (Origin) async throws -> Void) async throws {
    let (ports, continuation) = AsyncStream<Int>.makeStream()
    let task = Task {
        try await SimulatorHTTPServer.run(
            server: server, plan: FaultPlan(seed: 0, profile: .none), port: 0, clockControl: clockControl
        ) { port in continuation.yield(port) }
    }
    var iterator = ports.makeAsyncIterator()
    let port = try #require(await iterator.next())
    do {
        try await body(try Origin(parsing: "http://127.0.0.1:\(port)", secure: false))
    } catch {
        task.cancel()
        _ = await task.result
        throw error
    }
    task.cancel()
    _ = await task.result
}

private func send(_ method: HTTPMethod, _ path: [String], _ query: [QueryItem] = [], to origin: Origin) async throws -> WireResponse {
    try await URLSessionTransport(timeout: 60).send(
        WireRequest(method: method, pathSegments: path, query: query, operation: "test"), to: origin)
}

/// A JSON number as a `Double`.
private func number(_ value: JSONValue?) -> Double? {
    switch value {
    case .int(let integer)?: Double(integer)
    case .double(let double)?: double
    default: nil
    }
}

/// Set once by a task, read by the test.
private actor Flag {
    var isSet = false
    func set() { isSet = true }
}

@Suite("The served simulator's clock: OffsetClock and /simulator/clock")
struct ClockControlTests {
    @Test("an offset clock reads its base plus an offset that only grows")
    func offsetClock() {
        let base = VirtualClock(start: Date(timeIntervalSince1970: 1_700_000_000))
        let clock = OffsetClock(base: base)
        #expect(clock.now == base.date)
        #expect(clock.advance(by: 90) == base.date.addingTimeInterval(90))
        for ignored in [-5, .nan, .infinity, OffsetClock.maximumAdvance + 1, 0] as [TimeInterval] {
            clock.advance(by: ignored)
        }
        #expect(clock.offset == 90)
        base.advance(by: 10)
        #expect(clock.now == Date(timeIntervalSince1970: 1_700_000_100))
    }

    @Test("a sleep on the offset clock ends soon after an advance passes its deadline, not an hour of base time later")
    func advanceEndsSleep() async throws {
        let base = VirtualClock(start: Date(timeIntervalSince1970: 1_700_000_000), sleeps: .untilAdvanced)
        let clock = OffsetClock(base: base)
        let deadline = clock.now.addingTimeInterval(3600)
        let done = Flag()
        let sleeper = Task {
            try await clock.sleep(until: deadline)
            await done.set()
        }
        clock.advance(by: 3600)
        var baseSeconds = 0
        while await !done.isSet, baseSeconds < 3600 {
            base.advance(by: 1)
            baseSeconds += 1
            await Task.yield()
        }
        try await sleeper.value
        #expect(baseSeconds < 60, "the sleep took \(baseSeconds) s of base time after the advance")
        #expect(clock.now >= deadline)
    }

    @Test("/simulator/clock over HTTP: read, advance, refuse a bad advance; absent without a clock control")
    func endpoint() async throws {
        let clock = OffsetClock()
        try await serving(PubNubServer(clock: clock), clockControl: clock) { origin in
            let read = try await send(.get, ["simulator", "clock"], to: origin)
            #expect(read.status == 200)
            let before = try #require(JSONValue.parse(read.body)?.objectValue)
            #expect(number(before["offset"]) == 0)
            let moved = try await send(.post, ["simulator", "clock"], [QueryItem("advance", "61.5")], to: origin)
            let after = try #require(JSONValue.parse(moved.body)?.objectValue)
            #expect(number(after["offset"]) == 61.5)
            #expect(clock.offset == 61.5)
            let nowBefore = try #require(number(before["now"])), nowAfter = try #require(number(after["now"]))
            #expect(nowAfter - nowBefore >= 61.5)
            // The server's timetokens moved with it.
            let time = try await send(.get, ["time", "0"], to: origin)
            let timetoken = try #require(number(JSONValue.parse(time.body)?.arrayValue?.first))
            #expect(timetoken / 1e7 >= nowAfter - 1)
            for bad in ["-1", "0", "abc", "1e12"] {
                #expect(try await send(.post, ["simulator", "clock"], [QueryItem("advance", bad)], to: origin).status == 400)
            }
            #expect(try await send(.post, ["simulator", "clock"], to: origin).status == 400)
            #expect(try await send(.get, ["simulator", "other"], to: origin).status == 404)
            #expect(clock.offset == 61.5)
        }
        try await serving(PubNubServer(), clockControl: nil) { origin in
            let answer = try await send(.post, ["simulator", "clock"], [QueryItem("advance", "5")], to: origin)
            #expect(answer.status == 404)
            #expect(String(decoding: answer.body, as: UTF8.self).contains("Balancer"))
        }
    }

    @Test("over HTTP, a token expires when /simulator/clock moves past its TTL")
    func tokenExpiresOverHTTP() async throws {
        let clock = OffsetClock()
        let server = PubNubServer(clock: clock, secretKey: "sec")
        // An hour, not a minute: the clock's base is real time, and a loaded machine once took over a
        // minute between the grant and the first publish (the token expired before the advance).
        let token = try await server.grantToken(ttlMinutes: 60, grants: AccessGrants(resources: [.channel: ["room-1": .write]]))
        try await serving(server, clockControl: clock) { origin in
            let publish = ["publish", "demo", "demo", "0", "room-1", "0", "\"hi\""]
            let query = [QueryItem("uuid", "alice"), QueryItem("auth", token)]
            #expect(try await send(.get, publish, query, to: origin).status == 200)
            #expect(try await send(.post, ["simulator", "clock"], [QueryItem("advance", "3601")], to: origin).status == 200)
            let refused = try await send(.get, publish, query, to: origin)
            #expect(refused.status == 403)
            #expect(String(decoding: refused.body, as: UTF8.self) == AccessBodies.expired)
        }
        #expect(await server.storedMessages(channel: "room-1").count == 1)
    }
}
