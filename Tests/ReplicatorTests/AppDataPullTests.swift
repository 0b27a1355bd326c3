import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
@testable import Replicator
import Testing

/// The pull of an app's own DataSync classes against the simulator: the first sync lists each
/// declared class whole, later ones cost one request per class and bring only what changed; the
/// sync rule keeps only matching records; a deletion no event told is learnt at the next full
/// listing (due after the class's interval); expired records go; a declaration DataSync would
/// refuse stops the open with a typed error.
@Suite("App-data pulls")
struct AppDataPullTests {
    static let poll = AppClass(entity: "Poll", properties: [
        AppProperty("question", kind: .string), AppProperty("closed", kind: .boolean), AppProperty("votes", kind: .number),
    ])
    static let vote = AppClass(relationship: "Vote", from: "Poll", to: "Person")

    /// A keyset whose admin defined `Poll`, `Person` and `Vote`, with `polls` polls (every third
    /// one closed) and a vote for each of the first three.
    struct Keyset {
        let clock = VirtualClock(start: Date(timeIntervalSince1970: 1_788_766_495))
        let server: PubNubServer
        let admin: PubNubDataSync

        init(polls: Int) async throws {
            server = PubNubServer(clock: clock, secretKey: "sec")
            let filterable = DataSyncProperty.Filtering.full
            // A day's time to live: records expire within two days (rounded up to a UTC midnight).
            await server.defineDataSyncClass(DataSyncClass(name: "Poll", ttlSeconds: 86_400, properties: [
                DataSyncProperty(name: "question", pointer: JSONPointer(["payload", "question"]), valueKind: .string, filtering: filterable),
                DataSyncProperty(name: "closed", pointer: JSONPointer(["payload", "closed"]), valueKind: .boolean, filtering: filterable),
                DataSyncProperty(name: "votes", pointer: JSONPointer(["payload", "votes"]), valueKind: .number, filtering: filterable),
            ]))
            await server.defineDataSyncClass(DataSyncClass(name: "Person"))
            await server.defineDataSyncClass(DataSyncClass(name: "Vote", kind: .relationship, ends: ("Poll", "Person")))
            admin = try PubNubClient.simulated(InProcessTransport(server: server), userId: "admin", clock: clock).dataSync
            try await create(.entities, DataSyncObject(id: "alice", className: "Person", payload: [:]))
            for i in 0..<polls {
                try await create(.entities, Self.poll(i))
                clock.advance(by: 0.001)
            }
            for i in 0..<min(3, polls) {
                var vote = DataSyncObject(id: "vote.\(i).alice", className: "Vote", payload: ["choice": 1])
                (vote.entityAId, vote.entityBId) = ("poll.\(i)", "alice")
                try await create(.relationships, vote)
            }
            clock.advance(by: 1)
        }

        static func poll(_ i: Int) -> DataSyncObject {
            DataSyncObject(
                id: "poll.\(i)", className: "Poll",
                payload: ["question": .string("Q\(i)"), "closed": .bool(i % 3 == 0), "votes": .int(Int64(i))])
        }

        func create(_ resource: DataSyncResource, _ object: DataSyncObject) async throws {
            let answer = await server.dataSyncAsAdmin(try admin.createRequest(resource, object))
            #expect(answer.status == 201, "\(String(decoding: answer.body, as: UTF8.self))")
        }

        /// A device of `me` whose token reads every record, declaring `classes`.
        func device(_ classes: [AppClass], storePath: String? = nil) async throws -> World {
            var options = ReconcilerOptions()
            options.appData = AppDataDeclaration(classes: classes)
            let all = AccessPermissions(rawValue: 255)
            let token = try await server.grantToken(
                ttlMinutes: 43_200, grants: AccessGrants(patterns: [
                    .user: ["^.*$": all], .channel: ["^.*$": all], .dataSyncEntity: ["^.*$": all], .dataSyncRelationship: ["^.*$": all],
                ]),
                authorizedUserId: "me")
            return try World(server: server, clock: clock, storePath: storePath, reconcilerOptions: options, authToken: token)
        }
    }

    /// The app-data listing requests `world` sent since `start`.
    static func listings(_ world: World, from start: Int = 0) -> [WireRequest] {
        world.transport.requests.dropFirst(start).filter {
            $0.method == .get && $0.pathSegments.count == 5 && ["entities", "relationships"].contains($0.pathSegments[4])
        }
    }

    static func count(_ world: World, _ className: String) async throws -> Int {
        try await world.store.fetch(AppRecordQueries.count(AppRecordFilter(className)))
    }

    @Test("the first sync lists each class whole; an idle one costs one request per class; a change comes back alone")
    func incremental() async throws {
        let keyset = try await Keyset(polls: 150)
        let world = try await keyset.device([Self.poll, Self.vote])
        let first = try await world.sync()
        #expect(first.appData["Poll"]?.inserted == 150 && first.appData["Poll"]?.full == true, "\(first.appData) \(first.errors)")
        #expect(first.appData["Vote"]?.inserted == 3 && first.errors.isEmpty, "\(first.errors)")
        #expect(try await Self.count(world, "Poll") == 150)
        let voters = try await world.store.fetch(AppRecordQueries.related(to: "alice", through: "Vote", side: .b))
        #expect(voters.map(\.id) == ["poll.0", "poll.1", "poll.2"])
        let firstListings = Self.listings(world)
        #expect(firstListings.count == 3, "two pages of polls and one of votes: \(firstListings.map(\.query))")
        #expect(firstListings.allSatisfy { $0.query.contains { $0.name == "entity_class" || $0.name == "relationship_class" } })

        let before = world.transport.requests.count
        let idle = try await world.sync()
        #expect(Self.listings(world, from: before).count == 2, "one request per class")
        #expect(idle.appData["Poll"].map { $0.inserted + $0.updated + $0.removed } == 0 && !idle.appData["Poll"]!.full)

        keyset.clock.advance(by: 1)
        let patched = await keyset.server.dataSyncAsAdmin(try keyset.admin.patchRequest(
            .entities, id: "poll.7", [.add(JSONPointer(["payload", "votes"]), 700)]))
        #expect(patched.status == 200)
        let after = world.transport.requests.count
        let changed = try await world.sync()
        #expect(changed.appData["Poll"]?.updated == 1, "\(changed.appData)")
        #expect(Self.listings(world, from: after).count == 2)
        let found = try await world.store.fetch(AppRecordQueries.records(AppRecordFilter("Poll", where: [.init("votes", .equal, 700)])))
        #expect(found.map(\.id) == ["poll.7"])
        let query = try #require(Self.listings(world, from: after).first { $0.pathSegments[4] == "entities" }?.query)
        #expect(query.contains { $0.name == "filter_fast" && ($0.value ?? "").hasPrefix("updatedAt >= ") })
    }

    @Test("the sync rule keeps only matching records; a deletion no event told is learnt at the next full listing, due after the interval")
    func ruleAndFullListing() async throws {
        let keyset = try await Keyset(polls: 9)
        var open = Self.poll
        open.rule = .matching([AppPredicate("closed", .equal, false)])
        open.fullListingInterval = .seconds(3_600)
        let world = try await keyset.device([open])
        _ = try await world.sync()
        let stored = try await world.store.fetch(AppRecordQueries.records(AppRecordFilter("Poll", sortedBy: .init("votes"))))
        #expect(stored.map(\.id) == ["poll.1", "poll.2", "poll.4", "poll.5", "poll.7", "poll.8"], "closed polls are not kept")
        let rule = try #require(Self.listings(world).first?.query.first { $0.name == "filter_fast" }?.value)
        #expect(rule == "closed == false", "\(rule)")

        #expect(await keyset.server.dataSyncAsAdmin(try keyset.admin.deleteRequest(.entities, id: "poll.4")).status == 200)
        keyset.clock.advance(by: 60)
        let incremental = try await world.sync()
        #expect(incremental.appData["Poll"]?.full == false && incremental.appData["Poll"]?.removed == 0)
        #expect(try await Self.count(world, "Poll") == 6, "no event, no listing of it yet: still shown")
        keyset.clock.advance(by: 3_600)
        let full = try await world.sync()
        #expect(full.appData["Poll"]?.full == true && full.appData["Poll"]?.removed == 1, "\(full.appData)")
        #expect(try await world.store.fetch(AppRecordQueries.record(.entity, id: "poll.4")) == nil)
        #expect(try await Self.count(world, "Poll") == 5)
    }

    @Test("a changed rule lists the class whole at the next open and drops what the new rule leaves out")
    func changedRule() async throws {
        let keyset = try await Keyset(polls: 6)
        let world = try await keyset.device([Self.poll])
        _ = try await world.sync()
        #expect(try await Self.count(world, "Poll") == 6)
        var open = Self.poll
        open.rule = .matching([AppPredicate("closed", .equal, false)])
        let reopened = try await keyset.device([open], storePath: world.storePath)
        let report = try await reopened.sync()
        #expect(report.appData["Poll"]?.full == true && report.appData["Poll"]?.removed == 2, "\(report.appData)")
        #expect(try await Self.count(reopened, "Poll") == 4)
        let none = try await keyset.device([], storePath: world.storePath)
        await #expect(throws: (any Error).self, "declaring nothing any more drops the class and its rows") {
            _ = try await Self.count(none, "Poll")
        }
        let rows = try await none.store.fetch(StoreQuery { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM app_records") ?? -1 })
        #expect(rows == 0)
    }

    @Test("records whose expiresAt passed are removed after the pulls, without a full listing")
    func expiry() async throws {
        let keyset = try await Keyset(polls: 2)
        var rare = Self.poll
        rare.fullListingInterval = .seconds(30 * 86_400)
        let world = try await keyset.device([rare])
        _ = try await world.sync()
        let expires = try #require(try await world.store.fetch(AppRecordQueries.record(.entity, id: "poll.0"))?.expiresAt)
        keyset.clock.advance(by: expires.date.timeIntervalSince(keyset.clock.now) + 1)
        let report = try await world.sync()
        #expect(report.appData["Poll"]?.full == false && report.appData["Poll"]?.removed == 2, "\(report.appData)")
        #expect(try await Self.count(world, "Poll") == 0)
    }

    @Test("a declaration DataSync would refuse stops the open with a typed error; no class, no app-data request")
    func declarationChecked() async throws {
        let keyset = try await Keyset(polls: 1)
        await #expect(throws: AppDataError.declaration(className: "User", reason: "User is a built-in class: the chat's objects replicate it")) {
            _ = try await keyset.device([AppClass(entity: "User")])
        }
        let plain = try await keyset.device([])
        let report = try await plain.sync()
        #expect(report.appData.isEmpty && Self.listings(plain).isEmpty)
    }

    @Test("request budget: with 3 classes of N records each (1,000; PNREPLICATE_APP_BUDGET_RECORDS=10000 for the issue's size), an idle sync's app-data share is 3 requests, whatever N")
    func idleBudget() async throws {
        let size = ProcessInfo.processInfo.environment["PNREPLICATE_APP_BUDGET_RECORDS"].flatMap(Int.init) ?? 1_000
        let keyset = try await Keyset(polls: 0)
        let names = ["Order", "Ticket", "Task"]
        for name in names {
            await keyset.server.defineDataSyncClass(DataSyncClass(name: name, properties: [
                DataSyncProperty(name: "n", pointer: JSONPointer(["payload", "n"]), valueKind: .number, filtering: .full),
            ]))
            for i in 0..<size {
                try await keyset.create(.entities, DataSyncObject(id: "\(name.lowercased()).\(i)", className: name, payload: ["n": .int(Int64(i))]))
            }
        }
        keyset.clock.advance(by: 1)
        let world = try await keyset.device(names.map { AppClass(entity: $0, properties: [AppProperty("n", kind: .number)]) })
        let first = try await world.sync()
        #expect(names.allSatisfy { first.appData[$0]?.inserted == size }, "\(first.appData) \(first.errors)")
        #expect(Self.listings(world).count == 3 * ((size + 99) / 100), "a full first listing: a page per 100 (has_next ends it)")
        let before = world.transport.requests.count
        _ = try await world.sync()
        let idle = Self.listings(world, from: before)
        #expect(idle.count == 3, "one request per class (the issue's budget for the classes' share: 10): \(idle.count)")
    }

    @Test("live: records another client creates, edits and deletes reach the replica on its wildcard subscription, with no listing; the chat's channels are untouched")
    func live() async throws {
        let keyset = try await Keyset(polls: 2)
        await keyset.server.configureSubscribe(SubscribeSettings(hold: .zero))
        var routed = Self.poll
        routed.routing = .wildcard(prefix: "poll")
        let world = try await keyset.device([routed])
        _ = try await world.sync()
        let live = LiveSync(reconciler: world.reconciler, options: LiveSyncOptions(), clock: keyset.clock, random: SplitMix64(seed: 1))
        try await LiveWorld.settle(live)
        let subscribe = try #require(world.transport.requests.last { $0.pathSegments.count > 3 && $0.pathSegments[1] == "subscribe" })
        #expect(subscribe.pathSegments[3].split(separator: ",").contains("poll.*"), "\(subscribe.pathSegments)")

        let listed = Self.listings(world).count
        keyset.clock.advance(by: 1)
        try await keyset.create(.entities, Keyset.poll(9))
        #expect(await keyset.server.dataSyncAsAdmin(try keyset.admin.patchRequest(
            .entities, id: "poll.0", [.add(JSONPointer(["payload", "question"]), "Edited")])).status == 200)
        #expect(await keyset.server.dataSyncAsAdmin(try keyset.admin.deleteRequest(.entities, id: "poll.1")).status == 200)
        try await LiveWorld.settle(live)
        let store = world.store
        #expect(try await store.fetch(AppRecordQueries.record(.entity, id: "poll.9"))?.payload["question"] == "Q9")
        #expect(try await store.fetch(AppRecordQueries.record(.entity, id: "poll.0"))?.payload["question"] == "Edited")
        #expect(try await store.fetch(AppRecordQueries.record(.entity, id: "poll.1")) == nil)
        #expect(Self.listings(world).count == listed, "learnt from the events alone")
        let history = world.transport.requests.filter { $0.pathSegments.contains { $0.hasPrefix("poll") } && $0.pathSegments.first == "v3" }
        #expect(history.isEmpty, "a wildcard is never read as a channel's history")
    }

    @Test("an event of an undeclared class, or of a declared one on a channel the replica did not subscribe, is not stored")
    func liveIgnored() async throws {
        #expect(AppDataLive.covers(["poll.*"], "poll.1") && AppDataLive.covers(["poll.*"], "poll.a.b"))
        #expect(!AppDataLive.covers(["poll.*"], "pollx.1") && !AppDataLive.covers(["poll.*"], "poll.1-pnpres"))
        #expect(!AppDataLive.covers(["poll.*"], "poll") && AppDataLive.covers(["general"], "general"))
        let keyset = try await Keyset(polls: 1)
        let world = try await keyset.device([Self.poll])
        let event = DataSyncEvent(
            verb: .create, type: "entity", className: "Ticket", classVersion: 1,
            row: try DataSyncRow(object: ["id": "t.1", "updatedAt": "2026-12-03T07:00:00Z", "payload": [:]]))
        let envelope = SubscribeEnvelope(channel: "t.1", timetoken: Timetoken(rawValue: 17_900_000_000_000_000), kind: 5, payload: [:], event: .dataSync(event))
        let result = try await world.reconciler.live.applyLive([envelope], advancing: [], through: nil)
        #expect(result.ignored == 1 && result.objectsChanged == 0)
    }

    @Test("id-channel routing subscribes each stored record's id (read again after 30 s, not at every step); an edit arrives live on it")
    func idChannels() async throws {
        let keyset = try await Keyset(polls: 2)
        await keyset.server.configureSubscribe(SubscribeSettings(hold: .zero))
        let world = try await keyset.device([Self.poll])
        _ = try await world.sync()
        let live = LiveSync(reconciler: world.reconciler, options: LiveSyncOptions(), clock: keyset.clock, random: SplitMix64(seed: 1))
        try await LiveWorld.settle(live)
        let subscribe = try #require(world.transport.requests.last { $0.pathSegments.count > 3 && $0.pathSegments[1] == "subscribe" })
        let names = subscribe.pathSegments[3].split(separator: ",").map(String.init)
        #expect(names.contains("poll.0") && names.contains("poll.1") && !names.contains("poll.*"), "\(names)")
        #expect(world.reconciler.context.appChannels.fresh(at: keyset.clock.now) == ["poll.0", "poll.1"])
        #expect(world.reconciler.context.appChannels.fresh(at: keyset.clock.now.addingTimeInterval(AppChannelCache.interval)) == nil)

        keyset.clock.advance(by: 1)
        #expect(await keyset.server.dataSyncAsAdmin(try keyset.admin.patchRequest(
            .entities, id: "poll.1", [.add(JSONPointer(["payload", "question"]), "Live")])).status == 200)
        try await LiveWorld.settle(live)
        #expect(try await world.store.fetch(AppRecordQueries.record(.entity, id: "poll.1"))?.payload["question"] == "Live")
    }
}
