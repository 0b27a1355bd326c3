import Foundation
import PubNubSimulator
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

typealias Store = ChatStore<DefaultChatCustom>

/// The simulator's clock follows the replicator's virtual clock, so server timetokens and the
/// outbox's retry times live on one timeline.
struct FollowClock: TimeSource {
    let clock: VirtualClock
    func now() -> UInt64 { UInt64(clock.now.timeIntervalSince1970 * 10_000_000) }
}

/// A transport into the simulator whose faults the test controls: a scripted fault list first,
/// then the seeded plan. It records every request with the virtual time it was made at, and can
/// "crash": from then on every request hangs forever without reaching the server.
final class TestTransport: Transport, @unchecked Sendable {
    let server: PubNubServer
    let clock: VirtualClock
    private let lock = NSLock()
    private var plan: FaultPlan
    private var script: [Fault] = []
    private var log: [(request: WireRequest, at: Date, fault: Fault)] = []
    private var crashAfter: Int?
    private var hung: [CheckedContinuation<Void, Never>] = []
    private var atServer = 0
    private var beforeRequest: (@Sendable (WireRequest) async -> Void)?

    init(server: PubNubServer, clock: VirtualClock, plan: FaultPlan = FaultPlan(seed: 0, profile: .none)) {
        self.server = server
        self.clock = clock
        self.plan = plan
    }

    /// Faults for the next requests, in order, before the plan decides again.
    func script(_ faults: Fault...) { script(faults) }
    func script(_ faults: [Fault]) { lock.withLock { script.append(contentsOf: faults) } }
    /// Switches the fault plan (e.g. from offline to flaky).
    func use(_ plan: FaultPlan) { lock.withLock { self.plan = plan } }
    /// Runs `hook` before each request reaches the server (to act while an op is in flight).
    func onRequest(_ hook: @escaping @Sendable (WireRequest) async -> Void) { lock.withLock { beforeRequest = hook } }
    /// Crashes once `count` requests in all have been made.
    func crash(afterRequests count: Int) { lock.withLock { crashAfter = count } }
    var crashed: Bool { lock.withLock { crashAfter.map { log.count >= $0 } ?? false } }
    /// Requests handed to the server that it has not answered yet.
    var requestsAtServer: Int { lock.withLock { atServer } }
    var requests: [WireRequest] { lock.withLock { log.map(\.request) } }
    var requestTimes: [(operation: String, at: Date, fault: Fault)] {
        lock.withLock { log.map { ($0.request.operation, $0.at, $0.fault) } }
    }

    func send(_ request: WireRequest, to origin: Origin) async throws(TransportFailure) -> WireResponse {
        enum Step { case run(Fault), hang }
        let step: Step = lock.withLock {
            if let limit = crashAfter, log.count >= limit { return .hang }
            let fault = script.isEmpty
                ? plan.decide(operation: request.operation, conditional: request.isConditional) : script.removeFirst()
            log.append((request, clock.now, fault))
            atServer += 1
            return .run(fault)
        }
        switch step {
        case .hang:
            // A crashed process never hears back, and its request never left.
            await withCheckedContinuation { continuation in lock.withLock { hung.append(continuation) } }
            throw .notSent(reason: "crashed")
        case .run(let fault):
            defer { lock.withLock { atServer -= 1 } }
            if let hook = lock.withLock({ beforeRequest }) { await hook(request) }
            return try await FaultApplication.run(request, on: server, fault: fault)
        }
    }
}

/// A store, a simulator and an outbox between them, all on one virtual clock.
struct World {
    let clock: VirtualClock
    let server: PubNubServer
    let transport: TestTransport
    let store: Store
    let outbox: Outbox<DefaultChatCustom>
    let path: String

    init(
        seed: UInt64 = 1, profile: FaultProfile = .none, path: String? = nil, clock: VirtualClock = VirtualClock(),
        server: PubNubServer? = nil, options: OutboxOptions = OutboxOptions()
    ) throws {
        self.clock = clock
        self.server = server ?? PubNubServer(time: FollowClock(clock: clock))
        transport = TestTransport(server: self.server, clock: clock, plan: FaultPlan(seed: seed, profile: profile))
        self.path = path ?? Self.temporaryPath()
        store = try Store.open(at: self.path)
        outbox = Outbox(
            store: store, client: try Self.client(transport), options: options, clock: clock,
            random: SplitMix64(seed: seed ^ 0x5EED))
    }

    /// The same store file and server after a crash: a new process with a new transport.
    func reopened(seed: UInt64, profile: FaultProfile, path: String? = nil) throws -> World {
        try World(seed: seed, profile: profile, path: path ?? self.path, clock: clock, server: server, options: outbox.options)
    }

    static func client(_ transport: any Transport, userId: String = "me") throws -> PubNubClient {
        PubNubClient(
            configuration: try PubNubConfiguration(
                publishKey: "demo", subscribeKey: "demo", userId: userId, origin: "http://sim.invalid"),
            transport: transport)
    }

    /// A fault-free client of the same server, for checking what it holds.
    func observer(userId: String = "observer") throws -> PubNubClient {
        try Self.client(InProcessTransport(server: server), userId: userId)
    }

    static func temporaryPath() -> String {
        NSTemporaryDirectory() + "pnreplicate-outbox-\(UUID().uuidString).sqlite"
    }

    func entries() async throws -> [OutboxEntry] { try await store.fetch(store.queries.outbox()) }

    /// The message ids stored on the server for `channel`, in timetoken order.
    func serverMessageIds(_ channel: String) async -> [String] {
        await server.storedMessages(channel: channel).compactMap {
            if case .object(let body) = $0.message, case .string(let id)? = body["id"] { return id }
            return nil
        }
    }
}
