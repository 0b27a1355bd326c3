import Foundation
import Testing

/// `--objects` (and `PNREPLICATE_OBJECTS`): the object backend a command's replica uses, and a
/// store bound to the one it was first filled from (`docs/datasync.md`).
@Suite("--objects: App Context or DataSync, and a store keeps its backend")
struct ObjectBackendCommandTests {
    @Test("a store filled under App Context is refused under --objects datasync and PNREPLICATE_OBJECTS; an unknown backend is a usage error; nothing queued is lost")
    func storeKeepsItsBackend() async throws {
        let store = CLI.temporaryStore()
        let env = ["PUBNUB_USER_ID": "me", "PUBNUB_ORIGIN": "http://127.0.0.1:9", "PNREPLICATE_STORE": store, "SWIFT_BACKTRACE": "enable=no"]
        func send(_ text: String, _ more: [String] = [], _ variables: [String: String] = [:]) async throws -> CLI.Result {
            try await CLI.run(["send", "--channel", "general", "--text", text] + more, environment: env.merging(variables) { _, new in new })
        }
        let first = try await send("one")
        try #require(first.status == 0, "\(first.stderr)")
        let refused = try await send("two", ["--objects", "datasync"])
        #expect(refused.status != 0 && refused.stderr.contains("came from app-context"), "\(refused.stderr)")
        let byEnvironment = try await send("two", [], ["PNREPLICATE_OBJECTS": "datasync"])
        #expect(byEnvironment.status != 0 && byEnvironment.stderr.contains("configured for datasync"), "\(byEnvironment.stderr)")
        let unknown = try await send("two", ["--objects", "objects-v3"])
        #expect(unknown.status == 64 && unknown.stderr.contains("app-context or datasync"), "\(unknown.stderr)")
        let again = try await send("two", ["--objects", "app-context"])
        #expect(again.status == 0, "\(again.stderr)")
        let queued = try await CLI.run(["outbox", "list", "--json"], environment: env)
        let entries = try JSONSerialization.jsonObject(with: Data(queued.stdout.utf8)) as? [[String: Any]]
        #expect(queued.status == 0 && entries?.count == 2, "two sends queued, the refused ones not: \(queued.stdout)")
    }
}
