import Foundation
import PubNubWire
import ReplicaModel

/// One injected fault.
public enum Fault: Sendable, Hashable, CustomStringConvertible {
    /// No fault.
    case none
    /// The client is offline: nothing is sent (``PubNubWire/TransportFailure/notSent(reason:)``).
    case offline
    /// The request is lost on the way: the server never sees it (not sent, from the client's view).
    case dropRequest
    /// The server applies the request but the response is lost
    /// (``PubNubWire/TransportFailure/outcomeUnknown(reason:)``).
    case dropResponse
    /// The response comes late (virtual milliseconds, recorded, never slept).
    case latency(milliseconds: Int)
    /// A 5xx answer without applying the request.
    case serverError(status: Int)
    /// 429 with `Retry-After` in seconds, without applying the request.
    case tooManyRequests(retryAfter: Int)
    /// 403 in the Access Manager shape (permissions revoked), without applying the request.
    case forbidden
    /// Another device edits the target object just before a conditional (`If-Match`) write, so
    /// the write meets a 412.
    case preconditionRace
    /// A mangled answer (``HostileCase``): wrong types, odd numbers and dates, truncated or
    /// oversized bodies, HTML 5xx, redirects, odd `Retry-After`, ... The case seed rebuilds it.
    case hostileAnswer(seed: UInt64)
    /// Subscribe only: the server forgot the connection's cursor and answers from another region
    /// with its current cursor and no events; what was published in between is lost to it.
    case staleCursor
    /// Subscribe only: a burst of signals overflows the connection's buffer just before the
    /// answer, so the oldest pending events are dropped and the answer is full (100 events).
    case bufferOverflow

    /// A short name for logs.
    public var description: String {
        switch self {
        case .none: "none"
        case .offline: "offline"
        case .dropRequest: "drop-request"
        case .dropResponse: "drop-response"
        case .latency(let ms): "latency-\(ms)ms"
        case .serverError(let status): "http-\(status)"
        case .tooManyRequests(let seconds): "http-429-retry-after-\(seconds)"
        case .forbidden: "http-403"
        case .preconditionRace: "412-race"
        case .hostileAnswer(let seed): HostileCase(seed: seed).description
        case .staleCursor: "stale-cursor"
        case .bufferOverflow: "buffer-overflow"
        }
    }
}

/// How often each fault happens.
public struct FaultProfile: Sendable, Hashable {
    /// The profile's name.
    public var name: String
    /// Probability of being offline (checked first; the rest of the mass is no fault).
    public var offline = 0.0
    /// Probability of a dropped request.
    public var dropRequest = 0.0
    /// Probability of a response lost after the server applied the request.
    public var dropResponse = 0.0
    /// Probability of a 500/503.
    public var serverError = 0.0
    /// Probability of a 429.
    public var tooManyRequests = 0.0
    /// Probability that permissions flip to revoked; the next 1-5 requests then get 403 too.
    public var forbidden = 0.0
    /// Probability of a remote edit racing a conditional write (only on `If-Match` requests).
    public var preconditionRace = 0.0
    /// Probability of added latency.
    public var latency = 0.0
    /// Probability of a mangled answer (``Fault/hostileAnswer(seed:)``).
    public var hostileAnswer = 0.0
    /// Probability that a subscribe meets a forgotten cursor (``Fault/staleCursor``).
    public var staleCursor = 0.0
    /// Probability that a subscribe's buffer overflows (``Fault/bufferOverflow``).
    public var bufferOverflow = 0.0

    /// A profile; every probability defaults to 0.
    public init(
        name: String, offline: Double = 0, dropRequest: Double = 0, dropResponse: Double = 0, serverError: Double = 0,
        tooManyRequests: Double = 0, forbidden: Double = 0, preconditionRace: Double = 0, latency: Double = 0,
        hostileAnswer: Double = 0, staleCursor: Double = 0, bufferOverflow: Double = 0
    ) {
        self.name = name
        self.offline = offline
        self.dropRequest = dropRequest
        self.dropResponse = dropResponse
        self.serverError = serverError
        self.tooManyRequests = tooManyRequests
        self.forbidden = forbidden
        self.preconditionRace = preconditionRace
        self.latency = latency
        self.hostileAnswer = hostileAnswer
        self.staleCursor = staleCursor
        self.bufferOverflow = bufferOverflow
    }

    /// No faults.
    public static let none = FaultProfile(name: "none")
    /// Some of everything recoverable: 5% dropped requests, 5% lost responses, 5% 5xx, 3% 429, 10% latency.
    public static let flaky = FaultProfile(
        name: "flaky", dropRequest: 0.05, dropResponse: 0.05, serverError: 0.05, tooManyRequests: 0.03, latency: 0.10)
    /// Every request fails as not sent.
    public static let offline = FaultProfile(name: "offline", offline: 1.0)
    /// Heavy weather: 10% dropped, 10% lost responses, 10% 5xx, 10% 429, 2% 403 flips, 30% of
    /// conditional writes raced by another device, 20% latency.
    public static let hostile = FaultProfile(
        name: "hostile", dropRequest: 0.10, dropResponse: 0.10, serverError: 0.10, tooManyRequests: 0.10, forbidden: 0.02,
        preconditionRace: 0.30, latency: 0.20)

    /// A server that answers 40% of requests with a mangled answer (``HostileCase``) and the rest
    /// truthfully: for testing that no answer can crash a client, lose or duplicate its data.
    public static let hostileServer = FaultProfile(name: "hostile-server", hostileAnswer: 0.40)

    /// Live sync's weather: ``flaky`` for every request, and for subscribes 5% cut long polls
    /// (lost answers), 3% forgotten cursors and 3% buffer overflows.
    public static let live = FaultProfile(
        name: "live", dropRequest: 0.05, dropResponse: 0.05, serverError: 0.05, tooManyRequests: 0.03, latency: 0.10,
        staleCursor: 0.03, bufferOverflow: 0.03)

    /// The profiles by name.
    public static let all: [FaultProfile] = [.none, .flaky, .offline, .hostile, .hostileServer, .live]

    /// A profile by name, or nil.
    public static func named(_ name: String) -> FaultProfile? { all.first { $0.name == name } }
}

/// One decision of a ``FaultPlan``.
public struct FaultDecision: Sendable, Hashable {
    /// The request's ordinal (0-based).
    public var ordinal: Int
    /// The request's operation.
    public var operation: String
    /// What happened to it.
    public var fault: Fault
}

/// Seeded, deterministic fault injection: the same seed and the same sequence of requests give
/// the same faults, in process or over HTTP.
public final class FaultPlan: @unchecked Sendable {
    /// The seed.
    public let seed: UInt64
    /// The profile.
    public let profile: FaultProfile
    private let lock = NSLock()
    private var random: SplitMix64
    private var decisions: [FaultDecision] = []
    private var revokedFor = 0

    /// A plan for `seed` and `profile`.
    public init(seed: UInt64, profile: FaultProfile) {
        self.seed = seed
        self.profile = profile
        self.random = SplitMix64(seed: seed)
    }

    /// Every decision so far, in order.
    public var log: [FaultDecision] { lock.withLock { decisions } }

    /// Decides the fault for the next request; `conditional` marks an `If-Match` write.
    public func decide(operation: String, conditional: Bool = false) -> Fault {
        lock.withLock {
            let roll = random.nextUnitInterval()
            let detail = random.next()
            let race = random.nextUnitInterval()
            if revokedFor > 0 {
                revokedFor -= 1
                decisions.append(FaultDecision(ordinal: decisions.count, operation: operation, fault: .forbidden))
                return .forbidden
            }
            var threshold = 0.0
            var fault = Fault.none
            let table: [(Double, Fault)] = [
                (profile.offline, .offline),
                (profile.dropRequest, .dropRequest),
                (profile.dropResponse, .dropResponse),
                (profile.serverError, .serverError(status: detail % 2 == 0 ? 500 : 503)),
                (profile.tooManyRequests, .tooManyRequests(retryAfter: Int(detail % 5) + 1)),
                (profile.forbidden, .forbidden),
                (profile.latency, .latency(milliseconds: Int(detail % 2000) + 50)),
                (profile.hostileAnswer, .hostileAnswer(seed: detail)),
            ] + (operation == "subscribe" ? [(profile.staleCursor, .staleCursor), (profile.bufferOverflow, .bufferOverflow)] : [])
            for (probability, candidate) in table {
                threshold += probability
                if roll < threshold {
                    fault = candidate
                    break
                }
            }
            if fault == .forbidden { revokedFor = Int(detail % 5) }
            if fault == .none, conditional, race < profile.preconditionRace { fault = .preconditionRace }
            decisions.append(FaultDecision(ordinal: decisions.count, operation: operation, fault: fault))
            return fault
        }
    }
}

/// Applies a fault to a request handled by `server`. Shared by the HTTP front end and the
/// in-process transport of `PubNubSimulatorTesting`, so that both behave the same.
public enum FaultApplication {
    /// The outcome: a response, or a transport failure the client should see.
    public static func run(
        _ request: WireRequest, on server: PubNubServer, fault: Fault
    ) async throws(TransportFailure) -> WireResponse {
        // Storage answers in S3's shape (XML): an upload or a download can fail as S3 fails.
        if FileStorage.isStorage(request), let answer = StorageReply.fault(fault) { return answer }
        switch fault {
        case .none, .latency:
            return await server.respond(request)
        case .staleCursor, .bufferOverflow:
            return await server.respond(request, fault: fault)
        case .preconditionRace:
            await server.raceConditionalWrite(request)
            return await server.respond(request)
        case .offline:
            throw .notSent(reason: "simulated: offline")
        case .dropRequest:
            throw .notSent(reason: "simulated: request dropped")
        case .dropResponse:
            _ = await server.respond(request)
            throw .outcomeUnknown(reason: "simulated: response lost after the server applied the request")
        case .serverError(let status):
            if request.pathSegments.first == "publish" {
                return Reply.json(status, [0, "Internal Server Error"], contentType: Reply.javascript)
            }
            let isFiles = request.pathSegments.count > 1 && request.pathSegments[0] == "v1" && request.pathSegments[1] == "files"
            return Reply.objectError(
                status, "An unexpected error ocurred while processing the request.", source: isFiles ? "Files" : "objects")
        case .tooManyRequests(let seconds):
            return Reply.json(
                429,
                ["status": 429, "error": true, "message":
                    "You have exceeded the maximum number of requests per second allowed for your subscriber key."],
                headers: ["Retry-After": String(seconds)])
        case .forbidden:
            return Reply.json(
                403, ["message": "Forbidden", "payload": ["channels": []], "error": true, "service": "Access Manager", "status": 403])
        case .hostileAnswer(let seed):
            let hostile = HostileCase(seed: seed)
            let real = hostile.mutation.reachesServer ? await server.respond(request) : nil
            return hostile.answer(to: request, real: real)
        }
    }
}

extension WireRequest {
    /// Whether this is a conditional App Context write (`If-Match`).
    public var isConditional: Bool {
        method == .patch && headers.keys.contains { $0.lowercased() == "if-match" }
    }
}
