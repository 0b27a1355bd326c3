import Foundation

/// A PubNub timetoken: unix time in units of 100 ns (seconds × 10^7), 17 digits for current dates.
///
/// Timetokens exceed 2^53, so JSON carries them as strings in most responses. A `Timetoken`
/// decodes from a string or a number and always encodes as a string.
public struct Timetoken: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible,
    ExpressibleByIntegerLiteral
{
    /// The raw count of 100 ns units since 1970-01-01T00:00:00Z.
    public var rawValue: UInt64

    /// Number of timetoken units per second.
    public static let unitsPerSecond: UInt64 = 10_000_000

    /// The largest timetoken the store can hold (SQLite integers are signed 64-bit).
    public static let max = Timetoken(rawValue: UInt64(Int64.max))

    /// Wraps a raw value.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Wraps a literal raw value.
    public init(integerLiteral value: UInt64) { self.rawValue = value }

    /// The timetoken of a date (to the nearest 100 ns). Dates before 1970, or so far ahead that
    /// the timetoken would pass ``max`` (year 31,197), throw.
    public init(date: Date) throws(TimetokenError) {
        let seconds = date.timeIntervalSince1970
        guard seconds >= 0, seconds.isFinite, seconds < Double(Self.max.rawValue / Self.unitsPerSecond) else {
            throw .outOfRange(String(seconds))
        }
        let whole = seconds.rounded(.down)
        let units = UInt64(whole) * Self.unitsPerSecond
            + UInt64(((seconds - whole) * Double(Self.unitsPerSecond)).rounded())
        self.rawValue = units
    }

    /// Parses the decimal digits of a timetoken ("15644265196692560").
    public init(parsing text: String) throws(TimetokenError) {
        guard !text.isEmpty, text.utf8.count <= 20, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
            let value = UInt64(text)
        else {
            throw .notATimetoken(text)
        }
        self.rawValue = value
    }

    /// The date this timetoken stands for (Double precision: about 0.2 µs today).
    public var date: Date {
        let seconds = rawValue / Self.unitsPerSecond
        let remainder = rawValue % Self.unitsPerSecond
        return Date(timeIntervalSince1970: Double(seconds) + Double(remainder) / Double(Self.unitsPerSecond))
    }

    /// The decimal digits, as PubNub writes them.
    public var description: String { String(rawValue) }

    /// Orders by raw value.
    public static func < (lhs: Timetoken, rhs: Timetoken) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The next timetoken (one 100 ns unit later), e.g. to make an exclusive bound inclusive.
    public var next: Timetoken { Timetoken(rawValue: rawValue &+ 1) }
}

/// A value that is not a timetoken.
public enum TimetokenError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The text is not a non-negative decimal integer that fits in 64 bits.
    case notATimetoken(String)
    /// The value is outside the range a timetoken can hold.
    case outOfRange(String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .notATimetoken(let text): "not a timetoken: \"\(text)\" (expected decimal digits)"
        case .outOfRange(let text): "timetoken out of range: \(text)"
        }
    }
}

extension Timetoken: Codable {
    /// Decodes from a JSON string of digits or from a JSON number.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            do {
                self = try Timetoken(parsing: text)
            } catch {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
            }
        } else if let number = try? container.decode(UInt64.self) {
            self.rawValue = number
        } else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "a timetoken must be a string of digits or an unsigned integer")
        }
    }

    /// Encodes as a JSON string, the form PubNub uses for values above 2^53.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
