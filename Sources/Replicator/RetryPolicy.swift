import Foundation

/// How the outbox waits between attempts and when it gives up.
///
/// Delays grow exponentially with "equal jitter": attempt *n* waits a random time in
/// `[d/2, d]` where `d = min(maxDelay, baseDelay × 2^(n-1))`. A 429 waits at least its Retry-After.
/// Ops that could not be sent (offline) are retried without limit; only server failures (5xx)
/// count toward ``maxServerFailures``.
public struct RetryPolicy: Sendable, Hashable {
    /// The first delay; default 0.5 s.
    public var baseDelay: TimeInterval = 0.5
    /// The longest delay; default 60 s.
    public var maxDelay: TimeInterval = 60
    /// 5xx answers after which an op becomes a dead letter; default 8.
    public var maxServerFailures = 8
    /// How far before its first attempt a publish probe searches history, to allow for the
    /// device clock being ahead of PubNub's; default 10 minutes.
    public var probeLookback: TimeInterval = 600

    /// The default policy.
    public init() {}

    /// The delay after `attempt` attempts (at least 1); `jitter` in `0...1` picks the point in `[d/2, d]`.
    public func delay(afterAttempt attempt: Int, jitter: Double) -> TimeInterval {
        let exponent = Double(max(0, min(attempt - 1, 30)))
        let ceiling = min(maxDelay, baseDelay * pow(2, exponent))
        return ceiling / 2 + ceiling / 2 * min(1, max(0, jitter))
    }
}
