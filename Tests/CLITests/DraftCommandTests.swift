import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("pnreplicate draft", .serialized)
struct DraftCommandTests {
    @Test("a draft and its mentions, edited by one process, are intact in the next; a refused mention changes nothing")
    func acrossProcesses() async throws {
        let store = CLI.temporaryStore()
        let set = try await offPool { try CLI.runBlocking(["draft", "set", "--store", store, "--channel", "c", "--text", "Hi Alice 👋"]) }
        #expect(set.status == 0, "\(set.stderr)")
        let mention = try await offPool {
            try CLI.runBlocking(["draft", "mention", "--store", store, "--channel", "c", "--offset", "3", "--length", "5", "--user", "alice"])
        }
        #expect(mention.status == 0, "\(mention.stderr)")
        let overlap = try await offPool {
            try CLI.runBlocking(["draft", "mention", "--store", store, "--channel", "c", "--offset", "4", "--length", "2", "--url", "https://x"])
        }
        #expect(overlap.status != 0 && overlap.stderr.contains("overlap"), "\(overlap.stderr)")
        // Typing around the mention keeps it (update diffs the text).
        _ = try await offPool { try CLI.runBlocking(["draft", "set", "--store", store, "--channel", "c", "--text", "Hi Alice 👋, and Bob"]) }
        let shown = try await offPool { try CLI.runBlocking(["draft", "show", "--store", store, "--channel", "c", "--json"]) }
        let json = try CLI.json(shown.stdout)
        #expect(json["rendered"] as? String == "Hi [Alice](pn-user://alice) 👋, and Bob", "\(shown.stdout)")
        let list = try await offPool { try CLI.runBlocking(["draft", "list", "--store", store]) }
        #expect(list.stdout.hasPrefix("c  1 mention(s)"), "\(list.stdout)")
        let cleared = try await offPool { try CLI.runBlocking(["draft", "clear", "--store", store, "--channel", "c"]) }
        #expect(cleared.stdout == "draft of c removed\n")
        #expect(try await offPool { try CLI.runBlocking(["draft", "list", "--store", store]) }.stdout == "no drafts\n")
    }

    @Test("draft quote and draft send queue the message and its mention event offline and delete the draft; sync sends both",
          .timeLimit(.minutes(10)))
    func sendThroughSync() async throws {
        let simulator = try await SimulatorProcess(faults: "none", seed: 1)
        defer { simulator.stop() }
        let store = CLI.temporaryStore()
        let env = ["PUBNUB_USER_ID": "me", "PUBNUB_ORIGIN": simulator.origin, "SWIFT_BACKTRACE": "enable=no"]
        func run(_ arguments: [String]) async throws -> CLI.Result {
            try await offPool { try CLI.runBlocking(arguments, environment: env) }
        }
        let earlier = try CLI.json(try await run(["send", "--store", store, "--channel", "c", "--text", "earlier", "--json"]).stdout)
        let quotedId = try #require(earlier["id"] as? String)
        // Not sent yet: only a sent message can be quoted.
        let unsent = try await run(["draft", "quote", "--store", store, "--channel", "c", "--message", quotedId])
        #expect(unsent.status != 0 && unsent.stderr.contains("only a sent message"), "\(unsent.stderr)")
        #expect(try await run(["sync", "--store", store]).status == 0)

        _ = try await run(["draft", "set", "--store", store, "--channel", "c", "--text", "Hi Alice"])
        _ = try await run(["draft", "mention", "--store", store, "--channel", "c", "--offset", "3", "--length", "5", "--user", "alice"])
        let quoted = try await run(["draft", "quote", "--store", store, "--channel", "c", "--message", quotedId])
        #expect(quoted.status == 0 && quoted.stdout.contains("quotes "), "\(quoted.stderr)")
        let sent = try await run(["draft", "send", "--store", store, "--channel", "c", "--json"])
        #expect(sent.status == 0, "\(sent.stderr)")
        let receipt = try CLI.json(sent.stdout)
        #expect(receipt["text"] as? String == "Hi [Alice](pn-user://alice)")
        #expect((receipt["mentionOps"] as? [String])?.count == 1)
        #expect(try await run(["draft", "list", "--store", store]).stdout == "no drafts\n")
        let empty = try await run(["draft", "send", "--store", store, "--channel", "c"])
        #expect(empty.status != 0 && empty.stderr.contains("no text to send"), "\(empty.stderr)")

        let sync = try await run(["sync", "--store", store])
        #expect(sync.status == 0 && sync.stdout.hasPrefix("sent          2"), "\(sync.stdout)\(sync.stderr)")
        let events = try CLI.json(try await run(["history", "--store", store, "--channel", "alice", "--remote", "--json"]).stdout)
        let event = (events["messages"] as? [[String: Any]])?.first?["content"] as? [String: Any]
        #expect(event?["type"] as? String == "mention" && event?["channel"] as? String == "c", "\(events)")
        let messages = try CLI.json(try await run(["history", "--store", store, "--channel", "c", "--json"]).stdout)
        let texts = (messages["messages"] as? [[String: Any]])?.map { $0["text"] as? String }
        #expect(texts == ["earlier", "Hi [Alice](pn-user://alice)"], "\(messages)")
    }

    @Test("kill -9 during an edit loses at most that edit: the draft is the text before or after it", .timeLimit(.minutes(10)))
    func killDuringEdit() async throws {
        let store = CLI.temporaryStore()
        var previous = "v0"
        _ = try await offPool { try CLI.runBlocking(["draft", "set", "--store", store, "--channel", "c", "--text", "v0"]) }
        for round in 1...8 {
            let text = "v\(round) " + String(repeating: "word ", count: round * 50)
            let process = try ChildProcess(
                CLI.binary.path, ["draft", "set", "--store", store, "--channel", "c", "--text", text],
                environment: ["SWIFT_BACKTRACE": "enable=no"], stdout: .pipe, stderr: .pipe)
            // Killed at a different moment each round: at once, or after some of its work. Only the
            // kill moment varies; nothing is asserted about timing. The pause runs off Swift's
            // cooperative pool: counted `Task.yield()`s there took minutes while CPU-bound suites
            // held both of its threads (CI's time limit hit this test once).
            let pause = UInt32((round - 1) * 4_000)
            _ = try await offPool {
                usleep(pause)
                process.signal(SIGKILL)
                return process.wait()
            }
            let shown = try await offPool { try CLI.runBlocking(["draft", "show", "--store", store, "--channel", "c", "--json"]) }
            #expect(shown.status == 0, "round \(round): \(shown.stderr)")
            let now = (try CLI.json(shown.stdout)["draft"] as? [String: Any])?["text"] as? String
            #expect(now == previous || now == text, "round \(round): the draft is neither the old nor the new text")
            previous = now ?? previous
        }
    }
}
