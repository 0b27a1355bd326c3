import Foundation
import Testing

/// Runs the built `pnreplicate` binary, as a user would.
struct CLI {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static var binary: URL {
        // The test bundle lives in the same build folder as the executable.
        var directory = Bundle.main.bundleURL
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("pnreplicate").path),
            directory.path != "/"
        {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent("pnreplicate")
    }

    /// Runs the binary to its end without holding a thread of Swift's cooperative pool: a test
    /// that blocked one for a child's whole life starved every other test on a two-core machine
    /// (a 1 s transport deadline fired after 80 s in CI).
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> Result {
        try await offPool { try runBlocking(arguments, environment: environment) }
    }

    /// ``run(_:environment:)`` for code already on a thread of its own (inside ``offPool(_:)``).
    @available(*, noasync, message: "blocks a thread of the cooperative pool: call it inside offPool")
    static func runBlocking(_ arguments: [String], environment: [String: String] = [:]) throws -> Result {
        let process = try ChildProcess(binary.path, arguments, environment: environment, stdout: .pipe, stderr: .pipe)
        let termination = process.wait()
        return Result(status: termination.status, stdout: process.stdout, stderr: process.stderr)
    }

    static func temporaryStore() -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pnreplicate-cli-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("cli.sqlite").path
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }
}

@Suite("pnreplicate command line")
struct CLITests {
    @Test("migrate --dry-run on a new path lists pending migrations and creates no file")
    func dryRunCreatesNothing() async throws {
        let store = CLI.temporaryStore()
        let result = try await CLI.run(["migrate", "--dry-run", "--json", "--store", store])
        #expect(result.status == 0)
        let json = try CLI.json(result.stdout)
        #expect(json["pending"] as? [String] == ["0001_initial", "0002_outbox", "0003_drop_unused_drafts", "0004_drafts", "0005_chat_semantics", "0006_integrity", "0007_files", "0008_access", "0009_moderation", "0010_conversations", "0011_file_integrity", "0012_object_backend", "0013_outbox_configuration", "0014_object_metadata", "0015_push_devices", "0016_search", "0017_retention", "0018_search_after_commit", "0019_app_data"])
        #expect(json["dryRun"] as? Bool == true)
        #expect(FileManager.default.fileExists(atPath: store) == false)
    }

    @Test("migrate creates the store, a second migrate has nothing to do, status counts rows")
    func migrateThenStatus() async throws {
        let store = CLI.temporaryStore()
        let first = try CLI.json(try await CLI.run(["migrate", "--json", "--store", store]).stdout)
        #expect(first["performed"] as? [String] == ["0001_initial", "0002_outbox", "0003_drop_unused_drafts", "0004_drafts", "0005_chat_semantics", "0006_integrity", "0007_files", "0008_access", "0009_moderation", "0010_conversations", "0011_file_integrity", "0012_object_backend", "0013_outbox_configuration", "0014_object_metadata", "0015_push_devices", "0016_search", "0017_retention", "0018_search_after_commit", "0019_app_data"])
        let second = try CLI.json(try await CLI.run(["migrate", "--json", "--store", store]).stdout)
        #expect((second["performed"] as? [String])?.isEmpty == true)
        #expect(second["schemaVersion"] as? String == "0019_app_data")

        let status = try CLI.json(try await CLI.run(["status", "--json"], environment: ["PNREPLICATE_STORE": store]).stdout)
        #expect(status["schemaVersion"] as? String == "0019_app_data")
        #expect(status["pendingOutbox"] as? Int == 0)
        #expect((status["rowCounts"] as? [String: Int])?["messages"] == 0)
    }

    @Test("migrate --backup writes a copy next to the store when there is something to migrate")
    func backupFlag() async throws {
        let store = CLI.temporaryStore()
        let result = try await CLI.run(["migrate", "--backup", "--json", "--store", store])
        #expect(result.status == 0)
        let backup = try #require(try CLI.json(result.stdout)["backupPath"] as? String)
        #expect(backup.hasPrefix(store + ".backup-"))
        #expect(FileManager.default.fileExists(atPath: backup))
    }

    @Test("demo loads the seed's samples once; running it again writes nothing")
    func demoIsIdempotent() async throws {
        let store = CLI.temporaryStore()
        let first = try CLI.json(try await CLI.run(["demo", "--json", "--store", store]).stdout)
        #expect(first["sampleRowsWritten"] as? Int == 4)
        let second = try CLI.json(try await CLI.run(["demo", "--json", "--store", store]).stdout)
        #expect(second["sampleRowsWritten"] as? Int == 0)
        let counts = (second["status"] as? [String: Any])?["rowCounts"] as? [String: Int]
        #expect(counts?["users"] == 1 && counts?["channels"] == 1 && counts?["members"] == 1 && counts?["messages"] == 1)
    }

    @Test("--dry-run with --backup is refused rather than silently ignored")
    func dryRunWithBackup() async throws {
        let result = try await CLI.run(["migrate", "--dry-run", "--backup", "--store", CLI.temporaryStore()])
        #expect(result.status != 0 && result.stderr.contains("--backup does nothing with --dry-run"))
    }

    @Test("errors are one line on stderr with a non-zero exit")
    func errorsAreOneLine() async throws {
        let missing = CLI.temporaryStore()
        let result = try await CLI.run(["status", "--store", missing])
        #expect(result.status != 0)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "pnreplicate: no store at \(missing)\n")
    }

    @Test("a tampered store is refused with a clear error")
    func tamperedStoreRefused() async throws {
        let store = CLI.temporaryStore()
        _ = try await CLI.run(["migrate", "--store", store])
        let sqlite = try ChildProcess(
            "/usr/bin/env",
            [
                "python3", "-c",
                "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"update pnreplicate_migrations set checksum='0'\"); c.commit()",
                store,
            ])
        try #require(await sqlite.ended().status == 0)
        let result = try await CLI.run(["status", "--store", store])
        #expect(result.status != 0)
        #expect(result.stderr.contains("migration 0001_initial was changed after it was applied"))
        #expect(result.stderr.split(separator: "\n").count == 1)
    }
}
