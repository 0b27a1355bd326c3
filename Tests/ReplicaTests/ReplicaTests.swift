import Foundation
import PubNubReplica
import PubNubSimulator
import PubNubSimulatorTesting
import ReplicaModel
import Testing

/// One replica of user "alice" on a simulator, with a web client beside it.
struct ReplicaWorld {
    let clock: VirtualClock
    let server: PubNubServer
    let web: PubNubClient
    let transport: InProcessTransport
    let path = SimulatedDevice<DefaultChatCustom>.temporaryStorePath()

    /// Long polls are held up to `hold` of real time (a publish answers them at once).
    init(clock: VirtualClock = VirtualClock(), hold: Duration = .seconds(1), profile: FaultProfile = .none) async throws {
        self.clock = clock
        server = PubNubServer(clock: clock)
        await server.configureSubscribe(SubscribeSettings(hold: hold))
        web = try PubNubClient.simulated(InProcessTransport(server: server), userId: "web")
        transport = InProcessTransport(server: server, plan: FaultPlan(seed: 1, profile: profile))
        _ = try await web.perform(try web.appContext.setMembershipsRequest(
            userId: "alice", set: [MembershipSet<JSONValue>(id: "general", status: "joined")], remove: []))
    }

    var configuration: ReplicaConfiguration {
        var configuration = ReplicaConfiguration(publishKey: "demo", subscribeKey: "demo", userId: "alice", store: .file(path))
        configuration.origin = "http://sim.invalid"
        configuration.transport = transport
        configuration.clock = clock
        configuration.seed = 7
        return configuration
    }

    /// The texts the server holds in `channel`, in order.
    func serverTexts(_ channel: String = "general") async -> [String] {
        await server.storedMessages(channel: channel).map { stored in
            if case .object(let fields) = stored.message, case .string(let text)? = fields["text"] { return text }
            if case .string(let text) = stored.message { return text }
            return "\(stored.message)"
        }
    }
}

/// Waits (on the replica's own status sequence, never on time) until `predicate` holds.
@discardableResult
func status(of replica: Replica<DefaultChatCustom>, where predicate: (ReplicaStatus) -> Bool) async -> ReplicaStatus {
    for await status in replica.statuses() where predicate(status) { return status }
    return await replica.status
}

/// The locks this process holds on `paths` (their inodes), read from `/proc/locks` (Linux).
func locksHeld(on paths: [String]) throws -> [String] {
    var inodes: [UInt64: String] = [:]
    for path in paths {
        var info = stat()
        if stat(path, &info) == 0 { inodes[UInt64(info.st_ino)] = path }
    }
    #expect(!inodes.isEmpty, "none of the store's files exists: the check would prove nothing")
    let pid = ProcessInfo.processInfo.processIdentifier
    return try String(contentsOfFile: "/proc/locks", encoding: .utf8).split(separator: "\n").compactMap { line in
        // "1: POSIX  ADVISORY  READ 7683 fe:00:557152 128 128" (a "->" marks a waiter)
        let fields = line.split(separator: " ").filter { $0 != "->" }
        guard fields.count >= 6, Int32(fields[4]) == pid,
            let inode = fields[5].split(separator: ":").last.flatMap({ UInt64($0) }), let path = inodes[inode]
        else { return nil }
        return "\(path): \(line)"
    }
}

// Time limits: alone each test takes well under a second; in the whole parallel suite on two cores
// a test can wait minutes for its turn (LiveSyncTests saw 100 s).
@Suite("Replica: the one object an app configures")
struct ReplicaTests {
    // Under load this once hung in suspend(): the wait for sends in flight ended at the budget,
    // but Outbox.completion(of:) ignored the cancellation, and the held publish could only end
    // after suspend() returned. completion(of:) now ends when cancelled (CompletionRaceTests).
    @Test("offline sends, start, live, suspend in the middle of a send, resume: every message once, and no lock while suspended",
          .timeLimit(.minutes(10)))
    func lifeCycle() async throws {
        let world = try await ReplicaWorld(profile: .offline)
        let replica = try Replica<DefaultChatCustom>(world.configuration)
        let seen = ConnectionLog()
        let watcher = Task { for await status in replica.statuses() { await seen.add(status) } }

        for index in 1...3 { _ = try await replica.messages.send(text: "offline \(index)", to: "general") }
        #expect(await replica.status.pending == 3)
        await replica.start()
        let offline = await status(of: replica) { $0.isOffline }
        #expect(offline.pending == 3, "nothing can leave while offline")

        world.transport.use(FaultPlan(seed: 1, profile: .none))
        await replica.networkIsBack()
        let live = await status(of: replica) { $0.connection == .live && $0.pending == 0 && $0.sending == 0 }
        #expect(live.hasSynced)
        #expect(await world.serverTexts() == ["offline 1", "offline 2", "offline 3"])

        // A message from elsewhere arrives live, with no sync call; the observation stays open
        // across the suspend below (so the store has a user besides the replica's own parts).
        _ = try await world.web.publish(PublishRequest(channel: "general", message: .string("from the web")))
        let observed = Observed<[ChatMessage<FlatCustom>]>()
        let observer = Task {
            for try await messages in replica.observe(replica.queries.messages(inChannel: "general")) { await observed.set(messages) }
        }
        await observed.wait(until: { (messages: [ChatMessage<FlatCustom>]) -> Bool in
            messages.contains { (message: ChatMessage<FlatCustom>) -> Bool in message.text == "from the web" }
        })

        // Suspend while a publish is in flight: its answer never comes before the budget ends.
        let gate = RequestGate { $0.pathSegments.first == "publish" }
        world.transport.onRequest { await gate.pass($0) }
        _ = try await replica.messages.send(text: "during suspend", to: "general")
        await gate.waitUntilHolding()
        // An app that kept the store (against the advice) must not keep its locks either.
        let kept = try await replica.currentParts().store
        await replica.suspend()
        let files = [world.path, world.path + "-wal", world.path + "-shm", world.path + ".lock"]
        #expect(await replica.status.connection == .suspended)
        #expect(await replica.status.lastError == nil)
        #expect(try locksHeld(on: files) == [], "a suspended replica holds no lock on its files")
        // Its writer closed last, so the store was checkpointed and its -wal removed.
        #expect(!FileManager.default.fileExists(atPath: world.path + "-wal"), "the -wal is left after suspend")
        await #expect(throws: ReplicaError.suspended) { try await replica.messages.send(text: "refused", to: "general") }
        await #expect(throws: (any Error).self) { try await kept.fetch(kept.queries.outbox()) }

        await gate.open()
        try await replica.resume()
        await status(of: replica) { $0.connection == .live && $0.pending == 0 && $0.sending == 0 }
        let texts = await world.serverTexts()
        #expect(texts.filter { $0 == "during suspend" }.count == 1, "sent exactly once: \(texts)")
        let stored = try await replica.fetch(replica.queries.messages(inChannel: "general"))
        #expect(stored.map(\.text).sorted() == ["during suspend", "from the web", "offline 1", "offline 2", "offline 3"])
        #expect(stored.allSatisfy { $0.timetoken != nil })
        // The observation went on with the reopened store.
        await observed.wait(until: { (messages: [ChatMessage<FlatCustom>]) -> Bool in
            messages.contains { (message: ChatMessage<FlatCustom>) -> Bool in message.text == "during suspend" && message.timetoken != nil }
        })
        observer.cancel()

        await replica.stop()
        watcher.cancel()
        let connections = await seen.connections
        #expect(Self.inOrder(["offline", "catching up", "live", "suspended", "live"], in: connections), "\(connections)")
        #expect(await seen.pendingCounts.contains(3))
    }

    @Test("after networkIsBack() an op waiting out its backoff goes within one tick of the virtual clock",
          .timeLimit(.minutes(10)))
    func networkIsBackWakesTheOutbox() async throws {
        let clock = VirtualClock(sleeps: .untilAdvanced)
        let world = try await ReplicaWorld(clock: clock, profile: .offline)
        var configuration = world.configuration
        configuration.live.idleInterval = 3600
        let replica = try Replica<DefaultChatCustom>(configuration)
        let receipt = try await replica.messages.send(text: "waiting", to: "general")
        let events = try await replica.outbox.events()
        await replica.start()
        // The first attempt fails; the op now waits out its backoff on the virtual clock.
        for await event in events {
            if case .retrying(let opId, _, _) = event, opId == receipt.opId { break }
        }
        let entry = try #require(try await replica.fetch(replica.queries.outboxEntry(id: receipt.opId!)))
        #expect(entry.nextAttemptAt! > clock.now, "it waits for its backoff")
        world.transport.use(FaultPlan(seed: 1, profile: .none))
        let before = clock.now
        await replica.networkIsBack()
        await status(of: replica) { $0.pending == 0 && $0.sending == 0 }
        #expect(clock.now.timeIntervalSince(before) < 1, "sent without waiting for the backoff")
        #expect(await world.serverTexts() == ["waiting"])
        await replica.stop()
    }

    @Test("while catching up, the status counts the history read so far; live clears it", .timeLimit(.minutes(10)))
    func catchUpProgress() async throws {
        let world = try await ReplicaWorld()
        _ = try await world.web.perform(try world.web.appContext.setMembershipsRequest(
            userId: "alice", set: [MembershipSet<JSONValue>(id: "random", status: "joined")], remove: []))
        for index in 1...150 { _ = try await world.web.publish(PublishRequest(channel: "general", message: .string("g\(index)"))) }
        for index in 1...40 { _ = try await world.web.publish(PublishRequest(channel: "random", message: .string("r\(index)"))) }
        let replica = try Replica<DefaultChatCustom>(world.configuration)
        let seen = ProgressLog()
        let watcher = Task { for await status in replica.statuses() { await seen.add(status) } }
        await replica.start()
        let live = await status(of: replica) { $0.connection == .live }
        #expect(live.catchUp == nil)
        await replica.stop()
        watcher.cancel()

        // First the channels the store knew (the user's own), then the two its memberships name:
        // each catch-up starts at zero and counts up.
        let progress = await seen.progress
        let last = try #require(progress.last)
        let fill = progress.filter { $0.channels == last.channels }
        #expect(last.channels == 2 && fill.first == CatchUpProgress(channels: 2), "\(progress)")
        #expect(fill.contains { $0.messages > 0 && $0.messages < 190 }, "progress shows before the end: \(progress)")
        #expect(zip(fill, fill.dropFirst()).allSatisfy { $0.messages <= $1.messages && $0.pages <= $1.pages }, "\(progress)")
        let stored = try await replica.fetch(replica.queries.messages(inChannel: "general")).count
            + (try await replica.fetch(replica.queries.messages(inChannel: "random")).count)
        #expect(stored == 190)
        #expect(progress.last?.messages == stored, "the last count is every message read: \(progress)")
        #expect(progress.last?.pages == 3, "general in two pages of 100, random in one")
    }

    @Test("an empty cipher key is refused, not taken as no encryption")
    func emptyCipherKey() async throws {
        let world = try await ReplicaWorld()
        var configuration = world.configuration
        configuration.cipherKey = ""
        #expect(throws: ReplicaError.emptyCipherKey) { try Replica<DefaultChatCustom>(configuration) }
    }

    @Test("a channel observed with keepingHot is refreshed at once (a reaction from the gap arrives) and turns cold when observation ends",
          .timeLimit(.minutes(10)))
    func observedChannelIsHot() async throws {
        let world = try await ReplicaWorld()
        let timetoken = try await world.web.publish(PublishRequest(
            channel: "general", message: ["id": "m1", "text": "hi", "createdAt": "2026-01-01T00:00:00Z"]))
        _ = try await world.web.messageActions.addMessageAction(channel: "general", messageTimetoken: timetoken, type: "reaction", value: "👍")
        let replica = try Replica<DefaultChatCustom>(world.configuration)
        await replica.start()
        await status(of: replica) { $0.connection == .live }
        #expect(try await replica.fetch(replica.queries.message(id: "m1")) != nil, "every channel gets its messages")
        #expect(try await replica.fetch(replica.queries.actions(ofMessage: "m1")).isEmpty, "a cold channel's reactions are not listed")
        let cold = try await replica.fetch(replica.queries.freshness(ofChannel: "general"))
        #expect(!cold.reactions.wasListed && cold.reactions.lag(at: world.clock.now) == .infinity)

        for try await actions in replica.observe(replica.queries.actions(ofMessage: "m1"), keepingHot: "general") {
            #expect(await replica.live.hotChannels == ["general"])
            if actions.contains(where: { $0.value == "👍" && $0.userId == "web" }) { break }
        }
        var turnedCold = false
        for _ in 0..<10_000 where !turnedCold {
            turnedCold = await replica.live.hotChannels.isEmpty
            await Task.yield()
        }
        #expect(turnedCold, "unmarked when the observation ended")
        // The refresh stores the reactions, then records the listing in its own commit: the
        // observation above can see the first before the second lands.
        var listed = try await replica.fetch(replica.queries.freshness(ofChannel: "general"))
        if !listed.reactions.wasListed {
            for try await fresh in replica.observe(replica.queries.freshness(ofChannel: "general")) where fresh.reactions.wasListed {
                listed = fresh
                break
            }
        }
        #expect(listed.reactions.wasListed && !listed.reactions.hasGap && listed.reactions.lag(at: world.clock.now) < 5)

        // An id no channel can have is refused, by the mark and by the observation alike.
        await #expect(throws: ModelValidationError.self) { try await replica.live.markHot("a,b") }
        await #expect(throws: ModelValidationError.self) {
            for try await _ in replica.observe(replica.queries.message(id: "m1"), keepingHot: "") {}
        }
        #expect(await replica.live.hotChannels.isEmpty)
        await replica.stop()
    }

    /// Whether `expected` appears in `log` in this order (other entries between them allowed).
    static func inOrder(_ expected: [String], in log: [String]) -> Bool {
        var rest = expected[...]
        for entry in log where rest.first.map({ entry.hasPrefix($0) }) == true { rest = rest.dropFirst() }
        return rest.isEmpty
    }
}

/// The latest value of an observation, and a wait for a value that satisfies a condition.
actor Observed<Value: Sendable> {
    private var value: Value?
    private var waiters: [(condition: @Sendable (Value) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []

    func set(_ new: Value) {
        value = new
        let (ready, rest) = (waiters.filter { $0.condition(new) }, waiters.filter { !$0.condition(new) })
        waiters = rest
        for waiter in ready { waiter.continuation.resume() }
    }

    func wait(until condition: @escaping @Sendable (Value) -> Bool) async {
        if let value, condition(value) { return }
        await withCheckedContinuation { waiters.append((condition, $0)) }
    }
}

/// Every status a replica announced.
actor ConnectionLog {
    private(set) var connections: [String] = []
    private(set) var pendingCounts: [Int] = []

    func add(_ status: ReplicaStatus) {
        let name = "\(status.connection)"
        if connections.last != name { connections.append(name) }
        pendingCounts.append(status.pending)
    }
}

/// The catch-up progress of every status a replica announced while catching up.
actor ProgressLog {
    private(set) var progress: [CatchUpProgress] = []

    func add(_ status: ReplicaStatus) {
        guard case .catchingUp = status.connection, let catchUp = status.catchUp, progress.last != catchUp else { return }
        progress.append(catchUp)
    }
}

@Suite("Replica: the Chat SDK's conversations")
struct ReplicaConversationTests {
    @Test("through the façade: a direct conversation opened offline reaches the server once online; the invitations and mentions feeds are the current user's")
    func conversations() async throws {
        let world = try await ReplicaWorld(profile: .offline)
        let replica = try Replica<DefaultChatCustom>(world.configuration)
        let chat = try await replica.conversations.openDirect(with: "bob")
        #expect(chat.channelId == ChatSDKFormat.directChannelId("alice", "bob"))
        #expect(try await replica.fetch(replica.conversations.invitations).isEmpty, "bob is invited, not alice")
        _ = try await world.web.perform(try world.web.appContext.setMembershipsRequest(
            userId: "alice", set: [MembershipSet<JSONValue>(id: "team", status: "pending")], remove: []))
        _ = try await world.web.publish(PublishRequest(channel: "alice", message: ChatConversations.inviteEvent(channelType: "group", channelId: "team")))
        await replica.start()
        world.transport.use(FaultPlan(seed: 1, profile: .none))
        await replica.networkIsBack()
        _ = await status(of: replica) { $0.connection == .live && $0.pending == 0 && $0.sending == 0 }
        #expect(try await replica.fetch(replica.conversations.invitations).map(\.channelId) == ["team"])
        #expect(try await replica.fetch(replica.conversations.mentions).isEmpty)
        let members = try await world.web.appContext.getMembers(channelId: chat.channelId, as: DefaultChatCustom.self).data
        #expect(Set(members.map(\.uuid.id)) == ["alice", "bob"])
        await replica.stop()
    }
}
