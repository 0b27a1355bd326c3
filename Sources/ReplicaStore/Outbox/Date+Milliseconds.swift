import Foundation

extension Date {
    /// A date from milliseconds since 1970.
    package init(milliseconds: Int64) { self.init(timeIntervalSince1970: Double(milliseconds) / 1000) }
    /// Milliseconds since 1970, rounded; a date too far out for 64 bits (or not finite) is
    /// clamped, so a retry time computed from a server's answer can always be stored.
    package var milliseconds: Int64 {
        let value = (timeIntervalSince1970 * 1000).rounded()
        guard !value.isNaN else { return 0 }
        return Int64(exactly: value) ?? (value > 0 ? .max : .min)
    }
}
