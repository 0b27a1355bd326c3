import Foundation
import PubNubSimulator
import PubNubWire
import ReplicaModel
import Testing

/// A clock the test moves by hand.
final class HandClock: ReplicaClock, @unchecked Sendable {
    private let lock = NSLock()
    private var date = Date(timeIntervalSince1970: 1_800_000_000)
    var now: Date { lock.withLock { date } }
    func advance(_ seconds: TimeInterval) { lock.withLock { date = date.addingTimeInterval(seconds) } }
    func sleep(until date: Date) async throws {}
}

@Suite("AccessControl decides before and after each request")
struct AccessControlTests {
    struct World {
        let clock = HandClock()
        let server: PubNubServer
        let transport: RecordingTransport

        /// Answers 200 to everything, or `status` for requests whose operation is in `failing`.
        init(status: Int = 403, failing: Set<String> = []) {
            server = PubNubServer(clock: clock, secretKey: "sec")
            transport = RecordingTransport { request throws(TransportFailure) in
                if failing.contains(request.operation) {
                    let body = #"{"message":"Forbidden","payload":{"channels":["room"]},"error":true,"service":"Access Manager","status":403}"#
                    return WireResponse(status: status, headers: [:], body: Data(body.utf8))
                }
                return WireResponse(status: 200, headers: [:], body: Data("[1,\"Sent\",\"17000000000000000\"]".utf8))
            }
        }

        func client(token: String?, requiresToken: Bool = false) throws -> PubNubClient {
            let configuration = try PubNubConfiguration(
                publishKey: "pub", subscribeKey: "sub", userId: "me", origin: "127.0.0.1:9", secure: false)
            return PubNubClient(
                configuration: configuration, transport: transport,
                access: AccessControl(token: token, userId: "me", clock: clock, requiresToken: requiresToken))
        }

        func token(ttl: Int = 10, channels: [String] = ["room"]) async throws -> String {
            try await server.grantToken(
                ttlMinutes: ttl, grants: AccessGrants(resources: [.channel: Dictionary(uniqueKeysWithValues: channels.map { ($0, [.read, .write]) })]),
                authorizedUserId: "me")
        }
    }

    static func publish(_ client: PubNubClient, _ channel: String = "room") async throws(WireError) {
        _ = try await client.publish(PublishRequest(channel: channel, message: .string("hi")))
    }

    static func denial(_ body: () async throws -> Void) async -> AccessDenial? {
        do {
            try await body()
        } catch WireError.accessDenied(let denial) {
            return denial
        } catch {
            Issue.record("not an access denial: \(error)")
        }
        return nil
    }

    @Test("no token and none required: requests go without auth; a 403 stays a plain service error")
    func withoutAccessManager() async throws {
        let world = World(failing: ["publish"])
        let client = try world.client(token: nil)
        await #expect(throws: WireError.self) { try await Self.publish(client) }
        do { try await Self.publish(client) } catch { #expect(error.retryability == .permanent, "\(error)") }
        #expect(world.transport.requests.count == 2)
        #expect(world.transport.requests.allSatisfy { !$0.query.contains { $0.name == "auth" } })
        #expect(client.access.waitingFor == nil)
    }

    @Test("a token past its TTL: nothing is sent, one token request is announced, and a new token lets requests go")
    func expired() async throws {
        let world = World()
        let client = try world.client(token: try await world.token(ttl: 10))
        let events = client.access.events()
        try await Self.publish(client)
        world.clock.advance(10 * 60)
        let first = await Self.denial { try await Self.publish(client) }
        let second = await Self.denial { try await Self.publish(client) }
        #expect(first?.reason == .expired(world.clock.now) && first?.waitsForToken == true)
        #expect(second.map { if case .expired = $0.reason { true } else { false } } == true)
        #expect(world.transport.requests.count == 1)
        #expect(client.access.waitingFor == .expired)
        let fresh = try await world.token(ttl: 5)
        try client.access.setToken(fresh)
        try await Self.publish(client)
        #expect(world.transport.requests.count == 2)
        #expect(world.transport.requests.last?.query.first { $0.name == "auth" }?.value == fresh)
        var seen: [AccessEvent] = []
        for await event in events {
            seen.append(event)
            if case .tokenChanged = event { break }
        }
        #expect(seen == [.tokenNeeded(generation: 0, reason: .expired), .tokenChanged(generation: 1)])
    }

    @Test("a 403 under a token: every request waits (nothing more is sent) until setToken; a refusal under an older token changes nothing")
    func refused() async throws {
        let world = World(failing: ["publish"])
        let client = try world.client(token: try await world.token())
        let denial = await Self.denial { try await Self.publish(client) }
        guard case .refused(let service)? = denial?.reason else { Issue.record("\(String(describing: denial))"); return }
        #expect(service.status == 403)
        #expect(denial?.missing.map(\.description) == [#"write on channel "room""#])
        let waiting = await Self.denial { try await Self.publish(client) }
        #expect(waiting?.reason == .waiting)
        #expect(world.transport.requests.filter { $0.operation == "publish" }.count == 1)
        // A request that needs no permission still goes while requests wait.
        _ = try? await client.time()
        #expect(world.transport.requests.map(\.operation) == ["publish", "time"])
        let generation = client.access.generation
        try client.access.setToken(try await world.token(ttl: 11))
        #expect(client.access.generation == generation + 1 && client.access.waitingFor == nil)
        // A late 403 of a request admitted under the old token does not start a new wait.
        let late = client.access.refused(
            try client.publishRequest(PublishRequest(channel: "room", message: .null)),
            error: ServiceError(operation: "publish", status: 403, family: .legacyService, message: "Forbidden"),
            admission: AccessControl.Admission(generation: generation, token: nil))
        #expect(client.access.waitingFor == nil)
        if case .accessDenied = late {} else { Issue.record("\(late)") }
    }

    @Test("the pre-check: a channel the token does not grant is refused on the device, naming the permission; S3's 403 is not Access Manager's")
    func notGranted() async throws {
        let world = World()
        let client = try world.client(token: try await world.token(channels: ["room"]))
        let denial = await Self.denial { try await Self.publish(client, "elsewhere") }
        #expect(denial?.reason == .notGranted([AccessRequirement(.channel, "elsewhere", .write)]))
        #expect(denial?.waitsForToken == false)
        #expect(world.transport.requests.isEmpty)
        #expect(client.access.waitingFor == nil)
        let storage = client.access.refused(
            WireRequest(method: .post, pathSegments: ["upload"], operation: "uploadFile"),
            error: ServiceError(operation: "uploadFile", status: 403, family: .storage, message: "AccessDenied"),
            admission: AccessControl.Admission(generation: 0, token: nil))
        #expect(storage == .service(ServiceError(operation: "uploadFile", status: 403, family: .storage, message: "AccessDenied")))
    }

    @Test("a token whose pattern backtracks without bound ((a+)+$, (a|aa)+$, (\\w+\\s?)+$): not evaluated on the device; the request goes and the server decides",
          arguments: ["^(a+)+$", "^(a|aa)+$", "^(\\w+\\s?)+$"])
    func unboundedPattern(pattern: String) async throws {
        let world = World()
        let token = try await world.server.grantToken(
            ttlMinutes: 10, grants: AccessGrants(resources: [.channel: ["room": [.read, .write]]], patterns: [.channel: [pattern: .write]]),
            authorizedUserId: "me")
        let client = try world.client(token: token)
        // 40 characters that make a backtracking engine try about 2^40 ways before failing.
        let name = String(repeating: "a", count: 39) + "!"
        try await Self.publish(client, name)
        #expect(world.transport.requests.count == 1, "the request went: the server decides")
        #expect(client.access.waitingFor == nil)
        // The simulator, which will not evaluate it either, refuses what only that pattern could grant.
        let grants = try #require(client.access.parsedToken?.grants)
        let need = AccessNeed.all([AccessRequirement(.channel, name, .write)])
        #expect(need.missing(in: grants) == [])
        #expect(need.missing(in: grants, undecidedIsMet: false) == [AccessRequirement(.channel, name, .write)])
        // What other entries grant is still decided on the device.
        let denial = await Self.denial { _ = try await client.history.fetchHistory(HistoryQuery(channels: [name])) }
        #expect(denial?.reason == .notGranted([AccessRequirement(.channel, name, .read)]))
    }

    @Test("a 403 to a request that went only because an unevaluated pattern might grant it: not granted, and nothing else waits for a token")
    func unboundedPatternRefused() async throws {
        let world = World(failing: ["publish"])
        let token = try await world.server.grantToken(
            ttlMinutes: 10, grants: AccessGrants(resources: [.channel: ["room": [.read, .write]]], patterns: [.channel: ["^(a+)+$": .write]]),
            authorizedUserId: "me")
        let client = try world.client(token: token)
        let name = String(repeating: "a", count: 39) + "!"
        let denial = await Self.denial { try await Self.publish(client, name) }
        #expect(denial?.reason == .notGranted([AccessRequirement(.channel, name, .write)]))
        #expect(denial?.waitsForToken == false)
        #expect(world.transport.requests.count == 1)
        #expect(client.access.waitingFor == nil, "one refused channel does not stop the others")
        #expect(throws: Never.self) { _ = try client.access.admit(try client.publishRequest(PublishRequest(channel: "room", message: .string("x")))) }
    }

    @Test("required but missing: nothing is sent until a token arrives; expiring soon: requests go and a token is asked for once")
    func missingAndExpiring() async throws {
        let world = World()
        let client = try world.client(token: nil, requiresToken: true)
        #expect(await Self.denial { try await Self.publish(client) }?.reason == .noToken)
        #expect(world.transport.requests.isEmpty)
        try client.access.setToken(try await world.token(ttl: 10))
        let events = client.access.events()
        world.clock.advance(9 * 60 + 30)   // 30 s left: within the margin (a tenth of 10 minutes)
        try await Self.publish(client)
        try await Self.publish(client)
        #expect(world.transport.requests.count == 2)
        try client.access.setToken(try await world.token(ttl: 12))
        var seen: [AccessEvent] = []
        for await event in events {
            seen.append(event)
            if case .tokenChanged = event { break }
        }
        #expect(seen == [.tokenNeeded(generation: 1, reason: .expiring), .tokenChanged(generation: 2)])
        #expect(client.access.generation == 2)
    }

    @Test("a request built before setToken goes with the new token; a legacy key is sent as is and never pre-checked")
    func currentTokenAndLegacyKeys() async throws {
        let world = World()
        let client = try world.client(token: "legacy-auth-key")
        let request = try client.publishRequest(PublishRequest(channel: "anything", message: .null))
        #expect(client.access.parsedToken == nil)
        _ = try await client.perform(request)
        let fresh = try await world.token(channels: ["anything"])
        try client.access.setToken(fresh)
        _ = try await client.perform(request)
        #expect(world.transport.requests.map { $0.query.first { $0.name == "auth" }?.value } == ["legacy-auth-key", fresh])
        #expect(throws: AccessTokenError.empty) { try client.access.setToken("") }
    }

    @Test("setToken with the token in use changes nothing; an expiring token's wait is announced again when it expires")
    func sameTokenAndEscalation() async throws {
        let world = World()
        let token = try await world.token(ttl: 10)
        let client = try world.client(token: token)
        #expect(try client.access.setToken(token) == false)
        #expect(client.access.generation == 0)
        let events = client.access.events()
        world.clock.advance(9 * 60 + 30)
        try await Self.publish(client)   // expiring: asked ahead of time, still sent
        world.clock.advance(60)
        #expect(await Self.denial { try await Self.publish(client) }.map { if case .expired = $0.reason { true } else { false } } == true)
        #expect(try client.access.setToken(try await world.token(ttl: 30)))
        var seen: [AccessEvent] = []
        for await event in events {
            seen.append(event)
            if case .tokenChanged = event { break }
        }
        #expect(seen == [
            .tokenNeeded(generation: 0, reason: .expiring), .tokenNeeded(generation: 0, reason: .expired), .tokenChanged(generation: 1),
        ])
        #expect(AccessControl.fingerprint(of: token).count == 12 && AccessControl.fingerprint(of: nil) == "none")
        var dumped = ""
        dump(client.access, to: &dumped)
        #expect(!dumped.contains(token.prefix(16)))
    }
}

