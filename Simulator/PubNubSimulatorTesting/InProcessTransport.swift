import Foundation
import PubNubSimulator
import PubNubWire

/// A ``PubNubWire/Transport`` into a ``PubNubSimulator/PubNubServer`` in the same process: no
/// sockets, no real time, and faults the test controls.
///
/// Every request goes over a wire made of bytes: it is encoded into exactly what an HTTP transport
/// would send (``PubNubSimulator/RawRequest/init(encoding:for:)``: the URL's percent-encoded path
/// and query, the headers, the body) and read back by the simulator's own parser
/// (``PubNubSimulator/RawRequest/decoded()``, the one its HTTP front end uses). An id that would
/// not survive a real URL fails here too.
///
/// Faults come from a scripted list first (``script(_:)-([Fault])``), then from the seeded
/// ``PubNubSimulator/FaultPlan``, which ``use(_:)`` replaces (offline, then flaky, ...). Each
/// fault is applied by ``PubNubSimulator/FaultApplication``, exactly as over HTTP.
///
/// ```swift
/// let transport = InProcessTransport(server: server, plan: FaultPlan(seed: 7, profile: .offline))
/// let client = try PubNubClient.simulated(transport, userId: "me")
/// transport.script(.dropResponse)                         // the next request: applied, answer lost
/// transport.use(FaultPlan(seed: 7, profile: .flaky))      // then seeded weather
/// transport.onRequest { request in ... }                  // act while a request is in flight
/// transport.crash(afterRequests: 20)                      // a process that dies mid-drain
/// transport.requests.map(\.operation)                     // what the client asked, in order
/// ```
///
/// ## Topics
///
/// ### Creating a transport
///
/// - ``init(server:plan:)``
/// - ``server``
///
/// ### Faults
///
/// - ``plan``
/// - ``use(_:)``
/// - ``script(_:)-(Fault...)``
/// - ``script(_:)-([Fault])``
/// - ``onRequest(_:)``
/// - ``crash(afterRequests:)``
/// - ``crashed``
///
/// ### What the client asked
///
/// - ``records``
/// - ``requests``
/// - ``requestsAtServer``
/// - ``Record``
///
/// ### Sending
///
/// - ``send(_:to:)``
public final class InProcessTransport: Transport, @unchecked Sendable {
    /// One request as the client made it, when (on the server's clock) and what fault it met.
    public struct Record: Sendable {
        /// The request as the client built it (before encoding).
        public var request: WireRequest
        /// The time on the server's clock when the request was made.
        public var at: Date
        /// The fault applied to it (``PubNubSimulator/Fault/none`` for a clean answer).
        public var fault: Fault
    }

    /// The server every request goes to.
    public let server: PubNubServer
    // A lock, not an actor: `Transport.send` must decide a request's fault and log it atomically,
    // and the tests' accessors (`requests`, `crashed`) are synchronous.
    private let lock = NSLock()
    private var currentPlan: FaultPlan
    private var scripted: [Fault] = []
    private var log: [Record] = []
    private var crashAfter: Int?
    private var hung: [CheckedContinuation<Void, Never>] = []
    private var atServer = 0
    private var beforeRequest: (@Sendable (WireRequest) async -> Void)?

    /// A transport to `server` whose faults come from `plan` (none unless given).
    public init(server: PubNubServer, plan: FaultPlan = FaultPlan(seed: 0, profile: .none)) {
        self.server = server
        currentPlan = plan
    }

    /// The fault plan deciding requests that no scripted fault covers.
    public var plan: FaultPlan { lock.withLock { currentPlan } }

    /// Replaces the fault plan (for example offline, then flaky). Scripted faults still go first.
    public func use(_ plan: FaultPlan) { lock.withLock { currentPlan = plan } }

    /// Faults for the next requests, in order, before the plan decides again.
    public func script(_ faults: Fault...) { script(faults) }

    /// Faults for the next requests, in order, before the plan decides again.
    public func script(_ faults: [Fault]) { lock.withLock { scripted.append(contentsOf: faults) } }

    /// Runs `hook` with each request after its fault is decided and before it reaches the server:
    /// to change the server, or enqueue more work, while an op is in flight.
    public func onRequest(_ hook: @escaping @Sendable (WireRequest) async -> Void) { lock.withLock { beforeRequest = hook } }

    /// Crashes once `count` requests in all have been made: every later request hangs for ever
    /// without reaching the server, as a killed process never hears back.
    public func crash(afterRequests count: Int) { lock.withLock { crashAfter = count } }

    /// Whether the transport has crashed (``crash(afterRequests:)``).
    public var crashed: Bool { lock.withLock { crashAfter.map { log.count >= $0 } ?? false } }

    /// Requests handed to the server that it has not answered yet.
    public var requestsAtServer: Int { lock.withLock { atServer } }

    /// Every request made, in order, with its time and fault.
    public var records: [Record] { lock.withLock { log } }

    /// Every request made, in order, as the client built it.
    public var requests: [WireRequest] { lock.withLock { log.map(\.request) } }

    /// Decides the request's fault, records it, runs the ``onRequest(_:)`` hook, and lets the
    /// server answer the request decoded from its bytes, with the fault applied.
    public func send(_ request: WireRequest, to origin: Origin) async throws(TransportFailure) -> WireResponse {
        enum Step { case run(Fault), hang }
        let step: Step = lock.withLock {
            if let limit = crashAfter, log.count >= limit { return .hang }
            let fault = scripted.isEmpty
                ? currentPlan.decide(operation: request.operation, conditional: request.isConditional)
                : scripted.removeFirst()
            log.append(Record(request: request, at: server.clock.now, fault: fault))
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
            guard let received = RawRequest(encoding: request, for: origin).decoded() else { return RawRequest.badRequest }
            return try await FaultApplication.run(received, on: server, fault: fault)
        }
    }
}
