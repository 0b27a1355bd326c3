import Crypto
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `send --file`, `files list|get|delete`, `draft attach` through the CLI against `simulator
/// serve`, and the official Python SDK on the other side of each file, with each cryptor
/// (docs/files.md).
@Suite("files through the CLI and the official Python SDK")
struct FileCommandTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Compat/python_files_check.py")

    /// A file of `count` bytes that differ with `seed`, and its path.
    static func file(_ count: Int, seed: UInt8) throws -> (URL, Data) {
        let data = Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
        let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("pnr-file-\(UUID().uuidString).bin")
        try data.write(to: url)
        return (url, data)
    }

    static func sha256(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }

    /// The cipher arguments of the CLI and of the Python script for one mode.
    static func cipher(_ mode: String) -> (cli: [String], python: [String]) {
        switch mode {
        case "legacy": (["--cipher-key", "files-key", "--legacy-cryptor"], ["--cipher-key", "files-key", "--cryptor", "legacy"])
        case "acrh": (["--cipher-key", "files-key"], ["--cipher-key", "files-key", "--cryptor", "acrh"])
        default: ([], [])
        }
    }

    @Test("a file sent offline by the CLI is listed, downloaded byte-identical and deleted; the Python SDK downloads and decrypts it; a file the SDK uploads is read by the CLI",
          .enabled(if: OfficialSDK.isInstalled || OfficialSDK.isRequired, "the pubnub Python package is not installed"),
          arguments: ["none", "legacy", "acrh"])
    func bothWays(mode: String) async throws {
        try #require(OfficialSDK.isInstalled, "CI is set but the pubnub Python package is missing (.ci/run installs it)")
        let python = try #require(OfficialSDK.python)
        let simulator = try await SimulatorProcess(faults: "none", seed: 3)
        defer { simulator.stop() }
        let store = CLI.temporaryStore()
        let env = ["PUBNUB_USER_ID": "cli-user", "PUBNUB_ORIGIN": simulator.origin]
        let (cipherCLI, cipherPython) = Self.cipher(mode)
        let channel = "files-\(mode)"
        let (path, bytes) = try Self.file(70_000, seed: 7)

        // pnreplicate → the SDK: queued offline (nothing listens at this origin), then synced.
        let offline = ["PUBNUB_USER_ID": "cli-user", "PUBNUB_ORIGIN": "http://127.0.0.1:1"]
        let queued = try await offPool {
            try CLI.runBlocking(["send", "--store", store, "--channel", channel, "--file", path.path, "--text", "pic", "--json"] + cipherCLI, environment: offline)
        }
        try #require(queued.status == 0, "\(queued.stderr)")
        let sync = try await offPool { try CLI.runBlocking(["sync", "--store", store, "--channel", channel, "--json"] + cipherCLI, environment: env) }
        try #require(sync.status == 0, "\(sync.stdout)\(sync.stderr)")
        let listed = try await offPool { try CLI.runBlocking(["files", "list", "--store", store, "--channel", channel, "--json"], environment: env) }
        let files = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]] ?? []
        try #require(files.count == 1, "\(listed.stdout)\(listed.stderr)")
        let id = try #require(files[0]["id"] as? String)
        #expect(files[0]["name"] as? String == path.lastPathComponent)
        let out = NSTemporaryDirectory() + "pnr-get-\(UUID().uuidString)"
        let got = try await offPool {
            try CLI.runBlocking(["files", "get", "--store", store, "--channel", channel, "--id", id, "--output", out] + cipherCLI, environment: env)
        }
        try #require(got.status == 0, "\(got.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == bytes)
        let port = simulator.port
        let downloaded = try await offPool {
            try BoundedRun.runBlocking([Self.script.path, "127.0.0.1:\(port)", "--download", channel, id, path.lastPathComponent] + cipherPython,
                               executable: python, limit: .seconds(60))
        }
        #expect(downloaded.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == Self.sha256(bytes),
                "\(mode): the SDK read other bytes\n\(downloaded.stdout)\n\(downloaded.stderr)")

        // The SDK → pnreplicate: its file message, synced, then read through the CLI's cache.
        let (sdkPath, sdkBytes) = try Self.file(5000, seed: 99)
        let uploaded = try await offPool {
            try BoundedRun.runBlocking([Self.script.path, "127.0.0.1:\(port)", "--upload", channel, sdkPath.path, "--message", #"{"text":"from python"}"#] + cipherPython,
                               executable: python, limit: .seconds(60))
        }
        let answer = try JSONSerialization.jsonObject(with: Data(uploaded.stdout.utf8)) as? [String: Any]
        let sdkId = try #require(answer?["id"] as? String, "\(uploaded.stdout)\(uploaded.stderr)")
        let resync = try await offPool { try CLI.runBlocking(["sync", "--store", store, "--channel", channel] + cipherCLI, environment: env) }
        try #require(resync.status == 0, "\(resync.stderr)")
        // The name comes from the stored message: the file message was read with its file.
        let out2 = NSTemporaryDirectory() + "pnr-get-\(UUID().uuidString)"
        let got2 = try await offPool {
            try CLI.runBlocking(["files", "get", "--store", store, "--channel", channel, "--id", sdkId, "--output", out2] + cipherCLI, environment: env)
        }
        try #require(got2.status == 0, "\(mode): \(got2.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: out2)) == sdkBytes)

        // Deleting: the name looked up in the store.
        let deleted = try await offPool { try CLI.runBlocking(["files", "delete", "--store", store, "--channel", channel, "--id", id], environment: env) }
        #expect(deleted.status == 0, "\(deleted.stderr)")
        let after = try await offPool { try CLI.runBlocking(["files", "list", "--store", store, "--channel", channel, "--json"], environment: env) }
        let left = try JSONSerialization.jsonObject(with: Data(after.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(left.compactMap { $0["id"] as? String } == [sdkId])
    }

    @Test("draft attach then draft send: the Chat SDK's shape (a text message listing the files), each file uploaded once")
    func draftAttach() async throws {
        let simulator = try await SimulatorProcess(faults: "none", seed: 4)
        defer { simulator.stop() }
        let store = CLI.temporaryStore()
        let env = ["PUBNUB_USER_ID": "cli-user", "PUBNUB_ORIGIN": simulator.origin]
        let (a, _) = try Self.file(1000, seed: 1)
        let (b, _) = try Self.file(2000, seed: 2)
        for file in [a, b] {
            let attached = try await offPool { try CLI.runBlocking(["draft", "attach", "--store", store, "--channel", "room", "--file", file.path], environment: env) }
            try #require(attached.status == 0, "\(attached.stderr)")
        }
        let set = try await offPool { try CLI.runBlocking(["draft", "set", "--store", store, "--channel", "room", "--text", "two files"], environment: env) }
        try #require(set.status == 0, "\(set.stderr)")
        let detached = try await offPool { try CLI.runBlocking(["draft", "detach", "--store", store, "--channel", "room", "--name", b.lastPathComponent], environment: env) }
        try #require(detached.status == 0, "\(detached.stderr)")
        let sent = try await offPool { try CLI.runBlocking(["draft", "send", "--store", store, "--channel", "room"], environment: env) }
        try #require(sent.status == 0, "\(sent.stderr)")
        let sync = try await offPool { try CLI.runBlocking(["sync", "--store", store, "--channel", "room"], environment: env) }
        try #require(sync.status == 0, "\(sync.stderr)")
        let listed = try await offPool { try CLI.runBlocking(["files", "list", "--store", store, "--channel", "room", "--json"], environment: env) }
        let files = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(files.compactMap { $0["name"] as? String } == [a.lastPathComponent], "\(listed.stdout)")
        let history = try await offPool { try CLI.runBlocking(["history", "--store", store, "--channel", "room", "--json"], environment: env) }
        #expect(history.stdout.contains(a.lastPathComponent) && history.stdout.contains("two files"), "\(history.stdout)")
    }

    /// Rounds of kill-and-restart: 10 in `swift test`; `scripts/soak files-kill 200` for the long run.
    static var rounds: Int { Int(ProcessInfo.processInfo.environment["PNREPLICATE_KILL_ROUNDS"] ?? "") ?? 10 }

    @Test("a peer's file name with terminal escapes: files list and delete print it escaped (--json exact); '..' as --id, --name or a push device token is refused, nothing sent or queued",
          .enabled(if: OfficialSDK.isInstalled || OfficialSDK.isRequired, "the pubnub Python package is not installed"))
    func hostileNamesAndIds() async throws {
        try #require(OfficialSDK.isInstalled, "CI is set but the pubnub Python package is missing (.ci/run installs it)")
        let python = try #require(OfficialSDK.python)
        let simulator = try await SimulatorProcess(faults: "none", seed: 5)
        defer { simulator.stop() }
        let store = CLI.temporaryStore()
        let env = ["PUBNUB_USER_ID": "victim", "PUBNUB_ORIGIN": simulator.origin]
        // The peer (the official SDK, which sends any name) uploads a file whose name retitles
        // the terminal and clears it.
        let hostile = "pic\u{1B}]0;pwned\u{07}\u{1B}[2J.png"
        let folder = NSTemporaryDirectory() + "pnr-hostile-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/" + hostile
        try Data("peer".utf8).write(to: URL(fileURLWithPath: path))
        let port = simulator.port
        let uploaded = try await offPool {
            try BoundedRun.runBlocking([Self.script.path, "127.0.0.1:\(port)", "--upload", "lobby", path], executable: python, limit: .seconds(60))
        }
        let answer = try JSONSerialization.jsonObject(with: Data(uploaded.stdout.utf8)) as? [String: Any]
        let id = try #require(answer?["id"] as? String, "\(uploaded.stdout)\(uploaded.stderr)")

        let listed = try await offPool { try CLI.runBlocking(["files", "list", "--store", store, "--channel", "lobby"], environment: env) }
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(!listed.stdout.contains("\u{1B}") && !listed.stdout.contains("\u{07}"), "\(listed.stdout)")
        #expect(listed.stdout.contains("pic\\u{1b}]0;pwned\\u{7}\\u{1b}[2J.png") && listed.stdout.contains(id), "\(listed.stdout)")
        let json = try await offPool { try CLI.runBlocking(["files", "list", "--store", store, "--channel", "lobby", "--json"], environment: env) }
        let files = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(files.first?["name"] as? String == hostile)

        for flags in [["--id", ".."], ["--id", id, "--name", ".."], ["--id", "a/b"], ["--id", "x\u{1B}y"], ["--id", id, "--name", "a/b"]] {
            let refused = try await offPool { try CLI.runBlocking(["files", "get", "--store", store, "--channel", "lobby"] + flags, environment: env) }
            #expect(refused.status != 0 && !refused.stderr.contains("\u{1B}"), "\(flags): \(refused.stdout)\(refused.stderr)")
        }
        let deleted = try await offPool {
            try CLI.runBlocking(["files", "delete", "--store", store, "--channel", "lobby", "--id", id, "--name", hostile], environment: env)
        }
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(!deleted.stdout.contains("\u{1B}") && deleted.stdout.contains("\\u{1b}"), "\(deleted.stdout)")

        let push = try await offPool {
            try CLI.runBlocking(["push", "add", "--store", store, "--device-token", "..", "--type", "fcm", "--channel", "lobby", "--json"], environment: env)
        }
        #expect(push.status == 1 && push.stderr.contains("push device"), "\(push.stdout)\(push.stderr)")
        let outbox = try await offPool { try CLI.runBlocking(["outbox", "list", "--store", store, "--json"], environment: env) }
        let queued = try JSONSerialization.jsonObject(with: Data(outbox.stdout.utf8)) as? [Any]
        #expect(queued?.isEmpty == true, "\(outbox.stdout)\(outbox.stderr)")
    }

    @Test("sync killed at random moments during uploads and restarted: exactly one file message per sent file, no orphan left")
    func killDuringUploads() async throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["PNREPLICATE_KILL_SEED"] ?? "") ?? 11
        let simulator = try await SimulatorProcess(faults: "flaky", seed: seed)
        defer { simulator.stop() }
        let store = CLI.temporaryStore()
        let env = ["PUBNUB_USER_ID": "me", "PUBNUB_ORIGIN": simulator.origin]
        var sent = 0
        func queue() async throws {
            for i in 0..<3 {
                let (path, _) = try Self.file(200_000 + i * 1000, seed: UInt8(truncatingIfNeeded: sent))
                let queued = try await offPool {
                    try CLI.runBlocking(["send", "--store", store, "--channel", "uploads", "--file", path.path], environment: env)
                }
                try #require(queued.status == 0, "\(queued.stderr)")
                sent += 1
            }
        }
        try await queue()
        var random = SystemRandomNumberGenerator()
        for round in 0..<Self.rounds {
            let sync = try ChildProcess(
                CLI.binary.path, ["sync", "--store", store, "--timeout", "30"], environment: env, stdout: .nullDevice, stderr: .nullDevice)
            let pause = UInt32.random(in: 20_000...400_000, using: &random)
            let ended = try await offPool {
                usleep(pause)
                sync.signal(SIGKILL)
                return sync.wait()
            }
            #expect(ended.reason == .uncaughtSignal || ended.status == 0, "round \(round)")
            if round % 5 == 4 { try await queue() }
        }
        // The last sync runs to the end (the flaky network retried), then the orphans are gone.
        let last = try await offPool { try CLI.runBlocking(["sync", "--store", store, "--timeout", "120"], environment: env) }
        #expect(last.status == 0, "\(last.stdout)\(last.stderr)")
        // The reads go through the same flaky simulator: each is tried until it gets an answer.
        func read(_ arguments: [String]) async throws -> Any {
            var last = ""
            for _ in 0..<20 {
                let run = try await offPool { try CLI.runBlocking(arguments + ["--store", store, "--json"], environment: env) }
                if run.status == 0 { return try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) }
                last = run.stderr
            }
            Issue.record("\(arguments) failed 20 times: \(last)")
            return [Any]()
        }
        // History pages hold 100: older pages are read before the oldest timetoken seen.
        var entries: [[String: Any]] = [], start: String?
        while true {
            let page = try await read(["history", "--channel", "uploads", "--remote"] + (start.map { ["--start", $0] } ?? []))
            let messages = (page as? [String: Any])?["messages"] as? [[String: Any]] ?? []
            entries += messages
            let timetokens: [UInt64] = messages.compactMap { message in
                if let text = message["timetoken"] as? String { return UInt64(text) }
                return (message["timetoken"] as? NSNumber)?.uint64Value
            }
            guard messages.count == 100, let oldest = timetokens.min() else { break }
            start = String(oldest)
        }
        let ids = entries.compactMap { $0["id"] as? String }
        #expect(entries.count == sent && Set(ids).count == ids.count, "\(entries.count) file messages (\(Set(ids).count) ids) for \(sent) sent files")
        let files = try await read(["files", "list", "--channel", "uploads"]) as? [[String: Any]] ?? []
        #expect(files.count == sent, "\(files.count) files stored for \(sent) sent (orphans left?)")
    }
}
