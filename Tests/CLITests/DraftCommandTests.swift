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
        let set = try await offPool { try CLI.run(["draft", "set", "--store", store, "--channel", "c", "--text", "Hi Alice 👋"]) }
        #expect(set.status == 0, "\(set.stderr)")
        let mention = try await offPool {
            try CLI.run(["draft", "mention", "--store", store, "--channel", "c", "--offset", "3", "--length", "5", "--user", "alice"])
        }
        #expect(mention.status == 0, "\(mention.stderr)")
        let overlap = try await offPool {
            try CLI.run(["draft", "mention", "--store", store, "--channel", "c", "--offset", "4", "--length", "2", "--url", "https://x"])
        }
        #expect(overlap.status != 0 && overlap.stderr.contains("overlap"), "\(overlap.stderr)")
        // Typing around the mention keeps it (update diffs the text).
        _ = try await offPool { try CLI.run(["draft", "set", "--store", store, "--channel", "c", "--text", "Hi Alice 👋, and Bob"]) }
        let shown = try await offPool { try CLI.run(["draft", "show", "--store", store, "--channel", "c", "--json"]) }
        let json = try CLI.json(shown.stdout)
        #expect(json["rendered"] as? String == "Hi [Alice](pn-user://alice) 👋, and Bob", "\(shown.stdout)")
        let list = try await offPool { try CLI.run(["draft", "list", "--store", store]) }
        #expect(list.stdout.hasPrefix("c  1 mention(s)"), "\(list.stdout)")
        let cleared = try await offPool { try CLI.run(["draft", "clear", "--store", store, "--channel", "c"]) }
        #expect(cleared.stdout == "draft of c removed\n")
        #expect(try await offPool { try CLI.run(["draft", "list", "--store", store]) }.stdout == "no drafts\n")
    }

    @Test("kill -9 during an edit loses at most that edit: the draft is the text before or after it", .timeLimit(.minutes(3)))
    func killDuringEdit() async throws {
        let store = CLI.temporaryStore()
        var previous = "v0"
        _ = try await offPool { try CLI.run(["draft", "set", "--store", store, "--channel", "c", "--text", "v0"]) }
        for round in 1...8 {
            let text = "v\(round) " + String(repeating: "word ", count: round * 50)
            let process = try ChildProcess(
                CLI.binary.path, ["draft", "set", "--store", store, "--channel", "c", "--text", text],
                environment: ["SWIFT_BACKTRACE": "enable=no"], stdout: .pipe, stderr: .pipe)
            // Killed at a different moment each round: at once, or after some of its work.
            for _ in 0..<(round * 200) { await Task.yield() }
            process.signal(SIGKILL)
            _ = try await offPool { process.wait() }
            let shown = try await offPool { try CLI.run(["draft", "show", "--store", store, "--channel", "c", "--json"]) }
            #expect(shown.status == 0, "round \(round): \(shown.stderr)")
            let now = (try CLI.json(shown.stdout)["draft"] as? [String: Any])?["text"] as? String
            #expect(now == previous || now == text, "round \(round): the draft is neither the old nor the new text")
            previous = now ?? previous
        }
    }
}
