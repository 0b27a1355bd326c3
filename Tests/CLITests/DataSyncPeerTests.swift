import Foundation
import PubNubSimulator
import ReplicaModel
import ReplicaStore
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Another client of a DataSync keyset, `Tests/Compat/python_datasync_peer.py`: raw DataSync
/// requests written as the Kotlin SDK writes them (paths, vendor content types, JSON Patch with
/// `If-Match`, signed with the secret key), against `pnreplicate simulator serve --keyset-objects
/// datasync`, and `pnreplicate --objects datasync` beside it.
struct DataSyncPeer {
    static let script = OfficialSDK.script.deletingLastPathComponent().appendingPathComponent("python_datasync_peer.py")
    static let secretKey = "sec-c-datasync"

    let python: URL
    let host: String

    init(_ simulator: SimulatorProcess) throws {
        python = try #require(OfficialSDK.python, "no python3 on this machine")
        host = "127.0.0.1:\(simulator.port)"
    }

    /// Runs one peer command, up to `attempts` times until it exits 0 (a flaky simulator refuses
    /// some requests: only reads get more than one); the record it printed (nil for `null`).
    @discardableResult
    func run(_ arguments: [String], attempts: Int = 1) async throws -> [String: Any]? {
        let python = self.python
        let full = [Self.script.path, "--origin", host, "--secret-key", Self.secretKey] + arguments
        var failures: [String] = []
        for _ in 0..<attempts {
            let run = try await offPool { try BoundedRun.runBlocking(full, executable: python, limit: .seconds(60)) }
            if !run.timedOut, run.reason == .exit, run.status == 0 {
                return try JSONSerialization.jsonObject(with: Data(run.stdout.utf8), options: .fragmentsAllowed) as? [String: Any]
            }
            failures.append("\(run.stdout)\(run.stderr)")
        }
        Issue.record("peer \(arguments) failed \(attempts) time(s): \(failures)")
        return nil
    }

    /// A record's payload, read (up to 30 times on a flaky simulator).
    func payload(_ resource: String, _ id: String) async throws -> [String: Any]? {
        try await run(["get", resource, id], attempts: 30)?["payload"] as? [String: Any]
    }
}

@Suite("DataSync: a raw DataSync peer and pnreplicate converge through the simulator")
struct DataSyncPeerTests {
    @Test("the peer's creates and patches reach pnreplicate after a gap and live; pnreplicate's offline edits reach the peer as PATCHes that keep its keys",
          .timeLimit(.minutes(5)))
    func converge() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pnr-datasync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let tokenFile = directory.appendingPathComponent("token").path, requestLog = directory.appendingPathComponent("requests.log").path
        let simulator = try await SimulatorProcess(faults: "none", seed: 1, arguments: [
            "--secret-key", DataSyncPeer.secretKey, "--keyset-channels", "2", "--keyset-messages", "2", "--keyset-users", "3",
            "--keyset-objects", "datasync", "--member-token-file", tokenFile, "--subscribe-hold", "1", "--request-log", requestLog,
        ])
        defer { simulator.stop() }
        let peer = try DataSyncPeer(simulator)
        let token = try String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let attributes = try FileManager.default.attributesOfItem(atPath: tokenFile)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "the token file is the owner's only")
        let env = [
            "PUBNUB_USER_ID": "me", "PUBNUB_ORIGIN": simulator.origin, "PNREPLICATE_STORE": CLI.temporaryStore(),
            "PNREPLICATE_OBJECTS": "datasync", "PUBNUB_AUTH_TOKEN": token,
        ]
        func cli(_ arguments: [String], origin: String? = nil) async throws -> String {
            var variables = env
            if let origin { variables["PUBNUB_ORIGIN"] = origin }
            let result = try await CLI.run(arguments, environment: variables)
            try #require(result.status == 0, "pnreplicate \(arguments): \(result.stdout)\(result.stderr)")
            return result.stdout
        }
        func channelName(_ id: String) async throws -> String? {
            let channels = try JSONSerialization.jsonObject(with: Data(try await cli(["show", "channels", "--json"]).utf8)) as? [[String: Any]]
            return channels?.first { $0["id"] as? String == id }?["name"] as? String
        }

        // The seeded keyset arrives.
        _ = try await cli(["sync"])
        #expect(try await channelName("ch-0000") == "Channel 0")

        // While pnreplicate is away, the peer renames a channel, creates a user and its membership.
        try await peer.run(["patch", "channels", "ch-0000", "/payload/name", "\"Renamed by the peer\""])
        try await peer.run(["create", "users", "peer-1", "{\"name\": \"Peer One\"}"])
        try await peer.run(["create", "memberships", "m-peer-1", "{}", "--channel", "ch-0000", "--user", "peer-1", "--status", "joined"])
        _ = try await cli(["sync", "--channel", "ch-0000"])  // a channel's other members are listed for that channel
        #expect(try await channelName("ch-0000") == "Renamed by the peer")
        let members = try JSONSerialization.jsonObject(
            with: Data(try await cli(["show", "members", "--channel", "ch-0000", "--json"]).utf8)) as? [[String: Any]] ?? []
        #expect(members.contains { ($0["uuid"] as? [String: Any])?["id"] as? String == "peer-1" && $0["status"] as? String == "joined" }, "\(members)")

        // Live: a patch reaches a listening pnreplicate as an e:5 event on the channel's own id.
        let listen = try ChildProcess(
            CLI.binary.path, ["listen", "--channel", "ch-0000", "--json"], environment: env, stdout: .pipe, stderr: .pipe)
        defer { listen.signal(SIGKILL) }
        let isLive = "{\"state\":\"live\",\"type\":\"state\"}"
        let live = try await offPool { listen.stdout(when: { $0.contains(isLive) }, within: .seconds(60)) }
        try #require(live.contains(isLive), "\(live)")
        try await peer.run(["patch", "channels", "ch-0000", "/payload/name", "\"Renamed live\""])
        @Sendable func applied(_ text: String) -> Bool {
            text.split(separator: "\n").contains { $0.contains("\"channel-set\"") && $0.contains("ch-0000") && $0.contains("updated") }
        }
        let events = try await offPool { listen.stdout(when: applied, within: .seconds(60)) }
        #expect(applied(events), "\(events)")
        listen.terminate()
        _ = try await offPool { listen.wait() }
        #expect(try await channelName("ch-0000") == "Renamed live")

        // Offline edits: queued with no network, sent by the next sync as JSON Patches with If-Match.
        try await peer.run(["patch", "channels", "ch-0001", "/payload/peerOnly", "true"])
        _ = try await cli(["sync"])
        let offline = "http://127.0.0.1:9"
        _ = try await cli(["channel", "set", "--id", "ch-0001", "--name", "Named offline"], origin: offline)
        _ = try await cli(["user", "set", "--id", "me", "--name", "Me, offline"], origin: offline)
        let logged = try String(contentsOfFile: requestLog, encoding: .utf8).split(separator: "\n").count
        _ = try await cli(["sync"])
        let channel = try #require(try await peer.payload("channels", "ch-0001"))
        #expect(channel["name"] as? String == "Named offline" && channel["peerOnly"] as? Bool == true, "\(channel)")
        #expect(try await peer.payload("users", "me")?["name"] as? String == "Me, offline")
        let writes = try String(contentsOfFile: requestLog, encoding: .utf8).split(separator: "\n").dropFirst(logged)
            .filter { $0.contains("/v1/datasync/") && !$0.hasPrefix("GET ") }
        #expect(writes.contains { $0.hasPrefix("PATCH /v1/datasync/subkeys/demo/channels/ch-0001") }, "\(writes)")
        #expect(writes.contains { $0.hasPrefix("PATCH /v1/datasync/subkeys/demo/users/me") }, "\(writes)")
        #expect(writes.allSatisfy { $0.hasPrefix("PATCH ") }, "an edit is a JSON Patch, never a PUT or a create: \(writes)")
    }
}

@Suite("simulator serve: the DataSync flags")
struct SimulatorDataSyncFlagTests {
    @Test("--keyset-objects datasync and --member-token-file need --secret-key (DataSync needs Access Manager); an unknown backend is a usage error")
    func flagsNeedASecretKey() async throws {
        let tokenFile = FileManager.default.temporaryDirectory.appendingPathComponent("pnr-token-\(UUID().uuidString)").path
        for (arguments, message) in [
            (["--keyset-objects", "datasync"], "--keyset-objects datasync needs --secret-key"),
            (["--member-token-file", tokenFile], "--member-token-file needs --secret-key"),
            (["--keyset-objects", "objects-v3", "--secret-key", "s"], "--keyset-objects must be app-context or datasync"),
        ] {
            let result = try await CLI.run(["simulator", "serve", "--port", "0"] + arguments)
            #expect(result.status == 64 && result.stderr.contains(message), "\(arguments): \(result.status) \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: tokenFile), "nothing written before the flags were checked")
    }
}

@Suite("DataSync: the class options")
struct DataSyncClassOptionTests {
    @Test("--datasync-user-class names the class a new user is created in (the dry run shows it); a bad class or one without --objects datasync is a usage error")
    func userClass() async throws {
        let store = CLI.temporaryStore()
        let env = ["PUBNUB_USER_ID": "me", "PUBNUB_ORIGIN": "http://127.0.0.1:9", "PNREPLICATE_STORE": store, "PNREPLICATE_OBJECTS": "datasync"]
        let set = try await CLI.run(["user", "set", "--id", "newcomer", "--name", "New"], environment: env)
        #expect(set.status == 0, "\(set.stderr)")
        let plan = try await CLI.run(["--dry-run", "--datasync-user-class", "ChatUser:2:subkey"], environment: env)
        #expect(plan.status == 0 && plan.stdout.contains("POST /v1/datasync/subkeys/demo/users"), "\(plan.stdout)\(plan.stderr)")
        #expect(plan.stdout.contains(#""entityClass":"ChatUser""#) && plan.stdout.contains(#""entityClassVersion":2"#)
            && plan.stdout.contains(#""entityClassLevel":"SubKey""#), "\(plan.stdout)")
        let builtIn = try await CLI.run(["--dry-run"], environment: env)
        #expect(builtIn.stdout.contains(#""entityClassVersion":1"#) && !builtIn.stdout.contains("entityClass\""), "the built-in User names no class: \(builtIn.stdout)")
        for (arguments, message) in [
            (["--datasync-user-class", "Chat User"], "give NAME[:VERSION[:subkey|global]]"),
            (["--datasync-channel-class", "ChatChannel:0"], "give NAME[:VERSION[:subkey|global]]"),
            (["--datasync-membership-class", "ChatMembership:1:global"], "a membership class takes NAME[:VERSION], no level"),
            (["--datasync-membership-class", "ChatMembership:1:subkey"], "a membership class takes NAME[:VERSION], no level"),
            (["--datasync-user-class", "Chätuser"], "give NAME[:VERSION[:subkey|global]]"),
            (["--objects", "app-context", "--datasync-user-class", "ChatUser"], "need --objects datasync"),
        ] {
            let result = try await CLI.run(["--dry-run"] + arguments, environment: env)
            #expect(result.status == 64 && result.stderr.contains(message), "\(arguments): \(result.status) \(result.stderr)")
        }
    }
}

extension DataSyncClassOptionTests {
    @Test("a User subclass served with --datasync-class and named by --datasync-user-class: a new user is created in it with the subclass's time to live; a peer defines an entity class through the Admin API and creates a record of it; serve accepts --datasync-events-off for a class it has and refuses a bad class or an unknown one",
          .timeLimit(.minutes(5)))
    func subclassEndToEnd() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pnr-datasync-class-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let tokenFile = directory.appendingPathComponent("token").path
        let simulator = try await SimulatorProcess(faults: "none", seed: 1, arguments: [
            "--secret-key", DataSyncPeer.secretKey, "--keyset-channels", "1", "--keyset-messages", "0", "--keyset-users", "1",
            "--keyset-objects", "datasync", "--member-token-file", tokenFile, "--datasync-class", "ChatUser:1=User:31536000",
            "--datasync-events-off", "Channel",
        ])
        defer { simulator.stop() }
        let peer = try DataSyncPeer(simulator)
        let token = try String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let env = [
            "PUBNUB_USER_ID": "me", "PUBNUB_ORIGIN": simulator.origin, "PNREPLICATE_STORE": directory.appendingPathComponent("me.sqlite").path,
            "PNREPLICATE_OBJECTS": "datasync", "PUBNUB_AUTH_TOKEN": token, "PNREPLICATE_DATASYNC_USER_CLASS": "ChatUser",
        ]
        #expect(try await CLI.run(["user", "set", "--id", "kept-long", "--name", "Kept"], environment: env).status == 0)
        let sync = try await CLI.run(["sync"], environment: env)
        #expect(sync.status == 0, "\(sync.stdout)\(sync.stderr)")
        let record = try #require(try await peer.run(["get", "users", "kept-long"], attempts: 3))
        #expect(record["entityClass"] as? String == "ChatUser" && record["entityClassLevel"] as? String == "SubKey", "\(record)")
        let expires = try #require((record["expiresAt"] as? String).flatMap { try? ISOTimestamp(parsing: $0) })
        #expect(expires.date.timeIntervalSinceNow > 364 * 86_400, "a year, not 30 days: \(expires)")

        // A team's script defines an app's class through the Admin API (the secret key is the
        // admin key by default), then writes a record of it.
        let poll = try #require(try await peer.run(["define-class", "entity", "Poll", "1",
            #"{"config":{"ttlSec":86400},"properties":[{"name":"closed","path":"/payload/closed","valueKind":"boolean","filtering":"simple"}]}"#]))
        #expect(poll["name"] as? String == "Poll" && poll["level"] as? String == "SubKey" && (poll["config"] as? [String: Any])?["ttlSec"] as? Int == 86_400)
        #expect(((poll["properties"] as? [[String: Any]])?.first)?["valueKind"] as? String == "boolean", "\(poll)")
        let created = try #require(try await peer.run(["raw", "POST", "/v1/datasync/subkeys/demo/entities", "--body",
            #"{"data":{"id":"poll-1","entityClass":"Poll","entityClassVersion":1,"payload":{"closed":false}}}"#]))
        #expect((created["data"] as? [String: Any])?["entityClass"] as? String == "Poll", "\(created)")

        for (arguments, message) in [
            (["--datasync-class", "ChatUser=Person:10"], "give NAME[:VERSION]=EXTENDS:TTL-SECONDS"),
            (["--datasync-class", "ChatUser=User::10"], "give NAME[:VERSION]=EXTENDS:TTL-SECONDS"),
            (["--datasync-events-off", "Usr"], "--datasync-events-off Usr: no such class"),
        ] {
            let bad = try await CLI.run(["simulator", "serve", "--port", "0"] + arguments)
            #expect(bad.status == 64 && bad.stderr.contains(message), "\(arguments): \(bad.stderr)")
        }
    }
}

@Suite("DataSync: pnreplicate sync survives SIGKILL")
struct DataSyncKillTests {
    /// Rounds of kill-and-restart: 10 in `swift test`; `scripts/soak datasync-kill N`
    /// (`PNREPLICATE_KILL_ROUNDS`) for a long run.
    static var rounds: Int { max(2, Int(ProcessInfo.processInfo.environment["PNREPLICATE_KILL_ROUNDS"] ?? "") ?? 6) }
    static let channels = ["ch-0000", "ch-0001", "ch-0002"]

    @Test("object edits synced to DataSync through a flaky simulator, the sync killed at random moments: every object ends at its last edit, nothing left queued",
          .timeLimit(.minutes(10)))
    func killAndRestart() async throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["PNREPLICATE_KILL_SEED"] ?? "") ?? 7
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pnr-datasync-kill-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let tokenFile = directory.appendingPathComponent("token").path
        let simulator = try await SimulatorProcess(faults: "flaky", seed: seed, arguments: [
            "--secret-key", DataSyncPeer.secretKey, "--keyset-channels", "\(Self.channels.count)", "--keyset-messages", "0",
            "--keyset-users", "2", "--keyset-objects", "datasync", "--member-token-file", tokenFile,
        ])
        defer { simulator.stop() }
        let peer = try DataSyncPeer(simulator)
        let token = try String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let store = directory.appendingPathComponent("me.sqlite").path
        let env = [
            "PUBNUB_USER_ID": "me", "PUBNUB_ORIGIN": simulator.origin, "PNREPLICATE_STORE": store,
            "PNREPLICATE_OBJECTS": "datasync", "PUBNUB_AUTH_TOKEN": token,
        ]
        func run(_ arguments: [String]) async throws -> CLI.Result {
            try await offPool { try CLI.runBlocking(arguments, environment: env) }
        }
        func syncUntilDone() async throws {
            var result = try await run(["sync", "--timeout", "120"])
            for _ in 0..<5 where result.status != 0 { result = try await run(["sync", "--timeout", "120"]) }
            try #require(result.status == 0, "seed \(seed): \(result.stdout) \(result.stderr)")
        }
        try await syncUntilDone()

        var random = SystemRandomNumberGenerator()
        var killedWithWorkLeft = 0
        for round in 0..<Self.rounds {
            for channel in Self.channels {
                try #require(try await run(["channel", "set", "--id", channel, "--name", "\(channel) r\(round)"]).status == 0)
                try #require(try await run(["member", "set", "--channel", channel, "--status", "s\(round)"]).status == 0)
            }
            try #require(try await run(["user", "set", "--id", "me", "--name", "me r\(round)"]).status == 0)
            let sync = try ChildProcess(
                CLI.binary.path, ["sync", "--timeout", "30"], environment: env, stdout: .nullDevice, stderr: .nullDevice)
            // The kill moment is what is random here; nothing is asserted about timing.
            let pause = UInt32.random(in: 20_000...400_000, using: &random)
            let ended = try await offPool {
                usleep(pause)
                sync.signal(SIGKILL)
                return sync.wait()
            }
            #expect(ended.reason == .uncaughtSignal || ended.status == 0 || ended.status == 3, "round \(round): \(ended)")
            let plan = try await run(["--dry-run", "--json"])
            if (try CLI.json(plan.stdout)["ops"] as? [Any])?.isEmpty == false { killedWithWorkLeft += 1 }
        }
        #expect(killedWithWorkLeft >= Self.rounds / 2, "only \(killedWithWorkLeft) kills left work behind")
        try await syncUntilDone()

        let last = Self.rounds - 1
        let plan = try await run(["--dry-run", "--json"])
        #expect((try CLI.json(plan.stdout)["ops"] as? [Any])?.isEmpty == true, "nothing left queued: \(plan.stdout)")
        for channel in Self.channels {
            #expect(try await peer.payload("channels", channel)?["name"] as? String == "\(channel) r\(last)", "seed \(seed)")
            let membership = try await peer.run(["get", "memberships", ChatKeyset.dataSyncMembershipId(channel: channel, user: "me")], attempts: 30)
            #expect(membership?["status"] as? String == "s\(last)", "seed \(seed): \(channel) \(String(describing: membership))")
        }
        #expect(try await peer.payload("users", "me")?["name"] as? String == "me r\(last)", "seed \(seed)")
    }
}

@Suite("DataSync: pnreplicate listen survives SIGKILL")
struct DataSyncListenKillTests {
    /// Rounds of kill-and-restart: 10 in `swift test`; `scripts/soak datasync-listen-kill N`
    /// (`PNREPLICATE_LISTEN_KILL_ROUNDS`) for a long run.
    static var rounds: Int { max(2, Int(ProcessInfo.processInfo.environment["PNREPLICATE_LISTEN_KILL_ROUNDS"] ?? "") ?? 10) }
    static let channels = ["ch-0000", "ch-0001", "ch-0002"]

    /// The same seed and fault profiles as the App Context run (`ListenKillTests`).
    @Test("listen on DataSync killed at random moments while a raw DataSync peer keeps renaming channels, restarted on the same store: every channel ends at the peer's last name, live or through the gap fill",
          .timeLimit(.minutes(10)), arguments: ["none", "live"])
    func killAndRestart(faults: String) async throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["PNREPLICATE_LISTEN_KILL_SEED"] ?? "") ?? 11
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pnr-datasync-listen-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let tokenFile = directory.appendingPathComponent("token").path
        let simulator = try await SimulatorProcess(faults: faults, seed: seed, arguments: [
            "--secret-key", DataSyncPeer.secretKey, "--keyset-channels", "\(Self.channels.count)", "--keyset-messages", "0",
            "--keyset-users", "2", "--keyset-objects", "datasync", "--member-token-file", tokenFile, "--subscribe-hold", "1",
        ])
        defer { simulator.stop() }
        let peer = try DataSyncPeer(simulator)
        let token = try String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let store = directory.appendingPathComponent("me.sqlite").path
        let env = [
            "PUBNUB_USER_ID": "me", "PUBNUB_ORIGIN": simulator.origin, "PNREPLICATE_OBJECTS": "datasync", "PUBNUB_AUTH_TOKEN": token,
        ]
        let context = "seed \(seed), faults \(faults)"
        var random = SplitMix64(seed: seed)
        var last: [String: String] = [:]
        var renames = 0
        /// The peer renames a channel (the write is retried through faults: each goes once).
        func rename() async throws {
            let channel = Self.channels[Int.random(in: 0..<Self.channels.count, using: &random)]
            renames += 1
            let name = "\(channel) by the peer \(renames)"
            try #require(try await peer.run(["patch", "channels", channel, "/payload/name", "\"\(name)\""], attempts: 30) != nil, "\(context)")
            last[channel] = name
        }
        func listen() throws -> ListenProcess {
            let process = try ListenProcess(store: store, channel: Self.channels[0], environment: env)
            return process
        }
        let isLive: ([String: Any]) -> Bool = { $0["type"] as? String == "state" && $0["state"] as? String == "live" }

        var killedBeforeLive = 0, killedWhileLive = 0
        for round in 0..<Self.rounds {
            // Renamed while no listen runs: only the next run's gap fill (an object pull) can bring these.
            for _ in 0..<Int.random(in: 0...2, using: &random) { try await rename() }
            let running = try listen()
            let killAfter = Int.random(in: 1...6, using: &random)
            var lines: [[String: Any]] = []
            while lines.count < killAfter {
                let more = try await running.lines(moreThan: lines.count)
                guard more.count > lines.count else {
                    Issue.record("\(context), round \(round): listen printed nothing new after \(lines.count) lines: \(running.process.stderr)")
                    break
                }
                lines = more
                // One more rename per line read: changes keep coming while the listener connects, fills and dies.
                try await rename()
            }
            running.process.signal(SIGKILL)
            let process = running.process
            let ended = try await offPool { process.wait() }
            #expect(ended == Termination(reason: .uncaughtSignal, status: SIGKILL), "\(context), round \(round): \(running.process.stderr)")
            if lines.contains(where: isLive) { killedWhileLive += 1 } else { killedBeforeLive += 1 }
        }
        if Self.rounds >= 10 {
            #expect(killedBeforeLive > 0 && killedWhileLive > 0, "\(context): \(killedBeforeLive) kills before live, \(killedWhileLive) while live")
        }

        // The last run: renames while nothing listens, then one while it is live.
        try await rename()
        let final = try listen()
        var lines: [[String: Any]] = []
        while !lines.contains(where: isLive) {
            let more = try await final.lines(moreThan: lines.count)
            try #require(more.count > lines.count, "\(context): the last listen never went live: \(final.process.stderr)")
            lines = more
        }
        try await rename()
        func storedNames() throws -> [String: String] {
            var options = StoreOptions()
            options.readOnly = true
            let chat = try ChatStore<DefaultChatCustom>.open(at: store, options: options)
            var names: [String: String] = [:]
            for channel in Self.channels { names[channel] = try chat.fetchNow(chat.queries.channel(id: channel))?.name }
            return names
        }
        // Converged once every renamed channel holds the peer's last name (checked after each
        // line: the last rename may come as an event, or with faults through a fill).
        while try storedNames().filter({ last[$0.key] != nil }) != last {
            let more = try await final.lines(moreThan: lines.count)
            let stored = try storedNames()
            try #require(more.count > lines.count, "\(context): the last listen stopped short: \(stored) against \(last): \(final.process.stderr)")
            lines = more
        }
        final.process.terminate()
        let ended = await final.process.wait(until: .now + .seconds(30))
        #expect(ended == Termination(reason: .exit, status: 0), "\(context): listen on SIGTERM: \(final.process.stderr)")
        for (channel, name) in last {
            #expect(try await peer.payload("channels", channel)?["name"] as? String == name, "\(context): the server holds the peer's last name")
        }
        #expect(!FileManager.default.fileExists(atPath: store + "-wal"), "\(context): \(store)-wal is left after SIGTERM")
    }
}

@Suite("The app's own DataSync classes through the command line")
struct AppDataCommandTests {
    @Test("a peer defines Poll through the Admin API and writes polls; sync --app-classes pulls them; entity list and get show them, filtered and as JSON; a bad classes file is a usage error",
          .timeLimit(.minutes(5)))
    func pullAndList() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pnr-app-data-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let tokenFile = directory.appendingPathComponent("token").path
        let simulator = try await SimulatorProcess(faults: "none", seed: 1, arguments: [
            "--secret-key", DataSyncPeer.secretKey, "--keyset-channels", "1", "--keyset-messages", "0", "--keyset-users", "1",
            "--member-token-file", tokenFile,
        ])
        defer { simulator.stop() }
        let peer = try DataSyncPeer(simulator)
        try #require(try await peer.run(["define-class", "entity", "Poll", "1",
            #"{"properties":[{"name":"closed","path":"/payload/closed","valueKind":"boolean","filtering":"simple"},{"name":"question","path":"/payload/question","valueKind":"string","filtering":"simple"}]}"#]) != nil)
        for (id, closed) in [("poll.1", false), ("poll.2", true)] {
            try #require(try await peer.run(["raw", "POST", "/v1/datasync/subkeys/demo/entities", "--body",
                #"{"data":{"id":"\#(id)","entityClass":"Poll","entityClassVersion":1,"payload":{"closed":\#(closed),"question":"Q \#(id)"}}}"#]) != nil)
        }
        let classes = directory.appendingPathComponent("classes.json").path
        try #"[{"entity":"Poll","properties":{"closed":"boolean","question":"string"},"wildcard":"poll"}]"#
            .write(toFile: classes, atomically: true, encoding: .utf8)
        let token = try String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let env = [
            "PUBNUB_USER_ID": "me", "PUBNUB_ORIGIN": simulator.origin, "PNREPLICATE_STORE": directory.appendingPathComponent("me.sqlite").path,
            "PUBNUB_AUTH_TOKEN": token, "PNREPLICATE_APP_CLASSES": classes,
        ]
        let sync = try await CLI.run(["sync"], environment: env)
        #expect(sync.status == 0, "\(sync.stdout)\(sync.stderr)")
        let list = try await CLI.run(["entity", "list", "--class", "Poll", "--where", "closed=false", "--json"], environment: env)
        #expect(list.status == 0, "\(list.stderr)")
        let rows = try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]]
        #expect(rows?.map { $0["id"] as? String } == ["poll.1"], "\(list.stdout)")
        #expect((rows?.first?["payload"] as? [String: Any])?["question"] as? String == "Q poll.1")
        let table = try await CLI.run(["entity", "list", "--class", "Poll", "--sort", "question:desc"], environment: env)
        #expect(table.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: " ").first.map(String.init) } == ["poll.2", "poll.1"],
                "\(table.stdout)")
        let get = try await CLI.run(["entity", "get", "poll.2"], environment: env)
        let record = try JSONSerialization.jsonObject(with: Data(get.stdout.utf8)) as? [String: Any]
        #expect(record?["className"] as? String == "Poll" && record?["eTag"] is String && record?["expiresAt"] is String, "\(get.stdout)")
        let missing = try await CLI.run(["entity", "get", "poll.9"], environment: env)
        #expect(missing.status != 0 && missing.stderr.contains("no entity poll.9"), "\(missing.stderr)")
        let undeclared = try await CLI.run(["entity", "list", "--class", "Ticket"], environment: env)
        #expect(undeclared.status != 0 && undeclared.stderr.contains("Ticket is not declared"), "\(undeclared.stderr)")

        // A write's dry run: checked as the write would be, its exact request shown, nothing kept.
        let eTag = try #require(record?["eTag"] as? String)
        let rehearsed = try await CLI.run(
            ["entity", "patch", "--class", "Poll", "--id", "poll.2", "--set", "closed=false", "--dry-run", "--json"], environment: env)
        #expect(rehearsed.status == 0, "\(rehearsed.stdout)\(rehearsed.stderr)")
        let rehearsal = try JSONSerialization.jsonObject(with: Data(rehearsed.stdout.utf8)) as? [String: Any]
        let rehearsedOps = rehearsal?["ops"] as? [[String: Any]] ?? []
        let rehearsedRequest = rehearsedOps.first?["request"] as? [String: Any]
        #expect(rehearsedOps.count == 1 && rehearsedOps.first?["kind"] as? String == "setAppRecord", "\(rehearsed.stdout)")
        #expect(rehearsedRequest?["method"] as? String == "PATCH" && rehearsedRequest?["path"] as? String == "/v1/datasync/subkeys/demo/entities/poll.2",
                "\(rehearsed.stdout)")
        #expect(rehearsedRequest?["body"] as? String == #"[{"op":"add","path":"/payload/closed","value":false}]"#, "\(rehearsed.stdout)")
        #expect(rehearsedRequest?["ifMatch"] as? String == eTag, "\(rehearsed.stdout)")
        let rehearsedCreate = try await CLI.run(
            ["entity", "create", "--class", "Poll", "--id", "poll.4", "--payload", #"{"closed":true,"question":"Q poll.4"}"#, "--dry-run"],
            environment: env)
        #expect(rehearsedCreate.status == 0 && rehearsedCreate.stdout.hasPrefix("dry run: nothing stored, nothing sent\n"), "\(rehearsedCreate.stdout)")
        #expect(rehearsedCreate.stdout.contains("POST /v1/datasync/subkeys/demo/entities"), "\(rehearsedCreate.stdout)")
        #expect(rehearsedCreate.stdout.contains("not kept (would be enqueued)"), "\(rehearsedCreate.stdout)")
        let rehearsedWrong = try await CLI.run(
            ["entity", "patch", "--class", "Poll", "--id", "poll.2", "--set", "closed=\"no\"", "--dry-run"], environment: env)
        #expect(rehearsedWrong.status != 0 && rehearsedWrong.stderr.contains("Poll.closed must be a boolean"), "\(rehearsedWrong.stderr)")
        let nothingKept = try await CLI.run(["sync", "--dry-run"], environment: env)
        #expect(nothingKept.stdout.hasPrefix("dry run: 0 ops in the outbox"), "\(nothingKept.stdout)")
        let unchanged = try await CLI.run(["entity", "get", "poll.2"], environment: env)
        let stored = try JSONSerialization.jsonObject(with: Data(unchanged.stdout.utf8)) as? [String: Any]
        #expect((stored?["payload"] as? [String: Any])?["closed"] as? Bool == true && stored?["eTag"] as? String == eTag, "\(unchanged.stdout)")
        let noPoll4 = try await CLI.run(["entity", "get", "poll.4"], environment: env)
        #expect(noPoll4.status != 0, "\(noPoll4.stdout)")

        // Written offline: a patch queued, its exact JSON Patch shown by the dry run, sent by sync.
        let patch = try await CLI.run(["entity", "patch", "--class", "Poll", "--id", "poll.1", "--set", "closed=true"], environment: env)
        #expect(patch.status == 0 && patch.stdout.contains("enqueued"), "\(patch.stdout)\(patch.stderr)")
        let created = try await CLI.run(
            ["entity", "create", "--class", "Poll", "--id", "poll.3", "--payload", #"{"closed":false,"question":"Q poll.3"}"#, "--json"],
            environment: env)
        #expect(created.status == 0, "\(created.stderr)")
        let wrong = try await CLI.run(["entity", "patch", "--class", "Poll", "--id", "poll.2", "--set", "closed=\"no\""], environment: env)
        #expect(wrong.status != 0 && wrong.stderr.contains("Poll.closed must be a boolean"), "\(wrong.status) \(wrong.stderr)")
        let plan = try await CLI.run(["sync", "--dry-run"], environment: env)
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("PATCH") && plan.stdout.contains(#"[{"op":"add","path":"/payload/closed","value":true}]"#), "\(plan.stdout)")
        #expect(plan.stdout.contains("If-Match"), "\(plan.stdout)")
        let pushed = try await CLI.run(["sync"], environment: env)
        #expect(pushed.status == 0, "\(pushed.stdout)\(pushed.stderr)")
        let server = try await peer.run(["raw", "GET", "/v1/datasync/subkeys/demo/entities/poll.1"])
        let body = server?["body"] as? [String: Any] ?? server
        #expect(((body?["data"] as? [String: Any])?["payload"] as? [String: Any])?["closed"] as? Bool == true, "\(String(describing: server))")
        let shown = try await CLI.run(["entity", "list", "--class", "Poll", "--where", "closed=false", "--json"], environment: env)
        #expect((try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [[String: Any]])?.map { $0["id"] as? String } == ["poll.3"])
        let deleted = try await CLI.run(["entity", "delete", "--class", "Poll", "--id", "poll.3"], environment: env)
        #expect(deleted.status == 0, "\(deleted.stderr)")

        try #"[{"entity":"User"}]"#.write(toFile: classes, atomically: true, encoding: .utf8)
        let refused = try await CLI.run(["sync"], environment: env)
        #expect(refused.status == 64 && refused.stderr.contains("built-in class"), "\(refused.status) \(refused.stderr)")
    }
}

@Suite("App data: pnreplicate sync survives SIGKILL")
struct AppDataKillTests {
    /// Rounds of kill-and-restart: 6 in `swift test`; `scripts/soak app-data-kill N`
    /// (`PNREPLICATE_KILL_ROUNDS`) for a long run.
    static var rounds: Int { max(2, Int(ProcessInfo.processInfo.environment["PNREPLICATE_KILL_ROUNDS"] ?? "") ?? 6) }

    @Test("records of an app's own classes created, patched and linked offline, synced through a flaky simulator killed at random moments: each record once, at its last edit, no conflict, nothing left queued",
          .timeLimit(.minutes(10)))
    func killAndRestart() async throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["PNREPLICATE_KILL_SEED"] ?? "") ?? 7
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pnr-app-kill-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let tokenFile = directory.appendingPathComponent("token").path
        let simulator = try await SimulatorProcess(faults: "flaky", seed: seed, arguments: [
            "--secret-key", DataSyncPeer.secretKey, "--keyset-channels", "1", "--keyset-messages", "0", "--keyset-users", "1",
            "--member-token-file", tokenFile,
        ])
        defer { simulator.stop() }
        let peer = try DataSyncPeer(simulator)
        try #require(try await peer.run(["define-class", "entity", "Poll", "1",
            #"{"properties":[{"name":"closed","path":"/payload/closed","valueKind":"boolean","filtering":"simple"},{"name":"votes","path":"/payload/votes","valueKind":"number","filtering":"simple"}]}"#,
            "--exists-ok"], attempts: 30) != nil)
        try #require(try await peer.run(["define-class", "entity", "Person", "1", "{}", "--exists-ok"], attempts: 30) != nil)
        try #require(try await peer.run(
            ["define-class", "relationship", "Vote", "1", #"{"entityAClass":"Poll","entityBClass":"Person"}"#, "--exists-ok"], attempts: 30) != nil)
        let classes = directory.appendingPathComponent("classes.json").path
        try #"[{"entity":"Poll","properties":{"closed":"boolean","votes":"number"},"wildcard":"poll"},{"entity":"Person"},{"relationship":"Vote","from":"Poll","to":"Person"}]"#
            .write(toFile: classes, atomically: true, encoding: .utf8)
        let token = try String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let env = [
            "PUBNUB_USER_ID": "me", "PUBNUB_ORIGIN": simulator.origin, "PNREPLICATE_STORE": directory.appendingPathComponent("me.sqlite").path,
            "PUBNUB_AUTH_TOKEN": token, "PNREPLICATE_APP_CLASSES": classes,
        ]
        func run(_ arguments: [String]) async throws -> CLI.Result {
            try await offPool { try CLI.runBlocking(arguments, environment: env) }
        }
        func queue(_ arguments: [String]) async throws {
            let result = try await run(arguments)
            try #require(result.status == 0, "seed \(seed): \(arguments): \(result.stderr)")
        }
        func syncUntilDone() async throws {
            var result = try await run(["sync", "--timeout", "120"])
            for _ in 0..<5 where result.status != 0 { result = try await run(["sync", "--timeout", "120"]) }
            try #require(result.status == 0, "seed \(seed): \(result.stdout) \(result.stderr)")
        }
        try await queue(["entity", "create", "--class", "Person", "--id", "voter"])
        try await queue(["entity", "create", "--class", "Poll", "--id", "poll.0", "--payload", #"{"closed":false,"votes":0}"#])
        try await syncUntilDone()

        var random = SystemRandomNumberGenerator()
        var killedWithWorkLeft = 0
        for round in 1...Self.rounds {
            try await queue(["entity", "create", "--class", "Poll", "--id", "poll.r\(round)", "--payload", #"{"closed":false,"votes":\#(round)}"#])
            try await queue(["relationship", "create", "--class", "Vote", "--id", "vote.r\(round)", "--a", "poll.r\(round)", "--b", "voter"])
            try await queue(["entity", "patch", "--class", "Poll", "--id", "poll.0", "--set", "votes=\(round)"])
            if round > 1 { try await queue(["entity", "patch", "--class", "Poll", "--id", "poll.r\(round - 1)", "--set", "closed=true"]) }
            let sync = try ChildProcess(
                CLI.binary.path, ["sync", "--timeout", "30"], environment: env, stdout: .nullDevice, stderr: .nullDevice)
            // The kill moment is what is random here; nothing is asserted about timing.
            let pause = UInt32.random(in: 20_000...400_000, using: &random)
            let ended = try await offPool {
                usleep(pause)
                sync.signal(SIGKILL)
                return sync.wait()
            }
            #expect(ended.reason == .uncaughtSignal || ended.status == 0 || ended.status == 3, "round \(round): \(ended)")
            let plan = try await run(["--dry-run", "--json"])
            if (try CLI.json(plan.stdout)["ops"] as? [Any])?.isEmpty == false { killedWithWorkLeft += 1 }
        }
        #expect(killedWithWorkLeft >= Self.rounds / 2, "only \(killedWithWorkLeft) kills left work behind")
        try await syncUntilDone()

        let plan = try await run(["--dry-run", "--json"])
        #expect((try CLI.json(plan.stdout)["ops"] as? [Any])?.isEmpty == true, "nothing left queued: \(plan.stdout)")
        let conflicts = try await run(["conflicts", "list", "--json"])
        #expect((try JSONSerialization.jsonObject(with: Data(conflicts.stdout.utf8)) as? [Any])?.isEmpty == true,
                "no create met itself: \(conflicts.stdout)")
        func listed(_ resource: String, _ query: String) async throws -> [[String: Any]] {
            let page = try await peer.run(
                ["raw", "GET", "/v1/datasync/subkeys/demo/\(resource)", "--query", query, "--query", "limit=100"], attempts: 30)
            return (page?["data"] as? [[String: Any]]) ?? []
        }
        let polls = try await listed("entities", "entity_class=Poll")
        #expect(Set(polls.compactMap { $0["id"] as? String }) == Set(["poll.0"] + (1...Self.rounds).map { "poll.r\($0)" }), "seed \(seed)")
        #expect(polls.count == Self.rounds + 1, "each poll once")
        let payloads = Dictionary(polls.compactMap { row in (row["id"] as? String).map { ($0, row["payload"] as? [String: Any] ?? [:]) } }) { a, _ in a }
        #expect(payloads["poll.0"]?["votes"] as? Int == Self.rounds, "poll.0 at its last edit: \(String(describing: payloads["poll.0"]))")
        for round in 1..<Self.rounds {
            #expect(payloads["poll.r\(round)"]?["closed"] as? Bool == true, "seed \(seed): poll.r\(round) closed")
        }
        let votes = try await listed("relationships", "relationship_class=Vote")
        #expect(votes.count == Self.rounds && Set(votes.compactMap { $0["entityAId"] as? String }).count == Self.rounds, "each vote once: \(votes.count)")
        // What the store shows is what the server holds.
        let shown = try await run(["entity", "list", "--class", "Poll", "--json", "--limit", "1000"])
        let rows = (try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [[String: Any]]) ?? []
        #expect(Set(rows.compactMap { $0["id"] as? String }) == Set(payloads.keys), "\(shown.stdout)")
    }
}
