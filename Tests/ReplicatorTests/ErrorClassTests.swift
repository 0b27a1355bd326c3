import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
@testable import Replicator
import Testing

@Suite("outbox error classes")
struct ErrorClassTests {
    @Test("not sent: the op waits and retries without an attempt limit, then goes")
    func notSentRetriesWithoutLimit() async throws {
        let world = try World()
        let receipt = try await world.outbox.messages.send(text: "hello", to: "general")
        world.transport.script(Array(repeating: Fault.offline, count: 40))
        let report = try await world.outbox.drain()
        #expect(report.completed == 1 && report.deadLetters == 0)
        #expect(world.transport.requests.count == 41)
        #expect(await world.serverMessageIds("general") == [receipt.value!.id])
        // Backoff grew and stayed under the cap: the 41 attempts spread over minutes, not a busy loop.
        let times = world.transport.records.map(\.at)
        let gaps = zip(times.dropFirst(), times).map { $0.timeIntervalSince($1) }
        #expect(gaps.allSatisfy { $0 >= 0.25 && $0 <= 60 })
        #expect(gaps.last! >= 30)
    }

    @Test("outcome unknown after the server applied the publish: the probe finds it, nothing is resent")
    func lostResponseIsProbed() async throws {
        let world = try World()
        let receipt = try await world.outbox.messages.send(text: "once", to: "general")
        world.transport.script(.dropResponse)
        let events = await world.outbox.events()
        let report = try await world.outbox.drain()
        #expect(report.completed == 1 && report.probes == 1)
        #expect(await world.serverMessageIds("general") == [receipt.value!.id])
        let operations = world.transport.requests.map(\.operation)
        #expect(operations == ["publish", "fetchHistory"])
        let stored = try await world.store.fetch(world.store.queries.message(id: receipt.value!.id))
        #expect(stored?.delivery == .sent && stored?.timetoken != nil)
        let seen = await Self.collect(events, until: { if case .sent = $0 { true } else { false } })
        #expect(seen.contains { if case .ambiguous = $0 { true } else { false } })
        #expect(seen.contains(.probed(opId: receipt.opId!, found: true)))
    }

    @Test("outcome unknown before the server saw it: the probe finds nothing and the publish is resent once")
    func unknownButNotAppliedIsResent() async throws {
        let world = try World()
        let receipt = try await world.outbox.messages.send(text: "once", to: "general")
        // The connection was cut before the server saw the request: the op is ambiguous.
        let ambiguous = try await world.outbox.markInflightForTest(receipt.opId!, now: world.clock.now)
        #expect(ambiguous?.state == .inflight)
        try await world.outbox.recordFailureForTest(
            receipt.opId!, state: .ambiguous, retryAt: nil,
            failure: OutboxFailure(errorClass: .outcomeUnknown, message: "connection reset"), serverFailure: false,
            now: world.clock.now)
        _ = try await world.outbox.drain()
        #expect(world.transport.requests.map(\.operation) == ["fetchHistory", "publish"])
        #expect(await world.serverMessageIds("general") == [receipt.value!.id])
    }

    @Test("429 waits at least Retry-After on the virtual clock")
    func retryAfterIsHonoured() async throws {
        let world = try World()
        _ = try await world.outbox.messages.send(text: "slow down", to: "general")
        world.transport.script(.tooManyRequests(retryAfter: 7))
        _ = try await world.outbox.drain()
        let times = world.transport.records
        #expect(times.count == 2)
        #expect(times[1].at.timeIntervalSince(times[0].at) >= 7)
        let entries = try await world.entries()
        #expect(entries.isEmpty)
    }

    @Test("5xx backs off and becomes a dead letter after the configured number of server failures")
    func serverFailuresEndInDeadLetter() async throws {
        var options = OutboxOptions()
        options.maxServerFailures = 3
        let world = try World(options: options)
        let receipt = try await world.outbox.addReactionTarget(world)
        world.transport.script(.serverError(status: 503), .serverError(status: 500), .serverError(status: 503))
        let report = try await world.outbox.drain()
        #expect(report.deadLetters == 1)
        let entry = try #require(try await world.entries().first { $0.id == receipt })
        #expect(entry.state == .dead && entry.serverFailures == 3 && entry.lastFailure?.httpStatus == 503)
        #expect(entry.lastFailure?.errorClass == .server)
        #expect(await world.outbox.completion(of: receipt) == .failed(entry.lastFailure!))
    }

    @Test("403 is a dead letter at once with the server's reason, and other lanes still drain")
    func forbiddenIsDeadAtOnce() async throws {
        let world = try World()
        let blocked = try await world.outbox.messages.send(text: "denied", to: "a")
        let other = try await world.outbox.messages.send(text: "fine", to: "b")
        world.transport.script(.forbidden)
        let report = try await world.outbox.drain()
        #expect(report.deadLetters == 1 && report.completed == 1)
        // The lanes run in parallel: whichever publish went first got the 403.
        let dead = try #require(try await world.entries().first)
        #expect(dead.state == .dead && dead.attempts == 1)
        #expect(dead.lastFailure?.httpStatus == 403 && dead.lastFailure?.message == "Forbidden")
        let (deadMessage, sentMessage) = dead.id == blocked.opId ? (blocked, other) : (other, blocked)
        #expect(await world.serverMessageIds(sentMessage.value!.channelId) == [sentMessage.value!.id])
        #expect(await world.serverMessageIds(deadMessage.value!.channelId).isEmpty)
        let message = try await world.store.fetch(world.store.queries.message(id: deadMessage.value!.id))
        #expect(message?.delivery == .failed)
    }

    @Test("412 puts an edit in conflict and never resends it")
    func preconditionFailedIsConflict() async throws {
        let world = try World()
        let observer = try world.observer()
        let remote = try await observer.appContext.setUser(id: "u1", fields: UserEdit<FlatCustom>(try ChatUser(id: "u1", name: "One")))
        try await world.store.load(users: [try ChatUser(id: "u1", name: "One", updated: remote.updated, eTag: remote.eTag)])
        let receipt = try await world.outbox.metadata.setUser(id: "u1", edit: { var e = UserEdit<FlatCustom>(); e.name = .set("Mine"); return e }())
        _ = try await observer.appContext.setUser(id: "u1", fields: { var f = UserEdit<FlatCustom>(); f.name = .set("Theirs"); return f }())
        let report = try await world.outbox.drain()
        #expect(report.conflicts == 1)
        #expect(world.transport.requests.count == 1)
        #expect(world.transport.requests[0].headers["If-Match"] == remote.eTag)
        let entry = try #require(try await world.entries().first)
        #expect(entry.id == receipt.opId && entry.state == .conflict && entry.lastFailure?.httpStatus == 412)
        _ = try await world.outbox.drain()
        #expect(world.transport.requests.count == 1)
    }

    @Test("status codes map to one transition each", arguments: [
        (400, "dead"), (401, "dead"), (403, "dead"), (404, "dead"), (413, "dead"), (414, "dead"),
        (412, "conflict"), (429, "retry"), (500, "retry"), (502, "retry"), (503, "retry"), (408, "retry"),
    ])
    func statusTable(status: Int, expected: String) {
        let error = ServiceError(operation: "setUser", status: status, family: .object, message: "m", retryAfter: 3)
        let decision = switch FailureDecision.classify(error, kind: .setUser, serverFailures: 0, limit: 8) {
        case .dead: "dead"
        case .conflict: "conflict"
        case .retry: "retry"
        case .done: "done"
        case .waitForToken: "token"
        }
        #expect(decision == expected)
    }

    @Test("DataSync's codes: a keyset or configuration refusal waits (never dead), a write outside the projection is dead, a failed test is a conflict, a removal of what is gone is done", arguments: [
        (403, ["DS-0201"], OutboxKind.setUser, "retry configuration 300"), (401, ["DS-0203"], .setMembership, "retry configuration 300"),
        (400, ["DS-0006"], .setChannel, "retry configuration 300"), (403, ["DS-0202"], .setUser, "dead rejected"),
        (409, ["DS-0302"], .setMembership, "conflict"), (409, [], .setUser, "dead rejected"), (404, [], .removeMembership, "done"),
        (404, ["DS-0100"], .setUser, "dead rejected"),
    ])
    func dataSyncCodes(status: Int, codes: [String], kind: OutboxKind, expected: String) {
        let error = ServiceError(
            operation: "datasync", status: status, reason: DataSyncErrors.reason(codes: codes), family: .dataSync, message: "m", codes: codes)
        let decision = switch FailureDecision.classify(error, kind: kind, serverFailures: 0, limit: 8) {
        case .dead(let failure): "dead \(failure.errorClass.rawValue)"
        case .conflict: "conflict"
        case .retry(let state, let wait, let failure, _): "retry \(failure.errorClass.rawValue) \(Int(wait))\(state == .pending ? "" : " \(state)")"
        case .done: "done"
        case .waitForToken: "token"
        }
        #expect(decision == expected)
    }

    @Test("Access Manager: a first refusal waits for a token; refused again under another token, a dead letter naming the permission; under the same token it waits again; an expiry never kills")
    func accessDenials() {
        let need = AccessNeed.all([AccessRequirement(.channel, "side", .write)])
        let forbidden = ServiceError(operation: "publish", status: 403, family: .legacyService, message: "Forbidden")
        func decision(_ reason: AccessDenial.Reason, waitedUnder: String?, ambiguous: Bool = false) -> String {
            let error = WireError.accessDenied(AccessDenial(operation: "publish", reason: reason, need: need, generation: 1, token: "new"))
            switch FailureDecision.classify(error, kind: .send, serverFailures: 0, limit: 8, waitedUnder: waitedUnder, ambiguous: ambiguous) {
            case .waitForToken(let state, let failure): return "wait \(state.rawValue) \(failure.errorClass.rawValue) \(failure.token ?? "-")"
            case .dead(let failure): return "dead \(failure.message)"
            case .retry: return "retry"
            case .done: return "done"
            case .conflict: return "conflict"
            }
        }
        let notGranted = AccessDenial.Reason.notGranted([AccessRequirement(.channel, "side", .write)])
        #expect(decision(.refused(forbidden), waitedUnder: nil) == "wait pending accessDenied new")
        #expect(decision(.refused(forbidden), waitedUnder: nil, ambiguous: true) == "wait ambiguous accessDenied new")
        #expect(decision(.refused(forbidden), waitedUnder: "old").hasPrefix(#"dead refused by Access Manager under a new token: needs write on channel "side""#))
        // A relaunch with the same (revoked) token: refused again under it, the op waits again.
        #expect(decision(.refused(forbidden), waitedUnder: "new") == "wait pending accessDenied new")
        #expect(decision(notGranted, waitedUnder: nil) == "wait pending accessDenied new")
        #expect(decision(notGranted, waitedUnder: "none") == #"dead the new token does not grant write on channel "side""#)
        for reason in [AccessDenial.Reason.expired(Date()), .waiting, .noToken] {
            // Nothing was sent: never a dead letter, and the token it waited under is kept.
            #expect(decision(reason, waitedUnder: "old") == "wait pending accessDenied old")
        }
        // Not granted by a token that arrived after the op was queued: a dead letter at once;
        // by the token the op was queued under: it waits (and a new token is asked for).
        var later = AccessDenial(operation: "publish", reason: notGranted, need: need, generation: 1, token: "new")
        later.tokenSince = Date(timeIntervalSince1970: 200)
        func arrival(_ enqueued: TimeInterval) -> Bool {
            if case .dead = FailureDecision.classify(
                .accessDenied(later), kind: .send, serverFailures: 0, limit: 8, enqueuedAt: Date(timeIntervalSince1970: enqueued))
            { return true }
            return false
        }
        #expect(arrival(100) && !arrival(300))
        // Without Access Manager (no token), a 403 is still a plain rejection.
        #expect({ if case .dead = FailureDecision.classify(forbidden, kind: .send, serverFailures: 0, limit: 8) { true } else { false } }())
    }

    @Test("stored error text never holds a token or a signature")
    func storedErrorsRedactTokens() {
        let text = "GET /publish/p/s/0/c/0/x?auth=qEF2AkF0Gm%3D%3D&uuid=me&signature=v2.abc failed"
        #expect(StoredErrorText.capped(text) == "GET /publish/p/s/0/c/0/x?auth=REDACTED&uuid=me&signature=REDACTED failed")
        #expect(StoredErrorText.capped("no token here") == "no token here")
    }

    static func collect(_ stream: AsyncStream<OutboxEvent>, until stop: (OutboxEvent) -> Bool) async -> [OutboxEvent] {
        var seen: [OutboxEvent] = []
        for await event in stream {
            seen.append(event)
            if stop(event) { break }
        }
        return seen
    }
}

extension Outbox where Custom == DefaultChatCustom {
    /// Sends a message cleanly, then queues a reaction on it; returns the reaction's op id.
    func addReactionTarget(_ world: World) async throws -> String {
        let message = try await messages.send(text: "target", to: "general")
        _ = try await drain()
        return try await messages.addReaction("👍", toMessage: message.value!.id).opId!
    }
}
