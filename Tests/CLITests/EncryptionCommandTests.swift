import Foundation
import Testing

/// `--cipher-key`: the dry run shows the ciphertext request, sync sends it, the store never
/// holds the key, and bad cryptor flags are usage errors.
@Suite("encryption on the command line", .serialized)
struct EncryptionCommandTests {
    @Test("send and --dry-run with --cipher-key: ciphertext on the wire, the key nowhere in the store", .timeLimit(.minutes(10)))
    func cipherKey() async throws {
        let simulator = try await SimulatorProcess(faults: "none", seed: 1)
        defer { simulator.stop() }
        let store = CLI.temporaryStore()
        let key = "cli cipher key 7f3a"
        let env = ["PUBNUB_USER_ID": "me", "PUBNUB_ORIGIN": simulator.origin, "PUBNUB_CIPHER_KEY": key, "SWIFT_BACKTRACE": "enable=no"]
        func run(_ arguments: [String]) async throws -> CLI.Result {
            try await offPool { try CLI.runBlocking(arguments, environment: env) }
        }
        #expect(try await run(["send", "--store", store, "--channel", "c", "--text", "top secret"]).status == 0)
        let plan = try await run(["--dry-run", "--store", store])
        #expect(plan.stdout.contains(#"body       "UE5FRAFBQ1JI"#) && plan.stdout.contains("encrypted  the payload, with aesCbc"), "\(plan.stdout)")
        #expect(!plan.stdout.contains("top secret") && !plan.stdout.contains(key))
        let sync = try await run(["sync", "--store", store, "--verbose"])
        #expect(sync.status == 0 && !sync.stdout.contains(key) && !sync.stderr.contains(key), "\(sync.stderr)")
        let history = try await run(["history", "--store", store, "--channel", "c", "--remote"])
        #expect(history.stdout.contains("top secret"), "decrypted from the server's history: \(history.stdout)")
        var bytes = Data()
        for file in [store, store + "-wal"] where FileManager.default.fileExists(atPath: file) {
            bytes.append(try Data(contentsOf: URL(fileURLWithPath: file)))
        }
        #expect(bytes.range(of: Data(key.utf8)) == nil)

        // Another device with the wrong key keeps the message marked; a sync with the right key reads it.
        let reader = CLI.temporaryStore()
        let wrong = env.merging(["PUBNUB_CIPHER_KEY": "not the key", "PUBNUB_USER_ID": "reader"]) { _, new in new }
        _ = try await offPool { try CLI.runBlocking(["member", "set", "--store", reader, "--channel", "c", "--status", "joined"], environment: wrong) }
        #expect(try await offPool { try CLI.runBlocking(["sync", "--store", reader], environment: wrong) }.status == 0)
        let marked = try await offPool { try CLI.runBlocking(["history", "--store", reader, "--channel", "c"], environment: wrong) }
        #expect(marked.stdout.contains("[undecryptable") && !marked.stdout.contains("top secret"), "\(marked.stdout)")
        let still = try await offPool { try CLI.runBlocking(["decrypt-pending", "--store", reader, "--json"], environment: wrong) }
        #expect(try CLI.json(still.stdout)["stillUndecryptable"] as? Int == 1, "\(still.stdout)\(still.stderr)")
        let right = wrong.merging(["PUBNUB_CIPHER_KEY": key]) { _, new in new }
        let resync = try await offPool { try CLI.runBlocking(["sync", "--store", reader], environment: right) }
        #expect(resync.stdout.contains(/decrypted +1 stored message, 0 still undecryptable/), "\(resync.stdout)\(resync.stderr)")
        let readable = try await offPool { try CLI.runBlocking(["history", "--store", reader, "--channel", "c"], environment: right) }
        #expect(readable.stdout.contains("top secret") && !readable.stdout.contains("[undecryptable"), "\(readable.stdout)")

        let bad = try await offPool { try CLI.runBlocking(["send", "--store", store, "--channel", "c", "--text", "x", "--static-iv"], environment: env) }
        #expect(bad.status != 0 && bad.stderr.contains("--static-iv applies to --legacy-cryptor"), "\(bad.stderr)")
    }
}
