import Foundation
import ReplicaModel
import ReplicaStore
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs the binary with a time limit and chosen standard streams: for commands that used to hang
/// or be killed, where `CLI.run` would wait forever or hide how the process ended.
struct BoundedRun {
    var reason: Termination.Reason
    var status: Int32
    var stdout: String
    var stderr: String
    /// Whether the time limit passed and the process was killed.
    var timedOut: Bool
    var seconds: Double

    /// An exit (not a signal) with status 1.
    var exitedWithOne: Bool { !timedOut && reason == .exit && status == 1 }

    /// Runs `executable` (the pnreplicate binary unless given) with `arguments`. `stderr` replaces
    /// the captured stderr pipe when given.
    static func run(
        _ arguments: [String], executable: URL = CLI.binary, stderr errorStream: ChildProcess.Stream? = nil,
        limit: Duration = .seconds(20)
    ) async throws -> BoundedRun {
        try await offPool { try runBlocking(arguments, executable: executable, stderr: errorStream, limit: limit) }
    }

    /// ``run(_:executable:stderr:limit:)`` for code already on a thread of its own (inside ``offPool(_:)``).
    @available(*, noasync, message: "blocks a thread of the cooperative pool: call it inside offPool")
    static func runBlocking(
        _ arguments: [String], executable: URL = CLI.binary, stderr errorStream: ChildProcess.Stream? = nil,
        limit: Duration = .seconds(20)
    ) throws -> BoundedRun {
        let clock = ContinuousClock()
        let start = clock.now
        let process = try ChildProcess(executable.path, arguments, stdout: .pipe, stderr: errorStream ?? .pipe)
        var ended = process.wait(timeout: limit)
        let timedOut = ended == nil
        if timedOut {
            // SIGKILL, not SIGTERM: a process that handles or ignores SIGTERM must not hang the test.
            process.signal(SIGKILL)
            ended = process.wait()
        }
        let elapsed = clock.now - start
        let termination = ended!
        let stdout = process.stdout
        let stderr = errorStream == nil ? process.stderr : ""
        return BoundedRun(
            reason: termination.reason, status: termination.status, stdout: stdout, stderr: stderr,
            timedOut: timedOut,
            seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
}

@Suite("pnreplicate survives an unwritable stderr")
struct StandardStreamTests {
    @Test("stderr a pipe nobody reads: a failing command exits 1 instead of dying of SIGPIPE")
    func stderrBrokenPipe() async throws {
        let broken = try ChildProcess.pipe()
        close(broken.read)
        defer { close(broken.write) }
        let result = try await BoundedRun.run(["status", "--store", CLI.temporaryStore()], stderr: .descriptor(broken.write))
        #expect(result.exitedWithOne, "\(result.reason) \(result.status)")
    }

    @Test("stderr closed (2>&-): a failing command exits 1 instead of trapping")
    func stderrClosed() async throws {
        let result = try await BoundedRun.run(
            ["-c", "exec \"$0\" \"$@\" 2>&-", CLI.binary.path, "status", "--store", CLI.temporaryStore()],
            executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(result.exitedWithOne, "\(result.reason) \(result.status): \(result.stderr)")
    }

    @Test("stderr closed: a command that succeeds still prints its result and exits 0")
    func stderrClosedSuccess() async throws {
        let store = CLI.temporaryStore()
        let result = try await BoundedRun.run(
            ["-c", "exec \"$0\" \"$@\" 2>&-", CLI.binary.path, "migrate", "--json", "--store", store],
            executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(!result.timedOut && result.reason == .exit && result.status == 0)
        #expect(try CLI.json(result.stdout)["schemaVersion"] as? String == "0019_app_data")
    }
}

@Suite("read-only commands never create, write or lock the store; odd store paths are refused")
struct StoreFileTests {
    static let readOnlyCommands: [[String]] = [
        ["status"], ["show", "users"], ["checkpoints"], ["conflicts", "list"], ["history", "--channel", "general"],
        ["--dry-run"],
    ]

    static func size(_ path: String) throws -> Int? {
        try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
    }

    @Test("status on a zero-byte file: exit 1, a clear message, the file still zero bytes")
    func statusOnEmptyFile() async throws {
        let store = CLI.temporaryStore()
        try #require(FileManager.default.createFile(atPath: store, contents: Data()))
        let result = try await CLI.run(["status", "--store", store])
        #expect(result.status == 1)
        #expect(result.stderr == "pnreplicate: \(store) is empty: no store was created in it yet (opening it to write creates one); it was left unchanged\n")
        #expect(try Self.size(store) == 0)
        #expect(!FileManager.default.fileExists(atPath: store + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: store + "-shm"))
    }

    @Test("every read-only command refuses a zero-byte file and leaves it untouched", arguments: readOnlyCommands)
    func readCommandsOnEmptyFile(command: [String]) async throws {
        let store = CLI.temporaryStore()
        try #require(FileManager.default.createFile(atPath: store, contents: Data()))
        let result = try await CLI.run(command + ["--store", store])
        #expect(result.status == 1, "\(result.stdout)")
        #expect(result.stderr.hasPrefix("pnreplicate: ") && result.stderr.contains(store))
        #expect(try Self.size(store) == 0)
        #expect(!FileManager.default.fileExists(atPath: store + "-wal"))
    }

    @Test("status on a file that is not SQLite: exit 1 naming the file, which is left as it was")
    func statusOnTextFile() async throws {
        let store = CLI.temporaryStore()
        let text = Data(String(repeating: "not a database\n", count: 100).utf8)
        try #require(FileManager.default.createFile(atPath: store, contents: text))
        let result = try await CLI.run(["status", "--store", store])
        #expect(result.status == 1)
        #expect(result.stderr.contains("cannot read \(store)") && result.stderr.contains("not a database"))
        #expect(FileManager.default.contents(atPath: store) == text)
    }

    @Test("status opens an out-of-date store read-only and reports its pending migration")
    func statusOnOldSchema() async throws {
        let store = CLI.temporaryStore()
        var options = StoreOptions()
        options.migrations = [try #require(try Migration.bundled().first)]
        _ = try ChatStore<DefaultChatCustom>.open(at: store, options: options)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let result = try await CLI.run(["status", "--json", "--store", store])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try CLI.json(result.stdout)
        #expect(json["schemaVersion"] as? String == "0001_initial")
        #expect(json["pendingMigrations"] as? [String] == ["0002_outbox", "0003_drop_unused_drafts", "0004_drafts", "0005_chat_semantics", "0006_integrity", "0007_files", "0008_access", "0009_moderation", "0010_conversations", "0011_file_integrity", "0012_object_backend", "0013_outbox_configuration", "0014_object_metadata", "0015_push_devices", "0016_search", "0017_retention", "0018_search_after_commit", "0019_app_data"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
    }

    @Test("status on an SQLite file of another program: not a pnreplicate store, left unchanged")
    func statusOnForeignDatabase() async throws {
        let store = CLI.temporaryStore()
        let sqlite = try ChildProcess(
            "/usr/bin/env",
            [
                "python3", "-c",
                "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('create table notes(text)'); c.commit()", store,
            ])
        try #require(await sqlite.ended().status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let result = try await CLI.run(["status", "--store", store])
        #expect(result.status == 1)
        #expect(result.stderr == "pnreplicate: \(store) is not a pnreplicate store (no pnreplicate schema in it); it was left unchanged\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
    }

    @Test("status on a store another connection is writing to answers at once, not after the 10 s busy wait")
    func statusDoesNotWaitForWriter() async throws {
        let store = CLI.temporaryStore()
        try #require(try await CLI.run(["demo", "--store", store]).status == 0)
        // The same command on the store unlocked: what a process's start and exit cost now (under
        // the whole suite on two cores, 12 s were seen), so the bound below is that plus a margin
        // well under the 10 s busy wait, not a fixed time.
        var unlocked: [String: Double] = [:]
        for command in [["status", "--json"], ["show", "users", "--json"], ["--dry-run"]] {
            unlocked[command.joined(separator: " ")] = try await BoundedRun.run(command + ["--store", store]).seconds
        }
        // A second process takes the write lock and holds it until its stdin closes.
        let holder = try ChildProcess(
            "/usr/bin/env",
            [
                "python3", "-c",
                """
                import sqlite3,sys
                c=sqlite3.connect(sys.argv[1], isolation_level=None)
                c.execute("BEGIN EXCLUSIVE")
                c.execute("DELETE FROM sync_checkpoints")
                print("locked", flush=True)
                sys.stdin.read()
                c.execute("ROLLBACK")
                """,
                store,
            ], stdin: .pipe, stdout: .pipe)
        // Closing its stdin ends the holder; the thread that watches it reaps it.
        defer { holder.closeStdin() }
        let announced = try await offPool { holder.stdout { $0.contains("locked") } }
        try #require(announced.contains("locked"), "the lock holder exited early")
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        for command in [["status", "--json"], ["show", "users", "--json"], ["--dry-run"]] {
            let result = try await BoundedRun.run(command + ["--store", store])
            #expect(!result.timedOut && result.status == 0, "\(command): \(result.stderr)")
            let baseline = unlocked[command.joined(separator: " ")] ?? 0
            #expect(result.seconds < baseline + 6, "\(command) took \(result.seconds) s, \(baseline) s unlocked")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
    }

    @Test("a FIFO as the store path: status, send and the other commands exit 1 at once", arguments: [
        ["status"], ["send", "--channel", "general", "--text", "hi"], ["migrate"], ["migrate", "--dry-run"],
        ["show", "users"], ["--dry-run"], ["sync", "--timeout", "1"],
    ])
    func fifoStorePath(command: [String]) async throws {
        let store = CLI.temporaryStore()
        try #require(mkfifo(store, 0o600) == 0)
        defer { unlink(store) }
        let result = try await BoundedRun.run(command + ["--store", store], limit: .seconds(15))
        #expect(result.exitedWithOne, "\(command): timed out \(result.timedOut), \(result.reason) \(result.status)")
        #expect(result.stderr == "pnreplicate: \(store) is a FIFO, not a store file; refusing to open it\n")
    }

    @Test("a directory as the store path is refused with a clear error")
    func directoryStorePath() async throws {
        let store = CLI.temporaryStore()
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
        let result = try await CLI.run(["status", "--store", store])
        #expect(result.status == 1)
        #expect(result.stderr == "pnreplicate: \(store) is a directory, not a store file; refusing to open it\n")
    }
}
