import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator
import Testing

/// Offline sends, reactions and membership edits; a crash midway; then a flaky network.
/// Afterwards the server must hold exactly what the user did, once, in order.
@Suite("outbox scenario: offline, crash, flaky network")
struct ScenarioTests {
    /// Seeds: 24 in `swift test` (7 and 13, once racy, among them); `PNREPLICATE_OUTBOX_SEEDS=10000` (or a range, ``SoakSeeds``) for
    /// the long run. `PNREPLICATE_OUTBOX_REPEAT=N` runs every seed N times (hunting a
    /// timing-dependent failure).
    static var seeds: [UInt64] {
        let repeats = Int(SoakSeeds.environment["PNREPLICATE_OUTBOX_REPEAT"] ?? "") ?? 1
        return Array(SoakSeeds.range("PNREPLICATE_OUTBOX_SEEDS", default: 16).map { Array(repeating: $0, count: max(1, repeats)) }.joined())
    }

    @Test("200 messages per seed end up exactly once, in order", arguments: seeds)
    func scenario(seed: UInt64) async throws {
        try await Scenario(seed: seed, messages: 200).run()
    }

    /// Messages in the one large seed: 2,000 in `swift test`, `PNREPLICATE_OUTBOX_LARGE=5000`
    /// for the full size (the test phase's last minute otherwise: docs/reliability.md).
    static let largeCount = Int(SoakSeeds.environment["PNREPLICATE_OUTBOX_LARGE"] ?? "") ?? 2000

    @Test("one seed of many messages (2,000; PNREPLICATE_OUTBOX_LARGE for more)")
    func large() async throws {
        try await Scenario(seed: 4242, messages: Self.largeCount).run()
    }
}

struct Scenario {
    let seed: UInt64
    let messages: Int
    static let channels = ["c0", "c1", "c2", "c3", "c4"]

    func run() async throws {
        var random = SplitMix64(seed: seed)
        var sent: [String: [String]] = [:]  // channel → message ids in local send order
        var channelOf: [String: String] = [:]
        var reactions: [String: Set<String>] = [:]  // message id → values expected on the server
        var memberships: [String: String?] = [:]  // channel → expected status (nil: no membership)

        func pick<T>(_ items: [T], _ random: inout SplitMix64) -> T { items[Int(random.next() % UInt64(items.count))] }

        // Phase 1, offline: half the messages, reactions on pending ones, membership edits.
        var world = try World(seed: seed, profile: .offline)
        for i in 0..<messages / 2 {
            let channel = pick(Self.channels, &random)
            let receipt = try await world.outbox.messages.send(text: "m\(i)", to: channel)
            let id = receipt.value!.id
            sent[channel, default: []].append(id)
            channelOf[id] = channel
            if random.next() % 10 == 0 {
                let value = pick(["👍", "❤️", "😂"], &random)
                _ = try await world.outbox.messages.addReaction(value, toMessage: id)
                reactions[id, default: []].insert(value)
            }
        }
        for _ in 0..<max(3, messages / 40) {
            let channel = pick(Self.channels, &random)
            let status = pick(["joined", "muted", "admin"], &random)
            _ = try await world.outbox.memberships.setMembership(channel: channel, edit: MemberEdit(status: status))
            memberships[channel] = .some(status)
        }
        let offline = try await world.outbox.drain(until: world.clock.now.addingTimeInterval(120))
        #expect(offline.completed == 0 && offline.deadLetters == 0, "seed \(seed)")

        // Phase 2: online but flaky, and the process dies after a random number of requests.
        world.transport.use(FaultPlan(seed: seed, profile: .flaky))
        world.transport.crash(afterRequests: 20 + Int(random.next() % UInt64(messages / 2)))
        // Requests already on their way when the process died still reach the server.
        try await world.drainUntilCrash()
        // The crashed process's file as it was at the crash; the old process never writes to it.
        let copy = World.temporaryPath()
        try world.store.maintenance.backup(to: copy)
        world = try world.reopened(seed: seed &+ 1, profile: .flaky, path: copy)

        // Phase 3: the rest of the messages, reactions on sent ones, more membership edits.
        for i in messages / 2..<messages {
            let channel = pick(Self.channels, &random)
            let id = try await world.outbox.messages.send(text: "m\(i)", to: channel).value!.id
            sent[channel, default: []].append(id)
            channelOf[id] = channel
        }
        let delivered = try await world.store.fetch(world.store.queries.messages(byUser: "me")).filter { $0.timetoken != nil }
        for message in delivered where random.next() % 8 == 0 {
            let value = pick(["🎉", "👀"], &random)
            _ = try await world.outbox.messages.addReaction(value, toMessage: message.id)
            reactions[message.id, default: []].insert(value)
            if random.next() % 4 == 0 {
                _ = try await world.outbox.messages.removeReaction(value, fromMessage: message.id)
                reactions[message.id]?.remove(value)
            }
        }
        for _ in 0..<max(3, messages / 40) {
            let channel = pick(Self.channels, &random)
            if random.next() % 3 == 0 {
                _ = try await world.outbox.memberships.removeMembership(channel: channel)
                memberships[channel] = .some(nil)
            } else {
                let status = pick(["joined", "muted", "admin"], &random)
                _ = try await world.outbox.memberships.setMembership(channel: channel, edit: MemberEdit(status: status))
                memberships[channel] = .some(status)
            }
        }
        let report = try await world.outbox.drain()

        // The outbox is empty: nothing dead, nothing left.
        #expect(report.deadLetters == 0 && report.conflicts == 0 && report.remaining == 0, "seed \(seed): \(report)")
        let left = try await world.entries()
        #expect(left.isEmpty, "seed \(seed): left \(left.map { "\($0.kind) \($0.state) \($0.lastFailure?.description ?? "")" })")

        // Each message exactly once, in local send order per channel.
        var timetokens: [Timetoken: String] = [:]
        for channel in Self.channels {
            let onServer = await world.serverMessageIds(channel)
            let local = sent[channel] ?? []
            let duplicates = Dictionary(grouping: onServer, by: { $0 }).filter { $0.value.count > 1 }.count
            let missing = Set(local).subtracting(onServer).count
            let firstDifference = zip(onServer, local).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(onServer.count, local.count)
            #expect(onServer == local, """
                seed \(seed): channel \(channel) history differs: \(onServer.count) on the server, \(local.count) sent, \
                \(duplicates) duplicated, \(missing) missing, first difference at \(firstDifference)
                """)
            for stored in await world.server.storedMessages(channel: channel) {
                if case .object(let body) = stored.message, case .string(let id)? = body["id"] {
                    timetokens[Timetoken(rawValue: stored.timetoken)] = id
                }
            }
        }
        // Each reaction exactly once (and removed ones gone).
        let observer = try world.observer()
        var onServer: [String: [String]] = [:]
        for channel in Self.channels {
            var start: Timetoken?
            while true {
                let page = try await observer.messageActions.listMessageActions(channel: channel, start: start, limit: 100)
                for action in page.data where action.uuid == "me" {
                    onServer[timetokens[action.messageTimetoken] ?? "?", default: []].append(action.value)
                }
                guard page.data.count == 100, let oldest = page.data.first?.actionTimetoken else { break }
                start = oldest
            }
        }
        let expected = reactions.filter { !$0.value.isEmpty }
        #expect(onServer.mapValues { $0.sorted() } == expected.mapValues { $0.sorted() }, "seed \(seed): reactions differ")
        // Memberships as last edited.
        let page = try await observer.appContext.getMemberships(
            userId: "me", ObjectListQuery(limit: 100), as: DefaultChatCustom.self)
        let statuses = Dictionary(uniqueKeysWithValues: page.data.map { ($0.channel.id, $0.status) })
        for (channel, status) in memberships {
            if let status {
                #expect(statuses[channel] == .some(status), "seed \(seed): membership \(channel)")
            } else {
                #expect(statuses[channel] == nil, "seed \(seed): membership \(channel) should be gone")
            }
        }
        // Locally every message is sent, with the server's timetoken.
        let local = try await world.store.fetch(world.store.queries.messages(byUser: "me"))
        #expect(local.count == messages && local.allSatisfy { $0.delivery == .sent }, "seed \(seed)")
        for message in local {
            #expect(message.timetoken.flatMap { timetokens[$0] } == message.id, "seed \(seed): \(message.id)")
        }
    }
}
