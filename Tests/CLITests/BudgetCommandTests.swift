import Foundation
import Testing

/// The storage budget on the command line (docs/store.md, "Storage budget"): `sync --keep-messages`
/// evicts read history, `status` shows the size, the budget and what was evicted.
@Suite("pnreplicate storage budget", .serialized)
struct BudgetCommandTests {
    @Test("sync --keep-messages evicts the read history past the newest; status shows it; bad flags are refused", .timeLimit(.minutes(10)))
    func keepMessages() async throws {
        let simulator = try await SimulatorProcess(faults: "none", seed: 1)
        defer { simulator.stop() }
        let store = CLI.temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: (store as NSString).deletingLastPathComponent) }
        let env = ["PUBNUB_USER_ID": "me", "PUBNUB_ORIGIN": simulator.origin, "SWIFT_BACKTRACE": "enable=no"]
        func run(_ arguments: [String]) async throws -> CLI.Result {
            try await offPool { try CLI.runBlocking(arguments + ["--store", store], environment: env) }
        }
        #expect(try await run(["member", "set", "--channel", "c", "--status", "joined"]).status == 0)
        #expect(try await run(["send", "--channel", "c", "--text", "line", "--count", "40"]).status == 0)
        #expect(try await run(["sync"]).status == 0)
        #expect(try await run(["read", "--channel", "c"]).status == 0)
        let sync = try await run(["sync", "--keep-messages", "25", "--json"])
        #expect(sync.status == 0, "\(sync.stderr)")
        let retention = try #require(try CLI.json(sync.stdout)["retention"] as? [String: Any], "\(sync.stdout)")
        #expect(retention["evicted"] as? Int == 15, "\(retention)")
        let status = try await run(["status"])
        #expect(status.stdout.contains("25 messages per channel") && status.stdout.contains("15 messages from 1 channel "), "\(status.stdout)")
        #expect(status.stdout.contains("MB in use"), "\(status.stdout)")
        let refused = try await run(["sync", "--keep-messages", "5", "--keep-days", "3"])
        #expect(refused.status != 0 && refused.stderr.contains("give one"), "\(refused.stderr)")
    }
}
