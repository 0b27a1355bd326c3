import Foundation
import Testing
import ReplicaModel
@testable import ReplicaStore

@Suite("Live observation")
struct ObservationTests {
    @Test("yields the current value, skips commits that do not change it, yields after one that does")
    func emitsOnlyOnRelevantCommits() async throws {
        let store = try Fixture.store()
        try await store.load(messages: [try Fixture.message("m1", timetoken: 10)])
        var iterator = store.observe(store.queries.messages(inChannel: "general")).makeAsyncIterator()
        #expect(try await iterator.next()?.map(\.id) == ["m1"])

        // Commits that do not alter the result: another table, and the same table but another channel.
        try await store.load(users: [try Fixture.user("someone")])
        try await store.load(messages: [try Fixture.message("elsewhere", channel: "other", timetoken: 11)])
        // A commit that does.
        try await store.load(messages: [try Fixture.message("m2", timetoken: 12)])

        // If either unrelated commit had produced a value, it would arrive first and equal ["m1"].
        #expect(try await iterator.next()?.map(\.id) == ["m1", "m2"])
    }

    @Test("observing one user follows patches and removal")
    func followsPatchesAndRemoval() async throws {
        let store = try Fixture.store()
        try await store.load(users: [try Fixture.user("alice", name: "Alice", at: 1)])
        var iterator = store.observe(store.queries.user(id: "alice")).makeAsyncIterator()
        #expect(try await iterator.next()??.name == "Alice")
        var change = UserChangeset<FlatCustom>(id: "alice", updated: Fixture.ts(2), eTag: "E2")
        change.name = .set("Alicia")
        try await store.patch(user: change)
        #expect(try await iterator.next()??.name == "Alicia")
        try await store.removeUser(id: "alice")
        let last = try await iterator.next()
        #expect(last != nil && last! == nil)
    }
}
