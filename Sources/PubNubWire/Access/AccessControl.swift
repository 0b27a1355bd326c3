import Crypto
import Foundation
import ReplicaModel

/// Why a request was not sent, or was refused, for Access Manager reasons (``WireError/accessDenied(_:)``).
public struct AccessDenial: Error, Sendable, Hashable, CustomStringConvertible {
    /// What happened.
    public enum Reason: Sendable, Hashable {
        /// No token yet, and the app said one is needed (a token provider is configured). Nothing was sent.
        case noToken
        /// The token's TTL ran out at this date. Nothing was sent.
        case expired(Date)
        /// Access Manager answered 403 under the current token (its answer). PubNub's 403 does not tell
        /// a missing, expired or revoked token from a missing permission, so every request waits
        /// for a new token.
        case refused(ServiceError)
        /// An earlier request was refused under the current token: nothing is sent until a new one arrives.
        case waiting
        /// The token does not grant what the request needs (checked on the device: nothing was sent).
        case notGranted([AccessRequirement])
    }

    /// The request's operation name (`publish`, `fetchHistory`, ...).
    public var operation: String
    /// What happened.
    public var reason: Reason
    /// What the request needed.
    public var need: AccessNeed
    /// The token generation the decision was made under (`AccessControl.generation`).
    public var generation: UInt64
    /// The fingerprint of the token it was made under (`AccessControl.fingerprint(of:)`; never the token).
    public var token: String
    /// When that token arrived (`AccessControl.setToken(_:)` or the client's creation), on the
    /// client's clock: an op queued before it was queued under an older token.
    public var tokenSince: Date?

    /// A denial.
    public init(operation: String, reason: Reason, need: AccessNeed, generation: UInt64, token: String = "none") {
        self.operation = operation
        self.reason = reason
        self.need = need
        self.generation = generation
        self.token = token
    }

    /// Whether only a new token can help (everything but ``Reason/notGranted(_:)``, which a new
    /// token may or may not fix).
    public var waitsForToken: Bool {
        if case .notGranted = reason { return false }
        return true
    }

    /// What the request needed and did not get: the token's missing grants, or (after a 403) every
    /// requirement of the request, with the channels a 403's `payload` named first.
    public var missing: [AccessRequirement] {
        if case .notGranted(let missing) = reason { return missing }
        return need.requirementsFlattened
    }

    /// A sentence for logs, stored errors and the CLI; never the token.
    public var description: String {
        let needed = missing.map(\.description).joined(separator: ", ")
        switch reason {
        case .noToken: return "\(operation): waiting for a token (none yet)"
        case .expired(let date): return "\(operation): waiting for a token (the token expired at \(ISOTimestamp(date: date)))"
        case .refused(let error): return "\(operation): waiting for a token (Access Manager refused: \(error.message))"
        case .waiting: return "\(operation): waiting for a token (the current one was refused)"
        case .notGranted: return "\(operation): the token does not grant \(needed)"
        }
    }
}

/// What changed in an ``AccessControl``.
public enum AccessEvent: Sendable, Hashable {
    /// A new token (or none) is in use from `generation` on.
    case tokenChanged(generation: UInt64)
    /// The token of `generation` needs replacing: it is missing, expiring, expired or was refused.
    case tokenNeeded(generation: UInt64, reason: AccessTokenNeed)
}

/// Why a new token is needed.
public enum AccessTokenNeed: String, Sendable, Hashable, Codable {
    /// There is none and a token provider is configured.
    case missing
    /// It expires soon (within `AccessControl.renewalMargin(for:)`); requests still go.
    case expiring
    /// Its TTL ran out.
    case expired
    /// Access Manager refused a request under it.
    case refused
}

/// The token a ``PubNubClient`` sends as `auth`, replaceable at runtime, and the one place that
/// decides, before and after each request, what Access Manager means for it (`docs/access.md`):
///
/// - **Before**: a request that needs a permission (``AccessNeed/of(_:)``) is not sent while the
///   token is known expired (its TTL, on the injected clock), while an earlier request was
///   refused under the same token, or when the parsed token does not grant it; the request fails
///   with ``WireError/accessDenied(_:)`` at once.
/// - **After**: a 403 under the current token starts waiting for a new one (every request waits;
///   PubNub's 403 does not say whether the token or the permission was at fault).
/// - **Replacing**: ``setToken(_:)`` takes effect for the next request of every component sharing
///   the client, and ends the wait.
///
/// Without a token, and unless ``requiresToken`` is set (a token provider), nothing is checked:
/// a keyset without Access Manager works as before. A key that is not a v3 token (a legacy auth
/// key) is sent as is and never pre-checked.
///
/// Thread-safe; share one per client. Observe it with ``events()``.
public final class AccessControl: @unchecked Sendable, CustomReflectable {
    private let lock = NSLock()
    private let clock: any ReplicaClock
    /// The user the token must be for.
    public let userId: String
    private var text: String?
    private var parsed: AccessToken?
    private var currentGeneration: UInt64 = 0
    private var waitingReason: AccessTokenNeed?
    private var refusal: String?
    private var arrivedAt: Date
    private var needAnnounced: [UInt64: AccessTokenNeed] = [:]
    private var required: Bool
    private var observers: [UUID: AsyncStream<AccessEvent>.Continuation] = [:]

    /// An access control starting with `token` (nil: none), for `userId`, reading the time from
    /// `clock`. `requiresToken`: a request without a token waits for one instead of going.
    public init(token: String?, userId: String, clock: any ReplicaClock = SystemClock(), requiresToken: Bool = false) {
        self.userId = userId
        self.clock = clock
        self.required = requiresToken
        self.text = token.flatMap { $0.isEmpty ? nil : $0 }
        self.parsed = self.text.flatMap { try? AccessToken(parsing: $0) }
        self.arrivedAt = clock.now
    }

    /// What `dump` and debuggers show: the parsed token and the state, never the token's text.
    public var customMirror: Mirror {
        Mirror(self, children: [
            "userId": userId, "token": parsedToken as Any, "generation": generation, "waitingFor": waitingFor as Any,
        ])
    }

    /// The token's text, sent as `auth` (nil: none). Never log it.
    public var token: String? { lock.withLock { text } }

    /// The parsed token, when the token is a v3 token.
    public var parsedToken: AccessToken? { lock.withLock { parsed } }

    /// Increases by one at each ``setToken(_:)``: a refusal under an older generation says nothing
    /// about the current token.
    public var generation: UInt64 { lock.withLock { currentGeneration } }

    /// The server's message of the 403 that started the current wait (`Token is expired.`, `Forbidden`),
    /// or nil when requests do not wait for that reason.
    public var refusalMessage: String? { lock.withLock { waitingReason == .refused ? refusal : nil } }

    /// Why requests wait for a new token, or nil when they go.
    public var waitingFor: AccessTokenNeed? { lock.withLock { waitingReason } }

    /// Why a request made at `date` would wait for a token, without deciding anything: the wait
    /// already on, a token past its TTL, or none when one is required. For dry runs and status.
    public func wouldWait(at date: Date) -> AccessTokenNeed? {
        lock.withLock {
            if let waitingReason { return waitingReason }
            return decide(unmet: [], now: date).starts
        }
    }

    /// Whether a request without a token waits for one (set when the app configured a token provider).
    public var requiresToken: Bool {
        get { lock.withLock { required } }
        set { lock.withLock { required = newValue } }
    }

    /// Replaces the token (nil removes it). A v3 token is parsed and must be for ``userId``; any
    /// other text is used as a legacy auth key. Ends a wait for a token and notifies observers.
    /// The token in use already changes nothing (a wait for a *new* token goes on): returns false.
    ///
    /// - Throws: ``AccessTokenError/otherUser(tokenUser:configuredUser:)`` for a token of another
    ///   user; ``AccessTokenError/empty`` for "". Nothing changes when it throws.
    @discardableResult
    public func setToken(_ newToken: String?) throws(AccessTokenError) -> Bool {
        if newToken == "" { throw .empty }
        if newToken == token { return false }
        let parsedToken = newToken.flatMap { try? AccessToken(parsing: $0) }
        if let parsedToken { try parsedToken.checkUser(userId) }
        let generation: UInt64? = lock.withLock {
            guard text != newToken else { return nil }
            text = newToken
            parsed = parsedToken
            arrivedAt = clock.now
            currentGeneration += 1
            waitingReason = nil
            return currentGeneration
        }
        guard let generation else { return false }
        broadcast(.tokenChanged(generation: generation))
        return true
    }

    /// A short fingerprint of `token` (the first 12 hex digits of its SHA-256), or `none`: what a
    /// stored failure keeps to tell one token from another without keeping the token.
    public static func fingerprint(of token: String?) -> String {
        guard let token else { return "none" }
        return SHA256.hash(data: Data(token.utf8)).prefix(6).map { String(format: "%02x", $0) }.joined()
    }

    /// The fingerprint of the current token (``fingerprint(of:)``).
    public var tokenFingerprint: String { Self.fingerprint(of: token) }

    /// The margin before expiry within which a new token is asked for while the current one still
    /// works: a tenth of its TTL, at most five minutes.
    public static func renewalMargin(for token: AccessToken) -> TimeInterval {
        min(300, TimeInterval(token.ttlMinutes) * 6)
    }

    /// The token a request goes with and the generation it was read in, read together.
    public struct Admission: Sendable, Hashable {
        /// The generation (``AccessControl/generation``) the request was admitted under.
        public var generation: UInt64
        /// The token to send as `auth` (nil: none).
        public var token: String?
        /// What the request needs that only a token pattern the client will not evaluate could
        /// grant (``AccessVerdict/undecided``): it went so that the server decides, and a 403 means
        /// the server did not grant it (``AccessControl/refused(_:error:admission:)``), not that
        /// the token was refused.
        public var undecided: [AccessRequirement]

        /// An admission.
        public init(generation: UInt64, token: String?, undecided: [AccessRequirement] = []) {
            self.generation = generation
            self.token = token
            self.undecided = undecided
        }
    }

    /// Decides whether `request` may go (see the type's overview); returns the token it goes with
    /// and the generation that token belongs to.
    public func admit(_ request: WireRequest) throws(WireError) -> Admission {
        let need = AccessNeed.of(request)
        // The grants are matched outside the lock (patterns are regular expressions).
        let (current, currentText, currentToken) = lock.withLock { (currentGeneration, text, parsed) }
        if need == .nothing || need == .secretKey { return Admission(generation: current, token: currentText) }
        let missing = currentToken.map { need.missing(in: $0.grants) } ?? []
        let undecided = currentToken.map { need.missing(in: $0.grants, undecidedIsMet: false).filter { !missing.contains($0) } } ?? []
        let now = clock.now
        var announce: AccessEvent?
        let decision: Result<Admission, AccessDenial> = lock.withLock {
            let generation = currentGeneration
            // The grants matched above belong to this token unless it changed meanwhile.
            let unmet = generation == current ? missing : parsed.map { need.missing(in: $0.grants) } ?? []
            let verdict = decide(unmet: unmet, now: now)
            if let starts = verdict.starts {
                waitingReason = starts
                announce = needed(generation, starts)
            } else if verdict.expiring {
                announce = needed(generation, .expiring)
            }
            guard let reason = verdict.denial else {
                return .success(Admission(generation: generation, token: text, undecided: generation == current ? undecided : []))
            }
            var denial = AccessDenial(
                operation: request.operation, reason: reason, need: need, generation: generation, token: Self.fingerprint(of: text))
            denial.tokenSince = arrivedAt
            return .failure(denial)
        }
        if let announce { broadcast(announce) }
        switch decision {
        case .success(let admission): return admission
        case .failure(let denial): throw .accessDenied(denial)
        }
    }

    /// What ``admit(_:)`` would decide for `request` at `date`, changing nothing: nil when it would
    /// go. For dry runs.
    public func preview(_ request: WireRequest, at date: Date) -> AccessDenial.Reason? {
        let need = AccessNeed.of(request)
        if need == .nothing || need == .secretKey { return nil }
        let unmet = parsedToken.map { need.missing(in: $0.grants) } ?? []
        return lock.withLock { decide(unmet: unmet, now: date).denial }
    }

    /// The one rule of ``admit(_:)`` and ``preview(_:at:)`` (under the lock, changing nothing):
    /// the denial, if any; the wait it starts, if any; whether the token expires soon.
    private func decide(unmet: [AccessRequirement], now: Date)
        -> (denial: AccessDenial.Reason?, starts: AccessTokenNeed?, expiring: Bool)
    {
        switch waitingReason {
        case .expired?: return (.expired(parsed?.expires ?? now), nil, false)
        case .missing?: return (.noToken, nil, false)
        case .refused?, .expiring?: return (.waiting, nil, false)
        case nil: break
        }
        guard text != nil else { return required ? (.noToken, .missing, false) : (nil, nil, false) }
        guard let parsed else { return (nil, nil, false) }
        if parsed.isExpired(at: now) { return (.expired(parsed.expires), .expired, false) }
        if !unmet.isEmpty { return (.notGranted(unmet), nil, false) }
        return (nil, nil, parsed.expires.timeIntervalSince(now) <= Self.renewalMargin(for: parsed))
    }

    /// Takes a 403 answer to a request admitted under `generation`: when Access Manager is in use
    /// (a token, or one required) and no newer token has arrived, every request waits for a new
    /// one. Returns the error to throw: ``WireError/accessDenied(_:)`` when Access Manager is in
    /// use, the plain service error otherwise (a keyset without Access Manager, whose 403 means a
    /// feature is off). A 403 read as something else (storage's, or
    /// ``ServiceError/Reason/pushNotEnabled``) is never Access Manager's: no token would help.
    ///
    /// A 403 to a request that went only because a token pattern the client does not evaluate
    /// might grant it (``Admission/undecided``) is the server's answer to that: the request is not
    /// granted (``AccessDenial/Reason/notGranted(_:)``), and nothing else waits.
    public func refused(_ request: WireRequest, error: ServiceError, admission: Admission) -> WireError {
        let generation = admission.generation
        guard error.status == 403, error.family != .storage, error.reason == .forbidden else { return .service(error) }
        if !admission.undecided.isEmpty {
            return .accessDenied(AccessDenial(
                operation: request.operation, reason: .notGranted(admission.undecided), need: AccessNeed.of(request),
                generation: generation, token: Self.fingerprint(of: admission.token)))
        }
        var announce: AccessEvent?
        let inUse: Bool = lock.withLock {
            guard text != nil || required else { return false }
            if generation == currentGeneration, waitingReason == nil {
                waitingReason = .refused
                refusal = String(error.message.prefix(200))
                announce = needed(generation, .refused)
            }
            return true
        }
        guard inUse else { return .service(error) }
        if let announce { broadcast(announce) }
        return .accessDenied(AccessDenial(
            operation: request.operation, reason: .refused(error), need: AccessNeed.of(request), generation: generation,
            token: Self.fingerprint(of: admission.token)))
    }

    /// Asks observers for a new token for `generation` (under the lock): once while it only
    /// expires soon, and once more when requests start to wait for it (expired, refused, missing).
    private func needed(_ generation: UInt64, _ reason: AccessTokenNeed) -> AccessEvent? {
        if let earlier = needAnnounced[generation], earlier != .expiring || reason == .expiring { return nil }
        needAnnounced[generation] = reason
        return .tokenNeeded(generation: generation, reason: reason)
    }

    /// Asks observers for a new token for the current one (`refused`: a request it does not grant
    /// waits), once per token, without making other requests wait.
    public func requestToken(_ reason: AccessTokenNeed) {
        let event = lock.withLock { needed(currentGeneration, reason) }
        if let event { broadcast(event) }
    }

    /// Every change from now on: new tokens and requests for one. Each call makes a new stream;
    /// it ends when the caller stops iterating.
    public func events() -> AsyncStream<AccessEvent> {
        let (stream, continuation) = AsyncStream<AccessEvent>.makeStream(bufferingPolicy: .unbounded)
        let id = UUID()
        lock.withLock { observers[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            _ = self.lock.withLock { self.observers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Returns when the generation is past `generation` (a new token arrived) or the task is cancelled.
    public func waitForToken(after generation: UInt64) async {
        let events = events()
        if self.generation > generation { return }
        for await event in events {
            if case .tokenChanged(let current) = event, current > generation { return }
        }
    }

    private func broadcast(_ event: AccessEvent) {
        let targets = lock.withLock { Array(observers.values) }
        for target in targets { target.yield(event) }
    }
}
