import Foundation
import ReplicaModel

/// How long to wait after a failed request: the one backoff of the outbox, the reconciler's pulls
/// and live sync (each holds its own policy in its options).
///
/// Delays grow exponentially with "equal jitter": attempt *n* waits a random time in
/// `[d/2, d]` where `d = min(maxDelay, baseDelay × 2^(n-1))`, and never less than the server
/// asked for (a 429's `Retry-After`). How many failures end the retries is each caller's own
/// rule (``OutboxOptions/maxServerFailures``, ``ReconcilerOptions/maxAttempts``; live sync never
/// gives up).
///
/// ```swift
/// var policy = RetryPolicy()
/// policy.maxDelay = 30
/// var random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator()
/// let wait = policy.wait(afterAttempt: 3, atLeast: retryAfter ?? 0, using: &random)   // 1...2 s, or Retry-After
/// ```
public struct RetryPolicy: Sendable, Hashable {
    /// The first delay; default 0.5 s.
    public var baseDelay: TimeInterval = 0.5
    /// The longest delay; default 60 s.
    public var maxDelay: TimeInterval = 60

    /// The default policy.
    public init() {}

    /// The delay after `attempt` attempts (at least 1); `jitter` in `0...1` picks the point in `[d/2, d]`.
    public func delay(afterAttempt attempt: Int, jitter: Double) -> TimeInterval {
        let exponent = Double(max(0, min(attempt - 1, 30)))
        let ceiling = min(maxDelay, baseDelay * pow(2, exponent))
        return ceiling / 2 + ceiling / 2 * min(1, max(0, jitter))
    }

    /// The wait after `attempt` failed attempts: ``delay(afterAttempt:jitter:)`` with the jitter
    /// drawn from `random` (`ReplicaModel.SplitMix64` in a seeded run), and at least `minimum`
    /// (the server's `Retry-After`, 0 when it named none).
    public func wait(
        afterAttempt attempt: Int, atLeast minimum: TimeInterval = 0, using random: inout any RandomNumberGenerator & Sendable
    ) -> TimeInterval {
        max(minimum, delay(afterAttempt: attempt, jitter: random.nextUnitInterval()))
    }
}
