import Foundation
import ReplicaModel
import ReplicaStore
import Testing

@Suite("pnreplicate checkpoints, show, conflicts list and history read the store only")
struct ReadCommandTests {
    /// A demo store (one user, channel, membership and message), as `pnreplicate demo` makes it.
    static func demoStore() async throws -> String {
        let store = CLI.temporaryStore()
        let demo = try await CLI.run(["demo", "--store", store])
        try #require(demo.status == 0, "\(demo.stderr)")
        return store
    }

    /// Runs a command that must succeed and prints JSON; returns the parsed JSON.
    static func json(_ arguments: [String]) async throws -> Any {
        let result = try await CLI.run(arguments + ["--json"])
        try #require(result.status == 0, "\(arguments): \(result.stderr)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
    }

    @Test("checkpoints: none on a demo store; a saved one is listed with every field")
    func checkpoints() async throws {
        let store = try await Self.demoStore()
        let empty = try await CLI.run(["checkpoints", "--store", store])
        #expect(empty.status == 0 && empty.stdout.contains("no checkpoints"))
        #expect((try await Self.json(["checkpoints", "--store", store]) as? [Any])?.isEmpty == true)

        do {
            let chat = try ChatStore<DefaultChatCustom>.open(at: store)
            try await chat.saveCheckpoint(SyncCheckpoint(
                scope: SyncCheckpoint.history("some-channel-id"), applied: 16_521_940_800_000_000, fillTop: 16_521_940_900_000_000,
                fillCursor: 16_521_940_850_000_000, updatedAt: Date(timeIntervalSince1970: 1_700_000_000)))
        }
        let rows = try await #require(try Self.json(["checkpoints", "--store", store]) as? [[String: Any]])
        #expect(rows.count == 1)
        #expect(rows.first?["scope"] as? String == "history:some-channel-id")
        #expect(rows.first?["applied"] as? String == "16521940800000000")
        #expect(rows.first?["fillTop"] as? String == "16521940900000000")
        #expect(rows.first?["fillCursor"] as? String == "16521940850000000")
        #expect(rows.first?["cursor"] is NSNull)
        #expect(rows.first?["updatedAt"] as? String == "2023-11-14T22:13:20.000Z")
        let text = try await CLI.run(["checkpoints", "--store", store])
        #expect(text.stdout.contains("history:some-channel-id  16521940800000000  16521940900000000  16521940850000000"))
    }

    @Test("show lists the demo store's users, channels, members and messages")
    func showDemo() async throws {
        let store = try await Self.demoStore()
        let users = try await #require(try Self.json(["show", "users", "--store", store]) as? [[String: Any]])
        #expect(users.map { $0["id"] as? String } == ["some-user-id"])
        let channels = try await #require(try Self.json(["show", "channels", "--store", store]) as? [[String: Any]])
        #expect(channels.map { $0["id"] as? String } == ["some-channel-id"])
        let members = try await #require(
            try Self.json(["show", "members", "--channel", "some-channel-id", "--store", store]) as? [[String: Any]])
        #expect(members.count == 1 && members.first?["status"] as? String == "active")
        let messages = try await #require(
            try Self.json(["show", "messages", "--channel", "some-channel-id", "--store", store]) as? [[String: Any]])
        #expect(messages.map { $0["id"] as? String } == ["6da72b98-e211-4724-aad4-e0fb9f08999f"])
        #expect(messages.first?["timetoken"] as? String == "16521940800000000")
        let reactions = try await Self.json(["show", "reactions", "--channel", "some-channel-id", "--store", store]) as? [Any]
        #expect(reactions?.isEmpty == true)

        let text = try await CLI.run(["show", "users", "--store", store])
        #expect(text.status == 0)
        #expect(text.stdout.hasPrefix("id            name      type     status  email"))
        #expect(text.stdout.contains("some-user-id  Jane Doe  default  -       jane.doe@example.com"))
    }

    @Test("show reactions groups a message's reactions and marks the current user's")
    func showReactions() async throws {
        let store = try await Self.demoStore()
        do {
            let chat = try ChatStore<DefaultChatCustom>.open(at: store)
            try await chat.load(messageActions: try ["me", "you"].map { user in
                try ChatMessageAction(
                    type: "reaction", value: "👍", userId: user, channelId: "some-channel-id",
                    messageTimetoken: 16_521_940_800_000_000, actionTimetoken: 16_521_940_800_000_100)
            })
        }
        let result = try await CLI.run(
            ["show", "reactions", "--channel", "some-channel-id", "--user-id", "me", "--json", "--store", store])
        try #require(result.status == 0, "\(result.stderr)")
        let messages = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        #expect(messages.count == 1 && messages.first?["messageId"] as? String == "6da72b98-e211-4724-aad4-e0fb9f08999f")
        let groups = try #require(messages.first?["reactions"] as? [[String: Any]])
        #expect(groups.count == 1)
        #expect(groups.first?["count"] as? Int == 2 && groups.first?["mine"] as? Bool == true)
        #expect(groups.first?["userIds"] as? [String] == ["me", "you"])
    }

    @Test("show messages and reactions without --channel: one line on stderr, no output, exit 1",
          arguments: ["messages", "reactions"])
    func showNeedsChannel(kind: String) async throws {
        let store = try await Self.demoStore()
        let result = try await CLI.run(["show", kind, "--store", store])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "pnreplicate: show \(kind) needs --channel C\n")
    }

    @Test("read commands on a missing store say so and create nothing")
    func missingStore() async throws {
        let store = CLI.temporaryStore()
        for arguments in [["checkpoints"], ["show", "users"], ["conflicts", "list"], ["history", "--channel", "c"]] {
            let result = try await CLI.run(arguments + ["--store", store])
            #expect(result.status == 1, "\(arguments)")
            #expect(result.stderr == "pnreplicate: no store at \(store)\n", "\(arguments)")
        }
        #expect(!FileManager.default.fileExists(atPath: store))
    }

    @Test("conflicts list on a store without conflicts: an empty log")
    func conflictsEmpty() async throws {
        let store = try await Self.demoStore()
        let text = try await CLI.run(["conflicts", "list", "--store", store])
        #expect(text.status == 0 && text.stdout == "no conflicts logged\n")
        #expect((try await Self.json(["conflicts", "list", "--store", store]) as? [Any])?.isEmpty == true)
    }
}

@Suite("pnreplicate history reads the store with PubNub's semantics")
struct HistoryCommandTests {
    /// A store whose channel `ch` holds messages at timetokens 10, 20, ... 100 (ids `m10` ...),
    /// and one pending send.
    static func store() async throws -> String {
        let path = CLI.temporaryStore()
        let chat = try ChatStore<DefaultChatCustom>.open(at: path)
        try await chat.load(messages: try stride(from: 10, through: 100, by: 10).map { tt in
            try ChatMessage<FlatCustom>(
                id: "m\(tt)", text: "text \(tt)", createdAt: ISOTimestamp(nanoseconds: Int64(tt)), timetoken: Timetoken(rawValue: UInt64(tt)),
                userId: "alice", channelId: "ch")
        })
        try await chat.load(messages: [
            try ChatMessage<FlatCustom>(text: "pending", createdAt: ISOTimestamp(nanoseconds: 0), userId: "me", channelId: "ch"),
        ])
        return path
    }

    @Test("start exclusive, end inclusive, newest slice unless --reverse, --reverse ignored with both bounds",
          arguments: [
              ([String](), Array(stride(from: 10, through: 100, by: 10))),
              (["--limit", "3"], [80, 90, 100]),
              (["--limit", "3", "--reverse"], [10, 20, 30]),
              (["--start", "50", "--limit", "2"], [30, 40]),
              (["--end", "60", "--limit", "2", "--reverse"], [60, 70]),
              (["--start", "80", "--end", "30", "--limit", "2", "--reverse"], [60, 70]),
              (["--start", "30", "--end", "30"], [Int]()),
          ] as [([String], [Int])])
    func window(arguments: [String], expected: [Int]) async throws {
        let store = try await Self.store()
        let result = try await CLI.run(["history", "--channel", "ch", "--json", "--store", store] + arguments)
        try #require(result.status == 0, "\(arguments): \(result.stderr)")
        let json = try CLI.json(result.stdout)
        #expect(json["source"] as? String == "local")
        let messages = try #require(json["messages"] as? [[String: Any]])
        #expect(messages.map { $0["id"] as? String } == expected.map { "m\($0)" }, "\(arguments)")
    }

    @Test("text output: one message per line, oldest first")
    func text() async throws {
        let store = try await Self.store()
        let result = try await CLI.run(["history", "--channel", "ch", "--limit", "2", "--store", store])
        #expect(result.status == 0)
        #expect(result.stdout == """
            timetoken  id    user   delivery  text
            90         m90   alice  sent      text 90
            100        m100  alice  sent      text 100

            """)
    }

    @Test("a bad limit or timetoken is one line on stderr", arguments: [
        (["--limit", "0"], "pnreplicate: history limit must be 1-100, got 0\n"),
        (["--limit", "101"], "pnreplicate: history limit must be 1-100, got 101\n"),
        (["--start", "soon"], "pnreplicate: --start: not a timetoken: \"soon\" (expected decimal digits)\n"),
        (["--end", "12x"], "pnreplicate: --end: not a timetoken: \"12x\" (expected decimal digits)\n"),
    ] as [([String], String)])
    func badArguments(arguments: [String], message: String) async throws {
        let store = try await Self.store()
        let result = try await CLI.run(["history", "--channel", "ch", "--store", store] + arguments)
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == message)
    }
}

@Suite("pnreplicate sync pushes then pulls")
struct SyncPullTests {
    @Test("sync --json reports push and pull; local history then equals remote history page for page")
    func pushThenPull() async throws {
        let simulator = try await SimulatorProcess(faults: "none", seed: 1)
        defer { simulator.stop() }
        let store = CLI.temporaryStore()
        let env = ["PUBNUB_USER_ID": "me", "PUBNUB_ORIGIN": simulator.origin, "PNREPLICATE_STORE": store]
        let queued = try await CLI.run(["send", "--channel", "general", "--text", "m", "--count", "5"], environment: env)
        try #require(queued.status == 0, "\(queued.stderr)")

        let sync = try await CLI.run(["sync", "--json"], environment: env)
        try #require(sync.status == 0, "\(sync.stdout) \(sync.stderr)")
        let report = try CLI.json(sync.stdout)
        #expect((report["push"] as? [String: Any])?["completed"] as? Int == 5)
        #expect((report["errors"] as? [Any])?.isEmpty == true)
        #expect((report["history"] as? [[String: Any]])?.map { $0["channel"] as? String } == ["general", "me"], "and the user's own channel (mentions, invitations)")
        #expect((report["reactions"] as? [String: Any])?.isEmpty == true, "general is cold: its reactions are not listed")
        #expect(report["coldChannels"] as? Int == 1)
        #expect(report["objects"] is [String: Any])
        let refused = try await CLI.run(["sync", "--channel", "a,b"], environment: env)
        #expect(refused.status == 64 && refused.stderr.contains("--channel"), "\(refused.status) \(refused.stderr)")
        let hot = try await CLI.run(["sync", "--json", "--channel", "general"], environment: env)
        try #require(hot.status == 0, "\(hot.stdout) \(hot.stderr)")
        let refreshed = try CLI.json(hot.stdout)
        #expect((refreshed["reactions"] as? [String: Any])?["general"] != nil, "--channel lists its reactions")
        #expect(refreshed["coldChannels"] as? Int == 0)

        let checkpoints = try await CLI.run(["checkpoints", "--json"], environment: env)
        let scopes = try #require(try JSONSerialization.jsonObject(with: Data(checkpoints.stdout.utf8)) as? [[String: Any]])
        #expect(scopes.contains { $0["scope"] as? String == "history:general" && $0["applied"] is String })
        #expect(scopes.contains { $0["scope"] as? String == "reactions:general" && $0["applied"] is String })
        #expect(scopes.contains { $0["scope"] as? String == "members:general" && $0["applied"] is String })

        for window in [["--limit", "2"], ["--limit", "2", "--reverse"], ["--limit", "100"]] {
            func ids(_ extra: [String]) async throws -> [String] {
                let result = try await CLI.run(["history", "--channel", "general", "--json"] + window + extra, environment: env)
                try #require(result.status == 0, "\(result.stderr)")
                return (try CLI.json(result.stdout)["messages"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            }
            let local = try await ids([])
            #expect(!local.isEmpty)
            #expect(local == (try await ids(["--remote"])), "\(window)")
        }
    }

    @Test("demo loop: offline sends, a dry run, a flaky sync with a settled conflict, two devices converged")
    func loopDemo() async throws {
        let result = try await CLI.run(["demo", "loop", "--seed", "3"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("3. pnreplicate --dry-run on A:"))
        #expect(result.stdout.contains("PATCH /v2/objects/demo/channels/general"))
        #expect(result.stdout.contains("conflict on channel general: fieldMerge(lastWriter)"))
        #expect(result.stdout.contains("6. converged: yes"))
    }
}

@Suite("pnreplicate send --count")
struct SendCountTests {
    @Test("send --count 2500 queues every copy across three batch transactions, numbered in order")
    func batches() async throws {
        let store = CLI.temporaryStore()
        let queued = try await offPool {
            try CLI.runBlocking(["send", "--store", store, "--channel", "bulk", "--text", "m", "--count", "2500", "--batch-size", "1000", "--json"])
        }
        try #require(queued.status == 0, "\(queued.stderr)")
        let receipts = try #require(try JSONSerialization.jsonObject(with: Data(queued.stdout.utf8)) as? [[String: Any]])
        #expect(receipts.count == 2500 && Set(receipts.compactMap { $0["opId"] as? String }).count == 2500)
        let status = try CLI.json(try await offPool { try CLI.runBlocking(["status", "--json", "--store", store]) }.stdout)
        #expect(status["pendingOutbox"] as? Int == 2500, "\(status)")
        let shown = try await offPool { try CLI.runBlocking(["show", "messages", "--store", store, "--channel", "bulk"]) }
        let texts = shown.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: " ").suffix(2).joined(separator: " ") }
        #expect(texts == (1...2500).map { "m \($0)" }, "pending messages in send order")
    }
}
