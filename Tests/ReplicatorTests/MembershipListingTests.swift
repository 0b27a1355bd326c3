import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
@testable import Replicator
import Testing

/// The user's memberships listed by what changed (docs/reconciler.md, "Objects"): newest change
/// first down to what the last listing saw, and the listing's total against the store's, so that
/// a membership left elsewhere is still learnt (a full listing follows a difference).
@Suite("The user's memberships, listed by what changed")
struct MembershipListingTests {
    /// The requests `body` sent.
    static func requests(_ device: World, _ body: () async throws -> Void) async throws -> [WireRequest] {
        let before = device.transport.records.count
        try await body()
        return device.transport.records[before...].map(\.request)
    }

    static func membershipPages(_ requests: [WireRequest]) -> Int {
        requests.filter { $0.operation == "getMemberships" }.count
    }

    static func muteListReads(_ requests: [WireRequest]) -> Int {
        requests.filter { $0.method == .get && $0.pathSegments.contains(ChatModeration.muteListId(of: "me")) }.count
    }

    static func memberships(_ device: World) async throws -> [String: ChatMember<DefaultChatCustom>] {
        Dictionary(uniqueKeysWithValues: try await device.store.fetch(device.store.queries.memberships(ofUser: "me")).map { ($0.channelId, $0) })
    }

    @Test("150 memberships: an idle sync reads one page of them and no mute list; a join, a change and a leave made elsewhere at once, then a leave alone, then a new mute list, each arrive at the next sync")
    func changesArrive() async throws {
        let world = try World()
        let elsewhere = try ChatSDKClient(world.server, userId: "me")
        let channels = (0..<150).map { "c\($0)" }
        for start in stride(from: 0, to: channels.count, by: 100) {
            _ = try await elsewhere.client.appContext.setMemberships(
                userId: "me", set: channels[start..<min(start + 100, channels.count)].map { MembershipSet(id: $0) },
                as: DefaultChatCustom.self)
        }
        try await elsewhere.writeMuteList(owner: "me", ["bob"])
        let first = try await world.sync()
        #expect(first.errors.isEmpty, "\(first.errors)")
        #expect(try await Self.memberships(world).count == 150)
        #expect(try await world.store.fetch(world.store.queries.mutedUsers(by: "me")) == ["bob"])

        let idle = try await Self.requests(world) { _ = try await world.sync() }
        #expect(Self.membershipPages(idle) == 1, "\(idle.map(\.operation))")
        #expect(Self.muteListReads(idle) == 0)

        // A join, a change and a leave at once: the total is unchanged, yet the leave is learnt.
        _ = try await elsewhere.client.appContext.setMemberships(
            userId: "me", set: [MembershipSet(id: "c150"), MembershipSet(id: "c3", status: "away")], remove: ["c7"],
            as: DefaultChatCustom.self)
        var report = try await world.sync()
        #expect(report.errors.isEmpty, "\(report.errors)")
        var stored = try await Self.memberships(world)
        #expect(Set(stored.keys) == Set(channels + ["c150"]).subtracting(["c7"]))
        #expect(stored["c3"]?.status == "away")

        // A leave alone.
        _ = try await elsewhere.client.appContext.setMemberships(
            userId: "me", set: [MembershipSet<DefaultChatCustom.Member>](), remove: ["c8"], as: DefaultChatCustom.self)
        report = try await world.sync()
        #expect(report.errors.isEmpty, "\(report.errors)")
        stored = try await Self.memberships(world)
        #expect(stored["c8"] == nil && stored.count == 149)

        // A change alone costs one page again.
        _ = try await elsewhere.client.appContext.setMemberships(
            userId: "me", set: [MembershipSet(id: "c9", status: "away")], as: DefaultChatCustom.self)
        let changed = try await Self.requests(world) { _ = try await world.sync() }
        #expect(Self.membershipPages(changed) == 1, "\(changed.map(\.operation))")
        #expect(try await Self.memberships(world)["c9"]?.status == "away")

        // The mute list, changed elsewhere, is named by the users listing and then read.
        try await elsewhere.writeMuteList(owner: "me", ["bob", "troll"])
        let muted = try await Self.requests(world) { _ = try await world.sync() }
        #expect(Self.muteListReads(muted) == 1)
        #expect(try await world.store.fetch(world.store.queries.mutedUsers(by: "me")) == ["bob", "troll"])
    }

    @Test("a membership joined locally stays through the listings until sent, after which one full listing agrees again; a mark that cannot be read means a full listing")
    func pendingAndUnreadable() async throws {
        let world = try World()
        let elsewhere = try ChatSDKClient(world.server, userId: "me")
        _ = try await elsewhere.client.appContext.setMemberships(
            userId: "me", set: (0..<3).map { MembershipSet(id: "c\($0)") }, as: DefaultChatCustom.self)
        _ = try await world.sync()
        // Joined offline: not on the server, so the total agrees, and the local join stays.
        _ = try await world.outbox.memberships.join(channel: "local")
        let offline = try await Self.requests(world) { _ = try await world.reconciler.pullObjects() }
        #expect(Self.membershipPages(offline) == 1, "\(offline.map(\.operation))")
        #expect(Set(try await Self.memberships(world).keys) == ["c0", "c1", "c2", "local"])
        // Sent: the server's total is one more than the mark's, and the join was not new to the
        // store: a changes page, then the full listing, once.
        let sent = try await Self.requests(world) { _ = try await world.sync() }
        #expect(Self.membershipPages(sent) == 2, "\(sent.map(\.operation))")
        let idle = try await Self.requests(world) { _ = try await world.reconciler.pullObjects() }
        #expect(Self.membershipPages(idle) == 1)
        #expect(Set(try await Self.memberships(world).keys) == ["c0", "c1", "c2", "local"])

        try await world.store.saveCheckpoint(SyncCheckpoint(scope: "memberships:me", cursor: "not a mark"))
        _ = try await elsewhere.client.appContext.setMemberships(
            userId: "me", set: [MembershipSet<DefaultChatCustom.Member>](), remove: ["c0"], as: DefaultChatCustom.self)
        let unreadable = try await Self.requests(world) { _ = try await world.reconciler.pullObjects() }
        #expect(Self.membershipPages(unreadable) == 1, "one full page: \(unreadable.map(\.operation))")
        #expect(Set(try await Self.memberships(world).keys) == ["c1", "c2", "local"])
    }

    @Test("a listing mark is written and read back; anything else is no mark")
    func markText() throws {
        let stamp = try ISOTimestamp(parsing: "2026-11-30T12:00:00.123456Z")
        let mark = MembershipListingMark(total: 2000, newest: stamp)
        #expect(MembershipListingMark(parsing: mark.description) == mark)
        #expect(MembershipListingMark(parsing: MembershipListingMark(total: 0, newest: nil).description) == MembershipListingMark(total: 0, newest: nil))
        for text in ["", "x", "-1", "12 yesterday", "2026-11-30T12:00:00Z"] { #expect(MembershipListingMark(parsing: text) == nil, "\(text)") }
    }
}
