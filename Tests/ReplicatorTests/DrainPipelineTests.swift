import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator
import Testing

/// The drain's pipeline (docs/outbox.md, "The next request overlaps the commit"): in a lane of
/// plain publishes, op k+1 is marked in flight while op k's request is out, and its request goes
/// as soon as k is answered, beside the commit that completes k.
@Suite("the drain's pipeline: the next request overlaps the commit")
struct DrainPipelineTests {
    /// The outbox's ops in flight, as the store has them.
    private static func inflight(_ world: World) async throws -> [OutboxEntry] {
        try await world.entries().filter { $0.state == .inflight }
    }

    private static func send(_ count: Int, on world: World, channel: String = "c1") async throws -> [String] {
        var ids: [String] = []
        for i in 0..<count { ids.append(try await world.outbox.messages.send(text: "m\(i)", to: channel).value!.id) }
        return ids
    }

    @Test("each publish goes after the one before it is answered, one at a time, with the next op marked ahead; each is sent once, in order")
    func order() async throws {
        let world = try World()
        let ids = try await Self.send(12, on: world)
        let seen = Seen()
        let transport = world.transport
        world.transport.onRequest { request in
            guard request.operation == "publish" else { return }
            // Requests of one lane never overlap: this one is the only one at the server.
            let inflight = (try? await Self.inflight(world)) ?? []
            seen.note(atServer: transport.requestsAtServer, inflight: inflight.map(\.id))
        }
        let report = try await world.outbox.drain()
        #expect(report.completed == 12 && report.remaining == 0 && report.probes == 0, "\(report)")
        #expect(await world.serverMessageIds("c1") == ids)
        #expect(seen.maxAtServer == 1)
        // While a request is out, its op and (while more follow) the next are in flight: never more.
        // The first two requests may go before the next op is marked (the run starts with the second).
        #expect(seen.maxInflight == 2, "\(seen.inflightCounts)")
        #expect(seen.inflightCounts.dropFirst(2).dropLast().allSatisfy { $0 == 2 }, "\(seen.inflightCounts)")
        #expect(try await world.entries().isEmpty)
    }

    @Test("a failed publish puts the op marked after it back, as it was, and nothing after it goes before it")
    func failurePutsBack() async throws {
        let world = try World()
        let ids = try await Self.send(6, on: world)
        // The third publish meets a 500: it may have been applied, so it waits out a backoff as
        // ambiguous, and the drain stops at its deadline.
        world.transport.script(.none, .none, .serverError(status: 500))
        let report = try await world.outbox.drain(until: world.clock.now)
        #expect(report.completed == 2, "\(report)")
        #expect(await world.serverMessageIds("c1") == Array(ids.prefix(2)))
        let left = try await world.entries()
        #expect(left.map(\.operation.messageId) == Array(ids.dropFirst(2)).map { Optional($0) })
        #expect(left.map(\.state) == [.ambiguous, .pending, .pending, .pending])
        // The op marked ahead of the failed one is back as it was: no attempt counted, none started.
        #expect(left.map(\.attempts) == [1, 0, 0, 0])
        #expect(left.dropFirst().allSatisfy { $0.firstAttemptAt == nil })

        world.clock.advance(by: 600)
        let rest = try await world.outbox.drain()
        #expect(rest.completed == 4 && rest.probes == 1, "\(rest)")
        #expect(await world.serverMessageIds("c1") == ids)
    }

    @Test("a process killed mid-pipeline leaves two ops in flight: both are probed, and each is sent once", arguments: [3, 4, 7] as [Int])
    func crash(after requests: Int) async throws {
        var world = try World()
        let ids = try await Self.send(10, on: world)
        world.transport.crash(afterRequests: requests)
        // The commit beside the hung request records the answer before it and marks the op after it.
        try await world.drainUntilCrash {
            while true {
                let entries = try await world.entries()
                if entries.first?.operation.messageId == ids[requests], entries.filter({ $0.state == .inflight }).count == 2 { break }
                await Task.yield()
            }
        }
        let copy = World.temporaryPath()
        try world.store.maintenance.backup(to: copy)
        #expect(await world.serverMessageIds("c1") == Array(ids.prefix(requests)))

        world = try world.reopened(seed: 2, profile: .none, path: copy)
        let ambiguous = try await world.entries().filter { $0.state == .ambiguous }
        #expect(ambiguous.map(\.operation.messageId) == [ids[requests], ids[requests + 1]].map { Optional($0) })
        let report = try await world.outbox.drain()
        #expect(report.probes == 2 && report.remaining == 0, "\(report)")
        #expect(await world.serverMessageIds("c1") == ids)
    }

    @Test("a hard delete between publishes is never marked ahead: only plain publishes are")
    func onlyPlainPublishes() async throws {
        let world = try World()
        let first = try await Self.send(1, on: world)
        _ = try await world.outbox.drain()
        // Publishes, a hard delete of a sent message (same lane; it needs that message's timetoken), publishes.
        // Four before the delete: the pipeline may start only at the second request (the `order`
        // test), and from the third on a publish is always in flight beside another one.
        _ = try await Self.send(4, on: world)
        _ = try await world.outbox.messages.deleteMessage(id: first[0], hard: true)
        _ = try await Self.send(2, on: world)
        let lanes = try await world.entries().map(\.lane)
        // One lane: the delete waits behind the publishes before it, and those after it behind it.
        #expect(Set(lanes).count == 1, "\(lanes)")
        let seen = Seen()
        world.transport.onRequest { request in
            let inflight = (try? await Self.inflight(world)) ?? []
            seen.note(atServer: 1, inflight: inflight.map { "\($0.kind)" })
        }
        let report = try await world.outbox.drain()
        #expect(report.completed == 7 && report.remaining == 0, "\(report)")
        // The delete is never in flight beside a publish; publishes were beside each other.
        #expect(!seen.inflightSets.contains { $0.count > 1 && $0.contains { $0 != "\(OutboxKind.send)" } }, "\(seen.inflightSets)")
        #expect(seen.inflightSets.contains { $0.count == 2 }, "\(seen.inflightSets)")
    }
}

/// What the requests saw, across the transport's hook calls.
private final class Seen: @unchecked Sendable {
    private let lock = NSLock()
    private var atServer: [Int] = []
    private var sets: [[String]] = []

    func note(atServer count: Int, inflight: [String]) {
        lock.withLock {
            atServer.append(count)
            sets.append(inflight)
        }
    }

    var maxAtServer: Int { lock.withLock { atServer.max() ?? 0 } }
    var inflightCounts: [Int] { lock.withLock { sets.map(\.count) } }
    var maxInflight: Int { inflightCounts.max() ?? 0 }
    var inflightSets: [[String]] { lock.withLock { sets } }
}
