import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Chat SDK (kmp-chat) clients writing conversations, played by
/// `Tests/Compat/python_chat_conversations.py` on the official Python SDK against a `pnreplicate
/// simulator serve`: direct and group conversations, invitations, mentions, threads, forwards,
/// push registrations, and reads of what the server holds.
struct ConversationsPeer {
    static let script = OfficialSDK.script.deletingLastPathComponent().appendingPathComponent("python_chat_conversations.py")

    let python: URL
    let host: String

    init(_ simulator: SimulatorProcess) throws {
        try #require(
            OfficialSDK.isInstalled,
            "CI is set but `python3 -c \"import pubnub\"` fails: install the SDK (.ci/run does: python3 -m pip install pubnub==10.8.0)")
        python = try #require(OfficialSDK.python)
        host = "127.0.0.1:\(simulator.port)"
    }

    /// Runs the script's `subcommand` with `arguments`, up to `attempts` times until it exits 0
    /// (only what is safe to repeat gets more than one); its stdout.
    @discardableResult
    func run(_ subcommand: String, _ arguments: [String], attempts: Int = 1) async throws -> String {
        let python = self.python, arguments = [Self.script.path, subcommand, "--origin", host, "--timeout", "60"] + arguments
        var failures: [String] = []
        for _ in 0..<attempts {
            let run = try await offPool { try BoundedRun.runBlocking(arguments, executable: python, limit: .seconds(90)) }
            if !run.timedOut, run.reason == .exit, run.status == 0 { return run.stdout }
            failures.append("\(run.reason) \(run.status)\(run.timedOut ? " (timed out)" : ""): \(run.stdout)\(run.stderr)")
        }
        throw ChatPeer.Failure(description: "python_chat_conversations.py \(subcommand) failed \(attempts) time(s): \(failures.joined(separator: "\n"))")
    }

    /// A subcommand that prints one JSON object.
    func object(_ subcommand: String, _ arguments: [String], attempts: Int = 1) async throws -> [String: Any] {
        try CLI.json(try await run(subcommand, arguments, attempts: attempts))
    }

    /// A subcommand that prints one JSON object a line (a readback: safe to repeat).
    func lines(_ subcommand: String, _ arguments: [String], attempts: Int = 1) async throws -> [[String: Any]] {
        try await run(subcommand, arguments, attempts: attempts).split(separator: "\n").map { try CLI.json(String($0)) }
    }

    /// Publishes a Chat SDK text message as `user` (with a mention event for each of `mentions`);
    /// its timetoken.
    func send(as user: String, channel: String, text: String, mentions: [String] = []) async throws -> Int {
        let output = try await run("send", ["--as", user, "--channel", channel, "--text", text] + mentions.flatMap { ["--mention", $0] })
        return try #require(Int(output.trimmingCharacters(in: .whitespacesAndNewlines)), "send printed \(output)")
    }

    /// Publishes a text message exactly once against a flaky origin: after a failed run the server's
    /// history says whether the publish was applied (a lost answer) before it is tried again.
    func sendOnce(as user: String, channel: String, text: String, attempts: Int = 20) async throws -> Int {
        for _ in 0..<attempts {
            if let timetoken = try? await send(as: user, channel: channel, text: text) { return timetoken }
            let stored = try await history(of: channel, attempts: attempts)
            if let applied = stored.first(where: { $0["uuid"] as? String == user && Self.text(of: $0) == text }) {
                return try #require(applied["timetoken"] as? Int)
            }
        }
        throw ChatPeer.Failure(description: "send as \(user) to \(channel) failed \(attempts) times")
    }

    /// The stored messages of `channel` on the server, oldest first.
    func history(of channel: String, attempts: Int = 1) async throws -> [[String: Any]] {
        try await lines("history", ["--channel", channel], attempts: attempts)
    }

    /// The members of `channel` on the server, as (user, status) in user order.
    func members(of channel: String, attempts: Int = 1) async throws -> [[String: Any]] {
        try await lines("members", ["--channel", channel], attempts: attempts).sorted { "\($0["userId"] ?? "")" < "\($1["userId"] ?? "")" }
    }

    /// The text of a history line's message (a Chat SDK or a pnreplicate body alike).
    static func text(of line: [String: Any]) -> String? {
        (line["message"] as? [String: Any])?["text"] as? String
    }
}

/// JSON values compared as text: keys sorted, so that a mismatch prints both sides readably.
func canonicalJSON(_ value: Any?) -> String {
    guard let value, let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed])
    else { return "null" }
    return String(decoding: data, as: UTF8.self)
}

/// The Chat SDK's conversations on the command line (issue 32, docs/conversations.md): what Chat
/// SDK clients write (a direct conversation, a group invitation, mentions, a thread, a forward, a
/// device) reads after `sync` as the Chat SDK's API would return it for the same user; a direct
/// conversation opened offline on pnreplicate and by a Chat SDK client meets in one channel with
/// two memberships and every message once, through kills too; what cannot be done is refused
/// before anything is queued.
@Suite(
    "Chat SDK conversations on the command line",
    .enabled(if: OfficialSDK.isInstalled || OfficialSDK.isRequired, "the pubnub Python package is not installed"))
struct ConversationCommandTests {
    @Test("what Chat SDK clients wrote (a direct conversation, a group invitation, mentions, a thread, a forward, a device) reads the same after sync; joining accepts an invitation",
          .timeLimit(.minutes(10)))
    func chatSDKWritesReadTheSame() async throws {
        let simulator = try await SimulatorProcess(faults: "none", seed: 321)
        defer { simulator.stop() }
        let peer = try ConversationsPeer(simulator)
        let alice = ChatUserCLI("alice", origin: simulator.origin)
        try await alice.ok(["join", "--channel", "general"], offline: true)

        // Chat SDK clients: bob opens a direct conversation with alice and mentions her there,
        // carol invites her to a group, bob starts a thread in general (two replies, the second
        // mentioning alice), forwards carol's message from random into general, registers a device.
        let direct = try await peer.object("direct", ["--as", "bob", "--with", "alice"])
        let directId = try #require(direct["channelId"] as? String)
        let directInvite = try #require(direct["inviteTimetoken"] as? Int, "\(direct)")
        let group = try await peer.object("group", ["--as", "carol", "--users", "alice", "--id", "team", "--name", "Team"])
        let groupInvite = try #require((group["inviteTimetokens"] as? [String: Any])?["alice"] as? Int, "\(group)")
        let directMention = try await peer.send(as: "bob", channel: directId, text: "hi @alice, welcome", mentions: ["alice"])
        let root = try await peer.send(as: "bob", channel: "general", text: "root message")
        let first = try await peer.object("reply", ["--as", "bob", "--channel", "general", "--message", "\(root)", "--text", "first reply"])
        let second = try await peer.object(
            "reply", ["--as", "bob", "--channel", "general", "--message", "\(root)", "--text", "second reply for @alice", "--mention", "alice"])
        let thread = "PUBNUB_INTERNAL_THREAD_general_\(root)"
        #expect(first["threadChannel"] as? String == thread && second["threadChannel"] as? String == thread, "\(first) \(second)")
        let firstReply = try #require(first["timetoken"] as? Int), secondReply = try #require(second["timetoken"] as? Int)
        let original = try await peer.send(as: "carol", channel: "random", text: "worth sharing")
        let forwardedOutput = try await peer.run("forward", ["--as", "bob", "--channel", "random", "--message", "\(original)", "--to", "general"])
        let forwarded = try #require(Int(forwardedOutput.trimmingCharacters(in: .whitespacesAndNewlines)), "\(forwardedOutput)")
        try await peer.run("push-add", ["--as", "bob", "--channels", "general,\(directId)", "--device-token", "device32", "--type", "fcm"])
        let devices = try await peer.object("push-list", ["--as", "bob", "--device-token", "device32", "--type", "fcm"])
        #expect((devices["channels"] as? [String])?.sorted() == [directId, "general"].sorted(), "\(devices)")
        // pnreplicate reads the Chat SDK's registration, and its own offline one reaches PubNub.
        let listed = try await alice.json(["push", "list", "--device-token", "device32", "--type", "fcm"]) as? [String]
        #expect(listed?.sorted() == [directId, "general"].sorted(), "\(String(describing: listed))")
        let queued = try await alice.run(["push", "add", "--device-token", "a1b2", "--type", "apns2", "--topic", "com.example.chat",
                                          "--environment", "production", "--channel", "general"], offline: true)
        #expect(queued.status == 0, "\(queued.stderr)")
        let events = try await peer.lines("events", ["--user", "alice"])
        let mentionEvents = events.filter { $0["type"] as? String == "mention" }
        try #require(mentionEvents.count == 2, "\(events)")
        let directEvent = try #require(mentionEvents[0]["timetoken"] as? Int), threadEvent = try #require(mentionEvents[1]["timetoken"] as? Int)

        // alice syncs; general listed in full learns the thread; the next sync pulls its replies.
        try await alice.sync()
        let apns = try await peer.object(
            "push-list", ["--as", "alice", "--device-token", "a1b2", "--type", "apns2", "--topic", "com.example.chat", "--environment", "production"])
        #expect(apns["channels"] as? [String] == ["general"], "\(apns)")
        let hot = try await alice.run(["sync", "--channel", "general", "--timeout", "40"])
        try #require(hot.status == 0, "sync --channel general exited \(hot.status): \(hot.stdout)\(hot.stderr)")
        try await alice.sync()
        #expect(try await alice.outbox().isEmpty)

        // Both invitations are open, newest first, with who sent them (the direct one pending as
        // the Chat SDK wrote it: alice has not joined).
        let invitations = try await alice.json(["invites"])
        let expectedInvitations: [[String: Any]] = [
            ["channelId": "team", "channelName": "Team", "channelType": "group", "invitedBy": "carol", "status": "pending", "timetoken": groupInvite],
            ["channelId": directId, "channelName": directId, "channelType": "direct", "invitedBy": "bob", "status": "pending", "timetoken": directInvite],
        ]
        #expect(canonicalJSON(invitations) == canonicalJSON(expectedInvitations))

        // The direct channel alice holds is the one bob's Chat SDK computed.
        let channels = try await alice.json(["show", "channels"]) as? [[String: Any]] ?? []
        let directChannels = channels.filter { $0["type"] as? String == "direct" }
        #expect(directChannels.map { $0["id"] as? String } == [directId], "\(channels)")
        #expect(directChannels.first?["name"] as? String == directId)

        // Mentions and invitations on alice's own channel are events, not messages.
        let own = try CLI.json(try await alice.ok(["history", "--channel", "alice", "--json"]))
        #expect((own["messages"] as? [Any])?.isEmpty == true, "\(own)")

        // The mentions feed, newest first, each resolved to its message; the thread reply's names
        // the parent channel.
        let general = try CLI.json(try await alice.ok(["history", "--channel", "general", "--json"]))["messages"] as? [[String: Any]] ?? []
        let directMessages = try CLI.json(try await alice.ok(["history", "--channel", directId, "--json"]))["messages"] as? [[String: Any]] ?? []
        let repliesOutput = try CLI.json(try await alice.ok(["thread", "replies", "--channel", "general", "--message", "\(root)", "--json"]))
        let replies = repliesOutput["messages"] as? [[String: Any]] ?? []
        func id(of timetoken: Int, in messages: [[String: Any]]) -> Any {
            messages.first { $0["timetoken"] as? String == "\(timetoken)" }?["id"] ?? NSNull()
        }
        let expectedMentions: [[String: Any]] = [
            [
                "channelId": thread, "parentChannelId": "general", "messageTimetoken": secondReply, "timetoken": threadEvent,
                "mentionedBy": "bob", "messageId": id(of: secondReply, in: replies), "text": "second reply for [alice](pn-user://alice)",
            ],
            [
                "channelId": directId, "messageTimetoken": directMention, "timetoken": directEvent, "mentionedBy": "bob",
                "messageId": id(of: directMention, in: directMessages), "text": "hi [alice](pn-user://alice), welcome",
            ],
        ]
        #expect(canonicalJSON(try await alice.json(["mentions"])) == canonicalJSON(expectedMentions))

        // The thread: one root with two replies, both listed oldest first.
        let expectedThreads: [[String: Any]] = [
            [
                "channelId": thread, "rootMessageId": id(of: root, in: general), "rootTimetoken": root, "text": "root message",
                "replyCount": 2, "newestReply": secondReply,
            ]
        ]
        #expect(canonicalJSON(try await alice.json(["thread", "list", "--channel", "general"])) == canonicalJSON(expectedThreads))
        #expect(repliesOutput["channel"] as? String == thread)
        let shownReplies = replies.map { "\($0["timetoken"] ?? "") \($0["userId"] ?? "") \($0["text"] ?? "")" }
        #expect(shownReplies == ["\(firstReply) bob first reply", "\(secondReply) bob second reply for [alice](pn-user://alice)"])
        #expect(general.first { $0["timetoken"] as? String == "\(root)" }?["hasThread"] as? Bool == true, "\(general)")

        // The forwarded message: bob's, with carol's content and where it came from in meta.
        let forward = try #require(general.first { $0["timetoken"] as? String == "\(forwarded)" }, "\(general)")
        #expect(forward["userId"] as? String == "bob" && forward["text"] as? String == "worth sharing", "\(forward)")
        #expect(canonicalJSON(forward["meta"]) == canonicalJSON(["originalPublisher": "carol", "originalChannelId": "random"]))

        // Opening the direct conversation computes the same id; the store held the channel and
        // alice's invitation (kept pending: the Chat SDK's host membership sets no status), so only
        // bob's membership (made only where the server has none) and its invite are queued, once.
        let opened = try CLI.json(try await alice.ok(["conversation", "direct", "--user", "bob", "--json"]))
        #expect(opened["channelId"] as? String == directId && opened["type"] as? String == "direct", "\(opened)")
        #expect((opened["memberships"] as? [[String: Any]])?.first.map(canonicalJSON) == canonicalJSON(["userId": "alice", "status": "pending"]))
        let again = try CLI.json(try await alice.ok(["conversation", "direct", "--user", "bob", "--json"]))
        #expect(again["channelId"] as? String == directId && (again["opIds"] as? [Any])?.isEmpty == true, "\(again)")
        try await alice.sync()
        #expect(try await alice.outbox().isEmpty)
        // bob was a member: his membership is untouched and he gets no invitation.
        let invited = (direct["inviteeMembership"] as? [String: Any])?["custom"]
        let directMembers = try await peer.members(of: directId)
        #expect(directMembers.map { "\($0["userId"] as? String ?? "-") \($0["status"] as? String ?? "nil") \(canonicalJSON($0["custom"]))" }
                    == ["alice pending \(canonicalJSON(invited))", "bob nil null"], "\(directMembers)")
        #expect(try await peer.lines("events", ["--user", "bob"]).isEmpty)
        let storedMembers = try await alice.json(["show", "members", "--channel", directId]) as? [[String: Any]] ?? []
        let storedStatuses = storedMembers.map { "\(($0["uuid"] as? [String: Any])?["id"] as? String ?? "-") \($0["status"] as? String ?? "nil")" }.sorted()
        #expect(storedStatuses == ["alice pending", "bob nil"], "\(storedMembers)")

        // Forwarding from pnreplicate reads as a Chat SDK forward: a text message with the two meta keys.
        let mentionId = try #require(id(of: directMention, in: directMessages) as? String)
        try await alice.ok(["forward", "--message", mentionId, "--channel", "general"], offline: true)
        // Joining the group accepts carol's invitation.
        try await alice.ok(["join", "--channel", "team"], offline: true)
        try await alice.sync()
        #expect(try await alice.outbox().isEmpty)
        let teamMembers = try await peer.members(of: "team")
        #expect(teamMembers.map { "\($0["userId"] as? String ?? "-") \($0["status"] as? String ?? "nil")" } == ["alice joined", "carol nil"], "\(teamMembers)")
        #expect(try await peer.lines("invitees", ["--channel", "team"]).isEmpty)
        let remaining = try await alice.json(["invites"]) as? [[String: Any]] ?? []
        #expect(remaining.map { $0["channelId"] as? String } == [directId], "\(remaining)")
        let sharedLine = try #require(try await peer.history(of: "general").last)
        let shared = sharedLine["message"] as? [String: Any] ?? [:]
        #expect(sharedLine["uuid"] as? String == "alice" && shared["type"] as? String == "text", "\(sharedLine)")
        #expect(shared["text"] as? String == "hi [alice](pn-user://alice), welcome" && (shared["files"] as? [Any])?.isEmpty == true, "\(shared)")
        var meta = sharedLine["meta"] as? [String: Any] ?? [:]
        meta["pnr_op"] = nil   // pnreplicate's own marker of the op that published it
        #expect(canonicalJSON(meta) == canonicalJSON(["originalPublisher": "bob", "originalChannelId": directId]))

        // Mark all read reads as the Chat SDK's `markAllMessagesAsRead`: one op for every channel,
        // each position the channel's newest message, each status kept.
        let marked = try await alice.json(["read", "--all"], offline: true) as? [String: Any] ?? [:]
        #expect((marked["channels"] as? [String])?.sorted() == [directId, "general"].sorted(), "\(marked)")
        #expect((marked["opIds"] as? [Any])?.count == 1, "one op: \(marked)")
        try await alice.sync()
        #expect(try await alice.outbox().isEmpty)
        let positions = try await peer.lines("memberships", ["--user", "alice"])
        for (channel, status) in [("general", "joined"), (directId, "pending")] {
            let membership = positions.first { $0["channelId"] as? String == channel }
            let newest = try #require(try await peer.history(of: channel).last?["timetoken"] as? Int)
            let position = (membership?["custom"] as? [String: Any])?["lastReadMessageTimetoken"] as? String
            #expect(membership?["status"] as? String == status && position == String(newest), "\(channel): \(positions)")
        }
    }

    @Test("a direct conversation opened offline on pnreplicate and by a Chat SDK client meets in one channel: two memberships, every message once, no invitation of a member",
          .timeLimit(.minutes(10)))
    func directConversationFromTwoDevices() async throws {
        let simulator = try await SimulatorProcess(faults: "none", seed: 322)
        defer { simulator.stop() }
        let peer = try ConversationsPeer(simulator)
        let alice = ChatUserCLI("alice", origin: simulator.origin)
        let directId = try await openOffline(alice)

        let bobs = try await peer.object("direct", ["--as", "bob", "--with", "alice"])
        #expect(bobs["channelId"] as? String == directId, "alice computed \(directId), bob's Chat SDK \(bobs)")
        let bobsMessage = try await peer.send(as: "bob", channel: directId, text: "bob 1")
        try await alice.sync()
        try await expectOneConversation(alice, peer, directId, bob: bobsMessage, alice: ["alice 1", "alice 2"])
    }

    /// Kills that leave work behind: 3 in `swift test`; PNREPLICATE_KILL_ROUNDS for more.
    static var rounds: Int { Int(ProcessInfo.processInfo.environment["PNREPLICATE_KILL_ROUNDS"] ?? "") ?? 3 }

    @Test("the same direct conversation through a flaky simulator, sync killed with SIGKILL at random moments: two memberships, every message once",
          .timeLimit(.minutes(10)))
    func directConversationThroughKills() async throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["PNREPLICATE_KILL_SEED"] ?? "") ?? 323
        let simulator = try await SimulatorProcess(faults: "flaky", seed: seed)
        defer { simulator.stop() }
        let peer = try ConversationsPeer(simulator)
        let alice = ChatUserCLI("alice", origin: simulator.origin)
        let directId = try await openOffline(alice)
        var texts = ["alice 1", "alice 2"]

        // bob's Chat SDK: opening again after a refusal writes the same state (an invitation seen
        // already is not made twice); his message is published once, looked for after a failure.
        let bobs = try await peer.object("direct", ["--as", "bob", "--with", "alice"], attempts: 20)
        #expect(bobs["channelId"] as? String == directId, "alice computed \(directId), bob's Chat SDK \(bobs)")
        let bobsMessage = try await peer.sendOnce(as: "bob", channel: directId, text: "bob 1")

        // Two more sends whenever a kill found the outbox empty; rounds go on until `rounds` kills
        // landed while there was work, or four times as many rounds passed.
        var random = SystemRandomNumberGenerator()
        var killedWithWorkLeft = 0, round = 0
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
            #expect(ended == Termination(reason: .uncaughtSignal, status: SIGKILL) || (ended.reason == .exit && [0, 3, 4].contains(ended.status)),
                    "round \(round): \(ended)")
            if try await alice.outbox().isEmpty {
                for _ in 0..<2 {
                    texts.append("alice \(texts.count + 1)")
                    try await alice.ok(["send", "--channel", directId, "--text", texts.last!], offline: true)
                }
            } else {
                killedWithWorkLeft += 1
            }
        }
        #expect(killedWithWorkLeft == Self.rounds, "only \(killedWithWorkLeft) of \(round) kills left work behind")
        try await alice.sync(attempts: 10)
        try await expectOneConversation(alice, peer, directId, bob: bobsMessage, alice: texts, attempts: 20, seed: seed)
    }

    @Test("forward to the message's own channel, a direct conversation with oneself and an invitation to a channel not in the store are refused; nothing is queued",
          .timeLimit(.minutes(10)))
    func refusals() async throws {
        let simulator = try await SimulatorProcess(faults: "none", seed: 324)
        defer { simulator.stop() }
        let alice = ChatUserCLI("alice", origin: simulator.origin)
        try await alice.ok(["join", "--channel", "general"], offline: true)
        let sent = try CLI.json(try await alice.ok(["send", "--channel", "general", "--text", "hello", "--json"], offline: true))
        let messageId = try #require(sent["id"] as? String)
        // Only a sent message can be forwarded (the Chat SDK forwards what it read from history).
        let unsent = try await alice.run(["forward", "--message", messageId, "--channel", "random"], offline: true)
        #expect(unsent.status == 1 && unsent.stdout.isEmpty && unsent.stderr == "pnreplicate: message \(messageId) has not been sent yet\n",
                "\(unsent.status) \(unsent.stdout)\(unsent.stderr)")
        try await alice.sync()
        #expect(try await alice.outbox().isEmpty)

        for json in [[], ["--json"]] {
            let same = try await alice.run(["forward", "--message", messageId, "--channel", "general"] + json, offline: true)
            #expect(same.status == 1 && same.stdout.isEmpty
                        && same.stderr == "pnreplicate: the message is in general already; forward it to another channel\n",
                    "\(json): \(same.status) \(same.stdout)\(same.stderr)")

            let nowhere = try await alice.run(["invite", "--channel", "nowhere", "--user", "bob"] + json, offline: true)
            #expect(nowhere.status == 1 && nowhere.stdout.isEmpty && nowhere.stderr == "pnreplicate: no channel nowhere in the store\n",
                    "\(json): \(nowhere.status) \(nowhere.stdout)\(nowhere.stderr)")

            let alone = try await alice.run(["conversation", "direct", "--user", "alice"] + json, offline: true)
            #expect(alone.status == 1 && alone.stdout.isEmpty && alone.stderr.hasPrefix("pnreplicate: ") && alone.stderr.contains("alice"),
                    "\(json): \(alone.status) \(alone.stdout)\(alone.stderr)")
            #expect(alone.stderr.contains("a direct conversation is with another user"), "\(alone.stderr)")
        }
        #expect(try await alice.outbox().isEmpty)
        let plan = try await alice.json(["--dry-run"], offline: true) as? [String: Any]
        #expect((plan?["ops"] as? [Any])?.isEmpty == true, "\(String(describing: plan))")
        // Nothing reached the server either: general holds the one message.
        let history = try CLI.json(try await alice.ok(["history", "--channel", "general", "--remote", "--json"]))["messages"] as? [[String: Any]] ?? []
        #expect(history.map { $0["text"] as? String } == ["hello"], "\(history)")
    }

    // MARK: - The two-device scenario

    /// alice, offline, opens the direct conversation with bob and sends twice into it; checks the
    /// receipt (her membership joined, bob's invitation pending, three ops); the channel id.
    private func openOffline(_ alice: ChatUserCLI) async throws -> String {
        let opened = try CLI.json(try await alice.ok(["conversation", "direct", "--user", "bob", "--json"], offline: true))
        let directId = try #require(opened["channelId"] as? String, "\(opened)")
        #expect(directId.hasPrefix("direct.") && opened["type"] as? String == "direct", "\(opened)")
        #expect(canonicalJSON(opened["memberships"]) == canonicalJSON([["userId": "alice", "status": "joined"], ["userId": "bob", "status": "pending"]]))
        #expect((opened["opIds"] as? [Any])?.count == 3, "the channel, alice's membership, bob's invitation: \(opened)")
        for text in ["alice 1", "alice 2"] {
            try await alice.ok(["send", "--channel", directId, "--text", text], offline: true)
        }
        return directId
    }

    /// After alice's sync: exactly two memberships on the server (alice's as bob's invitation made
    /// it, pending: her own membership write is create-only, as the Chat SDK's names no status;
    /// bob's own as his Chat SDK wrote it, not made pending), bob's message then each of alice's
    /// once and in order, no invitation on bob's channel, nothing left to send, and bob's
    /// invitation open in alice's store.
    private func expectOneConversation(
        _ alice: ChatUserCLI, _ peer: ConversationsPeer, _ directId: String, bob bobsMessage: Int, alice texts: [String],
        attempts: Int = 1, seed: UInt64? = nil
    ) async throws {
        let context = seed.map { "seed \($0)" } ?? "no faults"
        #expect(try await alice.outbox().isEmpty, "\(context)")
        let members = try await peer.members(of: directId, attempts: attempts)
        #expect(members.map { "\($0["userId"] as? String ?? "-") \($0["status"] as? String ?? "nil")" } == ["alice pending", "bob nil"], "\(context): \(members)")
        // bob's invitation carries alice's read position (unless the flaky run made bob's Chat SDK
        // retry `invite`, which then finds her a member and writes none); bob's membership has no
        // custom, as he wrote it.
        let read = (members.first?["custom"] as? [String: Any])?["lastReadMessageTimetoken"] as? String
        #expect((seed != nil || read.flatMap(UInt64.init) != nil) && members.last?["custom"] is NSNull, "\(context): \(members)")
        let history = try await peer.history(of: directId, attempts: attempts)
        let lines = history.map { "\($0["uuid"] ?? "") \(ConversationsPeer.text(of: $0) ?? "-")" }
        #expect(lines == ["bob bob 1"] + texts.map { "alice \($0)" }, "\(context)")
        #expect(history.first?["timetoken"] as? Int == bobsMessage, "\(context): \(history)")
        #expect(try await peer.lines("events", ["--user", "bob"], attempts: attempts).isEmpty, "\(context): bob was a member, yet was invited")
        let open = try await alice.json(["invites"]) as? [[String: Any]]
        #expect(open?.map { $0["channelId"] as? String } == [directId], "\(context): \(String(describing: open))")
        let shown = try await alice.shownTexts(directId)
        #expect(shown == ["bob 1"] + texts, "\(context)")
    }
}
