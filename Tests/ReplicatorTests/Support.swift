import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

typealias Store = ChatStore<DefaultChatCustom>

/// A store, a simulator and an outbox between them, all on one virtual clock: the testing
/// product's device harness with the defaults these tests share.
typealias World = SimulatedDevice<DefaultChatCustom>

extension SimulatedDevice where Custom == DefaultChatCustom {
    /// A device of "me" whose faults come from `profile` seeded with `seed`, on `server` (a new
    /// one on `clock` when nil).
    init(
        seed: UInt64 = 1, profile: FaultProfile = .none, path: String? = nil, clock: VirtualClock = VirtualClock(),
        server: PubNubServer? = nil, options: OutboxOptions = OutboxOptions()
    ) throws {
        try self.init(
            server: server ?? PubNubServer(clock: clock), clock: clock, plan: FaultPlan(seed: seed, profile: profile),
            storePath: path, seed: seed, outboxOptions: options)
    }

    /// The same store file and server after a crash: a new process with a new transport.
    func reopened(seed: UInt64, profile: FaultProfile, path: String? = nil) throws -> World {
        try reopened(plan: FaultPlan(seed: seed, profile: profile), seed: seed, storePath: path)
    }

    static func client(_ transport: any Transport, userId: String = "me") throws -> PubNubClient {
        try PubNubClient.simulated(transport, userId: userId)
    }

    static func temporaryPath() -> String { temporaryStorePath() }

    var path: String { storePath }

    func entries() async throws -> [OutboxEntry] { try await outboxEntries() }

    /// The message ids stored on the server for `channel`, in timetoken order.
    func serverMessageIds(_ channel: String) async -> [String] {
        await server.storedMessages(channel: channel).compactMap {
            if case .object(let body) = $0.message, case .string(let id)? = body["id"] { return id }
            return nil
        }
    }
}

/// A seeded die shared by hooks that run on other tasks.
final class Dice: @unchecked Sendable {
    private let lock = NSLock()
    private var random: SplitMix64
    private var enabled = true

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    /// True with probability `p` (never once disabled).
    func roll(_ p: Double) -> Bool {
        lock.withLock {
            guard enabled else { return false }
            return Double(random.next() >> 11) / Double(1 << 53) < p
        }
    }

    func pick(_ count: Int) -> Int { lock.withLock { Int(random.next() % UInt64(count)) } }
    func disable() { lock.withLock { enabled = false } }
}

struct SimulatedCrash: Error {}

/// A payload in the chat format.
func chatPayload(_ id: String, _ text: String = "hello") -> JSONValue {
    ["id": .string(id), "text": .string(text), "createdAt": "2026-01-01T00:00:00.000Z"]
}

extension World {
    /// A new reconciler, as a new process would make.
    func reconciler(options: ReconcilerOptions = ReconcilerOptions(), seed: UInt64 = 1) throws -> Reconciler<DefaultChatCustom> {
        makeReconciler(options: options, seed: seed)
    }

    /// The local messages of `channel` with a timetoken, as (id, timetoken), in timetoken order.
    func localMessages(_ channel: String) async throws -> [(id: String, timetoken: UInt64)] {
        try await store.fetch(store.queries.messages(inChannel: channel)).compactMap { message in
            message.timetoken.map { (message.id, $0.rawValue) }
        }
    }

    /// The server's messages of `channel` as (id, timetoken), in timetoken order.
    func serverMessages(_ channel: String) async -> [(id: String, timetoken: UInt64)] {
        await server.storedMessages(channel: channel).map { stored in
            if case .object(let body) = stored.message, case .string(let id)? = body["id"] { return (id, stored.timetoken) }
            return ("pn:\(channel):\(stored.timetoken)", stored.timetoken)
        }
    }
}

/// A counter shared across tasks.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    /// Counts one more and returns the new count.
    func next() -> Int { lock.withLock { count += 1; return count } }
    /// The count so far.
    var value: Int { lock.withLock { count } }
}

/// Set by a task when it finishes; polled by the test (no sleeping).
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

extension SimulatedDevice {
    /// Drains until the transport has crashed (``InProcessTransport/crash(afterRequests:)``) or
    /// the drain ends; runs `whileDying` (what the dying process still finishes meanwhile) before
    /// the drain is cancelled, then waits for the requests already at the server.
    func drainUntilCrash(whileDying: () async throws -> Void = {}) async throws {
        let finished = Flag()
        let outbox = self.outbox
        let drain = Task {
            _ = try? await outbox.drain()
            finished.set()
        }
        while !transport.crashed && !finished.isSet { await Task.yield() }
        try await whileDying()
        drain.cancel()
        while transport.requestsAtServer > 0 { await Task.yield() }
    }
}
