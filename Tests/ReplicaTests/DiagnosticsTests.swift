import Foundation
@testable import PubNubReplica
import PubNubSimulator
@testable import PubNubWire
import PubNubSimulatorTesting
import ReplicaStore
import Testing

/// The diagnostics report (docs/diagnostics.md): it names every kind of state a replica can be
/// in, and nothing secret is in its JSON.
@Suite("Replica: diagnostics report")
struct DiagnosticsTests {
    static let secrets = (publish: "pub-c-diag-7f3a91", subscribe: "sub-c-diag-7f3a91", cipher: "cipher-diag-5e2b77")
    static let texts = ["hello there, secret words", "to a forbidden channel", "sent while the token expired", "local words 4417"]

    @Test("a replica with pending, token-waiting, dead and conflicted ops, a cold channel with a gap, a live history and an expired token: the report names each, and its JSON holds no key, token, cipher key or message text")
    func namesEveryState() async throws {
        // A server on keys of its own, so that the report can be searched for them.
        let clock = VirtualClock()
        let server = PubNubServer(publishKey: Self.secrets.publish, subscribeKey: Self.secrets.subscribe, clock: clock)
        await server.configureSubscribe(SubscribeSettings(hold: .seconds(1)))
        let web = try PubNubClient.simulated(
            InProcessTransport(server: server), userId: "web", publishKey: Self.secrets.publish, subscribeKey: Self.secrets.subscribe)
        _ = try await web.perform(try web.appContext.setMembershipsRequest(
            userId: "alice", set: [MembershipSet<JSONValue>(id: "general", status: "joined"), MembershipSet<JSONValue>(id: "side", status: "joined")],
            remove: []))
        await server.configureAccess(secretKey: "sec-c-test")
        let token = try await server.grantToken(
            ttlMinutes: 10, grants: ReplicaAccessTests.grants(channels: ["general", "side"]), authorizedUserId: "alice")
        var configuration = ReplicaConfiguration(
            publishKey: Self.secrets.publish, subscribeKey: Self.secrets.subscribe, userId: "alice",
            store: .file(SimulatedDevice<DefaultChatCustom>.temporaryStorePath()))
        configuration.origin = "http://sim.invalid"
        configuration.transport = InProcessTransport(server: server)
        configuration.clock = clock
        configuration.seed = 7
        configuration.cipherKey = Self.secrets.cipher
        configuration.authKey = token
        configuration.reconciler.conflicts.channel = .manual
        let replica = try Replica<DefaultChatCustom>(configuration)

        // Live, then each failure while running: a conflicted channel edit, a send the token
        // does not grant (a dead letter).
        var named = ChannelEdit<FlatCustom>()
        named.name = .set("General")
        _ = try await replica.objects.setChannel(id: "general", edit: named)
        _ = try await replica.messages.send(text: Self.texts[0], to: "general")
        // "side" listed once (hot), then cold: the catch-up as live starts fills it without
        // listing its reactions and members, which leaves a gap in them.
        try await replica.live.markHot("side")
        _ = try await replica.sync()
        await replica.live.unmarkHot("side")
        await replica.start()
        await status(of: replica) { $0.connection == .live && $0.pending == 0 && $0.sending == 0 }
        // Another device renames the channel: the edit below goes with a stale eTag.
        await server.remoteEditChannel(id: "general", fields: ["name": "Everyone"])
        var described = ChannelEdit<FlatCustom>()
        described.details = .set(Self.texts[3])
        _ = try await replica.objects.setChannel(id: "general", edit: described)
        _ = try await replica.messages.send(text: Self.texts[1], to: "forbidden")
        await status(of: replica) { $0.conflicts == 1 && $0.pending == 1 }
        // The send waits for a token that grants "forbidden"; the next token does not either: a dead letter.
        for try await entries in replica.observe(replica.queries.outbox()) where entries.contains(where: \.waitsForToken) { break }
        clock.advance(by: .seconds(1))
        let renewed = try await server.grantToken(
            ttlMinutes: 10, grants: ReplicaAccessTests.grants(channels: ["general", "side"]), authorizedUserId: "alice")
        try replica.access.setToken(renewed)
        await status(of: replica) { $0.conflicts == 1 && $0.deadLetters == 1 }
        await replica.stop()

        // Away: the token expires; two sends wait for a new one.
        clock.advance(by: .seconds(20 * 60))
        _ = try await replica.messages.send(text: Self.texts[2], to: "general")
        _ = try await replica.messages.send(text: Self.texts[2] + " again", to: "general")
        _ = try? await replica.outbox.sendPending()

        let report = try await replica.diagnostics.report()
        let outbox = try #require(report.outbox)
        #expect(outbox.states["dead"] == 1 && outbox.states["conflict"] == 1 && outbox.states["pending"] == 2, "\(outbox.states)")
        #expect(outbox.deadLetters.first?.why.contains("refused for good") == true, "\(outbox.deadLetters)")
        #expect(outbox.deadLetters.first?.why.contains("forbidden") == true, "\(outbox.deadLetters)")
        #expect(outbox.conflicts.count == 1 && outbox.conflicts[0].kind == "setChannel" && outbox.conflicts[0].target == "channel:general", "\(outbox.conflicts)")
        #expect(outbox.waiting.count == 2 && outbox.waiting.allSatisfy { $0.why.contains("waits for a new Access Manager token") }, "\(outbox.waiting)")
        #expect(outbox.reasons["waiting for a token"] == 2, "\(outbox.reasons)")
        #expect(outbox.oldestAgeSeconds == 0)
        #expect(report.token.kind == "token" && report.token.expired, "\(report.token)")
        #expect(report.token.grants["resources.channels.general"]?.contains("write") == true, "\(report.token.grants)")
        #expect(report.live.transitions.contains { $0.hasSuffix(" live") }, "\(report.live.transitions)")
        #expect(report.live.status.contains("stopped"), "\(report.live.status)")
        let channels = try #require(report.channels)
        #expect(channels.count >= 2 && channels.withGap == 1, "\(channels)")
        #expect(channels.stalest.contains { $0.id == "side" && $0.gap && !$0.hot }, "\(channels)")
        #expect(channels.stalest.contains { $0.id == "general" && $0.liveThrough != nil && $0.historyThrough != nil })
        #expect(report.serverClockOffset.map { abs($0) < 1 } == true)
        // Publishes go as POST here (the message in the body, never kept); a GET publish's path
        // ends in `{message}` (RequestJournalTests).
        let publishes = report.requests.filter { $0.operation == "publish" }
        #expect(!publishes.isEmpty && publishes.allSatisfy { $0.method == "POST" && $0.path.hasPrefix("/publish/{pub}/{sub}/0/") }, "\(publishes)")
        #expect(publishes.contains { $0.op != nil }, "a publish sent for an op names it")
        #expect(report.requests.allSatisfy { !$0.path.contains(Self.secrets.subscribe) })
        #expect(report.versions["schema"]?.isEmpty == false && report.versions["sqlite"]?.hasPrefix("3.") == true)
        #expect(report.store.map { $0.databaseBytes > 0 && $0.rowCounts["messages"] == 4 } == true, "\(String(describing: report.store))")
        #expect(report.configuration["cipherKey"] == "set" && report.configuration["publishKey"] == "set")
        #expect(report.summary.contains("1 dead letter") && report.summary.contains("the token expired"), "\(report.summary)")

        // Nothing secret in the JSON, hashed or not.
        let hashed = try await replica.diagnostics.report(hashingIdentifiers: true)
        for made in [report, hashed] {
            let json = String(decoding: try made.json(), as: UTF8.self)
            #expect(json.utf8.count <= DiagnosticsReport.maximumJSONBytes)
            for secret in [Self.secrets.publish, Self.secrets.subscribe, Self.secrets.cipher, token, renewed, "sec-c-test"] + Self.texts {
                #expect(!json.contains(secret), "the report's JSON holds \(secret)")
            }
        }
        let hashedJSON = String(decoding: try hashed.json(), as: UTF8.self)
        for id in ["general", "forbidden", "alice"] {
            #expect(!hashedJSON.contains(id), "the hashed report names \(id)")
            #expect(hashedJSON.contains(DiagnosticsRedaction.hash(id)), "the hashed report lacks \(id)'s hash")
        }
    }

    @Test("a report past 64 KB leaves out the oldest requests, then the least fresh channels, and counts what it left out")
    func stayWithinItsSize() throws {
        let entry = RequestJournal.Entry(
            at: Date(timeIntervalSince1970: 0), operation: "fetchHistory", method: "GET",
            path: "/v3/history/sub-key/{sub}/channel/" + String(repeating: "c", count: 400), query: "max=100&auth&uuid",
            status: 200, failure: nil, milliseconds: 3, retry: false, codes: [])
        let channel = DiagnosticsReport.Channel(
            id: String(repeating: "r", count: 300), hot: false, historyThrough: "1", liveThrough: "2", ageSeconds: 1, gap: true)
        let report = DiagnosticsReport(
            madeAt: Date(timeIntervalSince1970: 0), versions: [:], configuration: [:], store: nil, outbox: nil,
            channels: DiagnosticsReport.Channels(count: 200, hot: 0, withGap: 200, stalest: Array(repeating: channel, count: 200)),
            live: DiagnosticsReport.Live(status: "live", lastSyncedAt: nil, transitions: []),
            token: DiagnosticsReport.Token(kind: "none", expires: nil, expired: false, waitingFor: nil, grants: [:]),
            serverClockOffset: nil, requests: Array(repeating: entry, count: 200), errorCodes: [:], expiring: [])
        let data = try report.json()
        #expect(data.count <= DiagnosticsReport.maximumJSONBytes)
        let decoded = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        let omitted = try #require(decoded?["omitted"] as? [String: Int])
        // The oldest requests go first, down to the last few, then the least fresh channels.
        #expect((omitted["requests"] ?? 0) > 180 && (omitted["channels"] ?? 0) > 0, "\(omitted)")
        #expect((decoded?["requests"] as? [Any])?.count == 200 - (omitted["requests"] ?? 0))
        let stalest = (decoded?["channels"] as? [String: Any])?["stalest"] as? [Any]
        #expect(stalest?.count == 200 - (omitted["channels"] ?? 0))
    }
}
