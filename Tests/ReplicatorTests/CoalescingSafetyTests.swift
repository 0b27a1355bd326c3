import Foundation
import PubNubSimulator
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator
import Testing

@Suite("coalescing never drops a change an earlier op may have made")
struct CoalescingSafetyTests {
    /// Sets membership "c" to `joined` and leaves the op as a lost answer leaves it: ambiguous.
    static func ambiguousJoin(_ world: World) async throws {
        let first = try await world.outbox.memberships.setMembership(channel: "c", edit: MemberEdit(status: "joined"))
        let firstOp = try #require(first.opId)
        _ = try await world.outbox.markInflightForTest(firstOp, now: world.clock.now)
        try await world.outbox.recordFailureForTest(
            firstOp, state: .ambiguous, retryAt: nil,
            failure: OutboxFailure(errorClass: .outcomeUnknown, message: "connection reset"), serverFailure: false,
            now: world.clock.now)
    }

    @Test("a removal after an unsent set on no base still goes when an earlier set of the object may have arrived")
    func removalAfterAmbiguousSet() async throws {
        let world = try World(profile: .offline)
        // The first set's attempt went out and its answer was lost: it may be on the server.
        try await Self.ambiguousJoin(world)
        // A second set (made on no server version) and then a removal.
        let second = try await world.outbox.memberships.setMembership(channel: "c", edit: MemberEdit(status: "muted"))
        let removal = try await world.outbox.memberships.removeMembership(channel: "c")
        #expect(removal.disposition == .merged(into: try #require(second.opId)))
        world.transport.use(FaultPlan(seed: 1, profile: .none))
        let report = try await world.outbox.drain()
        #expect(report.remaining == 0 && report.deadLetters == 0 && report.conflicts == 0, "\(report)")
        let memberships = try await world.observer().appContext.getMemberships(userId: "me", as: DefaultChatCustom.self)
        #expect(memberships.data.isEmpty, "the removal must reach the server: \(memberships.data.map(\.channel.id))")
    }

    @Test("a set queued after a removal keeps its base of no membership when an earlier ambiguous set completes")
    func setAfterRemovalIsNotRebasedOnTheRemovedVersion() async throws {
        let world = try World(profile: .offline)
        // The first set went out and its answer was lost: it may be on the server (it is, below).
        try await Self.ambiguousJoin(world)
        _ = try await world.observer().appContext.setMemberships(
            userId: "me", set: [MembershipSet(id: "c", status: "joined")], as: DefaultChatCustom.self)
        // Then the user leaves the channel and joins it again as admin.
        _ = try await world.outbox.memberships.removeMembership(channel: "c")
        _ = try await world.outbox.memberships.setMembership(channel: "c", edit: MemberEdit(status: "admin"))
        world.transport.use(FaultPlan(seed: 1, profile: .none))
        let report = try await world.outbox.drain()
        // The probe finds the first set applied; the removal goes on that version; the last set
        // creates the membership again instead of seeing its own removal as someone else's.
        #expect(report.remaining == 0 && report.deadLetters == 0 && report.conflicts == 0, "\(report)")
        let memberships = try await world.observer().appContext.getMemberships(userId: "me", as: DefaultChatCustom.self)
        #expect(memberships.data.map(\.status) == ["admin"])
    }

    @Test("a removal after the only unsent set of an object never synced cancels both")
    func removalCancelsNeverSyncedSet() async throws {
        let world = try World(profile: .offline)
        let set = try await world.outbox.memberships.setMembership(channel: "c", edit: MemberEdit(status: "joined"))
        let removal = try await world.outbox.memberships.removeMembership(channel: "c")
        #expect(removal.disposition == .cancelled([try #require(set.opId)]))
        #expect(try await world.entries().isEmpty)
    }
}
