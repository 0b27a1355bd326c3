import Foundation
import Testing
import ReplicaModel
@testable import ReplicaStore

@Suite("Object writes keep the newer version")
struct UpsertRuleTests {
    @Test("a new user is inserted, and reported as inserted")
    func insertsNewUser() async throws {
        let store = try Fixture.store()
        let report = try await store.load(users: [try Fixture.user("alice", at: 10)])
        #expect(report.inserted == 1 && report.updated == 0 && report.unchanged == 0)
        #expect(try await store.fetch(store.queries.user(id: "alice"))?.name == "alice")
    }

    @Test("a newer version replaces the stored user")
    func newerWins() async throws {
        let store = try Fixture.store()
        try await store.load(users: [try Fixture.user("alice", name: "Old", at: 10)])
        let report = try await store.load(users: [try Fixture.user("alice", name: "New", at: 20)])
        #expect(report.updated == 1)
        let stored = try await store.fetch(store.queries.user(id: "alice"))
        #expect(stored?.name == "New")
        #expect(stored?.updated == Fixture.ts(20))
    }

    @Test("an older version is ignored")
    func staleIgnored() async throws {
        let store = try Fixture.store()
        try await store.load(users: [try Fixture.user("alice", name: "Current", at: 20)])
        let report = try await store.load(users: [try Fixture.user("alice", name: "Stale", at: 10)])
        #expect(report.unchanged == 1 && report.updated == 0)
        #expect(try await store.fetch(store.queries.user(id: "alice"))?.name == "Current")
    }

    @Test("the same eTag is a no-op even with different fields")
    func equalETagNoOp() async throws {
        let store = try Fixture.store()
        try await store.load(users: [try Fixture.user("alice", name: "First", at: 10, eTag: "E1")])
        let report = try await store.load(users: [try Fixture.user("alice", name: "Other", at: 30, eTag: "E1")])
        #expect(report.unchanged == 1)
        #expect(try await store.fetch(store.queries.user(id: "alice"))?.name == "First")
    }

    @Test("a version without updated never replaces one with it")
    func missingUpdatedIsStale() async throws {
        let store = try Fixture.store()
        try await store.load(users: [try Fixture.user("alice", name: "Full", at: 10)])
        let bare = try User(id: "alice", name: "Bare", eTag: "other")
        let report = try await store.load(users: [bare])
        #expect(report.unchanged == 1)
        #expect(try await store.fetch(store.queries.user(id: "alice"))?.name == "Full")
    }

    @Test("channels follow the same rules", arguments: [
        (20, "E2", "New", 1, 0),  // newer: updated
        (5, "E2", "Old", 0, 1),  // older: unchanged
        (20, "E1", "Old", 0, 1),  // same eTag: unchanged
    ])
    func channelRules(at seconds: Int, eTag: String, expectedName: String, updated: Int, unchanged: Int) async throws {
        let store = try Fixture.store()
        try await store.load(channels: [try Fixture.channel("c", name: "Old", at: 10, eTag: "E1")])
        let report = try await store.load(channels: [try Fixture.channel("c", name: "New", at: Int64(seconds), eTag: eTag)])
        #expect(report.updated == updated && report.unchanged == unchanged)
        #expect(try await store.fetch(store.queries.channel(id: "c"))?.name == expectedName)
    }

    @Test("memberships follow the rules unless forceWrite is set")
    func memberRulesAndForceWrite() async throws {
        let store = try Fixture.store()
        try await store.load(members: [try Fixture.member("c", "alice", status: "current", at: 20)])
        let stale = try Fixture.member("c", "alice", status: "stale", at: 10)
        #expect(try await store.load(members: [stale]).unchanged == 1)
        #expect(try await store.fetch(store.queries.member(channelId: "c", userId: "alice"))?.status == "current")
        #expect(try await store.load(members: [stale], forceWrite: true).updated == 1)
        #expect(try await store.fetch(store.queries.member(channelId: "c", userId: "alice"))?.status == "stale")
    }

    @Test("a membership with id-only channel and user creates stubs but never overwrites full objects")
    func memberStubs() async throws {
        let store = try Fixture.store()
        try await store.load(users: [try Fixture.user("alice", name: "Alice", at: 10)])
        try await store.load(members: [try Fixture.member("new-channel", "alice")])
        #expect(try await store.fetch(store.queries.user(id: "alice"))?.name == "Alice")
        let stub = try await store.fetch(store.queries.channel(id: "new-channel"))
        #expect(stub?.name == nil && stub?.eTag == nil && stub?.memberCount == 1)
    }

    @Test("load reports each batch, and a failing batch is rolled back while later batches are written")
    func batchesAndFailures() async throws {
        let store = try Fixture.store()
        var users = try (0..<5).map { try Fixture.user("u\($0)") }
        users[2].id = "bad,id"  // mutated after validation: the store validates again
        let seen = BatchRecorder()
        let report = try await store.load(users: users, batchSize: 2, onBatch: { seen.append($0) })
        #expect(report.batches.map(\.count) == [2, 2, 1])
        #expect(seen.values.map(\.index) == [0, 1, 2])
        #expect(report.batches[1].error != nil)
        #expect(report.inserted == 3)
        let stored = try await store.fetch(store.queries.users()).map(\.id)
        #expect(stored == ["u0", "u1", "u4"])  // u3 shared the failed batch and was rolled back
    }

    @Test("patches apply changed fields, ignore older changesets and report unknown ids")
    func patches() async throws {
        let store = try Fixture.store()
        var user = try Fixture.user("alice", name: "Alice", at: 10)
        user.email = "a@example.com"
        try await store.load(users: [user])
        var change = UserChangeset<FlatCustom>(id: "alice", updated: Fixture.ts(20), eTag: "E20")
        change.name = .set("Alicia")
        #expect(try await store.patch(user: change) == .applied)
        let patched = try await store.fetch(store.queries.user(id: "alice"))
        #expect(patched?.name == "Alicia" && patched?.email == "a@example.com" && patched?.eTag == "E20")

        var old = UserChangeset<FlatCustom>(id: "alice", updated: Fixture.ts(15), eTag: "E15")
        old.name = .set("Old")
        #expect(try await store.patch(user: old) == .ignored)
        #expect(try await store.fetch(store.queries.user(id: "alice"))?.name == "Alicia")
        #expect(try await store.patch(user: UserChangeset(id: "nobody", updated: Fixture.ts(1), eTag: "x")) == .notFound)
    }

    @Test("removing a channel removes its memberships but keeps users")
    func removeCascades() async throws {
        let store = try Fixture.store()
        try await store.load(members: [try Fixture.member("c", "alice"), try Fixture.member("d", "alice")])
        #expect(try await store.removeChannel(id: "c"))
        #expect(try await store.fetch(store.queries.memberships(ofUser: "alice")).map(\.channelId) == ["d"])
        #expect(try await store.fetch(store.queries.user(id: "alice")) != nil)
        #expect(try await store.removeChannel(id: "c") == false)
        #expect(try await store.removeMember(channelId: "d", userId: "alice"))
        #expect(try await store.fetch(store.queries.memberships(ofUser: "alice")).isEmpty)
    }
}

/// Collects batch callbacks (called serially by `load`).
final class BatchRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [LoadBatchResult] = []
    func append(_ value: LoadBatchResult) { lock.withLock { stored.append(value) } }
    var values: [LoadBatchResult] { lock.withLock { stored } }
}
