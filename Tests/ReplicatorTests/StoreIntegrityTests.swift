import Foundation
import GRDB
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
@testable import Replicator
import Testing

/// Read positions in the future, and a store another process keeps busy.
@Suite("Integrity: read positions and a busy store")
struct StoreIntegrityTests {
    @Test("a read position in the future is refused; one another user wrote is no position, the next read replaces it; force moves one back")
    func futureReadPositions() async throws {
        let (world, other) = try await ReadAndPinTests.setUp()
        let theirs = try await ReadAndPinTests.publish(other, 4)
        _ = try await world.reconciler().pullHistory(channels: ["c"])
        let far = Timetoken(rawValue: .max)
        await #expect(throws: OutboxError.implausibleReadPosition(far, ceiling: ReadPosition.ceiling(now: world.clock.now))) {
            try await world.outbox.memberships.markRead(channel: "c", upTo: far)
        }
        #expect(try await world.entries().isEmpty)

        // Another user writes a position a year ahead into this user's membership.
        let ahead = try Timetoken(date: world.clock.now.addingTimeInterval(365 * 86_400))
        _ = try await other.appContext.setMemberships(
            userId: "me", set: [MembershipSet(id: "c", status: "joined", custom: ["lastReadMessageTimetoken": .string(String(ahead.rawValue))])],
            as: DefaultChatCustom.self)
        _ = try await world.reconciler().pullObjects(channels: ["c"])
        #expect(try await world.store.fetch(world.store.queries.readPositions(of: "me"))["c"] == .some(ahead))
        let repaired = try await world.outbox.memberships.markRead(channel: "c", upTo: theirs[1])
        #expect(repaired.disposition == .enqueued, "a position in the future does not make this one 'older'")
        #expect(try await world.store.fetch(world.store.queries.unreadCount(inChannel: "c", for: "me")) == 2)

        // Positions only move forward, unless forced (a repair).
        #expect(try await world.outbox.memberships.markRead(channel: "c", upTo: theirs[0]).disposition == .unchanged)
        _ = try await world.outbox.memberships.markRead(channel: "c", upTo: theirs[0], force: true)
        #expect(try await world.store.fetch(world.store.queries.readPositions(of: "me"))["c"] == .some(theirs[0]))
        // Within the tolerance (another device's clock a little ahead) is fine.
        let soon = try Timetoken(date: world.clock.now.addingTimeInterval(ReadPosition.tolerance - 1))
        #expect(try await world.outbox.memberships.markRead(channel: "c", upTo: soon).opId != nil)
    }

    @Test("a write lock held by another process past the busy timeout is a wait for the live sync, not its end; nothing is lost")
    func busyStoreIsAWait() async throws {
        let world = try await LiveWorld()
        try await world.join(["me"], ["c"])
        let path = SimulatedDevice<DefaultChatCustom>.temporaryStorePath()
        var options = StoreOptions()
        options.busyTimeout = 0.05
        let store = try ChatStore<DefaultChatCustom>.open(at: path, options: options)
        let client = try PubNubClient.simulated(InProcessTransport(server: world.server), userId: "me")
        let reconciler = Reconciler(store: store, client: client, clock: world.clock, random: SplitMix64(seed: 1))
        let live = LiveSync(reconciler: reconciler, clock: world.clock, random: SplitMix64(seed: 2))
        try await LiveWorld.settle(live)

        // Another connection takes the write lock and keeps it until released.
        let holder = try LockHolder(path: path)
        _ = try await world.web.publish(PublishRequest(channel: "c", message: chatPayload("during", "sent while the store was busy")))
        var failures = 0
        for _ in 0..<3 where try await live.stepWaitingOutBusyStore() == .failed { failures += 1 }
        #expect(failures > 0, "the busy store was met")
        #expect(await live.state != .stopped)
        holder.release()
        try await LiveWorld.settle(live)
        #expect(try await store.fetch(store.queries.message(id: "during")) != nil, "the event is filled once the store is free")
    }
}

/// A write lock on a store file held by another connection, on its own thread, until released.
final class LockHolder: @unchecked Sendable {
    private let taken = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    init(path: String) throws {
        let queue = try DatabaseQueue(path: path)
        Thread.detachNewThread { [taken, done] in
            try? queue.inTransaction(.immediate) { _ in
                taken.signal()
                done.wait()
                return .commit
            }
        }
        taken.wait()
    }

    func release() { done.signal() }
}

@Suite("Integrity: long drafts")
struct DraftIntegrityTests {
    @Test("editDraft runs the edit outside the write transaction: another writer can write meanwhile, and a concurrent change is not overwritten")
    func editOutsideTransaction() async throws {
        let path = SimulatedDevice<DefaultChatCustom>.temporaryStorePath()
        var options = StoreOptions()
        options.busyTimeout = 0.05
        let store = try ChatStore<DefaultChatCustom>.open(at: path, options: options)
        let key = DraftKey(channelId: "c")
        try await store.drafts.edit(key) { $0.update(text: "first") }
        var other = MessageDraft()
        other.update(text: "first, from the other device")
        let changedText = other.text
        let changedJSON = String(decoding: try JSONEncoder().encode(other), as: UTF8.self)
        let runs = Counter()
        let saved = try await store.drafts.edit(key) { draft in
            // The edit runs with no write lock held: another connection writes the same draft
            // meanwhile (the first time only); a lock held by this edit would make it fail (busy).
            if runs.next() == 1 {
                let queue = try DatabaseQueue(path: path)
                try queue.write { db in
                    try db.execute(sql: "UPDATE drafts SET text = ?, draft = ? WHERE channel_id = 'c'",
                                   arguments: [changedText, changedJSON])
                }
            }
            draft.update(text: draft.text + "!")
        }
        #expect(runs.value == 2, "the edit ran again on the changed draft")
        #expect(saved.text == "first, from the other device!")
        #expect(try await store.fetch(store.queries.draft(key))?.text == "first, from the other device!")
    }

    @Test("update(text:) past the diff budget replaces the changed middle whole (a mention inside it goes, those around it stay); under it, the diff keeps an untouched mention inside the middle")
    func boundedDiff() throws {
        var dice = SplitMix64(seed: 5)
        func noise(_ count: Int) -> String {
            String((0..<count).map { _ in Character(Unicode.Scalar(UInt8(97 + dice.next() % 26))) })
        }
        /// A draft "Hi Alice, <a> Carol <b> bye Bob" with mentions on Alice, Carol and Bob, then
        /// updated with new noise on both sides of Carol (Carol's own text untouched).
        func run(noiseLength: Int) throws -> [MentionTarget] {
            var draft = MessageDraft()
            let head = "Hi Alice, " + noise(noiseLength) + ". Then we met "
            draft.update(text: head + "Carol at the station. " + noise(noiseLength) + " bye Bob")
            try draft.addMention(offset: 3, length: 5, target: .user("alice"))
            try draft.addMention(offset: head.utf16.count, length: 5, target: .user("carol"))
            try draft.addMention(offset: draft.text.utf16.count - 3, length: 3, target: .user("bob"))
            let updated = "Hi Alice, " + noise(noiseLength) + ". Then we met Carol at the station. " + noise(noiseLength) + " bye Bob"
            draft.update(text: updated)
            #expect(draft.text == updated)
            return draft.mentions.map(\.target)
        }
        // 2 × 50,000 units of new noise: far past the budget, the middle is replaced whole.
        #expect(try run(noiseLength: 50_000) == [.user("alice"), .user("bob")])
        // 2 × 20 units: diffed, and Carol's untouched text keeps its mention.
        #expect(try run(noiseLength: 20) == [.user("alice"), .user("carol"), .user("bob")])
    }
}

@Suite("Integrity: completion of an op being sent")
struct CompletionRaceTests {
    @Test("completion(of:) asked while the drain sends the op is its outcome, never unknown", arguments: 0..<4)
    func completionWhileSending(round: UInt64) async throws {
        let world = try World(seed: round)
        var sent: [String] = []
        for index in 0..<60 { sent.append(try #require(try await world.outbox.messages.send(text: "m\(index)", to: "c\(index % 3)").opId)) }
        let ids = sent
        let outbox = world.outbox
        let asked = LockedList<Task<OutboxOutcome, Never>>()
        let dice = Dice(seed: round)
        // Each publish, as it reaches the server, starts a completion(of:) for an op of the batch,
        // after a seeded number of yields: some land before the drain commits, some between its
        // commit and the announcement of the outcome (the window that answered `.unknown`).
        let next = Counter()
        world.transport.onRequest { _ in
            let index = next.next() - 1
            guard index < ids.count else { return }
            let yields = dice.pick(6)
            asked.append(Task.detached {
                for _ in 0..<yields { await Task.yield() }
                return await outbox.completion(of: ids[index])
            })
        }
        _ = try await world.outbox.drain()
        var outcomes: [OutboxOutcome] = []
        for task in asked.all() { outcomes.append(await task.value) }
        #expect(outcomes.count == ids.count)
        #expect(!outcomes.contains(.unknown), "\(outcomes.filter { $0 == .unknown }.count) of \(outcomes.count) answered unknown")
        #expect(outcomes.allSatisfy { if case .sent = $0 { true } else { false } })
    }

    @Test("a cancelled completion(of:) ends at once with unknown, and the op goes on", .timeLimit(.minutes(10)))
    func cancelledWaitEnds() async throws {
        let world = try World()
        let opId = try #require(try await world.outbox.messages.send(text: "waits", to: "general").opId)
        let outbox = world.outbox
        // Nothing drains: the op stays pending, so only cancellation can end this wait.
        let (parked, signal) = AsyncStream<String>.makeStream()
        await outbox.setOnCompletionWait { signal.yield($0) }
        let waiter = Task { await outbox.completion(of: opId) }
        for await id in parked where id == opId { break }
        #expect(await outbox.completionWaiters(for: opId) == 1, "the waiter is parked before it is cancelled")
        waiter.cancel()
        #expect(await waiter.value == .unknown)
        #expect(await outbox.completionWaiters(for: opId) == 0, "the cancelled waiter is gone")
        // The op itself is untouched: a later drain sends it, and a new waiter gets its outcome.
        let later = Task { await outbox.completion(of: opId) }
        _ = try await world.outbox.drain()
        guard case .sent = await later.value else { Issue.record("expected .sent"); return }
    }
}

/// A list shared with hooks on other tasks.
final class LockedList<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Element] = []
    func append(_ item: Element) { lock.withLock { items.append(item) } }
    func all() -> [Element] { lock.withLock { items } }
}

@Suite("Integrity: ids a server gave, ids this device writes")
struct IdentifierRuleTests {
    @Test("a channel id PubNub documents as invalid is kept when a server gives it, and refused when this device would write it")
    func storedAsGivenWrittenStrictly() async throws {
        let world = try World()
        let odd = "channel|encoded::1"
        try await world.store.load(channels: [try ChatChannel<FlatCustom>(id: odd, name: "Odd")])
        #expect(try await world.store.fetch(world.store.queries.channel(id: odd))?.name == "Odd")
        var edit = ChannelEdit<FlatCustom>()
        edit.name = .set("Renamed")
        await #expect(throws: ModelValidationError.forbiddenCharacter(field: "channel.id", character: "':'")) {
            _ = try await world.outbox.metadata.setChannel(id: odd, edit: edit)
        }
        #expect(try await world.store.fetch(world.store.queries.channel(id: odd))?.name == "Odd", "nothing changed locally")
        #expect(try await world.entries().isEmpty)
        await #expect(throws: ModelValidationError.forbiddenCharacter(field: "channel.id", character: "':'")) {
            _ = try await world.outbox.messages.send(text: "hi", to: odd)
        }
        #expect(try await world.store.fetch(world.store.queries.messages(inChannel: odd)).isEmpty)
    }
}
