import Foundation
import Logging
import PubNubWire
import ReplicaModel

/// What a token provider is asked for: why a token is needed, for whom, and the token it replaces.
public struct AccessTokenRequest: Sendable, Hashable {
    /// Why: none yet, expiring soon, expired, or refused by Access Manager.
    public var reason: AccessTokenNeed
    /// The user the token must be for (its authorized uuid).
    public var userId: String
    /// The token being replaced, parsed (nil when there is none or it is a legacy auth key).
    public var current: AccessToken?

    /// A request.
    public init(reason: AccessTokenNeed, userId: String, current: AccessToken?) {
        self.reason = reason
        self.userId = userId
        self.current = current
    }
}

/// The app's way to get a new Access Manager token: usually a call to the app's own server, which
/// grants one with the secret key. Return the token, or nil when there is none to give (requests
/// keep waiting until `AccessControl.setToken(_:)`); throw when the server could not be reached
/// (asked again after a backoff).
///
/// ```swift
/// configuration.tokenProvider = { request in
///     try await myServer.pubnubToken(for: request.userId)   // grant_token on your server
/// }
/// ```
public typealias AccessTokenProvider = @Sendable (AccessTokenRequest) async throws -> String?

/// Asks the app's ``AccessTokenProvider`` for a token when ``AccessControl`` says one is needed:
/// at most once per token (whatever the reason: missing, expiring, expired, refused), again after
/// a backoff only when the provider threw, and never while an answer is awaited. A token it gets
/// goes to ``AccessControl/setToken(_:)``, which lets the outbox, the pulls and live sync go on.
///
/// `run()` until cancelled; ``calls`` and ``lastError`` feed the replica's status.
public actor TokenRefresher {
    private let access: AccessControl
    private let provider: AccessTokenProvider
    private let clock: any ReplicaClock
    private let retry: RetryPolicy
    private var random: any RandomNumberGenerator & Sendable
    private let logger: Logger
    /// The generations asked about, with the reason: asked again only when an expiring token's
    /// requests start to wait (``AccessControl`` announces that once more).
    private var asked: [UInt64: AccessTokenNeed] = [:]
    /// How many times the provider was called.
    public private(set) var calls = 0
    /// The last failure of the provider (it threw, returned nil or a token for another user), or
    /// nil since the last token it gave.
    public private(set) var lastError: String?

    /// A refresher for `access`, calling `provider`, backing off with `retry` on `clock`.
    public init(
        access: AccessControl, provider: @escaping AccessTokenProvider, clock: any ReplicaClock, retry: RetryPolicy = RetryPolicy(),
        random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(), logger: Logger = Logger(label: "pnreplicate.access")
    ) {
        self.access = access
        self.provider = provider
        self.clock = clock
        self.retry = retry
        self.random = random
        self.logger = logger
    }

    /// Answers every need for a token until the task is cancelled (one already waiting, or no
    /// token at all, is answered first).
    public func run() async {
        let events = access.events()
        if let need = access.waitingFor {
            await ask(generation: access.generation, need)
        } else if access.token == nil {
            await ask(generation: access.generation, .missing)
        }
        for await event in events {
            guard case .tokenNeeded(let generation, let reason) = event else { continue }
            await ask(generation: generation, reason)
        }
    }

    private func ask(generation: UInt64, _ reason: AccessTokenNeed) async {
        if let earlier = asked[generation], earlier != .expiring || reason == .expiring { return }
        asked[generation] = reason
        var attempt = 0
        while access.generation == generation, !Task.isCancelled {
            attempt += 1
            calls += 1
            let request = AccessTokenRequest(reason: reason, userId: access.userId, current: access.parsedToken)
            logger.info("asking the app for an Access Manager token", metadata: ["reason": "\(reason.rawValue)", "attempt": "\(attempt)"])
            do {
                guard let token = try await provider(request) else {
                    lastError = "the token provider had no token"
                    return
                }
                // A token that arrived meanwhile by `setToken` wins; this one is not needed.
                guard access.generation == generation else { return }
                // The token already in use is no answer: requests wait for a new one.
                lastError = try access.setToken(token) ? nil : "the token provider gave the token already in use"
                return
            } catch let error as AccessTokenError {
                lastError = "the token provider's token is unusable: \(error)"
                logger.error("the token provider gave an unusable token", metadata: ["error": "\(error)"])
                return
            } catch is CancellationError {
                return
            } catch {
                lastError = "the token provider failed: \(error)"
                logger.warning("the token provider failed; asking again after a backoff", metadata: ["error": "\(error)"])
                let delay = retry.wait(afterAttempt: attempt, atLeast: 0, using: &random)
                do { try await clock.sleep(until: clock.now.addingTimeInterval(delay)) } catch { return }
            }
        }
    }
}
