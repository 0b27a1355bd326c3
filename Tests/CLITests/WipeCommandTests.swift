import Foundation
import Testing

/// `pnreplicate wipe` (docs/ios.md, "Signing out"): refused while ops are unsent, naming them;
/// with `--discard-unsent` nothing is left in the store's folder. No push device was registered,
/// so no request is made (an origin nobody listens on proves it).
@Suite("pnreplicate wipe")
struct WipeCommandTests {
    @Test("refused with an unsent message (exit 1, the op named), then --discard-unsent leaves the folder empty")
    func wipe() async throws {
        let store = CLI.temporaryStore()
        let folder = (store as NSString).deletingLastPathComponent
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let silent = try SilentPort()
        let env = ["PUBNUB_USER_ID": "me", "PUBNUB_PUBLISH_KEY": "pub", "PUBNUB_SUBSCRIBE_KEY": "sub", "PUBNUB_ORIGIN": "http://127.0.0.1:\(silent.port)"]
        let sent = try await CLI.run(["send", "--store", store, "--channel", "general", "--text", "hello", "--json"], environment: env)
        try #require(sent.status == 0, "\(sent.stderr)")
        let opId = try #require(try CLI.json(sent.stdout)["opId"] as? String)

        let refused = try await CLI.run(["wipe", "--store", store], environment: env)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains(opId) && refused.stderr.contains("--discard-unsent"), "\(refused.stderr)")
        #expect(FileManager.default.fileExists(atPath: store))

        let wiped = try await CLI.run(["wipe", "--store", store, "--discard-unsent", "--json"], environment: env)
        #expect(wiped.status == 0, "\(wiped.stderr)")
        let report = try CLI.json(wiped.stdout)
        #expect(report["discardedOps"] as? Int == 1 && report["pushDevicesRemoved"] as? Int == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == [])
        #expect(!silent.wasContacted)

        let missing = try await CLI.run(["wipe", "--store", store], environment: env)
        #expect(missing.status == 1 && missing.stderr.contains("no store at"), "\(missing.stderr)")
    }
}
