import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator
import Testing

@Suite("History pull")
struct PullTests {
    static let channels = ["alpha", "beta", "gamma"]

    /// Seeds the server, then pulls in rounds through a faulty transport, with crashes between
    /// applying a page and committing it and with other publishers writing while we page, until a
    /// round succeeds; then one quiet round. Checks the checkpoint invariant after every round, and
    /// each round's outcome against the crashes and faults it met. `mustBeInterrupted`: a history
    /// long enough that at least one round must fail (a run the faults never interrupted would not
    /// test recovery at all).
    ///
    /// `interleaved`: the channels' histories seeded a message of each in turn (as channels active
    /// at the same time are), else one channel's after another's.
    static func pull(
        seed: UInt64, messagesPerChannel: [Int], channels: [String] = channels, interleaved: Bool = false,
        mustBeInterrupted: Bool = false
    ) async throws {
        let world = try World(seed: seed, profile: .flaky)
        if interleaved {
            for n in 0..<(messagesPerChannel.max() ?? 0) {
                for (index, channel) in channels.enumerated() where n < messagesPerChannel[index] {
                    await world.server.seedMessages(channel: channel, [chatPayload("\(channel)-\(n)")], publisher: "other")
                }
            }
        } else {
            for (index, channel) in channels.enumerated() {
                let payloads = (0..<messagesPerChannel[index]).map { chatPayload("\(channel)-\($0)") }
                await world.server.seedMessages(channel: channel, payloads, publisher: "other")
            }
        }
        let dice = Dice(seed: seed ^ 0xC0FFEE)
        let crashes = Counter()
        var options = ReconcilerOptions()
        options.maxAttempts = 3
        options.beforeHistoryCommit = { _ in
            if dice.roll(0.05) {
                _ = crashes.next()
                throw SimulatedCrash()
            }
        }
        // Someone else publishes while we page.
        let published = Counter()
        world.transport.onRequest { request in
            guard request.operation == "fetchHistory", dice.roll(0.1) else { return }
            let channel = channels[dice.pick(channels.count)]
            await world.server.seedMessages(channel: channel, [chatPayload("late-\(published.next())")], publisher: "late")
        }
        var failedRounds = 0
        for round in 1... {
            #expect(round < 400, "seed \(seed): no successful round")
            if round >= 400 { return }
            let before = (crashes: crashes.value, requests: world.transport.records.count)
            // A new reconciler each round: as after a crash, only the store carries state over.
            let reports = try await world.reconciler(options: options, seed: seed &+ UInt64(round)).pullHistory(channels: channels)
            try await checkInvariant(world, seed: seed, channels: channels)
            let failed = reports.contains { $0.error != nil }
            // The round's outcome against what the crash counter and the fault log say happened
            // in it. A round that met no fault and no crash succeeds. With fewer than four channels
            // the first round pages every channel on its own, so a crash in it ends its channel's
            // pull with an error, never silently (with more, a crash storing a shared answer sends
            // its channels to be paged alone, as a failed shared request does).
            let crashed = crashes.value > before.crashes
            let faulted = world.transport.records[before.requests...].contains { $0.fault != .none }
            #expect(!failed || crashed || faulted, "seed \(seed) round \(round): failed without a fault or a crash: \(reports)")
            if round == 1, channels.count < 4 { #expect(failed || !crashed, "seed \(seed): a crash in the first round went unreported") }
            if !failed { break }
            failedRounds += 1
        }
        dice.disable()
        world.transport.use(FaultPlan(seed: seed, profile: .none))
        _ = try await world.reconciler(options: options).pullHistory(channels: channels)
        for channel in channels {
            let local = try await world.localMessages(channel)
            let remote = await world.serverMessages(channel)
            #expect(local.count == remote.count, "seed \(seed) \(channel): \(local.count) local, \(remote.count) on the server")
            #expect(local.map(\.id) == remote.map(\.id), "seed \(seed) \(channel): ids differ or out of order")
            #expect(local.map(\.timetoken) == remote.map(\.timetoken), "seed \(seed) \(channel): timetokens differ")
            #expect(Set(local.map(\.id)).count == local.count, "seed \(seed) \(channel): duplicate rows")
        }
        if mustBeInterrupted { #expect(failedRounds > 0, "seed \(seed): the faults never interrupted a pull") }
    }

    /// A checkpoint never passes a page that was not applied: every server message at or below
    /// `applied`, and every one inside a fill range, is stored.
    static func checkInvariant(_ world: World, seed: UInt64, channels: [String] = channels) async throws {
        for channel in channels {
            guard let checkpoint = try await world.store.fetch(world.store.queries.checkpoint(SyncCheckpoint.history(channel)))
            else { continue }
            let local = Set(try await world.localMessages(channel).map(\.timetoken))
            let remote = await world.serverMessages(channel).map(\.timetoken)
            if let applied = checkpoint.applied?.rawValue {
                let missing = remote.filter { $0 <= applied && !local.contains($0) }
                #expect(missing.isEmpty, "seed \(seed) \(channel): \(missing.count) messages at or below the checkpoint are missing")
            }
            if let top = checkpoint.fillTop?.rawValue, let cursor = checkpoint.fillCursor?.rawValue {
                let missing = remote.filter { $0 >= cursor && $0 <= top && !local.contains($0) }
                #expect(missing.isEmpty, "seed \(seed) \(channel): \(missing.count) messages inside the fill range are missing")
            }
        }
    }

    @Test("10,000 messages on 3 channels arrive exactly once, in order, through faults and crashes", arguments: 1...3)
    func tenThousand(seed: UInt64) async throws {
        try await Self.pull(seed: seed, messagesPerChannel: [5_000, 3_000, 2_000], mustBeInterrupted: true)
    }

    @Test("small histories over many seeds", arguments: 10...49)
    func manySeeds(seed: UInt64) async throws {
        try await Self.pull(seed: seed, messagesPerChannel: [Int(seed % 7) * 37, 250, 101])
    }

    @Test("many channels over many seeds: shared rounds through faults, crashes and late publishes", arguments: 1...12)
    func manyChannels(seed: UInt64) async throws {
        let channels = (0..<12).map { "ch-\($0)" }
        let counts = channels.indices.map { Int((seed &* 7919 &+ UInt64($0) &* 104_729) % 90) }
        try await Self.pull(seed: seed, messagesPerChannel: counts, channels: channels, interleaved: seed % 2 == 0)
    }

    /// Seeds `channels` x `perChannel` messages, interleaved (a message of each in turn) or one
    /// channel after another, and returns the requests one first pull of them made.
    static func firstPull(channels: Int, perChannel: Int, interleaved: Bool) async throws -> (World, [String], [WireRequest]) {
        let world = try World()
        let names = (0..<channels).map { "ch-\($0)" }
        if interleaved {
            for n in 0..<perChannel {
                for channel in names { await world.server.seedMessages(channel: channel, [chatPayload("\(channel)-\(n)")], publisher: "x") }
            }
        } else {
            for channel in names {
                await world.server.seedMessages(channel: channel, (0..<perChannel).map { chatPayload("\(channel)-\($0)") }, publisher: "x")
            }
        }
        let before = world.transport.requests.count
        let reports = try await world.reconciler().pullHistory(channels: names)
        #expect(reports.allSatisfy { $0.error == nil && $0.inserted == perChannel }, "\(reports)")
        for channel in names {
            let local = try await world.localMessages(channel).map(\.id)
            #expect(local == (0..<perChannel).map { "\(channel)-\($0)" }, "\(channel): every message once, in order")
        }
        return (world, names, Array(world.transport.requests[before...]).filter { $0.operation == "fetchHistory" })
    }

    @Test("a first pull of 40 channels active at the same time takes a few shared requests, not one per channel")
    func sharedFirstPull() async throws {
        let (world, names, requests) = try await Self.firstPull(channels: 40, perChannel: 60, interleaved: true)
        // The newest 25 of each, then rounds below the highest cursor (25 more each, then the
        // last 10 and the short answers that close them), then one round for what came meanwhile.
        #expect(requests.count <= 5, "\(requests.count) requests")
        #expect(requests.allSatisfy { $0.pathSegments.last == names.sorted().joined(separator: ",") && $0.queryValue("max") == "25" })
        for channel in names {
            let checkpoint = try await world.store.fetch(world.store.queries.checkpoint(SyncCheckpoint.history(channel)))
            let newest = await world.serverMessages(channel).last.map { Timetoken(rawValue: $0.timetoken) }
            #expect(checkpoint?.isFilling == false && checkpoint?.applied == newest)
        }
        // A second pull asks once for all of them.
        let before = world.transport.requests.count
        _ = try await world.reconciler().pullHistory(channels: names)
        #expect(world.transport.requests.count - before == 1)
    }

    @Test("a first pull of channels active one after another costs no more than paging each alone, and stores all")
    func bandedFirstPull() async throws {
        let (_, _, requests) = try await Self.firstPull(channels: 8, perChannel: 60, interleaved: false)
        // One shared round (the newest 25 of each), one page alone per channel for the rest (no
        // shared start serves channels whose histories do not overlap in time), one round after.
        #expect(requests.count <= 8 + 2, "\(requests.count) requests")
    }

    @Test("a catch-up starts from the checkpoint: one short page, end = checkpoint + 1")
    func incremental() async throws {
        let world = try World()
        await world.server.seedMessages(channel: "alpha", (0..<150).map { chatPayload("a\($0)") }, publisher: "x")
        let reconciler = try world.reconciler()
        let first = try await reconciler.catchUp(channel: "alpha")
        #expect(first.pages == 2 && first.inserted == 150)
        let applied = try #require(try await world.store.fetch(world.store.queries.checkpoint("history:alpha"))?.applied)
        await world.server.seedMessages(channel: "alpha", (0..<3).map { chatPayload("b\($0)") }, publisher: "x")
        let before = world.transport.requests.count
        let second = try await reconciler.catchUp(channel: "alpha")
        #expect(second.pages == 1 && second.inserted == 3)
        let request = world.transport.requests[before]
        #expect(request.queryValue("end") == applied.next.description)
        #expect(request.queryValue("start") == nil)
    }

    @Test("quiet channels share one request; a busy one falls back to its own paging")
    func shared() async throws {
        let world = try World()
        for channel in Self.channels {
            await world.server.seedMessages(channel: channel, [chatPayload("\(channel)-0")], publisher: "x")
        }
        let reconciler = try world.reconciler()
        _ = try await reconciler.pullHistory(channels: Self.channels)
        await world.server.seedMessages(channel: "alpha", (1...60).map { chatPayload("alpha-\($0)") }, publisher: "x")
        await world.server.seedMessages(channel: "beta", [chatPayload("beta-1")], publisher: "x")
        let before = world.transport.requests.count
        let reports = try await reconciler.pullHistory(channels: Self.channels)
        let requests = Array(world.transport.requests[before...])
        #expect(requests.first?.pathSegments.last == "alpha,beta,gamma")
        #expect(requests.first?.queryValue("max") == "25")
        #expect(reports.first { $0.channel == "alpha" }?.inserted == 60)
        #expect(reports.first { $0.channel == "beta" }?.inserted == 1)
        for channel in Self.channels {
            #expect(try await world.localMessages(channel).map(\.id) == (await world.serverMessages(channel)).map(\.id))
        }
    }

    @Test("a page holding our own pending publish finishes its op instead of adding a row")
    func ownPublish() async throws {
        let world = try World(profile: .offline)
        let receipt = try await world.outbox.messages.send(text: "mine", to: "alpha")
        let message = try #require(receipt.value)
        // The publish reached the server, but its answer never came back.
        let payload = try JSONValue(encoding: message.payload)
        await world.server.seedMessages(channel: "alpha", [payload], publisher: "me")
        world.transport.use(FaultPlan(seed: 1, profile: .none))
        let report = try await world.reconciler().catchUp(channel: "alpha")
        #expect(report.completedSends == 1 && report.inserted == 0)
        #expect(try await world.entries().isEmpty)
        let stored = try await world.store.fetch(world.store.queries.messages(inChannel: "alpha"))
        #expect(stored.count == 1 && stored[0].delivery == .sent && stored[0].id == message.id)
        #expect(await world.outbox.completion(of: receipt.opId!) == .sent(timetoken: stored[0].timetoken))
    }

    @Test("load older pages back from the oldest stored message; initialMessages limits the first pull")
    func scrollBack() async throws {
        let world = try World()
        await world.server.seedMessages(channel: "alpha", (0..<250).map { chatPayload("m\($0)") }, publisher: "x")
        var options = ReconcilerOptions()
        options.initialMessages = 100
        let reconciler = try world.reconciler(options: options)
        try await reconciler.catchUp(channel: "alpha")
        #expect(try await world.localMessages("alpha").map(\.id) == (150..<250).map { "m\($0)" })
        let older = try await reconciler.loadOlder(channel: "alpha", limit: 100)
        #expect(older.map(\.id) == (50..<150).map { "m\($0)" })
        let oldest = try await reconciler.loadOlder(channel: "alpha", limit: 100)
        #expect(oldest.map(\.id) == (0..<50).map { "m\($0)" })
        #expect(try await world.localMessages("alpha").count == 250)
    }

    @Test("offline, a sync gives up after two tries instead of waiting out every backoff")
    func offline() async throws {
        let world = try World(profile: .offline)
        _ = try await world.outbox.messages.send(text: "queued", to: "alpha")
        let report = try await world.reconciler().sync(pushDeadline: world.clock.now)
        #expect(report.errors.count == 2 && report.errors[0].hasPrefix("objects:"))
        #expect(report.errors.last?.contains("skipped") == true)
        #expect(report.history.isEmpty)
        #expect(world.transport.requests.filter { $0.operation != "publish" }.count <= 2)
    }

    @Test("a publisher id the model refuses does not block the channel")
    func badPublisher() async throws {
        let world = try World()
        await world.server.seedMessages(channel: "alpha", [chatPayload("ok-1")], publisher: "bad,id")
        let report = try await world.reconciler().catchUp(channel: "alpha")
        #expect(report.inserted == 1)
        #expect(try await world.store.fetch(world.store.queries.messages(inChannel: "alpha")).first?.userId == "unknown")
    }

    @Test("a payload that is not in the chat format is kept whole, under a channel/timetoken id")
    func foreign() async throws {
        let world = try World()
        let tts = await world.server.seedMessages(channel: "alpha", ["just text", ["x": 1]], publisher: "bot")
        try await world.reconciler().catchUp(channel: "alpha")
        let stored = try await world.store.fetch(world.store.queries.messages(inChannel: "alpha"))
        #expect(stored.map(\.id) == tts.map { "pn:alpha:\($0)" })
        #expect(stored[0].text == "just text" && stored[1].content == ["x": 1])
        #expect(stored.allSatisfy { $0.contentType == "pubnub/raw" && $0.userId == "bot" })
    }
}
