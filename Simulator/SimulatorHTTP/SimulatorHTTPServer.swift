#if HTTPSimulator
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import PubNubSimulator
import PubNubWire
import ServiceLifecycle

/// The simulator over HTTP: the same paths as PubNub, on 127.0.0.1.
///
/// Requests are read by ``PubNubSimulator/RawRequest/decoded()``, the parser the in-process
/// transport uses too: the path is split on `/` **before** each segment is percent-decoded (a
/// channel `a/b` arrives as `a%2Fb`), valueless query keys are accepted. Responses carry the
/// service's real content type. Faults that answer (5xx, 429, 403, latency) apply over HTTP as in
/// process. A lost response (applied) and, over HTTP, `offline` and dropped requests (not applied)
/// cut the connection after the response head: the client cannot tell them apart, as with a real
/// network. A
/// ``ServerMisbehaviour`` adds real-time misbehaviour on top (dripped bodies, delayed publishes, a
/// history that ignores `start`); a ``RequestLog`` records every request.
public struct SimulatorResponder: HTTPResponder {
    /// The request context.
    public typealias Context = BasicRequestContext

    let server: PubNubServer
    let plan: FaultPlan
    let misbehaviour: ServerMisbehaviour
    let log: RequestLog?
    let clock: OffsetClock?

    /// A responder for `server` with `plan`'s faults, `misbehaviour` and, when given, a request log
    /// and a clock that `/simulator/clock` moves (``ClockControl``).
    public init(
        server: PubNubServer, plan: FaultPlan, misbehaviour: ServerMisbehaviour = .none, log: RequestLog? = nil,
        clockControl: OffsetClock? = nil
    ) {
        self.server = server
        self.plan = plan
        self.misbehaviour = misbehaviour
        self.log = log
        self.clock = clockControl
    }

    /// Converts the HTTP request, lets the server (and the fault plan) answer, converts back.
    public func respond(to request: Request, context: Context) async throws -> Response {
        await log?.record(method: request.method.rawValue, uri: request.uri.description)
        guard let received = try await Self.wireRequest(request) else { return response(RawRequest.badRequest) }
        if let clock, let answer = ClockControl.answer(received, clock: clock) { return response(answer) }
        let wire = misbehaviour.rewrite(received)
        if let delay = misbehaviour.publishDelay, ServerMisbehaviour.isPublish(wire) {
            // Cancelled only when the server stops; then answer at once.
            try? await Task.sleep(for: delay)
        }
        do {
            return response(try await FaultApplication.run(wire, on: server, fault: plan.decide(operation: wire.operation, conditional: wire.isConditional)))
        } catch {
            // No usable response: send a head, then fail the body so that the connection is cut
            // mid-response (Hummingbird would turn a thrown error into a clean 500).
            return Response(status: .ok, body: ResponseBody { _ in throw SimulatedConnectionDrop() })
        }
    }

    /// The request as the simulator reads it, through ``PubNubSimulator/RawRequest/decoded()``: the
    /// same parser as the in-process transport's. Nil for bytes it cannot read.
    static func wireRequest(_ request: Request) async throws -> WireRequest? {
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.rawName] = field.value }
        var copy = request
        // 8 MiB: a 5 MiB file upload (storage's limit) and its form fit, with room to refuse a larger
        // file as S3 does (400 EntityTooLarge) rather than cut the connection.
        let buffer = try await copy.collectBody(upTo: 8 << 20)
        return RawRequest(
            method: request.method.rawValue, target: request.uri.description, headers: headers,
            body: Data(buffer.readableBytesView)
        ).decoded()
    }

    func response(_ wire: WireResponse) -> Response {
        var fields = HTTPFields()
        for (name, value) in wire.headers {
            if let fieldName = HTTPField.Name(name) { fields[fieldName] = value }
        }
        return Response(status: .init(code: wire.status), headers: fields, body: misbehaviour.body(wire.body))
    }
}

/// Thrown to make Hummingbird close the connection instead of answering.
struct SimulatedConnectionDrop: Error {}

/// Runs the simulator's HTTP server.
public enum SimulatorHTTPServer {
    /// Serves until cancelled or, with `handleSignals`, until SIGINT/SIGTERM. `onListening` gets
    /// the bound port (useful with port 0, an ephemeral port); before it runs, the server's
    /// storage origin (``PubNubSimulator/PubNubServer/storageOrigin``) is set to
    /// `http://127.0.0.1:<port>`, so file uploads and downloads come back to this listener.
    /// `misbehaviour`, `requestLog` and `clockControl` (the server's clock, when it is an
    /// ``PubNubSimulator/OffsetClock`` that `/simulator/clock` may move: ``ClockControl``) are
    /// passed to the ``SimulatorResponder``.
    public static func run(
        server: PubNubServer, plan: FaultPlan, port: Int = 0, handleSignals: Bool = false,
        misbehaviour: ServerMisbehaviour = .none, requestLog: RequestLog? = nil, clockControl: OffsetClock? = nil,
        logLevel: Logger.Level = .critical, onListening: @escaping @Sendable (Int) async -> Void
    ) async throws {
        var logger = Logger(label: "pnreplicate.simulator")
        logger.logLevel = logLevel
        let app = Application(
            responder: SimulatorResponder(
                server: server, plan: plan, misbehaviour: misbehaviour, log: requestLog, clockControl: clockControl),
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { channel in
                // Upload and download URLs point at this listener (storage shares the port).
                let bound = channel.localAddress?.port ?? port
                await server.configureStorage(origin: "http://127.0.0.1:\(bound)")
                await onListening(bound)
            },
            logger: logger)
        if handleSignals {
            // A group stops its services in reverse order: the held polls are answered first,
            // then the HTTP server drains the (now finished) requests.
            let group = ServiceGroup(configuration: .init(
                services: [app, HeldPollRelease(server: server), PresenceSweep(server: server)],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
            try await group.run()
        } else {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await app.run() }
                group.addTask { await PresenceSweep.loop(server) }
                defer { group.cancelAll() }
                try await group.next()
            }
        }
    }
}

/// Answers the held long polls as soon as a graceful shutdown starts (SIGINT, SIGTERM), so that
/// stopping never waits out a subscribe's hold.
struct HeldPollRelease: Service {
    let server: PubNubServer

    func run() async throws {
        try? await gracefulShutdown()
        await server.releaseHeldPolls()
    }
}

/// Times out silent subscribers once a second on the real clock, so that a held long poll hears
/// the `timeout` event without waiting for another request to arrive.
struct PresenceSweep: Service {
    let server: PubNubServer

    func run() async throws {
        await cancelWhenGracefulShutdown { await Self.loop(server) }
    }

    static func loop(_ server: PubNubServer) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            await server.sweepPresence()
        }
    }
}
#else
#error("SimulatorHTTP needs the HTTPSimulator trait: add traits: [\"HTTPSimulator\"] to pnreplicate's .package line (docs/installation.md)")
#endif
