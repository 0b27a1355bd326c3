import Foundation
import Testing

/// One op traced (docs/diagnostics.md): `grep OPID` over a verbose log tells the op's story from
/// enqueue to sent, its request included, and no line of it holds the message's text.
@Suite("pnreplicate: one op traced through a verbose log")
struct OpTraceTests {
    @Test("send and sync with --verbose: the op's id is on its enqueue, attempt, request and sent lines; the text is on none")
    func traceOneOp() async throws {
        let simulator = try await SimulatorProcess(faults: "none", seed: 4)
        defer { simulator.stop() }
        let store = CLI.temporaryStore()
        let env = ["PUBNUB_USER_ID": "me", "PUBNUB_ORIGIN": simulator.origin, "SWIFT_BACKTRACE": "enable=no"]
        let text = "traced words 5521"
        let send = try await offPool {
            try CLI.runBlocking(["send", "--channel", "c", "--text", text, "--json", "--verbose", "--store", store], environment: env)
        }
        try #require(send.status == 0, "\(send.stderr)")
        let op = try #require(try CLI.json(send.stdout)["opId"] as? String)
        let sync = try await offPool { try CLI.runBlocking(["sync", "--verbose", "--store", store], environment: env) }
        try #require(sync.status == 0, "\(sync.stderr)")
        let story = (send.stderr + sync.stderr).split(separator: "\n").filter { $0.contains(op) }
        for step in ["op enqueued", "op sending", "request", "op sent"] {
            #expect(story.contains { $0.contains(step) }, "no \(step) line for \(op) in:\n\(story.joined(separator: "\n"))")
        }
        #expect(story.contains { $0.contains("request") && $0.contains("operation=publish") && $0.contains("status=200") })
        #expect(!sync.stderr.contains(text), "the verbose log holds the message's text")
    }
}
