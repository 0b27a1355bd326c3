import Foundation
import Testing

/// `pnreplicate doctor` (docs/diagnostics.md): exit 0 for a healthy store, 3 naming what needs
/// attention: a dead letter, a lock holder that died, a clock 10 minutes off the server's, an
/// expired token. One test per case.
@Suite("pnreplicate doctor")
struct DoctorCommandTests {
    /// A store synced against a simulator without Access Manager: `member set`, a send, a sync.
    static func healthyStore(_ simulator: SimulatorProcess) async throws -> (store: String, env: [String: String]) {
        let store = CLI.temporaryStore()
        let env = ["PUBNUB_USER_ID": "me", "PUBNUB_ORIGIN": simulator.origin, "SWIFT_BACKTRACE": "enable=no"]
        for arguments in [["member", "set", "--channel", "c", "--status", "joined"], ["send", "--channel", "c", "--text", "doctor's hello"], ["sync"]] {
            let run = try await offPool { try CLI.runBlocking(arguments + ["--store", store], environment: env) }
            try #require(run.status == 0, "\(arguments): \(run.stderr)")
        }
        return (store, env)
    }

    @Test("a healthy store without a token, on a keyset without Access Manager: exit 0, every check ok, the JSON without the message text")
    func healthy() async throws {
        let simulator = try await SimulatorProcess(faults: "none", seed: 1)
        defer { simulator.stop() }
        let (store, env) = try await Self.healthyStore(simulator)
        let text = try await offPool { try CLI.runBlocking(["doctor", "--store", store], environment: env) }
        #expect(text.status == 0, "\(text.stdout)\(text.stderr)")
        #expect(text.stdout.contains("store integrity: quick check ok") && text.stdout.contains("token: none"), "\(text.stdout)")
        let json = try await offPool { try CLI.runBlocking(["doctor", "--store", store, "--json"], environment: env) }
        #expect(json.status == 0, "\(json.stderr)")
        let checks = try #require(try CLI.json(json.stdout)["checks"] as? [[String: Any]])
        #expect(Set(checks.compactMap { $0["name"] as? String }) == ["store integrity", "store lock", "server", "token", "outbox"])
        #expect(checks.allSatisfy { $0["needsAttention"] as? Bool == false }, "\(checks)")
        #expect(!json.stdout.contains("doctor's hello"))
        let missing = try await offPool { try CLI.runBlocking(["doctor", "--store", store + ".nowhere"], environment: env) }
        #expect(missing.status == 1 && !missing.stderr.isEmpty)
    }

    @Test("a lock file naming a process that died holding it: exit 3, the process named")
    func abandonedLock() async throws {
        let simulator = try await SimulatorProcess(faults: "none", seed: 2)
        defer { simulator.stop() }
        let (store, env) = try await Self.healthyStore(simulator)
        // A process that ran and ended: its pid names nobody now, as a drain killed mid-send leaves it.
        let pid = try await offPool {
            let ended = try ChildProcess("/bin/true", [], stdout: .nullDevice, stderr: .nullDevice)
            ended.wait()
            return ended.pid
        }
        try Data("\(pid)\n".utf8).write(to: URL(fileURLWithPath: store + ".lock"))
        let run = try await offPool { try CLI.runBlocking(["doctor", "--store", store], environment: env) }
        #expect(run.status == 3, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("ATTENTION") && run.stdout.contains("process \(pid) died holding it"), "\(run.stdout)")
    }
}

/// The doctor's cases that need Access Manager or the server's clock moved: `simulator serve
/// --secret-key`, tokens from the official Python SDK (as `AccessCommandTests`).
@Suite("pnreplicate doctor with Access Manager", .enabled(if: OfficialSDK.isInstalled || OfficialSDK.isRequired, "the pubnub Python package is not installed"))
struct DoctorAccessTests {
    /// A store of alice's with a message sent under `token` (which grants no join on her user:
    /// no membership is written).
    static func store(_ server: AccessServer, token: String, sendTo channel: String = "general") async throws -> String {
        let store = CLI.temporaryStore()
        for arguments in [["send", "--channel", channel, "--text", "under a token"], ["sync"]] {
            _ = try await AccessServer.run(arguments + ["--store", store, "--auth-token", token], environment: server.environment(user: "alice"))
        }
        return store
    }

    @Test("a healthy store with a token granting its channels: exit 0; the JSON holds neither the token nor its signature")
    func healthyWithToken() async throws {
        let server = try await AccessServer()
        let token = try await server.grant(["general"], to: "alice", ttl: 60)
        let store = try await Self.store(server, token: token)
        let run = try await AccessServer.run(["doctor", "--store", store, "--auth-token", token, "--json"], environment: server.environment(user: "alice"))
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(!AccessServer.leaks(token, in: run.stdout) && !run.stdout.contains("under a token"))
    }

    @Test("a dead letter (a send the token does not grant): exit 3, named")
    func deadLetter() async throws {
        let server = try await AccessServer()
        let token = try await server.grant(["general"], to: "alice", ttl: 60)
        let store = try await Self.store(server, token: token, sendTo: "side")
        let run = try await AccessServer.run(["doctor", "--store", store, "--auth-token", token], environment: server.environment(user: "alice"))
        #expect(run.status == 3, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("1 dead letter"), "\(run.stdout)")
    }

    @Test("the server's clock 10 minutes ahead of this machine's: exit 3, the offset named")
    func clockOff() async throws {
        let server = try await AccessServer()
        let token = try await server.grant(["general"], to: "alice", ttl: 60)
        let store = try await Self.store(server, token: token)
        try await server.advanceClock(600)
        let run = try await AccessServer.run(["doctor", "--store", store, "--auth-token", token], environment: server.environment(user: "alice"))
        #expect(run.status == 3, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("ATTENTION") && run.stdout.contains("s ahead of this device's"), "\(run.stdout)")
    }

    @Test("a token past its TTL on the server's clock: exit 3, named expired")
    func expiredToken() async throws {
        let server = try await AccessServer()
        let token = try await server.grant(["general"], to: "alice", ttl: 1)
        let store = try await Self.store(server, token: token)
        // 90 s: the token's minute is over on the server, and its clock is within the tolerance.
        try await server.advanceClock(90)
        let run = try await AccessServer.run(["doctor", "--store", store, "--auth-token", token], environment: server.environment(user: "alice"))
        #expect(run.status == 3, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("token: expired"), "\(run.stdout)")
    }
}
