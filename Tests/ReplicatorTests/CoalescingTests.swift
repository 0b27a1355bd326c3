import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator
import Testing

@Suite("outbox coalescing, dependencies and local state")
struct CoalescingTests {
    func name(_ value: String) -> UserEdit<FlatCustom> {
        var edit = UserEdit<FlatCustom>()
        edit.name = .set(value)
        return edit
    }

    @Test("reaction add then remove before sending: nothing is sent")
    func addThenRemoveReaction() async throws {
        let world = try World()
        let message = try await world.outbox.messages.send(text: "hi", to: "general")
        _ = try await world.outbox.drain()
        let before = world.transport.requests.count
        let add = try await world.outbox.messages.addReaction("👍", toMessage: message.value!.id)
        let remove = try await world.outbox.messages.removeReaction("👍", fromMessage: message.value!.id)
        #expect(remove.disposition == .cancelled([add.opId!]) && remove.opId == nil)
        _ = try await world.outbox.drain()
        #expect(world.transport.requests.count == before)
        #expect(try await world.store.fetch(world.store.queries.actions(ofMessage: message.value!.id)).isEmpty)
        #expect(await world.outbox.completion(of: add.opId!) == .discarded)
    }

    @Test("a reaction add that got a 5xx may have arrived: a later remove is sent, not cancelled")
    func noCancellingAfterServerError() async throws {
        let world = try World()
        let message = try await world.outbox.messages.send(text: "hi", to: "general")
        _ = try await world.outbox.drain()
        let add = try await world.outbox.messages.addReaction("👍", toMessage: message.value!.id)
        // A gateway forwards the add, then answers 500: the reaction is on the server.
        let server = world.server
        let applied = Flag()
        world.transport.onRequest { request in
            guard request.operation == "addMessageAction", !applied.isSet else { return }
            applied.set()
            _ = await server.handle(request)
        }
        world.transport.script(.serverError(status: 500))
        _ = try await world.outbox.drain(until: world.clock.now)
        #expect(try await world.entries().first?.lastFailure?.httpStatus == 500)
        let remove = try await world.outbox.messages.removeReaction("👍", fromMessage: message.value!.id)
        #expect(remove.disposition == .enqueued && remove.opId != add.opId)
        _ = try await world.outbox.drain()
        let actions = try await world.observer().messageActions.listMessageActions(channel: "general")
        #expect(actions.data.isEmpty)
        #expect(try await world.entries().isEmpty)
    }

    @Test("an edit made while an earlier edit of the same user is in flight is based on it, not in conflict")
    func editWhileInflight() async throws {
        let world = try World()
        let observer = try world.observer()
        let remote = try await observer.appContext.setUser(id: "u1", fields: UserEdit<FlatCustom>(try ChatUser(id: "u1", name: "Old")))
        try await world.store.load(users: [remote])
        _ = try await world.outbox.metadata.setUser(id: "u1", edit: name("A"))
        let outbox = world.outbox
        let second = Flag()
        world.transport.onRequest { request in
            guard request.method == .patch, !second.isSet else { return }
            second.set()
            var status = UserEdit<FlatCustom>()
            status.status = .set("away")
            _ = try? await outbox.metadata.setUser(id: "u1", edit: status)
        }
        let report = try await world.outbox.drain()
        #expect(report.conflicts == 0 && report.completed == 2)
        let server = try await observer.appContext.getUser(id: "u1")
        #expect(server.name == "A" && server.status == "away")
        let patches = world.transport.requests.filter { $0.method == .patch }
        #expect(patches.count == 2 && patches[0].headers["If-Match"] == remote.eTag)
        #expect(patches[1].headers["If-Match"] != remote.eTag)
    }

    @Test("several edits of one user: one PATCH, union of fields, latest values, first op's base eTag")
    func userEditsMerge() async throws {
        let world = try World()
        let observer = try world.observer()
        let remote = try await observer.appContext.setUser(id: "u1", fields: UserEdit<FlatCustom>(try ChatUser(id: "u1", name: "Old")))
        try await world.store.load(users: [remote])
        let first = try await world.outbox.metadata.setUser(id: "u1", edit: name("A"))
        var second = UserEdit<FlatCustom>()
        second.status = .set("away")
        second.name = .set("B")
        let merged = try await world.outbox.metadata.setUser(id: "u1", edit: second)
        #expect(merged.disposition == .merged(into: first.opId!) && merged.opId == first.opId)
        _ = try await world.outbox.drain()
        let patches = world.transport.requests.filter { $0.method == .patch }
        #expect(patches.count == 1)
        #expect(patches[0].headers["If-Match"] == remote.eTag)
        let body = try JSONValue(jsonData: patches[0].body ?? Data())
        #expect(body == ["name": "B", "status": "away"])
        let stored = try await world.store.fetch(world.store.queries.user(id: "u1"))
        #expect(stored?.name == "B" && stored?.status == "away" && stored?.eTag != remote.eTag)
        #expect(try await world.entries().isEmpty)
    }

    @Test("membership set then remove of one never synced: nothing is sent")
    func membershipSetThenRemove() async throws {
        let world = try World()
        let set = try await world.outbox.memberships.setMembership(channel: "new", edit: MemberEdit(status: "joined"))
        #expect(set.value?.status == "joined")
        let remove = try await world.outbox.memberships.removeMembership(channel: "new")
        #expect(remove.disposition == .cancelled([set.opId!]))
        _ = try await world.outbox.drain()
        #expect(world.transport.requests.isEmpty)
        #expect(try await world.store.fetch(world.store.queries.member(channelId: "new", userId: "me")) == nil)
    }

    @Test("send then discard: nothing is sent, the message and its reactions are gone")
    func sendThenDiscard() async throws {
        let world = try World()
        let message = try await world.outbox.messages.send(text: "oops", to: "general")
        let reaction = try await world.outbox.messages.addReaction("😬", toMessage: message.value!.id)
        let removed = try await world.outbox.messages.discardMessage(id: message.value!.id)
        #expect(Set(removed) == [message.opId!, reaction.opId!])
        _ = try await world.outbox.drain()
        #expect(world.transport.requests.isEmpty)
        #expect(try await world.store.fetch(world.store.queries.message(id: message.value!.id)) == nil)
        #expect(try await world.entries().isEmpty)
    }

    @Test("a reaction on a pending message waits for the publish and uses its server timetoken")
    func reactionWaitsForParent() async throws {
        let world = try World()
        let message = try await world.outbox.messages.send(text: "parent", to: "general")
        let reaction = try await world.outbox.messages.addReaction("🎉", toMessage: message.value!.id)
        let plan = try await world.outbox.plan()
        #expect(plan.last?.waiting == "parent \(message.opId!) pending")
        world.transport.script(.offline, .offline)
        _ = try await world.outbox.drain()
        let operations = world.transport.requests.map(\.operation)
        #expect(operations == ["publish", "publish", "publish", "addMessageAction"])
        let sent = try #require(try await world.store.fetch(world.store.queries.message(id: message.value!.id)))
        let actionRequest = world.transport.requests[3]
        #expect(actionRequest.pathSegments.contains(sent.timetoken!.description))
        let actions = try await world.store.fetch(world.store.queries.actions(ofMessage: sent.id))
        #expect(actions.count == 1 && actions[0].messageTimetoken == sent.timetoken && actions[0].actionTimetoken != nil)
        #expect(await world.outbox.completion(of: reaction.opId!) == .sent(timetoken: actions[0].actionTimetoken))
    }

    @Test("discarding a dead edit restores the object as stored before it")
    func discardRevertsDeadEdit() async throws {
        let world = try World()
        let observer = try world.observer()
        let remote = try await observer.appContext.setChannel(
            id: "c1", fields: ChannelEdit<FlatCustom>(try ChatChannel(id: "c1", name: "Original")))
        try await world.store.load(channels: [remote])
        var edit = ChannelEdit<FlatCustom>()
        edit.name = .set("Renamed")
        let receipt = try await world.outbox.metadata.setChannel(id: "c1", edit: edit)
        #expect(try await world.store.fetch(world.store.queries.channel(id: "c1"))?.name == "Renamed")
        world.transport.script(.forbidden)
        _ = try await world.outbox.drain()
        #expect(try await world.entries().first?.state == .dead)
        try await world.outbox.discard(opId: receipt.opId!)
        let restored = try await world.store.fetch(world.store.queries.channel(id: "c1"))
        #expect(restored?.name == "Original" && restored?.eTag == remote.eTag)
        #expect(try await world.entries().isEmpty)
    }

    @Test("a dead letter can be retried and then goes")
    func retryDeadLetter() async throws {
        let world = try World()
        let message = try await world.outbox.messages.send(text: "again", to: "general")
        world.transport.script(.forbidden)
        _ = try await world.outbox.drain()
        try await world.outbox.retry(opId: message.opId!)
        let report = try await world.outbox.drain()
        #expect(report.completed == 1 && report.deadLetters == 0)
        #expect(await world.serverMessageIds("general") == [message.value!.id])
    }

    @Test("ops left in flight by a crash are ambiguous after reopening, and probed")
    func inflightBecomesAmbiguous() async throws {
        let world = try World()
        let message = try await world.outbox.messages.send(text: "crash", to: "general")
        _ = try await world.outbox.markInflightForTest(message.opId!, now: world.clock.now)
        let reopened = try world.reopened(seed: 2, profile: .none)
        #expect(try await reopened.entries().first?.state == .ambiguous)
        _ = try await reopened.outbox.drain()
        #expect(reopened.transport.requests.map(\.operation) == ["fetchHistory", "publish"])
        #expect(await world.serverMessageIds("general") == [message.value!.id])
    }

    @Test("an in-flight or ambiguous op cannot be discarded")
    func ambiguousCannotBeDiscarded() async throws {
        let world = try World()
        let message = try await world.outbox.messages.send(text: "maybe", to: "general")
        world.transport.script(.dropResponse, .offline)
        _ = try await world.outbox.drain(until: world.clock.now)
        await #expect(throws: OutboxError.mayHaveBeenApplied(opId: message.opId!, state: .ambiguous)) {
            try await world.outbox.messages.discardMessage(id: message.value!.id)
        }
    }

    @Test("backoff starts at the documented 0.5 s, doubles up to the 60 s cap and stays there; jitter picks a point in [d/2, d]")
    func backoffIsBoundedAndJittered() {
        let policy = RetryPolicy()
        // The defaults as documented: first delay 0.5 s, longest 60 s; each failure doubles the delay.
        let ceilings: [TimeInterval] = [0.5, 1, 2, 4, 8, 16, 32, 60, 60, 60]
        #expect((1...10).map { policy.delay(afterAttempt: $0, jitter: 1) } == ceilings)
        #expect((1...10).map { policy.delay(afterAttempt: $0, jitter: 0) } == ceilings.map { $0 / 2 })
        var custom = RetryPolicy()
        custom.baseDelay = 1
        custom.maxDelay = 10
        #expect((1...6).map { custom.delay(afterAttempt: $0, jitter: 1) } == [1, 2, 4, 8, 10, 10])
        for jitter in [0.0, 0.25, 0.5, 0.99, 1.0] {
            let delays = (1...200).map { policy.delay(afterAttempt: $0, jitter: jitter) }
            #expect(delays.allSatisfy { $0 >= policy.baseDelay / 2 && $0 <= policy.maxDelay }, "jitter \(jitter)")
            #expect(zip(delays, delays.dropFirst()).allSatisfy { $0 <= $1 }, "jitter \(jitter): the delay shrank")
        }
        // However many attempts (2^attempt would overflow), the delay is the cap's range, never more.
        for attempt in [64, 1_000, Int.max] {
            #expect(policy.delay(afterAttempt: attempt, jitter: 1) == policy.maxDelay)
            #expect(policy.delay(afterAttempt: attempt, jitter: 0) == policy.maxDelay / 2)
        }
        // More jitter, a longer wait; jitter outside 0...1 is taken as its nearest end.
        for attempt in 1...10 {
            #expect(policy.delay(afterAttempt: attempt, jitter: 0) < policy.delay(afterAttempt: attempt, jitter: 0.5))
            #expect(policy.delay(afterAttempt: attempt, jitter: 0.5) < policy.delay(afterAttempt: attempt, jitter: 1))
            #expect(policy.delay(afterAttempt: attempt, jitter: -3) == policy.delay(afterAttempt: attempt, jitter: 0))
            #expect(policy.delay(afterAttempt: attempt, jitter: 7) == policy.delay(afterAttempt: attempt, jitter: 1))
        }
    }
}
