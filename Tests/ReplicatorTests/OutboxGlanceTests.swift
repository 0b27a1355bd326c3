import Foundation
import PubNubSimulator
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator
import Testing

/// `OutboxGlance` (what a diagnostics report reads of each op, without its payload) says of each
/// op what the full `OutboxEntry` says: the channel read in SQL from the payload is the
/// operation's own, and the token-wait rule is the entry's.
@Suite("outbox: an op read without its payload")
struct OutboxGlanceTests {
    @Test("every kind of op: the glance's id, kind, lane, target, channel, state, failure and token wait are the entry's")
    func glanceMatchesEntry() async throws {
        let world = try World(profile: .offline)
        let message = try await world.outbox.messages.send(text: "hi", to: "general")
        _ = try await world.outbox.messages.addReaction("👍", toMessage: try #require(message.value?.id))
        _ = try await world.outbox.memberships.setMembership(channel: "side", edit: MemberEdit(status: "joined"))
        _ = try await world.outbox.memberships.removeMembership(channel: "gone")
        var channel = ChannelEdit<FlatCustom>()
        channel.name = .set("Topic")
        _ = try await world.outbox.metadata.setChannel(id: "topic", edit: channel)
        var user = UserEdit<FlatCustom>()
        user.name = .set("Me")
        _ = try await world.outbox.metadata.setUser(id: "me", edit: user)
        // One op failed and waits for a token, one is dead.
        var entries = try await world.entries()
        try await world.outbox.recordFailureForTest(
            entries[2].id, state: .pending, retryAt: OutboxEntry.tokenWaitMarker,
            failure: OutboxFailure(errorClass: .accessDenied, httpStatus: 403, message: "Forbidden", token: "none"),
            serverFailure: false, now: world.clock.now)
        try await world.outbox.recordFailureForTest(
            entries[3].id, state: .dead, retryAt: nil, failure: OutboxFailure(errorClass: .other, httpStatus: 400, message: "Bad"),
            serverFailure: false, now: world.clock.now)

        entries = try await world.entries()
        let glances = try await world.store.fetch(OutboxGlance.all())
        #expect(entries.count == 6 && glances.count == entries.count, "\(entries.map(\.kind))")
        #expect(Set(entries.map(\.kind)).count == 6, "\(entries.map(\.kind))")
        for (glance, entry) in zip(glances, entries) {
            #expect(glance.id == entry.id && glance.kind == entry.kind && glance.lane == entry.lane && glance.target == entry.target)
            #expect(glance.channel == entry.operation.channel, "\(entry.kind): \(String(describing: glance.channel))")
            #expect(glance.state == entry.state && glance.attempts == entry.attempts && glance.dependsOn == entry.dependsOn)
            #expect(glance.lastFailure == entry.lastFailure && glance.nextAttemptAt == entry.nextAttemptAt && glance.createdAt == entry.createdAt)
            #expect(glance.waitsForToken == entry.waitsForToken)
        }
        #expect(glances.filter(\.waitsForToken).count == 1 && glances.contains { $0.state == .dead })
        #expect(glances.contains { $0.channel == nil } && glances.contains { $0.channel == "general" })
    }
}
