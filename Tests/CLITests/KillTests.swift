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
    init(faults: String, seed: UInt64, arguments: [String] = []) throws {
        process = try ChildProcess(
            CLI.binary.path, ["simulator", "serve", "--port", "0", "--faults", faults, "--seed", "\(seed)"] + arguments,
            stdout: .pipe, stderr: .nullDevice)
        let output = process.stdout { $0.contains("\n") }
        let text = String(output.prefix { $0 != "\n" })
        port = try #require(text.split(separator: ":").last.flatMap { Int($0) }, "simulator said: \(text)")
    }

    var origin: String { "http://127.0.0.1:\(port)" }

    func stop() {
        process.terminate()
        process.wait()
    }
}

@Suite("pnreplicate sync survives SIGKILL")
struct KillTests {
    /// Rounds of kill-and-restart: 20 in `swift test`; set PNREPLICATE_KILL_ROUNDS=200 for the long run.
    static var rounds: Int { Int(ProcessInfo.processInfo.environment["PNREPLICATE_KILL_ROUNDS"] ?? "") ?? 20 }

    @Test("sync against a flaky simulator, killed at random moments and restarted: every message exactly once")
    func killAndRestart() async throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["PNREPLICATE_KILL_SEED"] ?? "") ?? 7
        let simulator = try SimulatorProcess(faults: "flaky", seed: seed)
        defer { simulator.stop() }
        let store = CLI.temporaryStore()
        let env = ["PUBNUB_USER_ID": "me", "PUBNUB_ORIGIN": simulator.origin]
        for channel in ["kill-a", "kill-b"] {
            let queued = try await offPool {
                try CLI.run(["send", "--store", store, "--channel", channel, "--text", "m", "--count", "25"], environment: env)
            }
            try #require(queued.status == 0, "\(queued.stderr)")
        }
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
            let plan = try await offPool { try CLI.run(["--dry-run", "--json", "--store", store], environment: env) }
            let ops = try CLI.json(plan.stdout)["ops"] as? [Any]
            if ops?.isEmpty == false { killedWithWorkLeft += 1 }
        }
        // The kills must land while there is work, or the test would prove nothing.
        #expect(killedWithWorkLeft >= min(Self.rounds, 10), "only \(killedWithWorkLeft) kills left work behind")
        var final = try await offPool { try CLI.run(["sync", "--store", store, "--timeout", "120"], environment: env) }
        for _ in 0..<3 where final.status == 3 {
            final = try await offPool { try CLI.run(["sync", "--store", store, "--timeout", "120"], environment: env) }
        }
        #expect(final.status == 0, "seed \(seed): \(final.stdout) \(final.stderr)")

        let chat = try ChatStore<DefaultChatCustom>.open(at: store)
        let client = PubNubClient(
            configuration: try PubNubConfiguration(
                publishKey: "demo", subscribeKey: "demo", userId: "checker", origin: simulator.origin),
            transport: URLSessionTransport())
        for channel in ["kill-a", "kill-b"] {
            let local = try await chat.fetch(chat.queries.messages(inChannel: channel))
            #expect(local.count == 25 && local.allSatisfy { $0.delivery == .sent }, "seed \(seed)")
            // The simulator is flaky for this reader too; reading is safe to repeat.
            var page: HistoryPage?
            for _ in 0..<100 where page == nil {
                page = try? await client.fetchHistory(HistoryQuery(channels: [channel], max: 100))
            }
            let history = try #require(page)
            let ids = (history.channels[channel] ?? []).compactMap { message -> String? in
                if case .object(let body) = message.message, case .string(let id)? = body["id"] { return id }
                return nil
            }
            #expect(ids == local.map(\.id), "seed \(seed): \(channel) has \(ids.count) messages for \(local.count) sent")
            #expect(Set(ids).count == ids.count, "seed \(seed): duplicates in \(channel)")
            let texts = (history.channels[channel] ?? []).compactMap { message -> String? in
                if case .object(let body) = message.message, case .string(let text)? = body["text"] { return text }
                return nil
            }
            #expect(texts == (1...25).map { "m \($0)" }, "seed \(seed): \(channel) is out of send order")
        }
    }
}
