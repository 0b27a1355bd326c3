import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import Testing

/// The simulator's hostile-server mode: seeded, bounded, and served over HTTP as in process.
@Suite("Hostile server answers")
struct HostileAnswerTests {
    static let requests: [WireRequest] = [
        WireRequest(method: .post, pathSegments: ["publish", "demo", "demo", "0", "general", "0"], body: Data("{}".utf8), operation: "publish"),
        WireRequest(method: .get, pathSegments: ["v3", "history-with-actions", "sub-key", "demo", "channel", "general"], operation: "h"),
        WireRequest(method: .get, pathSegments: ["v2", "objects", "demo", "uuids", "me", "channels"], operation: "m"),
        WireRequest(method: .get, pathSegments: ["v1", "message-actions", "demo", "channel", "general"], operation: "a"),
    ]

    @Test("a seed and a case index always give the same bytes")
    func deterministic() {
        for index in UInt64(0)..<200 {
            let request = Self.requests[Int(index) % Self.requests.count]
            let first = HostileCase(seed: 99, index: index)
            let again = HostileCase(seed: 99, index: index)
            #expect(first == again)
            #expect(first.answer(to: request, real: nil) == again.answer(to: request, real: nil), "case \(index): \(first)")
        }
    }

    @Test("600 cases use every mutation and stay within the size bound")
    func coverageAndBound() {
        var seen: Set<HostileMutation> = []
        for index in UInt64(0)..<600 {
            let hostile = HostileCase(seed: 7, index: index)
            seen.insert(hostile.mutation)
            let response = hostile.answer(to: Self.requests[Int(index) % Self.requests.count], real: nil)
            #expect(response.body.count <= hostile.oversizeLimit + 64 * 1024, "\(hostile): \(response.body.count) bytes")
        }
        #expect(seen == Set(HostileMutation.allCases))
    }

    @Test("a 429 carries an odd Retry-After, and is not applied")
    func tooManyRequests() throws {
        let index = try #require((UInt64(0)..<500).first { HostileCase(seed: 3, index: $0).mutation == .tooManyRequests })
        let hostile = HostileCase(seed: 3, index: index)
        #expect(!hostile.mutation.reachesServer)
        let response = hostile.answer(to: Self.requests[0], real: nil)
        #expect(response.status == 429 && response.header("retry-after") != nil)
    }

    @Test("hostile-server is a named profile, and its plan replays in process")
    func profileReplays() async throws {
        let profile = try #require(FaultProfile.named("hostile-server"))
        func run() async throws -> ([String], [WireResponse]) {
            let sim = try InProcess(profile: profile, seed: 11)
            let transport = InProcessTransport(server: sim.server, plan: sim.plan)
            var responses: [WireResponse] = []
            for i in 0..<60 {
                responses.append(try await transport.send(Self.requests[i % Self.requests.count], to: Origin(host: "sim.invalid")))
            }
            return (sim.plan.log.map(\.fault.description), responses)
        }
        // The faults and the answers' statuses replay. The bytes of a mangled real answer may not:
        // the simulator encodes its answers from dictionaries, whose key order is not fixed.
        let (log, responses) = try await run()
        let (log2, responses2) = try await run()
        #expect(log == log2 && responses.map(\.status) == responses2.map(\.status))
        #expect(log.contains { $0.hasPrefix("hostile-") } && log.contains("none"))
    }

    @Test("served over HTTP, every hostile answer reaches the client as a response or a transport failure", arguments: TransportKind.allCases)
    func overHTTP(kind: TransportKind) async throws {
        try await withHTTPSimulator(plan: FaultPlan(seed: 5, profile: FaultProfile(name: "all-hostile", hostileAnswer: 1))) { port, _ in
            let (transport, shutdown) = kind.make()
            let origin = Origin(host: "127.0.0.1", port: port, secure: false)
            var answered = 0
            for i in 0..<80 {
                do {
                    _ = try await transport.send(Self.requests[i % Self.requests.count], to: origin)
                    answered += 1
                } catch {
                    // A truncated or refused body is a transport failure; the server must keep serving.
                }
            }
            await shutdown()
            #expect(answered > 40)
        }
    }
}
