import Foundation

/// SplitMix64: a small, fast, seedable generator (never the system's random source). The
/// simulator's faults, the tests' scenarios and a seeded `Replica`'s jitter all draw from it, so
/// that a run replays exactly from its seed.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator for `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension RandomNumberGenerator {
    /// A uniform double in `[0, 1)`, from the top 53 bits of one draw: the one unit-interval draw
    /// of the library (backoff jitter (`RetryPolicy`), the simulator's fault rolls), so
    /// that a seeded run draws the same values wherever it runs.
    ///
    /// ```swift
    /// var random = SplitMix64(seed: 7)
    /// let roll = random.nextUnitInterval()   // 0 <= roll < 1
    /// ```
    public mutating func nextUnitInterval() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
