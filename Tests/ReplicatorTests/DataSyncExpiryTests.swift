import Foundation
import PubNubSimulator
import PubNubWire
import ReplicaModel
import ReplicaStore
@testable import Replicator
import Testing

/// DataSync's server metadata in the store (migration 0014), expiry as the server treats it, a
/// membership deleted live by its own id, and the configurable membership class
/// (`docs/datasync.md`, "The mapping", "Expiry and configurable classes").
@Suite(.timeLimit(.minutes(10)))
struct DataSyncExpiryTests {
    typealias Keyset = DataSyncBackendTests.Keyset

    @Test("pulled users, channels and memberships keep their class, expiresAt and a membership's own id; a write's answer keeps them")
    func metadataStored() async throws {
        let keyset = try await Keyset()
        let world = try await keyset.device()
        _ = try await world.reconciler.pullObjects(full: true)
        let store = world.store
        let me = try #require(try await store.fetch(store.queries.user(id: "me")))
        let server = try #require(try await keyset.record(.users, "me"))
        #expect(me.metadata == ObjectMetadata(className: "User", classVersion: 1, expiresAt: server.expiresAt))
        #expect(server.expiresAt != nil)
        let random = try #require(try await store.fetch(store.queries.member(channelId: "random", userId: "me")))
        #expect(random.metadata?.backendId == "m-1" && random.metadata?.className == "Membership")
        #expect(random.metadata?.expiresAt == (try await keyset.record(.memberships, "m-1"))?.expiresAt)
        #expect(try await store.fetch(store.queries.member(channelId: "general", userId: "me"))?.metadata?.backendId == "pnm.2.7.me.general")
        #expect(try await store.fetch(store.queries.channel(id: "general"))?.metadata?.className == "Channel")

        // An edit goes out and its answer is stored: the metadata stays.
        _ = try await world.outbox.memberships.setMembership(channel: "random", edit: MemberEdit(status: "away"))
        var edit = UserEdit<FlatCustom>()
        edit.name = .set("Me again")
        _ = try await world.outbox.metadata.setUser(id: "me", edit: edit)
        let sent = try await world.outbox.drain(until: keyset.clock.now.addingTimeInterval(60))
        #expect(sent.deadLetters == 0 && sent.conflicts == 0)
        var created = ChannelEdit<FlatCustom>()
        created.name = .set("Fresh")
        _ = try await world.outbox.metadata.setChannel(id: "fresh", edit: created)
        #expect(try await world.outbox.drain(until: keyset.clock.now.addingTimeInterval(60)).completed == 1)
        let fresh = try #require(try await store.fetch(store.queries.channel(id: "fresh")))
        let freshRecord = try await keyset.record(.channels, "fresh")
        #expect(fresh.metadata?.className == "Channel" && fresh.metadata?.expiresAt == freshRecord?.expiresAt && freshRecord != nil,
                "a create's answer brings the metadata of a row that had none: \(String(describing: fresh.metadata))")
        let after = try #require(try await store.fetch(store.queries.member(channelId: "random", userId: "me")))
        #expect(after.status == "away" && after.metadata?.backendId == "m-1" && after.metadata?.expiresAt == random.metadata?.expiresAt)
        #expect(try await store.fetch(store.queries.user(id: "me"))?.metadata == me.metadata)

        // App Context objects carry none.
        let appContext = try World(clock: keyset.clock, server: keyset.server)
        _ = try await appContext.store.load(users: [try ChatUser(id: "plain", name: "Plain", updated: ISOTimestamp(nanoseconds: 1), eTag: "e")])
        #expect(try await appContext.store.fetch(appContext.store.queries.user(id: "plain"))?.metadata == nil)
    }

    @Test("the followed objects that expire soon are listed soonest first; others are not")
    func expiringObjects() async throws {
        let keyset = try await Keyset()
        let world = try await keyset.device()
        _ = try await world.reconciler.pullObjects(full: true)
        let store = world.store
        let expiresAt = try #require(try await keyset.record(.users, "me")?.expiresAt)
        let early = keyset.clock.now.addingTimeInterval(86_400)
        #expect(try await store.fetch(store.queries.expiringObjects(followedBy: "me", before: early)).isEmpty, "nothing within a day")
        let late = expiresAt.date.addingTimeInterval(1)
        let listed = try await store.fetch(store.queries.expiringObjects(followedBy: "me", before: late))
        let names = Set(listed.map(\.description).map { $0.components(separatedBy: " expires").first ?? "" })
        #expect(names == ["user me", "membership general/me", "membership random/me", "channel general", "channel random"],
                "the user, their memberships and those channels; not u1: \(names)")
        #expect(listed.map(\.expiresAt) == listed.map(\.expiresAt).sorted())
        #expect(try await store.fetch(store.queries.expiringObjects(followedBy: "u1", before: late)).map(\.kind) == [.user])
    }

    @Test("an object whose expiresAt has passed is removed by the next pull, unless an edit of it waits (a user or channel with memberships left is made bare); those edits meet the 404 as conflicts and clientWins recreates them")
    func expirySweep() async throws {
        let keyset = try await Keyset()
        let world = try await keyset.device(policy: .clientWins)
        _ = try await world.reconciler.pullObjects(full: true)
        let store = world.store
        var edit = ChannelEdit<FlatCustom>()
        edit.name = .set("Still here")
        _ = try await world.outbox.metadata.setChannel(id: "random", edit: edit)
        _ = try await world.outbox.memberships.setMembership(channel: "general", edit: MemberEdit(status: "waiting"))
        // Five days on, another client adds a channel and makes me a member: these outlive the rest.
        keyset.clock.advance(by: 5 * 86_400)
        try await keyset.create(.channels, DataSyncObject(id: "late", payload: ["name": "Late"]))
        try await keyset.create(.memberships, DataSyncObject(id: "m-late", channelId: "late", userId: "me", status: "joined"))
        // Past the first objects' expiresAt (30 days, rounded up to a midnight): the server drops them.
        keyset.clock.advance(by: 27 * 86_400)
        #expect(try await keyset.record(.users, "me") == nil, "the server expired it")
        _ = try world.client.access.setToken(try await keyset.token())  // the first one expired a month ago
        let report = try await world.reconciler.pullObjects(full: false)
        #expect(report.expired == 4, "u1, my user and general (made bare), random/me: \(report.expired)")
        #expect(try await store.fetch(store.queries.user(id: "u1")) == nil)
        #expect(try await store.fetch(store.queries.member(channelId: "random", userId: "me")) == nil)
        #expect(try await store.fetch(store.queries.channel(id: "random"))?.name == "Still here", "a waiting edit keeps its object")
        // general expired, but my membership of it waits to be sent: it stays, and general with it, bare.
        let waiting = try await store.fetch(store.queries.member(channelId: "general", userId: "me"))
        #expect(waiting?.status == "waiting" && waiting?.channel.name == nil && waiting?.channel.eTag == nil, "\(String(describing: waiting))")
        // My user expired, my later membership did not: it stays (the sweep runs before the
        // memberships are listed), with my user as a bare row.
        let late = try await store.fetch(store.queries.member(channelId: "late", userId: "me"))
        #expect(late?.status == "joined" && late?.channel.name == "Late", "\(String(describing: late))")
        #expect(try await store.fetch(store.queries.channelIds(memberOf: "me")) == ["general", "late"], "general's waits to be sent")

        // The edit goes: a 404 on an object it had a base of is a conflict, never a silent loss.
        let first = try await world.outbox.drain(until: keyset.clock.now.addingTimeInterval(60))
        #expect(first.conflicts == 2, "\(first)")
        _ = try await world.reconciler.resolveConflicts()
        let second = try await world.outbox.drain(until: keyset.clock.now.addingTimeInterval(60))
        #expect(second.deadLetters == 0 && second.conflicts == 0)
        #expect(try await keyset.record(.channels, "random")?.payload?["name"] == "Still here", "clientWins recreated it")
        #expect(try await keyset.record(.memberships, "pnm.2.7.me.general")?.status == "waiting", "and the membership, with its ends")
        let log = try await store.fetch(store.queries.conflicts())
        #expect(log.count == 2 && log.allSatisfy { $0.policy == "clientWins" && !$0.isOpen }, "\(log)")
        #expect(try await store.fetch(store.queries.outboxCount()) == 0)
    }

    @Test("a live delete of another client's membership, named only by its id, removes it by the id the store keeps")
    func liveDeleteById() async throws {
        let keyset = try await Keyset()
        let world = try await keyset.device()
        _ = try await world.reconciler.pullObjects(full: true)
        let store = world.store
        func event(_ verb: String, _ data: JSONValue) throws -> [SubscribeEnvelope] {
            let metadata: JSONValue = [
                "event": .string(verb), "source": "data-sync", "type": "membership", "className": "Membership", "classLevel": "Global",
                "classVersion": 1,
            ]
            let element: JSONValue = [
                "a": "4", "f": 0, "e": 5, "p": ["t": "17905749864310939", "r": 1], "k": "demo", "c": "me", "b": "me",
                "d": ["version": "1.0", "metadata": metadata, "data": data],
            ]
            let body = try JSONValue.object(["t": ["t": "17905749864310939", "r": 1], "m": [element]]).jsonData()
            return try PubNubClient.subscribeAnswer(from: WireResponse(status: 200, body: body)).envelopes
        }
        func deleteEvent(_ id: String) throws -> [SubscribeEnvelope] {
            try event("delete", ["id": .string(id), "deletedAt": "2026-09-28T05:56:25.631142Z"])
        }
        let unknown = try await world.reconciler.live.applyLive(try deleteEvent("m-unknown"), advancing: [], through: nil)
        #expect(unknown.objectsChanged == 0 && unknown.unreadableChannels.isEmpty, "an id the store does not hold changes nothing")
        #expect(try await store.fetch(store.queries.member(channelId: "random", userId: "me")) != nil)
        let result = try await world.reconciler.live.applyLive(try deleteEvent("m-1"), advancing: [], through: nil)
        #expect(result.objectsChanged == 1)
        #expect(result.applied.map(\.subject) == ["random/me"] && result.applied.map(\.outcome) == ["removed"])
        #expect(try await store.fetch(store.queries.member(channelId: "random", userId: "me")) == nil)
        #expect(try await store.fetch(store.queries.member(channelId: "general", userId: "me")) != nil)

        // A membership another client creates live is stored from the event without its id; the
        // next listing (the same version) brings the id, and a delete by it then finds it.
        try await keyset.create(.channels, DataSyncObject(id: "later", payload: ["name": "Later"]))
        try await keyset.create(.memberships, DataSyncObject(id: "m-later", channelId: "later", userId: "me", status: "joined"))
        let record = try #require(await keyset.server.dataSyncRecord(.memberships, id: "m-later"))
        _ = try await world.reconciler.live.applyLive(try event("create", record), advancing: [], through: nil)
        #expect(try await store.fetch(store.queries.member(channelId: "later", userId: "me"))?.metadata?.backendId == nil)
        _ = try await world.reconciler.pullObjects(full: false)
        #expect(try await store.fetch(store.queries.member(channelId: "later", userId: "me"))?.metadata?.backendId == "m-later")
        _ = try await world.reconciler.live.applyLive(try deleteEvent("m-later"), advancing: [], through: nil)
        #expect(try await store.fetch(store.queries.member(channelId: "later", userId: "me")) == nil)
    }

    @Test("a configured Membership subclass is named on create; none is named by default")
    func membershipClass() async throws {
        let keyset = try await Keyset()
        let world = try await keyset.device()
        // The app's Membership subclass, kept a year (defined through the Admin API on PubNub).
        await keyset.server.defineDataSyncClass(DataSyncClass(
            name: "ChatMembership", level: .subKey, kind: .relationship, extends: "Membership", ttlSeconds: 365 * 86_400))
        var options = DataSyncOptions()
        options.membershipClass = "ChatMembership"
        let backend = DataSyncBackend(client: world.client, options: options)
        _ = try await backend.write(.setMembership(channel: "general", user: "u1", fields: ["status": "joined"], base: nil, precondition: .none))
        let record = try #require(try await keyset.record(.memberships, "pnm.2.7.u1.general"))
        #expect(record.className == "ChatMembership")
        let lifetime = try #require(record.expiresAt).date.timeIntervalSince(keyset.clock.now)
        #expect(lifetime > 364 * 86_400, "the subclass's time to live, not 30 days: \(lifetime)")
        let planned = try backend.plannedRequest(for: .setMembership(channel: "random", user: "u1", fields: ["status": "joined"], base: nil, precondition: .none))
        #expect(planned.method == .patch, "a membership write starts as a patch of pnreplicate's id")
        let created = world.transport.requests.first { $0.method == .post && $0.pathSegments.last == "memberships" }
        let body = created?.body.flatMap { JSONValue.parse($0) }
        #expect(body?.objectValue?["data"]?.objectValue?["relationshipClass"] == "ChatMembership", "\(String(describing: body))")
        _ = try await DataSyncBackend(client: world.client).write(
            .setMembership(channel: "random", user: "u1", fields: ["status": "joined"], base: nil, precondition: .none))
        let plain = world.transport.requests.last { $0.method == .post && $0.pathSegments.last == "memberships" }
        #expect(plain?.body.flatMap { JSONValue.parse($0) }?.objectValue?["data"]?.objectValue?["relationshipClass"] == nil)
    }
}
