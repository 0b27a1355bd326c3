import Foundation
import Testing

/// `edit`, `delete`, `restore`, `read`, `unread`, `pin`, `unpin`: offline, in `--dry-run` with
/// their exact requests, then through `sync` against `simulator serve`.
@Suite("chat semantics on the command line", .serialized)
struct ChatCommandTests {
    @Test("each command works offline and shows its request in --dry-run; sync sends them; history shows edits and deletions",
          .timeLimit(.minutes(10)))
    func offlineThenSync() async throws {
        let simulator = try await SimulatorProcess(faults: "none", seed: 1)
        defer { simulator.stop() }
        let store = CLI.temporaryStore()
        let online = ["PUBNUB_USER_ID": "me", "PUBNUB_ORIGIN": simulator.origin, "SWIFT_BACKTRACE": "enable=no"]
        func runIn(_ command: String, _ arguments: [String]) async throws -> CLI.Result {
            try await offPool { try CLI.runBlocking([command, "--store", store] + arguments, environment: online) }
        }
        _ = try await offPool { try CLI.runBlocking(["channel", "set", "--store", store, "--id", "c", "--name", "C", "--type", "group"], environment: online) }
        _ = try await offPool { try CLI.runBlocking(["member", "set", "--store", store, "--channel", "c", "--status", "joined"], environment: online) }
        let sent = try CLI.json(try await runIn("send", ["--channel", "c", "--text", "hello", "--json"]).stdout)
        let id = try #require(sent["id"] as? String)
        let kept = try CLI.json(try await runIn("send", ["--channel", "c", "--text", "kept", "--json"]).stdout)
        let keptId = try #require(kept["id"] as? String)
        #expect(try await runIn("sync", []).status == 0)

        // Offline from here: the origin refuses connections.
        let offline = ["PUBNUB_USER_ID": "me", "PUBNUB_ORIGIN": "http://127.0.0.1:9", "SWIFT_BACKTRACE": "enable=no"]
        func offlineRun(_ command: String, _ arguments: [String]) async throws -> CLI.Result {
            try await offPool { try CLI.runBlocking([command, "--store", store] + arguments, environment: offline) }
        }
        for (command, arguments) in [
            ("edit", ["--message", id, "--text", "hello!"]), ("pin", ["--message", keptId]), ("read", ["--channel", "c"]),
            ("delete", ["--message", keptId]),
        ] {
            let result = try await offlineRun(command, arguments)
            #expect(result.status == 0 && result.stdout.contains("enqueued"), "\(command): \(result.stdout)\(result.stderr)")
        }
        let plan = try await offPool { try CLI.runBlocking(["--dry-run", "--store", store], environment: offline) }
        #expect(plan.stdout.contains(#"body     {"type":"edited","value":"hello!"}"#), "\(plan.stdout)")
        #expect(plan.stdout.contains(#""pinnedMessageTimetoken":""#) && plan.stdout.contains("If-Match"), "\(plan.stdout)")
        #expect(plan.stdout.contains("lastReadMessageTimetoken") && plan.stdout.contains("GET /signal/"), "\(plan.stdout)")
        #expect(plan.stdout.contains(#"body     {"type":"deleted","value":"deleted"}"#), "\(plan.stdout)")
        let unread = try await offPool { try CLI.runBlocking(["unread", "--store", store, "--json"], environment: offline) }
        #expect(try CLI.json(unread.stdout)["c"] as? Int == 0, "\(unread.stdout)")
        let history = try await offlineRun("history", ["--channel", "c"])
        #expect(history.stdout.contains("hello! (edited)") && history.stdout.contains("[deleted] kept"), "\(history.stdout)")

        let sync = try await runIn("sync", [])
        #expect(sync.status == 0 && sync.stdout.hasPrefix("sent          5"), "\(sync.stdout)\(sync.stderr)")
        let restored = try await runIn("restore", ["--message", keptId])
        #expect(restored.status == 0, "\(restored.stderr)")
        let unpinned = try await runIn("unpin", ["--channel", "c"])
        #expect(unpinned.status == 0, "\(unpinned.stderr)")
        #expect(try await runIn("sync", []).status == 0)
        let after = try await runIn("history", ["--channel", "c"])
        #expect(!after.stdout.contains("[deleted]") && after.stdout.contains("hello! (edited)"), "\(after.stdout)")
    }
}
