import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `simulator serve --secret-key` process, tokens granted by the official Python SDK from it
/// (`Tests/Compat/python_access_check.py --grant`), its clock moved over `POST /simulator/clock`,
/// and `pnreplicate` runs against it with a time limit.
final class AccessServer: @unchecked Sendable {
    static let secretKey = "sec-c-access-cli-test"
    static let script = OfficialSDK.script.deletingLastPathComponent().appendingPathComponent("python_access_check.py")

    let simulator: SimulatorProcess
    let python: URL

    /// `arguments` go after the secret key (`--subscribe-hold 1`, say).
    init(arguments: [String] = []) async throws {
        try #require(
            OfficialSDK.isInstalled,
            "CI is set but `python3 -c \"import pubnub\"` fails: install the SDK (.ci/run does: python3 -m pip install pubnub==10.8.0)")
        python = try #require(OfficialSDK.python)
        simulator = try await SimulatorProcess(faults: "none", seed: 5, arguments: ["--secret-key", Self.secretKey] + arguments)
    }

    deinit {
        simulator.process.signal(SIGKILL)  // reaped by the thread that watches it
    }

    var origin: String { simulator.origin }
    var host: String { "127.0.0.1:\(simulator.port)" }

    /// A token granted with the Python SDK's `grant_token`: read and write on `channels`, get and
    /// update on `user` (its authorized uuid), for `ttl` minutes; `extra` are more of the script's
    /// grant options.
    func grant(_ channels: [String], to user: String, ttl: Int, extra: [String] = []) async throws -> String {
        let arguments = [
            Self.script.path, host, "--secret-key", Self.secretKey, "--grant", channels.joined(separator: ","),
            "--authorized-uuid", user, "--ttl", "\(ttl)",
        ] + extra
        let python = self.python
        let run = try await offPool { try BoundedRun.runBlocking(arguments, executable: python, limit: .seconds(60)) }
        let token = run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(
            !run.timedOut && run.status == 0 && !token.isEmpty && !token.contains("\n"),
            "grant_token failed: \(run.stdout)\(run.stderr)")
        return token
    }

    /// Moves the simulator's clock `seconds` forward; returns its offset from the real clock.
    @discardableResult
    func advanceClock(_ seconds: Int) async throws -> Double {
        let code = """
            import json, sys, urllib.request
            request = urllib.request.Request(sys.argv[1], method="POST", data=b"")
            print(urllib.request.urlopen(request, timeout=10).read().decode())
            """
        let url = "\(origin)/simulator/clock?advance=\(seconds)"
        let python = self.python
        let run = try await offPool { try BoundedRun.runBlocking(["-c", code, url], executable: python, limit: .seconds(30)) }
        let answer = try CLI.json(run.stdout)
        return try #require(answer["offset"] as? Double, "\(run.stdout)\(run.stderr)")
    }

    /// The environment of a `pnreplicate` run as `user` against this simulator.
    func environment(user: String, _ more: [String: String] = [:]) -> [String: String] {
        ["PUBNUB_USER_ID": user, "PUBNUB_ORIGIN": origin, "SWIFT_BACKTRACE": "enable=no"].merging(more) { _, new in new }
    }

    /// Runs `pnreplicate` with `arguments` and `environment`, killed after `limit`.
    static func run(_ arguments: [String], environment: [String: String], limit: Duration = .seconds(60)) async throws -> CLI.Result {
        let (result, timedOut) = try await offPool {
            let process = try ChildProcess(CLI.binary.path, arguments, environment: environment, stdout: .pipe, stderr: .pipe)
            guard let ended = process.wait(timeout: limit) else {
                process.signal(SIGKILL)
                process.wait()
                return (CLI.Result(status: -1, stdout: process.stdout, stderr: process.stderr), true)
            }
            // A signal shows as 128 + its number, as a shell says.
            let status = ended.reason == .exit ? ended.status : 128 + ended.status
            return (CLI.Result(status: status, stdout: process.stdout, stderr: process.stderr), false)
        }
        if timedOut { Issue.record("pnreplicate \(arguments) did not end within \(limit): \(result.stderr)") }
        return result
    }

    /// The texts of `channel`'s messages on the server, oldest first, read with `token`.
    func remoteTexts(_ channel: String, user: String, token: String) async throws -> [String] {
        let history = try await Self.run(
            ["history", "--store", CLI.temporaryStore(), "--channel", channel, "--remote", "--json", "--auth-token", token],
            environment: environment(user: user))
        try #require(history.status == 0, "history --remote: \(history.stderr)")
        let messages = try CLI.json(history.stdout)["messages"] as? [[String: Any]] ?? []
        return messages.compactMap { $0["text"] as? String }
    }

    /// Whether `text` shows `token` or its signature (the token's last 40 characters; a URL
    /// would carry it without its `=` padding).
    static func leaks(_ token: String, in text: String) -> Bool {
        let bare = token.trimmingCharacters(in: CharacterSet(charactersIn: "="))
        return text.contains(bare) || text.contains(String(bare.suffix(40)))
    }
}

/// Access Manager through the command line (issue 30, docs/access.md): tokens the official Python
/// SDK grants from `simulator serve --secret-key` used by `pnreplicate`; a token that expires
/// leaves ops waiting (sync exits 3, `waiting for a token`, nothing dead) until a new one; the
/// flag wins over the environment; `token show --json` is `parse_token`'s output; the token is
/// never printed or stored; `listen` takes a new token on SIGHUP; another user's token is refused
/// before anything is sent.
@Suite("Access Manager tokens on the command line", .enabled(if: OfficialSDK.isInstalled || OfficialSDK.isRequired, "the pubnub Python package is not installed"))
struct AccessCommandTests {
    @Test("send with a Python-granted token; past its TTL sync exits 3 waiting for a token with nothing dead; a new --auth-token sends the rest exactly once, in order",
          .timeLimit(.minutes(10)))
    func expiryThenNewToken() async throws {
        let server = try await AccessServer()
        let store = CLI.temporaryStore()
        let env = server.environment(user: "me")
        let offline = server.environment(user: "me", ["PUBNUB_ORIGIN": "http://127.0.0.1:1"])
        let first = try await server.grant(["room"], to: "me", ttl: 5)

        for i in 1...3 {
            let queued = try await AccessServer.run(["send", "--store", store, "--channel", "room", "--text", "m\(i)"], environment: offline)
            try #require(queued.status == 0, "\(queued.stderr)")
        }
        let sync = try await AccessServer.run(["sync", "--store", store, "--json", "--auth-token", first], environment: env)
        try #require(sync.status == 0, "\(sync.stdout)\(sync.stderr)")
        let pushed = try CLI.json(sync.stdout)["push"] as? [String: Any]
        #expect(pushed?["completed"] as? Int == 3 && pushed?["deadLetters"] as? Int == 0, "\(sync.stdout)")
        #expect(try await server.remoteTexts("room", user: "me", token: first) == ["m1", "m2", "m3"])

        // Two more queued, then the simulator's clock goes past the token's five minutes.
        for i in 4...5 {
            let queued = try await AccessServer.run(["send", "--store", store, "--channel", "room", "--text", "m\(i)"], environment: offline)
            try #require(queued.status == 0, "\(queued.stderr)")
        }
        #expect(try await server.advanceClock(5 * 60 + 1) >= 301)
        let expired = try await AccessServer.run(["sync", "--store", store, "--json", "--auth-token", first], environment: env)
        #expect(expired.status == 3, "\(expired.stdout)\(expired.stderr)")
        let waitingLines = expired.stderr.split(separator: "\n").filter { $0.hasPrefix("waiting for a token:") }
        #expect(waitingLines.count == 1 && waitingLines.first?.contains("2 ops") == true && waitingLines.first?.contains("Access Manager refused the token (Token is expired.)") == true, "\(expired.stderr)")
        let waitingPush = try CLI.json(expired.stdout)["push"] as? [String: Any]
        #expect(
            waitingPush?["deadLetters"] as? Int == 0 && waitingPush?["completed"] as? Int == 0
                && waitingPush?["remaining"] as? Int == 2 && waitingPush?["waitingForToken"] as? Int == 2,
            "\(expired.stdout)")
        let listed = try await AccessServer.run(["outbox", "list", "--store", store, "--json"], environment: env)
        let ops = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]], "\(listed.stdout)\(listed.stderr)")
        #expect(ops.count == 2 && ops.allSatisfy { $0["state"] as? String == "pending" }, "\(listed.stdout)")
        #expect(
            ops.compactMap { ($0["payload"] as? [String: Any])?["message"] as? [String: Any] }.compactMap { $0["text"] as? String } == ["m4", "m5"],
            "\(listed.stdout)")

        // A new token from the Python SDK: the two go, once each, after the three.
        let second = try await server.grant(["room"], to: "me", ttl: 5)
        let resumed = try await AccessServer.run(["sync", "--store", store, "--json", "--auth-token", second], environment: env)
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        #expect(!resumed.stderr.contains("waiting for a token"), "\(resumed.stderr)")
        let resumedPush = try CLI.json(resumed.stdout)["push"] as? [String: Any]
        #expect(resumedPush?["completed"] as? Int == 2 && resumedPush?["deadLetters"] as? Int == 0, "\(resumed.stdout)")
        #expect(try await server.remoteTexts("room", user: "me", token: second) == ["m1", "m2", "m3", "m4", "m5"])
        let empty = try await AccessServer.run(["outbox", "list", "--store", store, "--json"], environment: env)
        #expect((try JSONSerialization.jsonObject(with: Data(empty.stdout.utf8)) as? [Any])?.isEmpty == true, "\(empty.stdout)")
        // The local history holds each message once, sent.
        let local = try await AccessServer.run(["history", "--store", store, "--channel", "room", "--json"], environment: env)
        let messages = try CLI.json(local.stdout)["messages"] as? [[String: Any]] ?? []
        #expect(messages.compactMap { $0["text"] as? String } == ["m1", "m2", "m3", "m4", "m5"], "\(local.stdout)")
        #expect(messages.allSatisfy { $0["delivery"] as? String == "sent" }, "\(local.stdout)")
    }

    @Test("--auth-token wins over $PUBNUB_AUTH_TOKEN; --auth-key is its alias; $PUBNUB_AUTH_KEY alone works; $PUBNUB_AUTH_TOKEN over $PUBNUB_AUTH_KEY; --auth-token-file",
          .timeLimit(.minutes(10)))
    func flagOverEnvironment() async throws {
        let server = try await AccessServer()
        let store = CLI.temporaryStore()
        let good = try await server.grant(["env-room"], to: "me", ttl: 10)
        let garbage = "not-a-token"
        var sent: [String] = []
        func sendAndSync(_ text: String, _ arguments: [String], _ variables: [String: String]) async throws -> CLI.Result {
            let queued = try await AccessServer.run(
                ["send", "--store", store, "--channel", "env-room", "--text", text],
                environment: server.environment(user: "me", ["PUBNUB_ORIGIN": "http://127.0.0.1:1"]))
            try #require(queued.status == 0, "\(queued.stderr)")
            sent.append(text)
            return try await AccessServer.run(
                ["sync", "--store", store, "--json"] + arguments, environment: server.environment(user: "me", variables))
        }
        func expectSent(_ result: CLI.Result, _ count: Int, _ context: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            #expect(result.status == 0, "\(context): \(result.stdout)\(result.stderr)", sourceLocation: sourceLocation)
            let push = try CLI.json(result.stdout)["push"] as? [String: Any]
            #expect(push?["completed"] as? Int == count && push?["remaining"] as? Int == 0, "\(context): \(result.stdout)", sourceLocation: sourceLocation)
        }

        // The environment is read: the garbage token alone is refused, and the op waits.
        let refused = try await sendAndSync("e1", [], ["PUBNUB_AUTH_TOKEN": garbage])
        #expect(refused.status == 3 && refused.stderr.contains("waiting for a token"), "\(refused.stdout)\(refused.stderr)")
        // The flag wins over it (the waiting op goes too).
        try expectSent(try await sendAndSync("e2", ["--auth-token", good], ["PUBNUB_AUTH_TOKEN": garbage]), 2, "--auth-token over the environment")
        try expectSent(try await sendAndSync("e3", ["--auth-key", good], ["PUBNUB_AUTH_TOKEN": garbage]), 1, "--auth-key")
        try expectSent(try await sendAndSync("e4", [], ["PUBNUB_AUTH_KEY": good]), 1, "$PUBNUB_AUTH_KEY")
        try expectSent(
            try await sendAndSync("e5", [], ["PUBNUB_AUTH_TOKEN": good, "PUBNUB_AUTH_KEY": garbage]), 1, "$PUBNUB_AUTH_TOKEN over $PUBNUB_AUTH_KEY")
        let file = NSTemporaryDirectory() + "pnr-token-\(UUID().uuidString)"
        try "  \(good)\n".write(toFile: file, atomically: true, encoding: .utf8)
        try expectSent(
            try await sendAndSync("e6", ["--auth-token-file", file], ["PUBNUB_AUTH_TOKEN": garbage]), 1, "--auth-token-file over the environment")

        #expect(try await server.remoteTexts("env-room", user: "me", token: good) == sent)
    }

    @Test("token show --json prints what the Python SDK's parse_token returns for the same token")
    func tokenShowMatchesParseToken() async throws {
        let server = try await AccessServer()
        let token = try await server.grant(
            ["a", "b"], to: "me", ttl: 7,
            extra: ["--read-pattern", "^thread-.*$", "--meta", #"{"role":"member","n":3,"nested":{"x":[1,"y",true]}}"#])
        let shown = try await AccessServer.run(["token", "show", "--json", "--auth-token", token], environment: [:])
        try #require(shown.status == 0, "\(shown.stderr)")
        let code = """
            import json, sys, warnings
            warnings.filterwarnings("ignore")
            from pubnub.pnconfiguration import PNConfiguration
            from pubnub.pubnub import PubNub
            config = PNConfiguration()
            config.publish_key = "demo"
            config.subscribe_key = "demo"
            config.user_id = "parser"
            print(json.dumps(PubNub(config).parse_token(sys.argv[1]), sort_keys=True))
            """
        let python = server.python
        let parsed = try await offPool { try BoundedRun.runBlocking(["-c", code, token], executable: python, limit: .seconds(30)) }
        try #require(parsed.status == 0, "\(parsed.stdout)\(parsed.stderr)")
        func canonical(_ text: String) throws -> String {
            let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
            return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
        }
        let ours = try canonical(shown.stdout), theirs = try canonical(parsed.stdout)
        #expect(ours == theirs)
        // Not vacuous: the token has the pattern and the meta in both.
        #expect(theirs.contains("^thread-.*$") && theirs.contains(#""role":"member""#), "\(theirs)")
        #expect(!AccessServer.leaks(token, in: shown.stdout + shown.stderr))
        let text = try await AccessServer.run(["token", "show", "--auth-token", token], environment: [:])
        #expect(text.status == 0 && text.stdout.contains("authorized user") && text.stdout.contains("me"), "\(text.stdout)\(text.stderr)")
        #expect(!AccessServer.leaks(token, in: text.stdout + text.stderr))
        let notToken = try await AccessServer.run(["token", "show", "--auth-token", "not-a-token"], environment: [:])
        #expect(notToken.status == 1 && !notToken.stderr.isEmpty, "\(notToken.stdout)\(notToken.stderr)")
    }

    @Test("the token is never printed nor stored: dry runs show auth=REDACTED, verbose syncs (sent and refused) and the store never hold it",
          .timeLimit(.minutes(10)))
    func tokenNeverShown() async throws {
        let server = try await AccessServer()
        let store = CLI.temporaryStore()
        let env = server.environment(user: "me")
        let token = try await server.grant(["quiet"], to: "me", ttl: 5)
        let queued = try await AccessServer.run(["send", "--store", store, "--channel", "quiet", "--text", "q1"], environment: env)
        try #require(queued.status == 0, "\(queued.stderr)")
        var printed = ""

        for arguments in [
            ["sync", "--dry-run", "--store", store, "--auth-token", token],
            ["sync", "--dry-run", "--json", "--store", store, "--auth-token", token],
            ["--dry-run", "--store", store, "--auth-token", token],
        ] {
            let dry = try await AccessServer.run(arguments, environment: env)
            #expect(dry.status == 0, "\(arguments): \(dry.stderr)")
            #expect(dry.stdout.contains("auth=REDACTED"), "\(arguments): \(dry.stdout)")
            printed += dry.stdout + dry.stderr
        }
        // From the environment too.
        let fromEnvironment = try await AccessServer.run(
            ["sync", "--dry-run", "--store", store], environment: server.environment(user: "me", ["PUBNUB_AUTH_TOKEN": token]))
        #expect(fromEnvironment.stdout.contains("auth=REDACTED"), "\(fromEnvironment.stdout)\(fromEnvironment.stderr)")
        printed += fromEnvironment.stdout + fromEnvironment.stderr

        let sent = try await AccessServer.run(["sync", "--verbose", "--store", store, "--auth-token", token], environment: env)
        #expect(sent.status == 0, "\(sent.stdout)\(sent.stderr)")
        printed += sent.stdout + sent.stderr

        // Refused (past the TTL): the 403 is stored as the op's last failure, without the token.
        let later = try await AccessServer.run(["send", "--store", store, "--channel", "quiet", "--text", "q2"], environment: env)
        try #require(later.status == 0, "\(later.stderr)")
        try await server.advanceClock(301)
        let refused = try await AccessServer.run(["sync", "--verbose", "--json", "--store", store, "--auth-token", token], environment: env)
        #expect(refused.status == 3 && refused.stderr.contains("waiting for a token"), "\(refused.stdout)\(refused.stderr)")
        // --verbose logged the refusal (so a token in a logged request would show here).
        #expect(refused.stderr.contains("outbox op waits for a token"), "\(refused.stderr)")
        printed += refused.stdout + refused.stderr
        let listed = try await AccessServer.run(["outbox", "list", "--json", "--verbose", "--store", store], environment: env)
        #expect(listed.stdout.contains("403"), "the refusal was not stored: \(listed.stdout)")
        printed += listed.stdout + listed.stderr
        let dry = try await AccessServer.run(["--dry-run", "--json", "--store", store, "--auth-token", token], environment: env)
        #expect(dry.stdout.contains("auth=REDACTED") && dry.stdout.contains("waiting for a token"), "\(dry.stdout)")
        printed += dry.stdout + dry.stderr

        #expect(!AccessServer.leaks(token, in: printed), "the token was printed:\n\(printed)")
        let directory = URL(fileURLWithPath: store).deletingLastPathComponent()
        let bare = Data(token.trimmingCharacters(in: CharacterSet(charactersIn: "=")).utf8)
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let bytes = try Data(contentsOf: directory.appendingPathComponent(name))
            #expect(bytes.range(of: bare) == nil, "the store file \(name) holds the token")
        }
    }

    @Test("listen: its token expires (state: offline: waiting for a token), a new one written to --auth-token-file and SIGHUP make it live again and it gets the next message; SIGTERM exits 0",
          .timeLimit(.minutes(10)))
    func listenTakesNewTokenOnSIGHUP() async throws {
        // Each subscribe is held 1 s, so the one after the clock moved meets the expired token.
        let server = try await AccessServer(arguments: ["--subscribe-hold", "1"])
        let file = NSTemporaryDirectory() + "pnr-listen-token-\(UUID().uuidString)"
        let first = try await server.grant(["live-room"], to: "me", ttl: 1)
        try first.write(toFile: file, atomically: true, encoding: .utf8)
        let listen = try ChildProcess(
            CLI.binary.path,
            ["listen", "--store", CLI.temporaryStore(), "--channel", "live-room", "--auth-token-file", file],
            environment: server.environment(user: "me"), stdout: .pipe, stderr: .pipe)
        defer { listen.signal(SIGKILL) }  // a no-op once it has ended
        let live = try await offPool { listen.stderr(when: { $0.contains("state: live\n") }, within: .seconds(60)) }
        try #require(live.contains("state: live\n"), "\(live)")

        try await server.advanceClock(61)
        let waiting = "state: offline: waiting for a token\n"
        let refused = try await offPool { listen.stderr(when: { $0.contains(waiting) }, within: .seconds(60)) }
        try #require(refused.contains(waiting), "\(refused)")

        let second = try await server.grant(["live-room"], to: "me", ttl: 5)
        try second.write(toFile: file, atomically: true, encoding: .utf8)
        listen.signal(SIGHUP)
        @Sendable func liveAgain(_ text: String) -> Bool {
            guard let replaced = text.range(of: "token: replaced from \(file)") else { return false }
            return text[replaced.upperBound...].contains("state: live\n")
        }
        let renewed = try await offPool { listen.stderr(when: liveAgain, within: .seconds(60)) }
        try #require(liveAgain(renewed), "\(renewed)")

        // Another user's message reaches it live.
        let writer = try await server.grant(["live-room"], to: "writer", ttl: 5)
        let writerStore = CLI.temporaryStore()
        let writerEnv = server.environment(user: "writer", ["PUBNUB_AUTH_TOKEN": writer])
        let queued = try await AccessServer.run(["send", "--store", writerStore, "--channel", "live-room", "--text", "after", "--json"], environment: writerEnv)
        let id = try #require(try CLI.json(queued.stdout)["id"] as? String, "\(queued.stdout)\(queued.stderr)")
        let pushed = try await AccessServer.run(["sync", "--store", writerStore], environment: writerEnv)
        try #require(pushed.status == 0, "\(pushed.stdout)\(pushed.stderr)")
        let event = "live-room "
        let printed = try await offPool { listen.stdout(when: { $0.contains(id) && $0.hasSuffix("\n") }, within: .seconds(60)) }
        #expect(printed.contains(event) && printed.contains("message \(id) inserted (from writer)"), "\(printed)")

        listen.terminate()
        let ended = await listen.wait(until: .now + .seconds(30))
        #expect(ended == Termination(reason: .exit, status: 0), "\(listen.stderr)")
        #expect(listen.stderr.hasSuffix("state: stopped\n"), "\(listen.stderr)")
        for token in [first, second] {
            #expect(!AccessServer.leaks(token, in: listen.stdout + listen.stderr), "listen printed a token")
        }
    }

    @Test("a token whose authorized user is someone else: sync exits 1 saying so, nothing is sent", .timeLimit(.minutes(10)))
    func anotherUsersToken() async throws {
        let server = try await AccessServer()
        let store = CLI.temporaryStore()
        let env = server.environment(user: "me")
        let theirs = try await server.grant(["shared"], to: "someone-else", ttl: 5)
        let mine = try await server.grant(["shared"], to: "me", ttl: 5)
        let queued = try await AccessServer.run(["send", "--store", store, "--channel", "shared", "--text", "mine"], environment: env)
        try #require(queued.status == 0, "\(queued.stderr)")

        let sync = try await AccessServer.run(["sync", "--store", store, "--auth-token", theirs], environment: env)
        #expect(sync.status == 1, "\(sync.stdout)\(sync.stderr)")
        let lines = sync.stderr.split(separator: "\n")
        #expect(lines.count == 1 && sync.stderr.contains(#""someone-else""#) && sync.stderr.contains(#""me""#), "\(sync.stderr)")
        #expect(!AccessServer.leaks(theirs, in: sync.stdout + sync.stderr))

        // Nothing went: the op is untouched and the channel is empty on the server.
        let listed = try await AccessServer.run(["outbox", "list", "--store", store, "--json"], environment: env)
        let ops = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]], "\(listed.stdout)")
        #expect(ops.count == 1 && ops.first?["attempts"] as? Int == 0 && ops.first?["state"] as? String == "pending", "\(listed.stdout)")
        #expect(try await server.remoteTexts("shared", user: "me", token: mine) == [])
        // The right token still sends it.
        let good = try await AccessServer.run(["sync", "--store", store, "--auth-token", mine], environment: env)
        #expect(good.status == 0, "\(good.stdout)\(good.stderr)")
        #expect(try await server.remoteTexts("shared", user: "me", token: mine) == ["mine"])
    }
}
