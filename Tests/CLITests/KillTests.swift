import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `pnreplicate simulator serve` process on a free port.
final class SimulatorProcess {
    let process: ChildProcess
    let port: Int

    /// `arguments` go after the port, faults and seed.
    /// Starts the simulator and waits, off the cooperative pool, for the line naming its port.
    init(faults: String, seed: UInt64, arguments: [String] = []) async throws {
        let process = try ChildProcess(
            CLI.binary.path, ["simulator", "serve", "--port", "0", "--faults", faults, "--seed", "\(seed)"] + arguments,
            stdout: .pipe, stderr: .nullDevice)
        self.process = process
        let output = try await offPool { process.stdout { $0.contains("\n") } }
        let text = String(output.prefix { $0 != "\n" })
        port = try #require(text.split(separator: ":").last.flatMap { Int($0) }, "simulator said: \(text)")
    }

    var origin: String { "http://127.0.0.1:\(port)" }

    /// SIGTERM now, SIGKILL 10 s later if it is still there; returns at once (a `defer` in an
    /// async test cannot wait, and blocking there stalled other tests: ``ChildProcess/wait()``).
    func stop() { process.stop(grace: .seconds(10)) }
}

@Suite("pnreplicate sync survives SIGKILL")
struct KillTests {
    /// Rounds of kill-and-restart: 10 in `swift test`; `scripts/soak kill 200` for the long run.
    static var rounds: Int { Int(ProcessInfo.processInfo.environment["PNREPLICATE_KILL_ROUNDS"] ?? "") ?? 10 }

    @Test("sync against a flaky simulator, killed at random moments and restarted: every message exactly once")
    func killAndRestart() async throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["PNREPLICATE_KILL_SEED"] ?? "") ?? 7
        let simulator = try await SimulatorProcess(faults: "flaky", seed: seed)
        defer { simulator.stop() }
        let store = CLI.temporaryStore()
        let env = ["PUBNUB_USER_ID": "me", "PUBNUB_ORIGIN": simulator.origin]
        // Work comes in batches of 25 messages a channel, a new batch whenever a kill found the
        // outbox empty: a fast (release) sync finishes a batch in a few rounds, and a long run's
        // kills must still land while there is work.
        var batches = 0
        func queueBatch() async throws {
            for channel in Self.channels {
                let text = "b\(batches)"
                let queued = try await offPool {
                    try CLI.runBlocking(["send", "--store", store, "--channel", channel, "--text", text, "--count", "25"], environment: env)
                }
                try #require(queued.status == 0, "\(queued.stderr)")
            }
            batches += 1
        }
        try await queueBatch()
        var random = SystemRandomNumberGenerator()
        var killedWithWorkLeft = 0
        for round in 0..<Self.rounds {
            let sync = try ChildProcess(
                CLI.binary.path, ["sync", "--store", store, "--timeout", "30"], environment: env,
                stdout: .nullDevice, stderr: .nullDevice)
            // The kill moment is what is random here; nothing is asserted about timing. The
            // waits run off Swift's cooperative pool, which other tests need meanwhile.
            let pause = UInt32.random(in: 20_000...300_000, using: &random)
            let ended = try await offPool {
                usleep(pause)
                sync.signal(SIGKILL)
                return sync.wait()
            }
            #expect(ended.reason == .uncaughtSignal || ended.status == 0, "round \(round)")
            let plan = try await offPool { try CLI.runBlocking(["--dry-run", "--json", "--store", store], environment: env) }
            let ops = try CLI.json(plan.stdout)["ops"] as? [Any]
            if ops?.isEmpty == false {
                killedWithWorkLeft += 1
            } else if round < Self.rounds - 1 {
                try await queueBatch()
            }
        }
        // The kills must land while there is work, or the test would prove nothing.
        #expect(killedWithWorkLeft >= min(Self.rounds / 2, 10), "only \(killedWithWorkLeft) kills left work behind")
        var final = try await offPool { try CLI.runBlocking(["sync", "--store", store, "--timeout", "120"], environment: env) }
        for _ in 0..<3 where final.status == 3 {
            final = try await offPool { try CLI.runBlocking(["sync", "--store", store, "--timeout", "120"], environment: env) }
        }
        #expect(final.status == 0, "seed \(seed): \(final.stdout) \(final.stderr)")

        let chat = try ChatStore<DefaultChatCustom>.open(at: store)
        let client = PubNubClient(
            configuration: try PubNubConfiguration(
                publishKey: "demo", subscribeKey: "demo", userId: "checker", origin: simulator.origin),
            transport: URLSessionTransport())
        let sent = (0..<batches).flatMap { batch in (1...25).map { "b\(batch) \($0)" } }
        for channel in Self.channels {
            let local = try await chat.fetch(chat.queries.messages(inChannel: channel))
            #expect(local.count == sent.count && local.allSatisfy { $0.delivery == .sent }, "seed \(seed)")
            let history = try await Self.history(of: channel, client)
            let ids = history.compactMap { message -> String? in
                if case .object(let body) = message.message, case .string(let id)? = body["id"] { return id }
                return nil
            }
            #expect(ids == local.map(\.id), "seed \(seed): \(channel) has \(ids.count) messages for \(local.count) sent")
            #expect(Set(ids).count == ids.count, "seed \(seed): duplicates in \(channel)")
            let texts = history.compactMap { message -> String? in
                if case .object(let body) = message.message, case .string(let text)? = body["text"] { return text }
                return nil
            }
            #expect(texts == sent, "seed \(seed): \(channel) is out of send order")
        }
    }

    static let channels = ["kill-a", "kill-b"]

    /// Every message of `channel`, oldest first, through the library's pager (the simulator is
    /// flaky for this reader too: each request is tried up to 100 times; reading is safe to repeat).
    static func history(of channel: String, _ client: PubNubClient) async throws -> [HistoryMessage] {
        var messages: [HistoryMessage] = []
        for try await page in HistoryPages(channel: channel, fetch: { query in
            for _ in 0..<99 { if let page = try? await client.history.fetchHistory(query) { return page } }
            return try await client.history.fetchHistory(query)
        }) {
            messages = page.messages + messages
        }
        return messages
    }
}
