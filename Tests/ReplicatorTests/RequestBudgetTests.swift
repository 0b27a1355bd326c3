import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
@testable import Replicator
import Testing

/// The request budget (docs/performance.md, "Requests per sync"): what an idle sync, a reconnect,
/// a sync after a few changed channels and a hot channel's refresh cost, counted on the simulator's
/// request log, on a keyset of 200 channels x 50 messages (a reaction on every 5th), 500 users.
@Suite("Request budget")
struct RequestBudgetTests {
    /// Runs `body` and returns the requests it sent (their operations, in order).
    static func requests(
        _ device: SimulatedDevice<DefaultChatCustom>, _ body: () async throws -> Void
    ) async throws -> [String] {
        let before = device.transport.records.count
        try await body()
        return device.transport.records[before...].map(\.request.operation)
    }

    static func tally(_ operations: [String]) -> String {
        var counts: [String: Int] = [:]
        for operation in operations { counts[operation, default: 0] += 1 }
        return counts.keys.sorted().map { (key: String) -> String in "\(key) \(counts[key] ?? 0)" }.joined(separator: ", ")
    }

    /// A token granting everything a chat user needs everywhere (by patterns and categories), for `user`.
    static func everywhereToken(_ server: PubNubServer, user: String) async throws -> String {
        let all: AccessPermissions = [.read, .write, .manage, .delete, .get, .update, .join]
        return try await server.grantToken(
            ttlMinutes: 600,
            grants: AccessGrants(
                patterns: [.channel: ["^.*$": all], .uuid: ["^.*$": [.get, .update, .join]]],
                categories: [.channel: .get, .uuid: .get]),
            authorizedUserId: user)
    }

    /// With Access Manager tokens in `swift test` (the harder case); without them too under
    /// `PNREPLICATE_REQUEST_BUDGET_ALL=1`, and through the CLI in CI (`scripts/request-budget`).
    static let arms: [Bool] = SoakSeeds.environment["PNREPLICATE_REQUEST_BUDGET_ALL"] == "1" ? [false, true] : [true]

    @Test("on 200 channels: an idle sync, a reconnect, a sync after 3 changed channels and a hot refresh stay within budget (with Access Manager tokens; without them too under PNREPLICATE_REQUEST_BUDGET_ALL=1)",
          .timeLimit(.minutes(10)), arguments: arms)
    func budgetOn200Channels(tokens: Bool) async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        let keyset = ChatKeyset()
        try await keyset.seed(server)
        var token: String?
        if tokens {
            // Every request carries a token the server checks (docs/access.md): no request more.
            await server.configureAccess(secretKey: "sec-c-budget")
            token = try await Self.everywhereToken(server, user: keyset.member)
        }
        let device = try SimulatedDevice<DefaultChatCustom>(server: server, clock: clock, userId: keyset.member, authToken: token)
        let first = try await device.sync()
        #expect(first.errors.isEmpty, "\(first.errors)")

        // Nothing changed.
        let idle = try await Self.requests(device) {
            let report = try await device.sync()
            #expect(report.errors.isEmpty, "\(report.errors)")
            #expect(report.coldChannels == keyset.channels)
        }
        #expect(idle.count <= 20, "idle sync: \(idle.count) requests: \(Self.tally(idle))")
        #expect(idle.filter { $0 == "time" }.count <= 1)

        // A reconnect: handshake to live (the first poll excluded).
        let live = LiveSync(reconciler: device.reconciler, clock: clock, random: SplitMix64(seed: 1))
        let reconnect = try await Self.requests(device) {
            for _ in 0..<20 where await !live.isReadyToPoll { try await live.step() }
        }
        #expect(await live.isReadyToPoll)
        #expect(reconnect.count <= 20, "reconnect: \(reconnect.count) requests: \(Self.tally(reconnect))")

        // New messages in 3 channels: all three arrive.
        let changed = [ChatKeyset.channelId(3), ChatKeyset.channelId(100), ChatKeyset.channelId(199)]
        if tokens { #expect(device.transport.records.allSatisfy { $0.request.query.contains { $0.name == "auth" } || $0.request.operation == "time" }) }
        for channel in changed {
            await server.seedMessages(channel: channel, [chatPayload("new-\(channel)")], publisher: ChatKeyset.userId(1))
        }
        let afterChanges = try await Self.requests(device) {
            let report = try await device.sync()
            #expect(report.errors.isEmpty, "\(report.errors)")
        }
        #expect(afterChanges.count <= 30, "sync after 3 changed channels: \(afterChanges.count) requests: \(Self.tally(afterChanges))")
        for channel in changed {
            let stored = try await device.store.fetch(device.store.queries.messages(inChannel: channel))
            #expect(stored.contains { $0.id == "new-\(channel)" }, "\(channel)")
        }

        // `sync --channel C`: a reaction added during the gap to an old message of C arrives.
        let hot = ChatKeyset.channelId(42)
        let oldest = try #require(await server.storedMessages(channel: hot).first)
        let web = try PubNubClient.simulated(
            InProcessTransport(server: server), userId: ChatKeyset.userId(7),
            authToken: tokens ? try await Self.everywhereToken(server, user: ChatKeyset.userId(7)) : nil, clock: clock)
        _ = try await web.messageActions.addMessageAction(
            channel: hot, messageTimetoken: Timetoken(rawValue: oldest.timetoken), type: "reaction", value: "❤️")
        let before = try await device.store.fetch(device.store.queries.freshness(ofChannel: hot))
        #expect(before.reactions.completeThrough == nil, "a cold channel's reactions were never listed")
        try await device.reconciler.markHot(hot)
        let refresh = try await Self.requests(device) {
            let report = try await device.sync()
            #expect(report.errors.isEmpty, "\(report.errors)")
        }
        #expect(refresh.count <= 10, "sync with one hot channel: \(refresh.count) requests: \(Self.tally(refresh))")
        let stored = try await device.store.fetch(device.store.queries.messages(inChannel: hot))
        let oldestStored = try #require(stored.first { $0.timetoken == Timetoken(rawValue: oldest.timetoken) })
        let actions = try await device.store.fetch(device.store.queries.actions(ofMessage: oldestStored.id))
        #expect(actions.contains { $0.value == "❤️" && $0.userId == ChatKeyset.userId(7) }, "\(actions) \(Self.tally(refresh))")
        let after = try await device.store.fetch(device.store.queries.freshness(ofChannel: hot))
        #expect(after.reactions.wasListed && !after.reactions.hasGap && after.reactions.lag(at: clock.now) < 1)
        #expect(after.members.wasListed && !after.members.hasGap && after.members.lag(at: clock.now) < 1)
    }

    @Test("a listing whose snapshot is older than a gap marked meanwhile leaves the gap marked; a listing after it clears it")
    func listingDoesNotHideALaterGap() async throws {
        let world = try World()
        let scope = SyncCheckpoint.reactions("c")
        let (listing, gapEnd, later) = (Timetoken(rawValue: 100), Timetoken(rawValue: 200), Timetoken(rawValue: 300))
        try await world.store.storeTransaction { tx in
            try tx.write(SyncCheckpoint(scope: scope, applied: Timetoken(rawValue: 50)))
            try ListingLag.mark(["c"], gapEnd: gapEnd, tx: tx, now: Date())
            try ListingLag.listed(scope, snapshot: listing, through: listing, tx: tx, now: Date())
        }
        let afterOld = try #require(try await world.store.fetch(world.store.queries.checkpoint(scope)))
        #expect(afterOld.applied == listing && afterOld.fillTop == gapEnd, "the gap after the listing's snapshot is still a gap")
        try await world.store.storeTransaction { tx in
            try ListingLag.listed(scope, snapshot: later, through: later, tx: tx, now: Date())
        }
        let afterNew = try #require(try await world.store.fetch(world.store.queries.checkpoint(scope)))
        #expect(afterNew.applied == later && afterNew.fillTop == nil)
    }

    @Test("a cold channel's reactions lag after a gap and say from when; a hot one's are listed and current")
    func freshnessAfterGap() async throws {
        let world = try await LiveWorld()
        try await world.join(["me"], ["hot", "cold"])
        for channel in ["hot", "cold"] {
            await world.server.seedMessages(channel: channel, [chatPayload("\(channel)-1")], publisher: "web")
        }
        let (device, live) = try world.device("me")
        try await device.reconciler.markHot("hot")
        try await device.reconciler.markHot("cold")
        try await LiveWorld.settle(live)  // both listed on the first fill, then followed live
        await device.reconciler.unmarkHot("cold")
        let listed = try await device.store.fetch(device.store.queries.freshness(ofChannel: "cold"))
        #expect(listed.reactions.wasListed && !listed.reactions.hasGap)
        // Followed live without a gap, the cold channel stays current: a later answer moves its
        // live checkpoint, and the reactions' freshness with it, with no listing.
        let before = try #require(listed.reactions.completeThrough)
        world.clock.advance(by: 5)
        _ = try await world.web.publish(PublishRequest(channel: "cold", message: chatPayload("cold-2")))
        try await LiveWorld.settle(live)
        let followed = try await device.store.fetch(device.store.queries.freshness(ofChannel: "cold"))
        #expect(followed.reactions.completeThrough.map { $0 > before } == true, "\(followed) after \(before)")
        #expect(!followed.reactions.hasGap)

        // A gap: the stream loses its place; the fill lists only the hot channel.
        let firstTimetoken = try #require(await world.server.storedMessages(channel: "cold").first?.timetoken)
        for channel in ["hot", "cold"] {
            _ = try await world.web.messageActions.addMessageAction(
                channel: channel, messageTimetoken: Timetoken(rawValue: try #require(
                    await world.server.storedMessages(channel: channel).first?.timetoken)), type: "reaction", value: "🎉")
        }
        device.transport.script(.staleCursor)
        try await live.step()
        #expect(await !live.needsFill.isEmpty)
        try await LiveWorld.settle(live)

        let hot = try await device.store.fetch(device.store.queries.freshness(ofChannel: "hot"))
        #expect(!hot.reactions.hasGap && hot.reactions.lag(at: world.clock.now) < 1)
        #expect(try await device.store.fetch(device.store.queries.actions(ofMessage: "hot-1")).contains { $0.value == "🎉" })
        let cold = try await device.store.fetch(device.store.queries.freshness(ofChannel: "cold"))
        #expect(cold.reactions.hasGap, "the cold channel was not listed over the gap")
        #expect(cold.reactions.gapEnd.map { gapEnd in cold.reactions.completeThrough.map { $0 < gapEnd } == true } == true)
        #expect(cold.reactions.completeThrough.map { $0 >= Timetoken(rawValue: firstTimetoken) } == true)

        // Marking it hot again lists it: the gap's reaction arrives and the lag is gone.
        try await device.reconciler.refresh(channel: "cold")
        let refreshed = try await device.store.fetch(device.store.queries.freshness(ofChannel: "cold"))
        #expect(!refreshed.reactions.hasGap)
        #expect(try await device.store.fetch(device.store.queries.actions(ofMessage: "cold-1")).contains { $0.value == "🎉" })
    }
}
