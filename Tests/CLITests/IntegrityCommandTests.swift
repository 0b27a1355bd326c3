import Foundation
import ReplicaModel
import ReplicaStore
import Testing

/// The command-line findings of the integrity probe: an empty cipher key, mention targets, an
/// overflowing length, terminal escapes in other users' text, stores created at mistyped paths,
/// read positions in the future.
@Suite("pnreplicate refuses what would falsify or lose data")
struct IntegrityCommandTests {
    static let offline = ["--origin", "http://127.0.0.1:9", "--publish-key", "demo", "--subscribe-key", "demo", "--user-id", "me"]

    @Test("--cipher-key \"\" (an unset variable) is refused instead of sending plaintext; so is an empty PUBNUB_CIPHER_KEY")
    func emptyCipherKey() async throws {
        let store = CLI.temporaryStore()
        let flag = try await offPool {
            try CLI.runBlocking(["send", "--store", store, "--channel", "c", "--text", "secret", "--cipher-key", ""] + Self.offline)
        }
        #expect(flag.status == 1 && flag.stderr.contains("--cipher-key is empty"), "\(flag.stderr)")
        let variable = try await offPool {
            try CLI.runBlocking(["send", "--store", store, "--channel", "c", "--text", "secret"] + Self.offline,
                        environment: ["PUBNUB_CIPHER_KEY": ""])
        }
        #expect(variable.status == 1 && variable.stderr.contains("PUBNUB_CIPHER_KEY is set but empty"), "\(variable.stderr)")
        if FileManager.default.fileExists(atPath: store) {
            let chat = try ChatStore<DefaultChatCustom>.open(at: store)
            #expect(try await chat.fetch(chat.queries.messages(inChannel: "c")).isEmpty, "nothing was queued")
        }
    }

    @Test("draft mention refuses user and channel ids that are no ids, and a length that overflows, with exit 1")
    func mentionTargets() async throws {
        let store = CLI.temporaryStore()
        let set = try await offPool { try CLI.runBlocking(["draft", "set", "--store", store, "--channel", "c", "--text", "Hi Alice and all"]) }
        try #require(set.status == 0, "\(set.stderr)")
        for (flag, target) in [("--user", ".."), ("--user", "."), ("--user", ""), ("--user", "a,b"), ("--to-channel", "x/y")] {
            let result = try await offPool {
                try CLI.runBlocking(["draft", "mention", "--store", store, "--channel", "c", "--offset", "3", "--length", "5", flag, target])
            }
            #expect(result.status == 1 && result.stderr.contains("cannot mention"), "\(flag) \(target): \(result.stderr)")
        }
        let huge = try await offPool {
            try CLI.runBlocking(["draft", "mention", "--store", store, "--channel", "c", "--offset", "3", "--length", "9223372036854775807",
                         "--user", "alice"])
        }
        #expect(huge.status == 1 && huge.stderr.contains("outside the text"), "exit \(huge.status): \(huge.stderr)")
        let shown = try await offPool { try CLI.runBlocking(["draft", "show", "--store", store, "--channel", "c", "--json"]) }
        #expect(!shown.stdout.contains("pn-user"), "no mention was added: \(shown.stdout)")
    }

    @Test("show and history escape other users' control characters on a terminal; --json keeps them exact")
    func terminalEscapes() async throws {
        let store = CLI.temporaryStore()
        let hostile = "hi\u{1B}]0;pwned\u{07}\u{1B}[2J\u{202E}evil"
        do {
            let chat = try ChatStore<DefaultChatCustom>.open(at: store)
            try await chat.load(messages: [
                try ChatMessage(id: "m1", text: hostile, createdAt: ISOTimestamp(date: Date(timeIntervalSince1970: 1_700_000_000)),
                                timetoken: 17_000_000_000_000_000, userId: "mallory", channelId: "c"),
            ])
        }
        for command in [["show", "messages", "--channel", "c"], ["history", "--channel", "c"]] {
            let result = try await offPool { try CLI.runBlocking(command + ["--store", store]) }
            #expect(result.status == 0, "\(command): \(result.stderr)")
            #expect(!result.stdout.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{07}" || $0 == "\u{202E}" },
                    "\(command) printed raw control characters")
            #expect(result.stdout.contains("\\u{1b}]0;pwned\\u{7}"), "\(command): \(result.stdout)")
        }
        let json = try await offPool { try CLI.runBlocking(["show", "messages", "--channel", "c", "--store", store, "--json"]) }
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(rows.first?["text"] as? String == hostile, "JSON stays exact")
    }

    @Test("edit, delete, pin, read, decrypt-pending and draft clear at a mistyped path create no store", arguments: [
        ["edit", "--message", "m1", "--text", "x"], ["delete", "--message", "m1"], ["pin", "--message", "m1"],
        ["read", "--channel", "c"], ["decrypt-pending", "--cipher-key", "k"], ["draft", "clear", "--channel", "c"],
    ])
    func mistypedPath(command: [String]) async throws {
        let store = CLI.temporaryStore() + "-typo.sqlite"
        let result = try await offPool { try CLI.runBlocking(command + ["--store", store] + (command[0] == "draft" ? [] : Self.offline)) }
        #expect(result.status == 1 && result.stderr.contains("no store at"), "\(command): \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: store), "\(command) created \(store)")
    }

    @Test("read --up-to far in the future is refused; nothing is queued")
    func futureReadPosition() async throws {
        let store = CLI.temporaryStore()
        let demo = try await offPool { try CLI.runBlocking(["demo", "--store", store]) }
        try #require(demo.status == 0, "\(demo.stderr)")
        let result = try await offPool {
            try CLI.runBlocking(["read", "--store", store, "--channel", "some-channel-id", "--up-to", "18446744073709551615"]
                        + ["--origin", "http://127.0.0.1:9", "--user-id", "some-user-id"])
        }
        #expect(result.status == 1 && result.stderr.contains("in the future"), "\(result.stderr)")
        let chat = try ChatStore<DefaultChatCustom>.open(at: store)
        #expect(try await chat.fetch(chat.queries.outbox()).isEmpty)
    }
}

@Suite("pnreplicate listen ends when its reader goes away", .serialized)
struct ListenReaderTests {
    @Test("listen | head -2 exits once head has its two lines and more events come", .timeLimit(.minutes(10)))
    func headEndsListen() async throws {
        let simulator = try await SimulatorProcess(faults: "none", seed: 3, arguments: ["--subscribe-hold", "1"])
        defer { simulator.stop() }
        let env = ["PUBNUB_USER_ID": "listener", "PUBNUB_ORIGIN": simulator.origin, "SWIFT_BACKTRACE": "enable=no"]
        let store = CLI.temporaryStore()
        let pipeline = try ChildProcess(
            "/bin/sh", ["-c", "'\(CLI.binary.path)' listen --store '\(store)' --channel c | head -2"],
            environment: env, stdout: .pipe, stderr: .pipe)
        defer { pipeline.signal(SIGKILL) }
        let sender = ["PUBNUB_USER_ID": "sender", "PUBNUB_ORIGIN": simulator.origin, "SWIFT_BACKTRACE": "enable=no"]
        let senderStore = CLI.temporaryStore()
        var ended: Termination?
        for round in 0..<20 where ended == nil {
            let sent = try await offPool {
                try CLI.runBlocking(["send", "--store", senderStore, "--channel", "c", "--text", "m\(round)"], environment: sender)
            }
            try #require(sent.status == 0, "\(sent.stderr)")
            _ = try await offPool { try CLI.runBlocking(["sync", "--store", senderStore, "--timeout", "10"], environment: sender) }
            ended = await pipeline.wait(until: .now + .seconds(2))
        }
        #expect(ended != nil, "listen kept running after head exited")
        #expect(pipeline.stdout.split(separator: "\n").count == 2, "\(pipeline.stdout)")
    }

    @Test("listen whose stdout nobody reads still ends on SIGINT (the printer is blocked in its write)", .timeLimit(.minutes(10)))
    func signalWithUnreadStdout() async throws {
        let simulator = try await SimulatorProcess(faults: "none", seed: 4, arguments: ["--subscribe-hold", "1"])
        defer { simulator.stop() }
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let env = ["PUBNUB_USER_ID": "listener", "PUBNUB_ORIGIN": simulator.origin, "SWIFT_BACKTRACE": "enable=no"]
        let listener = try ChildProcess(
            CLI.binary.path, ["listen", "--json", "--store", CLI.temporaryStore(), "--channel", "c"],
            environment: env, stdout: .descriptor(ends[1]), stderr: .nullDevice)
        close(ends[1])
        defer { listener.signal(SIGKILL) }
        // Events until the pipe is full (64 KiB on Linux) and the listener's next write blocks.
        let sender = ["PUBNUB_USER_ID": "sender", "PUBNUB_ORIGIN": simulator.origin, "SWIFT_BACKTRACE": "enable=no"]
        let senderStore = CLI.temporaryStore()
        func unread() -> Int32 {
            var bytes: Int32 = 0
            _ = ioctl(ends[0], UInt(FIONREAD), &bytes)
            return bytes
        }
        for round in 0..<40 where unread() < 60_000 {
            let sent = try await offPool {
                try CLI.runBlocking(["send", "--store", senderStore, "--channel", "c", "--text", "m\(round)", "--count", "100"], environment: sender)
            }
            try #require(sent.status == 0, "\(sent.stderr)")
            _ = try await offPool { try CLI.runBlocking(["sync", "--store", senderStore, "--timeout", "30"], environment: sender) }
            _ = await listener.wait(until: .now + .milliseconds(500))
        }
        try #require(unread() >= 60_000, "the listener never filled its stdout: \(unread()) bytes waiting")
        try #require(await listener.wait(until: .now + .milliseconds(200)) == nil, "listen ended before the signal")
        listener.signal(SIGINT)
        let ended = await listener.wait(until: .now + .seconds(30))
        #expect(ended == Termination(reason: .exit, status: 0), "listen did not end on SIGINT: \(String(describing: ended))")
    }
}
