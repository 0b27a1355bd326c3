import Foundation
import PubNubSimulator
import PubNubWire
import ReplicaModel
import ReplicaStore
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `pnreplicate listen --json` process and the JSON lines it has printed.
final class ListenProcess {
    let process: ChildProcess

    init(store: String, channel: String, environment: [String: String]) throws {
        // No backtracer: one that hangs after a crash would hold the pipes open, and the test with them.
        process = try ChildProcess(
            CLI.binary.path, ["listen", "--store", store, "--json", "--channel", channel],
            environment: environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { _, new in new }, stdout: .pipe, stderr: .pipe)
    }

    /// A test that stops early (a failed requirement) leaves no listener behind.
    deinit { process.signal(SIGKILL) }

    /// Every complete line printed so far, parsed, once there are more than `count` (fewer when
    /// the output ended or `limit` passed first).
    func lines(moreThan count: Int, within limit: Duration = .seconds(30)) async throws -> [[String: Any]] {
        // The wait blocks a thread: not one of Swift's cooperative pool, which other tests need.
        let process = self.process
        let text = try await offPool { process.stdout(when: { Self.complete($0).count > count }, within: limit) }
        return try Self.complete(text).map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
        }
    }

    /// The newline-terminated lines of `text`.
    static func complete(_ text: String) -> [Substring] {
        guard let end = text.lastIndex(of: "\n") else { return [] }
        return text[..<end].split(separator: "\n", omittingEmptySubsequences: false)
    }
}

/// Publishes chat messages from the test process, each exactly once: a publish that fails is
/// looked up in history before it is sent again (a lost answer may hide an applied publish).
struct Publisher {
    /// Part of every message's text, which `listen` must never print.
    static let secret = "do-not-print"

    let client: PubNubClient
    let channel: String
    /// Message ids in publish order.
    private(set) var ids: [String] = []
    /// Each message's timetoken.
    private(set) var timetokens: [String: Timetoken] = [:]

    init(origin: String, channel: String) throws {
        client = PubNubClient(
            configuration: try PubNubConfiguration(publishKey: "demo", subscribeKey: "demo", userId: "writer", origin: origin),
            transport: URLSessionTransport())
        self.channel = channel
    }

    /// Publishes the next message (`lk-1`, `lk-2`, ...); returns its id.
    @discardableResult
    mutating func publishNext() async throws -> String {
        let id = "lk-\(ids.count + 1)"
        let message: JSONValue = [
            "id": .string(id), "text": .string("\(Self.secret) \(id)"),
            "createdAt": .string(ISOTimestamp(date: Date()).description),
        ]
        for _ in 0..<50 {
            do {
                let timetoken = try await client.publish(PublishRequest(channel: channel, message: message))
                return record(id, timetoken)
            } catch {
                if let timetoken = try await lookUp(id) { return record(id, timetoken) }
            }
        }
        throw PublishFailed(id: id)
    }

    private mutating func record(_ id: String, _ timetoken: Timetoken) -> String {
        ids.append(id)
        timetokens[id] = timetoken
        return id
    }

    /// The timetoken of `id` among the newest messages of the channel, or nil.
    private func lookUp(_ id: String) async throws -> Timetoken? {
        for _ in 0..<50 {
            guard let page = try? await client.history.fetchHistory(HistoryQuery(channels: [channel], max: 100)) else { continue }
            return (page.channels[channel] ?? []).first { entry in
                if case .object(let body) = entry.message, case .string(id)? = body["id"] { return true }
                return false
            }?.timetoken
        }
        throw PublishFailed(id: id)
    }

    struct PublishFailed: Error {
        var id: String
    }
}

@Suite("pnreplicate listen")
struct ListenKillTests {
    /// Rounds of kill-and-restart: 20 in `swift test`; PNREPLICATE_LISTEN_KILL_ROUNDS=200 for the long run.
    static var rounds: Int { Int(ProcessInfo.processInfo.environment["PNREPLICATE_LISTEN_KILL_ROUNDS"] ?? "") ?? 20 }
    static let channel = "live-a"

    /// No faults; and `live`, where long polls are cut, cursors forgotten and buffers overflow too
    /// (every request may fail, with real-time latency and backoffs: the slower case).
    @Test(
        "listen killed at random moments while messages keep coming, restarted on the same store: every message exactly once, the missed ones through the gap fill",
        arguments: ["none", "live"])
    func killAndRestart(faults: String) async throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["PNREPLICATE_LISTEN_KILL_SEED"] ?? "") ?? 11
        // Idle long polls end after a second, so that a listener never waits long on an empty stream.
        let simulator = try await SimulatorProcess(faults: faults, seed: seed, arguments: ["--subscribe-hold", "1"])
        defer { simulator.stop() }
        let store = CLI.temporaryStore()
        let env = ["PUBNUB_USER_ID": "listener", "PUBNUB_ORIGIN": simulator.origin]
        var publisher = try Publisher(origin: simulator.origin, channel: Self.channel)
        var random = SplitMix64(seed: seed)
        let context = "seed \(seed), faults \(faults)"
        var output: [String] = []
        var killedBeforeLive = 0
        var killedWhileLive = 0

        for round in 0..<Self.rounds {
            // Published while no listen runs: only the next run's gap fill can bring these.
            for _ in 0..<Int.random(in: 0...3, using: &random) { try await publisher.publishNext() }
            let listen = try ListenProcess(store: store, channel: Self.channel, environment: env)
            // The kill moment is a number of output lines: during the handshake, the fill, or the events.
            let killAfter = Int.random(in: 1...8, using: &random)
            var lines: [[String: Any]] = []
            while lines.count < killAfter {
                let more = try await listen.lines(moreThan: lines.count)
                guard more.count > lines.count else {
                    Issue.record("\(context), round \(round): listen printed nothing new after \(lines.count) lines: \(listen.process.stderr)")
                    break
                }
                lines = more
                // One more message per line read: the stream always has something coming, and
                // messages keep arriving while the listener connects, fills and dies.
                try await publisher.publishNext()
            }
            listen.process.signal(SIGKILL)
            let process = listen.process
            let ended = try await offPool { process.wait() }
            #expect(ended == Termination(reason: .uncaughtSignal, status: SIGKILL), "\(context), round \(round): \(listen.process.stderr)")
            output.append(listen.process.stdout)
            if lines.contains(where: { $0["type"] as? String == "state" && $0["state"] as? String == "live" }) {
                killedWhileLive += 1
            } else {
                killedBeforeLive += 1
            }
        }
        if Self.rounds >= 10 {
            // The kills must land in both phases, or the test would prove less than it says.
            #expect(killedBeforeLive > 0 && killedWhileLive > 0, "\(context): \(killedBeforeLive) kills before live, \(killedWhileLive) while live")
        }

        // The last run: messages published while nothing listened, then one while it is live.
        let missed = Int.random(in: 1...3, using: &random)
        for _ in 0..<missed { try await publisher.publishNext() }
        let listen = try ListenProcess(store: store, channel: Self.channel, environment: env)
        var lines: [[String: Any]] = []
        while !lines.contains(where: { $0["type"] as? String == "state" && $0["state"] as? String == "live" }) {
            let more = try await listen.lines(moreThan: lines.count)
            try #require(more.count > lines.count, "\(context): the last listen never went live: \(listen.process.stderr)")
            lines = more
        }
        let recovered = lines.first { $0["type"] as? String == "gap-filled" }?["recoveredMessages"] as? Int ?? 0
        if faults == "none" {
            // The first connect's fill brought what was published while no listen ran. (With
            // faults, a fill that failed after storing them may leave the count to nobody.)
            #expect(recovered >= missed, "\(context): the first fill recovered \(recovered) messages, \(missed) were published while no listen ran")
        }
        let missedIds = Set(publisher.ids.suffix(missed))
        let last = try await publisher.publishNext()
        // Caught up once the store holds every message (checked after each line: with faults,
        // the last message may come through a fill rather than as an event).
        while try await !Self.store(store, holds: publisher.ids) {
            let more = try await listen.lines(moreThan: lines.count)
            try #require(more.count > lines.count, "\(context): the last listen stopped short of \(last): \(listen.process.stderr)")
            lines = more
        }
        listen.process.terminate()
        let ended = await listen.process.wait(until: .now + .seconds(30))
        #expect(ended == Termination(reason: .exit, status: 0), "\(context): listen on SIGTERM: \(listen.process.stderr)")
        let final = try await listen.lines(moreThan: Int.max)
        #expect(final.last?["type"] as? String == "state" && final.last?["state"] as? String == "stopped", "\(context): \(final.last ?? [:])")
        // The store was closed: its last connection took the WAL with it.
        #expect(!FileManager.default.fileExists(atPath: store + "-wal"), "\(context): \(store)-wal is left after SIGTERM")
        output.append(listen.process.stdout)
        // What was published while no listen ran cannot come as an event (it predates the
        // handshake's cursor): once stored (below), it came through a gap fill.
        let events = Set(final.filter { $0["type"] as? String == "event" }.compactMap { $0["subject"] as? String })
        #expect(missedIds.isDisjoint(with: events), "\(context): \(missedIds.intersection(events).sorted()) came as events")

        var options = StoreOptions()
        options.readOnly = true
        let chat = try ChatStore<DefaultChatCustom>.open(at: store, options: options)
        let local = try await chat.fetch(chat.queries.messages(inChannel: Self.channel))
        let ids = local.map(\.id)
        #expect(ids.count == publisher.ids.count, "\(context): \(ids.count) messages stored for \(publisher.ids.count) published")
        #expect(Set(ids) == Set(publisher.ids), "\(context): missing \(Set(publisher.ids).subtracting(ids).sorted()), unexpected \(Set(ids).subtracting(publisher.ids).sorted())")
        #expect(Set(ids).count == ids.count, "\(context): duplicate ids")
        let timetokens = local.compactMap(\.timetoken)
        #expect(timetokens.count == local.count && Set(timetokens).count == timetokens.count, "\(context): duplicate or missing timetokens")
        for message in local {
            #expect(message.timetoken == publisher.timetokens[message.id], "\(context): \(message.id) stored at \(message.timetoken.map(String.init(describing:)) ?? "nil")")
        }
        // Ids only, never the text.
        #expect(!output.contains { $0.contains(Publisher.secret) }, "\(context): listen printed message text")
    }

    @Test("listen in text mode: one line per event, states on stderr with --verbose, exit 0 on SIGINT")
    func textMode() async throws {
        let simulator = try await SimulatorProcess(faults: "none", seed: 1, arguments: ["--subscribe-hold", "1"])
        defer { simulator.stop() }
        var publisher = try Publisher(origin: simulator.origin, channel: Self.channel)
        let env = ["PUBNUB_USER_ID": "listener", "PUBNUB_ORIGIN": simulator.origin, "SWIFT_BACKTRACE": "enable=no"]
        let listen = try ChildProcess(
            CLI.binary.path, ["listen", "--store", CLI.temporaryStore(), "--verbose", "--channel", Self.channel],
            environment: env, stdout: .pipe, stderr: .pipe)
        defer { listen.signal(SIGKILL) }  // a no-op once it has ended
        let states = try await offPool { listen.stderr(when: { $0.contains("state: live\n") }, within: .seconds(30)) }
        try #require(states.contains("state: live\n"), "\(states)")
        #expect(states.contains("gap filled through "), "\(states)")
        let id = try await publisher.publishNext()
        let timetoken = try #require(publisher.timetokens[id])
        let expected = "\(Self.channel) \(timetoken) message \(id) inserted (from writer)\n"
        let printed = try await offPool { listen.stdout(when: { $0.contains("\n") }, within: .seconds(30)) }
        #expect(printed == expected)
        listen.signal(SIGINT)
        let ended = await listen.wait(until: .now + .seconds(30))
        #expect(ended == Termination(reason: .exit, status: 0), "\(listen.stderr)")
        #expect(listen.stdout == expected)
        #expect(listen.stderr.hasSuffix("state: stopped\n"), "\(listen.stderr)")
        #expect(!listen.stderr.contains(Publisher.secret))
    }

    @Test("listen refuses a channel the model cannot store before it opens anything")
    func refusesBadChannel() async throws {
        let store = CLI.temporaryStore()
        let result = try await CLI.run(["listen", "--store", store, "--channel", "a,b"])
        #expect(result.status != 0 && result.stderr.contains("--channel \"a,b\""), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: store))
    }

    /// Whether the store at `path` holds a message for each of `ids` (read-only; closed on return).
    static func store(_ path: String, holds ids: [String]) async throws -> Bool {
        var options = StoreOptions()
        options.readOnly = true
        let chat = try ChatStore<DefaultChatCustom>.open(at: path, options: options)
        let stored = try await chat.fetch(chat.queries.messages(inChannel: channel)).map(\.id)
        // Closed now, not whenever the pool is released: a reader still open when listen stops
        // would keep its WAL from being removed (listen's last close cannot take it then).
        try chat.close()
        return Set(ids).isSubset(of: stored)
    }
}
