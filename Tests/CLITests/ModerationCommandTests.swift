import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The Chat SDK's side of a keyset, played by `Tests/Compat/python_chat_peer.py` on the official
/// Python SDK against a `pnreplicate simulator serve`: other users' messages, a moderator's bans
/// and lifts, the user's other device writing their mute list, reports, and reads of what the
/// server holds.
struct ChatPeer {
    static let script = OfficialSDK.script.deletingLastPathComponent().appendingPathComponent("python_chat_peer.py")
    /// The simulator runs without Access Manager; the peer's moderator commands still take a key to sign with.
    static let secretKey = "sec-c-unused"

    /// A subcommand that did not exit 0.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let python: URL
    let host: String

    init(_ simulator: SimulatorProcess) throws {
        try #require(
            OfficialSDK.isInstalled,
            "CI is set but `python3 -c \"import pubnub\"` fails: install the SDK (.ci/run does: python3 -m pip install pubnub==10.8.0)")
        python = try #require(OfficialSDK.python)
        host = "127.0.0.1:\(simulator.port)"
    }

    /// Runs the script with `arguments` (the subcommand first, then `--origin`), up to `attempts`
    /// times until it exits 0 (a flaky simulator refuses some requests: only what is safe to
    /// repeat gets more than one); returns its stdout.
    @discardableResult
    func run(_ subcommand: String, _ arguments: [String], attempts: Int = 1) async throws -> String {
        try await python([Self.script.path, subcommand, "--origin", host, "--timeout", "60"] + arguments, attempts: attempts)
    }

    /// Runs `code` with the peer imported as `p`, `origin` its `HOST:PORT` and `json` imported.
    func evaluate(_ code: String, attempts: Int = 1) async throws -> String {
        let prelude = """
            import json, sys
            sys.path.insert(0, sys.argv[1])
            import python_chat_peer as p
            origin = sys.argv[2]

            """
        return try await python(["-c", prelude + code, Self.script.deletingLastPathComponent().path, host], attempts: attempts)
    }

    private func python(_ arguments: [String], attempts: Int) async throws -> String {
        let python = self.python
        var failures: [String] = []
        for _ in 0..<attempts {
            let run = try await offPool { try BoundedRun.runBlocking(arguments, executable: python, limit: .seconds(90)) }
            if !run.timedOut, run.reason == .exit, run.status == 0 { return run.stdout }
            failures.append("\(run.reason) \(run.status)\(run.timedOut ? " (timed out)" : ""): \(run.stdout)\(run.stderr)")
        }
        throw Failure(description: "python3 \(arguments.prefix(2).joined(separator: " ")) failed \(attempts) time(s): \(failures.joined(separator: "\n"))")
    }

    /// Publishes a Chat SDK text message as `user`; its timetoken.
    func send(as user: String, channel: String, text: String, attempts: Int = 1) async throws -> UInt64 {
        let output = try await run("send", ["--as", user, "--channel", channel, "--text", text], attempts: attempts)
        return try #require(UInt64(output.trimmingCharacters(in: .whitespacesAndNewlines)), "send printed \(output)")
    }

    /// Bans `user` in `channel` (`ban`) or lifts their restriction (`lift`), as a moderator.
    func moderate(_ action: String, user: String, channel: String, reason: String? = nil) async throws {
        let line = try await run(
            action, ["--secret-key", Self.secretKey, "--user", user, "--channel", channel] + (reason.map { ["--reason", $0] } ?? []))
        let answer = try CLI.json(line)
        #expect(answer["restriction"] as? String == (action == "ban" ? "banned" : "lifted"), "\(line)")
    }

    /// Writes `user`'s mute list as the user (their other device).
    func writeMuteList(of user: String, muted: [String]) async throws {
        try await run("mutelist", ["--user", user, "--muted", muted.joined(separator: ",")])
    }

    /// The reports of `channel` on the server, oldest first (one object per report: timetoken,
    /// message, uuid).
    func reports(channel: String, attempts: Int = 1) async throws -> [[String: Any]] {
        try await run("reports", ["--channel", channel], attempts: attempts).split(separator: "\n").map { try CLI.json(String($0)) }
    }

    /// The stored messages of `channel` on the server (every page), oldest first.
    func history(of channel: String) async throws -> [[String: Any]] {
        let output = try await evaluate("print(json.dumps([m.message for m in p.history(origin, 'chat-peer-reader', '\(channel)')]))")
        return try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]], "\(output)")
    }

    /// `user`'s mute list object as the server holds it (a `GET` as the user), or nil without one.
    func muteList(of user: String) async throws -> [String: Any]? {
        let output = try await evaluate("""
            try:
                data = p.client(origin, '\(user)').get_uuid_metadata(uuid=p.mute_list_id('\(user)'), include_custom=True).sync().result.data
            except p.PubNubException as error:
                if p.status_code(error) != 404: raise
                data = None
            print(json.dumps(data))
            """)
        return try JSONSerialization.jsonObject(with: Data(output.utf8), options: .fragmentsAllowed) as? [String: Any]
    }
}

/// `pnreplicate` run as one user on one store, against a simulator or offline.
struct ChatUserCLI {
    let user: String
    let store: String
    let origin: String

    init(_ user: String, origin: String, store: String = CLI.temporaryStore()) {
        (self.user, self.origin, self.store) = (user, origin, store)
    }

    /// Runs `arguments` with `--store` (offline: against an origin where nothing listens), killed
    /// after a minute (the Access Manager tests' bounded runner, off the cooperative pool).
    func run(_ arguments: [String], offline: Bool = false) async throws -> CLI.Result {
        let environment = [
            "PUBNUB_USER_ID": user, "PUBNUB_ORIGIN": offline ? "http://127.0.0.1:9" : origin, "SWIFT_BACKTRACE": "enable=no",
        ]
        return try await AccessServer.run(arguments + ["--store", store], environment: environment)
    }

    /// Runs `arguments`, requiring exit status 0; its stdout.
    @discardableResult
    func ok(_ arguments: [String], offline: Bool = false) async throws -> String {
        let result = try await run(arguments, offline: offline)
        try #require(result.status == 0, "pnreplicate \(arguments.joined(separator: " ")) exited \(result.status): \(result.stdout)\(result.stderr)")
        return result.stdout
    }

    /// Runs `arguments` with `--json`, requiring exit status 0; the parsed output.
    func json(_ arguments: [String], offline: Bool = false) async throws -> Any {
        let output = try await ok(arguments + ["--json"], offline: offline)
        return try JSONSerialization.jsonObject(with: Data(output.utf8))
    }

    /// `sync`, again while it exits 3 (ops still wait: a flaky simulator refused them) or 4 (a
    /// pull failed), up to `attempts` times; requires exit 0 in the end.
    func sync(attempts: Int = 1) async throws {
        var result = try await run(["sync", "--timeout", "40"])
        for _ in 1..<max(attempts, 1) where result.status == 3 || result.status == 4 {
            result = try await run(["sync", "--timeout", "40"])
        }
        try #require(result.status == 0, "sync exited \(result.status): \(result.stdout)\(result.stderr)")
    }

    /// The texts of `show messages --channel C`: what the app shows.
    func shownTexts(_ channel: String) async throws -> [String] {
        let messages = try await json(["show", "messages", "--channel", channel]) as? [[String: Any]] ?? []
        return messages.compactMap { $0["text"] as? String }
    }

    /// The ops in the outbox.
    func outbox() async throws -> [[String: Any]] {
        try await json(["outbox", "list"]) as? [[String: Any]] ?? []
    }

    /// `restrictions --json`, as comparable tuples.
    func restrictions() async throws -> [Restriction] {
        let list = try await json(["restrictions"]) as? [[String: Any]] ?? []
        return list.map {
            Restriction(channelId: $0["channelId"] as? String, ban: $0["ban"] as? Bool, mute: $0["mute"] as? Bool, reason: $0["reason"] as? String)
        }
    }

    struct Restriction: Equatable, CustomStringConvertible {
        var channelId: String?
        var ban: Bool?
        var mute: Bool?
        var reason: String?
        var description: String { "\(channelId ?? "?") ban=\(ban.map(String.init) ?? "?") mute=\(mute.map(String.init) ?? "?") reason=\(reason ?? "nil")" }
    }

    /// Every command that lists what the store holds (and `history --remote`, `presence`, `files
    /// list`, which list what the server holds for a channel the user can see), each with and
    /// without `--json`, must exit 0 and never name a Chat SDK internal object. `skipping` leaves
    /// commands out by name. Returns how many runs were checked.
    @discardableResult
    func expectNothingInternal(channel: String, skipping: Set<String> = [], _ comment: String) async throws -> Int {
        let listings: [[String]] = [
            ["show", "users"], ["show", "channels"], ["show", "members"], ["show", "members", "--channel", channel],
            ["show", "messages", "--channel", channel], ["show", "reactions", "--channel", channel],
            ["history", "--channel", channel], ["history", "--channel", channel, "--remote"], ["unread"], ["status"],
            ["outbox", "list"], ["--dry-run"], ["checkpoints"], ["conflicts", "list"], ["draft", "list"], ["restrictions"],
            ["mutes"], ["presence", "--channel", channel], ["files", "list", "--channel", channel],
        ]
        var checked = 0
        for listing in listings where !skipping.contains(listing[0]) {
            for arguments in [listing, listing + ["--json"]] {
                let result = try await run(arguments)
                let shown = "pnreplicate \(arguments.joined(separator: " ")) (\(comment))"
                #expect(result.status == 0, "\(shown) exited \(result.status): \(result.stderr)")
                for hidden in ["PUBNUB_INTERNAL", "PN_PRV"] {
                    #expect(!result.stdout.contains(hidden) && !result.stderr.contains(hidden), "\(shown) names \(hidden):\n\(result.stdout)\(result.stderr)")
                }
                checked += 1
            }
        }
        return checked
    }

    /// The store's rows that name a Chat SDK internal object, table by table (tables in
    /// `excluding` left out), read with Python's sqlite3 so that no pnreplicate code decides.
    func internalRows(excluding tables: [String] = [], python: URL) async throws -> String {
        let code = """
            import sqlite3, sys
            db = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)
            for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
                if table in sys.argv[2:]: continue
                for row in db.execute('SELECT * FROM "%s"' % table):
                    if 'PUBNUB_INTERNAL' in repr(row) or 'PN_PRV' in repr(row): print(table, repr(row))
            """
        let store = self.store
        let run = try await offPool { try BoundedRun.runBlocking(["-c", code, store] + tables, executable: python, limit: .seconds(30)) }
        try #require(run.status == 0 && !run.timedOut, "\(run.stderr)")
        return run.stdout
    }
}

/// Runs `probe` every 200 ms until it returns true or `limit` passes; whether it did.
func eventually(within limit: Duration = .seconds(20), _ probe: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + limit
    while true {
        if try await probe() { return true }
        if ContinuousClock.now >= deadline { return false }
        try await Task.sleep(for: .milliseconds(200))
    }
}

/// The Chat SDK's moderation on the command line (issue 31, docs/chat.md "Moderation"): a moderator
/// on the official Python SDK bans and lifts, the user's other device writes their mute list,
/// other users report; `pnreplicate` shows the restrictions and the mute list, refuses what a ban
/// forbids before queuing it, hides muted users' messages, reports messages exactly once, and
/// never shows one of the Chat SDK's internal objects.
@Suite(
    "Chat SDK moderation on the command line",
    .enabled(if: OfficialSDK.isInstalled || OfficialSDK.isRequired, "the pubnub Python package is not installed"))
struct ModerationCommandTests {
    @Test("a ban shows with its reason and refuses writes before queuing; a mute list from another device hides a user until unmuted; a lift lets a send through once; nothing internal is listed",
          .timeLimit(.minutes(10)))
    func banMuteReportLift() async throws {
        let simulator = try await SimulatorProcess(faults: "none", seed: 31)
        defer { simulator.stop() }
        let peer = try ChatPeer(simulator)
        let alice = ChatUserCLI("alice", origin: simulator.origin)

        // a. Other users write in general; alice joins it and writes there while offline, then syncs.
        _ = try await peer.send(as: "troll", channel: "general", text: "troll 1")
        _ = try await peer.send(as: "troll", channel: "general", text: "troll 2")
        _ = try await peer.send(as: "bob", channel: "general", text: "bob 1")
        try await alice.ok(["join", "--channel", "general"], offline: true)
        let sent = try await alice.ok(["send", "--channel", "general", "--text", "first", "--json"], offline: true)
        let first = try #require(try CLI.json(sent)["id"] as? String)
        // Only a sent message can be reported (the report names its timetoken), and only a stored one.
        let unsent = try await alice.run(["report", "--message", first, "--reason", "spam"], offline: true)
        #expect(unsent.status == 1 && unsent.stderr == "pnreplicate: message \(first) has not been sent yet\n", "\(unsent.stderr)")
        let unknown = try await alice.run(["report", "--message", "nope", "--reason", "spam"], offline: true)
        #expect(unknown.status == 1 && unknown.stderr == "pnreplicate: no message nope in the store\n", "\(unknown.stderr)")
        try await alice.sync()
        #expect(try await alice.shownTexts("general") == ["troll 1", "troll 2", "bob 1", "first"])

        // alice reports bob's message offline: the dry run shows the exact publish.
        let stored = try await alice.json(["show", "messages", "--channel", "general"]) as? [[String: Any]] ?? []
        let bobs = try #require(stored.first { $0["text"] as? String == "bob 1" })
        let bobId = try #require(bobs["id"] as? String), bobTimetoken = try #require(bobs["timetoken"] as? String)
        let reportReceipt = try CLI.json(try await alice.ok(["report", "--message", bobId, "--reason", "spam, really", "--json"], offline: true))
        let reportOp = try #require(reportReceipt["opId"] as? String)
        #expect(reportReceipt["disposition"] as? String == "enqueued" && reportReceipt["id"] as? String == bobId)
        let expectedReport: [String: String] = [
            "type": "report", "text": "bob 1", "reason": "spam, really", "reportedMessageTimetoken": bobTimetoken,
            "reportedMessageChannelId": "general", "reportedUserId": "bob",
        ]
        let plan = try await alice.json(["--dry-run"], offline: true) as? [String: Any]
        let ops = plan?["ops"] as? [[String: Any]] ?? []
        try #require(ops.count == 1, "\(String(describing: plan))")
        #expect(ops[0]["kind"] as? String == "report" && ops[0]["opId"] as? String == reportOp)
        let request = ops[0]["request"] as? [String: Any] ?? [:]
        #expect(request["method"] as? String == "POST")
        #expect(request["path"] as? String == "/publish/demo/demo/0/PUBNUB_INTERNAL_MODERATION_general/0")
        let query = request["query"] as? [String] ?? []
        #expect(query.contains("uuid=alice") && query.contains("meta={\"pnr_op\":\"\(reportOp)\"}"), "\(query)")
        let body = try JSONSerialization.jsonObject(with: Data((request["body"] as? String ?? "").utf8)) as? [String: String]
        #expect(body == expectedReport)
        let planText = try await alice.ok(["--dry-run"], offline: true)
        let requestLine = planText.split(separator: "\n").first { $0.hasPrefix("   request  ") } ?? ""
        #expect(requestLine.hasPrefix("   request  POST /publish/demo/demo/0/PUBNUB_INTERNAL_MODERATION_general/0?"), "\(planText)")
        #expect(requestLine.hasSuffix("&meta={\"pnr_op\":\"\(reportOp)\"}"), "\(planText)")
        #expect(planText.contains("   body     \(request["body"] as? String ?? "-")\n"), "\(planText)")

        // b. A moderator bans alice in general; her other device mutes troll; bob reports troll.
        try await peer.moderate("ban", user: "alice", channel: "general", reason: "spamming")
        try await peer.writeMuteList(of: "alice", muted: ["troll"])
        let trollTimetoken = try #require(stored.first { $0["text"] as? String == "troll 1" }?["timetoken"] as? String)
        try await peer.run("report", [
            "--as", "bob", "--channel", "general", "--timetoken", trollTimetoken, "--text", "troll 1", "--author", "troll", "--reason", "rude",
        ])
        try await alice.sync()
        #expect(try await alice.restrictions() == [.init(channelId: "general", ban: true, mute: false, reason: "spamming")])
        #expect(try await alice.ok(["restrictions"]) == "general  banned  (spamming)\n")
        #expect(try await alice.ok(["restrictions", "--channel", "general"]) == "general  banned  (spamming)\n")
        #expect(try await alice.ok(["restrictions", "--channel", "random"]) == "no restrictions of alice in random in the store\n")
        // The report alice queued went out once, after bob's.
        let reports = try await peer.reports(channel: "general")
        #expect(reports.map { $0["uuid"] as? String } == ["bob", "alice"], "\(reports)")
        #expect(reports.last?["message"] as? [String: String] == expectedReport)

        // Every write to general is refused with the ban's reason, and nothing is queued.
        let refused = "pnreplicate: alice is banned from channel general (spamming); nothing was queued\n"
        for write in [
            ["send", "--channel", "general", "--text", "hi"], ["react", "--message", bobId, "--value", "👍"],
            ["edit", "--message", first, "--text", "first!"], ["read", "--channel", "general"], ["pin", "--message", bobId],
        ] {
            let result = try await alice.run(write)
            #expect(result.status == 1 && result.stdout.isEmpty && result.stderr == refused, "\(write): \(result.status) \(result.stderr)")
        }
        let hidden = try await alice.run(["send", "--channel", "PUBNUB_INTERNAL_MODERATION_general", "--text", "hi"])
        #expect(
            hidden.status == 1
                && hidden.stderr == "pnreplicate: PUBNUB_INTERNAL_MODERATION_general is a Chat SDK internal channel; nothing was queued\n",
            "\(hidden.stderr)")
        #expect(try await alice.outbox().isEmpty)

        // The mute list from the other device hides troll from what the app shows; history, the
        // store's twin of PubNub's, lists every message and marks troll's.
        #expect(try await alice.json(["mutes"]) as? [String] == ["troll"])
        #expect(try await alice.ok(["mutes"]) == "troll\n")
        #expect(try await alice.shownTexts("general") == ["bob 1", "first"])
        let history = try CLI.json(try await alice.ok(["history", "--channel", "general", "--json"]))["messages"] as? [[String: Any]] ?? []
        let marked = history.map { "\($0["text"] ?? "") \($0["isFromMutedUser"] as? Bool ?? false)" }
        #expect(marked == ["troll 1 true", "troll 2 true", "bob 1 false", "first false"])

        // c. Nothing internal anywhere, though the server holds a moderation channel, its
        // membership, a moderation event, reports and a mute list.
        let checked = try await alice.expectNothingInternal(channel: "general", "after the ban")
        #expect(checked == 38)
        #expect(try await alice.internalRows(python: peer.python) == "")

        // d. alice unmutes troll: shown at once; after a sync the server's list is empty.
        let unmuted = try CLI.json(try await alice.ok(["unmute", "--user", "troll", "--json"], offline: true))
        #expect(unmuted["muted"] as? [String] == [] && unmuted["disposition"] as? String == "enqueued", "\(unmuted)")
        #expect(try await alice.shownTexts("general") == ["troll 1", "troll 2", "bob 1", "first"])
        #expect(try await alice.ok(["mutes"]) == "alice has muted nobody\n")
        try await alice.sync()
        let list = try await peer.muteList(of: "alice")
        #expect(list?["custom"] as? [String: String] == ["m": ""] && list?["type"] as? String == "pn.prv", "\(String(describing: list))")
        #expect(try await alice.shownTexts("general") == ["troll 1", "troll 2", "bob 1", "first"])
        #expect(try await alice.json(["mutes"]) as? [String] == [])

        // e. The moderator lifts the ban: a send goes through, once; the refused one never did.
        try await peer.moderate("lift", user: "alice", channel: "general")
        try await alice.sync()
        #expect(try await alice.restrictions() == [])
        #expect(try await alice.ok(["restrictions"]) == "no restrictions of alice in the store\n")
        try await alice.ok(["send", "--channel", "general", "--text", "hi after the lift"])
        try await alice.sync()
        #expect(try await alice.outbox().isEmpty)
        let texts = try await peer.history(of: "general").compactMap { $0["text"] as? String }
        #expect(texts == ["troll 1", "troll 2", "bob 1", "first", "hi after the lift"], "\(texts)")
    }

    @Test("listen applies a ban, a mute list and a lift as they happen; nothing internal is listed after",
          .timeLimit(.minutes(10)))
    func liveBanMuteListAndLift() async throws {
        let simulator = try await SimulatorProcess(faults: "none", seed: 32, arguments: ["--subscribe-hold", "1"])
        defer { simulator.stop() }
        let peer = try ChatPeer(simulator)
        let alice = ChatUserCLI("alice", origin: simulator.origin)
        _ = try await peer.send(as: "troll", channel: "general", text: "troll 1")
        try await alice.ok(["join", "--channel", "general"])
        try await alice.sync()

        let listen = try ListenProcess(
            store: alice.store, channel: "general", environment: ["PUBNUB_USER_ID": "alice", "PUBNUB_ORIGIN": simulator.origin])
        let process = listen.process
        let live = try await offPool { process.stdout(when: { $0.contains("{\"state\":\"live\",\"type\":\"state\"}") }, within: .seconds(30)) }
        try #require(live.contains("{\"state\":\"live\",\"type\":\"state\"}"), "listen never went live: \(live)")

        try await peer.moderate("ban", user: "alice", channel: "random", reason: "flood")
        let banned = try await eventually { try await alice.restrictions() == [.init(channelId: "random", ban: true, mute: false, reason: "flood")] }
        #expect(banned, "the ban never showed within 20 s")
        let refused = try await alice.run(["send", "--channel", "random", "--text", "hi"])
        let refusal = "pnreplicate: alice is banned from channel random (flood); nothing was queued\n"
        #expect(refused.status == 1 && refused.stderr == refusal, "\(refused.stderr)")

        try await peer.writeMuteList(of: "alice", muted: ["troll"])
        let muted = try await eventually { try await alice.json(["mutes"]) as? [String] == ["troll"] }
        #expect(muted, "the mute list never showed within 20 s")
        #expect(try await alice.shownTexts("general") == [])

        try await peer.moderate("lift", user: "alice", channel: "random")
        let lifted = try await eventually { try await alice.restrictions() == [] }
        #expect(lifted, "the lift never showed within 20 s")
        try await alice.ok(["send", "--channel", "random", "--text", "hi"])

        process.signal(SIGINT)
        let ended = await process.wait(until: .now + .seconds(30))
        #expect(ended == Termination(reason: .exit, status: 0), "\(process.stderr)")

        // Listen's own stream names no hidden object either: the restriction and mute list events
        // are recorded on alice's channel, and the hidden channels it follows are not listed.
        let stream = process.stdout + process.stderr
        #expect(stream.contains("\"kind\":\"restriction\""), "\(stream)")
        #expect(!stream.contains("PUBNUB_INTERNAL") && !stream.contains("PN_PRV"), "\(stream)")
        try await alice.expectNothingInternal(channel: "general", "after listen")
        // Listen follows the user's moderation event channel and mute list object: their live
        // checkpoints are bookkeeping in `sync_checkpoints`, which `checkpoints` does not list.
        #expect(try await alice.internalRows(excluding: ["sync_checkpoints"], python: peer.python) == "")
    }

    /// Kills that leave work behind: 5 in `swift test`; PNREPLICATE_KILL_ROUNDS for more.
    static var rounds: Int { Int(ProcessInfo.processInfo.environment["PNREPLICATE_KILL_ROUNDS"] ?? "") ?? 5 }

    @Test("reports queued offline reach a flaky simulator exactly once, whatever moment sync is killed with SIGKILL",
          .timeLimit(.minutes(10)))
    func reportsExactlyOnceThroughKills() async throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["PNREPLICATE_KILL_SEED"] ?? "") ?? 33
        let simulator = try await SimulatorProcess(faults: "flaky", seed: seed)
        defer { simulator.stop() }
        let peer = try ChatPeer(simulator)
        let alice = ChatUserCLI("alice", origin: simulator.origin)
        // The peer's publish is tried again when refused: a repeat may publish it twice, which
        // changes nothing here (alice reports one of them).
        _ = try await peer.send(as: "troll", channel: "general", text: "buy now", attempts: 20)
        try await alice.ok(["join", "--channel", "general"], offline: true)
        try await alice.sync(attempts: 10)
        let stored = try await alice.json(["show", "messages", "--channel", "general"]) as? [[String: Any]] ?? []
        let reported = try #require(stored.first { $0["userId"] as? String == "troll" }, "\(stored)")
        let messageId = try #require(reported["id"] as? String), timetoken = try #require(reported["timetoken"] as? String)

        // Three reports at a time, queued offline; a new three whenever a kill found the outbox
        // empty (the sync was done first). Rounds go on until `rounds` kills landed while there was
        // work, or four times as many rounds passed.
        var reasons: [String] = []
        func queueReports() async throws {
            let batch = reasons.count / 3
            for index in 1...3 {
                let reason = "seed \(seed) batch \(batch) report \(index)"
                try await alice.ok(["report", "--message", messageId, "--reason", reason], offline: true)
                reasons.append(reason)
            }
        }
        try await queueReports()
        var random = SystemRandomNumberGenerator()
        var killedWithWorkLeft = 0
        var round = 0
        while killedWithWorkLeft < Self.rounds, round < 4 * Self.rounds {
            round += 1
            let sync = try ChildProcess(
                CLI.binary.path, ["sync", "--store", alice.store, "--timeout", "30"],
                environment: ["PUBNUB_USER_ID": "alice", "PUBNUB_ORIGIN": simulator.origin, "SWIFT_BACKTRACE": "enable=no"],
                stdout: .nullDevice, stderr: .nullDevice)
            // The kill moment is what is random here; nothing is asserted about timing.
            let pause = UInt32.random(in: 20_000...250_000, using: &random)
            let ended = try await offPool {
                usleep(pause)
                sync.signal(SIGKILL)
                return sync.wait()
            }
            // Killed, or done first (3 and 4: a flaky request outlasted the timeout, or a pull failed).
            #expect(ended == Termination(reason: .uncaughtSignal, status: SIGKILL) || (ended.reason == .exit && [0, 3, 4].contains(ended.status)),
                    "round \(round): \(ended)")
            if try await alice.outbox().isEmpty {
                try await queueReports()
            } else {
                killedWithWorkLeft += 1
            }
        }
        #expect(killedWithWorkLeft == Self.rounds, "only \(killedWithWorkLeft) of \(round) kills left work behind")
        try await alice.sync(attempts: 10)
        #expect(try await alice.outbox().isEmpty)

        // Reading is safe to repeat: the flaky simulator may refuse the moderator's reads too.
        let reports = try await peer.reports(channel: "general", attempts: 20)
        let sent = reports.compactMap { ($0["message"] as? [String: String])?["reason"] }
        #expect(sent.sorted() == reasons.sorted(), "seed \(seed): \(reasons.count) queued, the server holds \(sent)")
        for report in reports {
            #expect(report["uuid"] as? String == "alice")
            let body = report["message"] as? [String: String] ?? [:]
            #expect(body.filter { $0.key != "reason" } == [
                "type": "report", "text": "buy now", "reportedMessageTimetoken": timetoken, "reportedMessageChannelId": "general",
                "reportedUserId": "troll",
            ], "\(body)")
        }
        #expect(try await alice.internalRows(python: peer.python) == "", "the probes' history reads stored a report")
    }
}
