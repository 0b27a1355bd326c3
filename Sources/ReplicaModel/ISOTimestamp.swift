import Foundation

/// An ISO-8601 UTC timestamp as PubNub writes it (`2020-09-23T09:23:34.598494Z`), kept exact.
///
/// App Context `updated` values carry microseconds, which a `Date` (a `Double`) cannot always
/// hold exactly. `ISOTimestamp` keeps nanoseconds since 1970 as an integer and remembers how many
/// fraction digits the text had, so that encoding gives back the same text. Equality and order
/// look at the instant only.
public struct ISOTimestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Nanoseconds since 1970-01-01T00:00:00Z.
    public let nanoseconds: Int64
    /// How many fraction-of-second digits the text form has (0 to 9).
    public let fractionDigits: Int

    /// A timestamp from nanoseconds, written with `fractionDigits` fraction digits.
    public init(nanoseconds: Int64, fractionDigits: Int = 6) {
        self.nanoseconds = nanoseconds
        self.fractionDigits = Swift.max(0, Swift.min(9, fractionDigits))
    }

    /// The earliest instant a timestamp can hold: 1677-09-21T00:12:43.145224192Z (`Int64.min` ns).
    public static let earliest = ISOTimestamp(nanoseconds: .min, fractionDigits: 9)
    /// The latest instant a timestamp can hold: 2262-04-11T23:47:16.854775807Z (`Int64.max` ns).
    public static let latest = ISOTimestamp(nanoseconds: .max, fractionDigits: 9)

    /// A timestamp from a date, to the microsecond, written with six fraction digits.
    ///
    /// A date outside ``earliest``...``latest`` (or not finite) is clamped to that range: dates
    /// made from outside data, such as a timetoken a server sent, never trap.
    public init(date: Date, fractionDigits: Int = 6) {
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        let limit = Double(Int64.max / 1000)
        let nanoseconds: Int64 =
            if micros.isNaN { 0 } else if micros >= limit { .max } else if micros <= -limit { .min } else { Int64(micros) * 1000 }
        self.init(nanoseconds: nanoseconds, fractionDigits: fractionDigits)
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction]Z` (also `+00:00`). Other offsets are converted to UTC.
    ///
    /// Throws for text that is not such a timestamp, names an impossible day (`2021-02-30`), or an
    /// instant outside ``earliest``...``latest`` (about 1677 to 2262): a published `createdAt` of
    /// `9999-12-31T00:00:00Z` is refused, never a crash.
    public init(parsing text: String) throws(ISOTimestampError) {
        guard let parsed = Self.parse(Array(text.utf8)) else { throw .invalid(text) }
        self = parsed
    }

    /// The instant as a `Date`.
    public var date: Date { Date(timeIntervalSince1970: Double(nanoseconds) / 1_000_000_000) }

    /// The ISO-8601 text with `fractionDigits` fraction digits and a `Z` suffix.
    public var description: String {
        let seconds = nanoseconds.floorDiv(1_000_000_000)
        // The remainder, not `nanoseconds - seconds * 10^9`: that product overflows near Int64.min.
        let remainder = nanoseconds % 1_000_000_000
        let nanos = Int(remainder < 0 ? remainder + 1_000_000_000 : remainder)
        let (y, mo, d) = Self.civil(fromDays: Int(seconds.floorDiv(86_400)))
        let secOfDay = Int(seconds - seconds.floorDiv(86_400) * 86_400)
        // Written digit by digit into one buffer: stores and wire payloads format a timestamp per message.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(30)
        // Every field is non-negative: the years of an Int64 of nanoseconds are 1677 to 2262.
        func put(_ value: Int, _ width: Int) {
            var divisor = 1
            var count = 1
            while value / divisor >= 10 {
                divisor *= 10
                count += 1
            }
            for _ in count..<max(count, width) { bytes.append(UInt8(ascii: "0")) }
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }
        put(y, 4)
        bytes.append(UInt8(ascii: "-"))
        put(mo, 2)
        bytes.append(UInt8(ascii: "-"))
        put(d, 2)
        bytes.append(UInt8(ascii: "T"))
        put(secOfDay / 3600, 2)
        bytes.append(UInt8(ascii: ":"))
        put(secOfDay / 60 % 60, 2)
        bytes.append(UInt8(ascii: ":"))
        put(secOfDay % 60, 2)
        if fractionDigits > 0 {
            var divisor = 1
            for _ in 0..<(9 - fractionDigits) { divisor *= 10 }
            bytes.append(UInt8(ascii: "."))
            put(nanos / divisor, fractionDigits)
        }
        bytes.append(UInt8(ascii: "Z"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Orders by instant.
    public static func < (lhs: ISOTimestamp, rhs: ISOTimestamp) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    /// Equal when the instants are equal, whatever the number of digits.
    public static func == (lhs: ISOTimestamp, rhs: ISOTimestamp) -> Bool { lhs.nanoseconds == rhs.nanoseconds }

    /// Hashes the instant.
    public func hash(into hasher: inout Hasher) { hasher.combine(nanoseconds) }

    private static func parse(_ b: [UInt8]) -> ISOTimestamp? {
        func num(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= b.count else { return nil }
            var value = 0
            for i in start..<(start + count) {
                guard b[i] >= 48, b[i] <= 57 else { return nil }
                value = value * 10 + Int(b[i] - 48)
            }
            return value
        }
        guard b.count >= 20, let year = num(0, 4), b[4] == UInt8(ascii: "-"), let month = num(5, 2),
            b[7] == UInt8(ascii: "-"), let day = num(8, 2), b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: " "),
            let hour = num(11, 2), b[13] == UInt8(ascii: ":"), let minute = num(14, 2), b[16] == UInt8(ascii: ":"),
            let second = num(17, 2), (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60,
            second < 61, day <= daysInMonth(year, month)
        else { return nil }
        var index = 19
        var nanos = 0
        var digits = 0
        if index < b.count, b[index] == UInt8(ascii: ".") {
            index += 1
            while index < b.count, b[index] >= 48, b[index] <= 57 {
                if digits < 9 {
                    nanos = nanos * 10 + Int(b[index] - 48)
                    digits += 1
                }
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<9 { nanos *= 10 }
        }
        var offsetSeconds = 0
        guard index < b.count else { return nil }
        if b[index] == UInt8(ascii: "Z") || b[index] == UInt8(ascii: "z") {
            index += 1
        } else if b[index] == UInt8(ascii: "+") || b[index] == UInt8(ascii: "-") {
            let sign = b[index] == UInt8(ascii: "+") ? 1 : -1
            guard let oh = num(index + 1, 2), index + 3 < b.count, b[index + 3] == UInt8(ascii: ":"),
                let om = num(index + 4, 2)
            else { return nil }
            offsetSeconds = sign * (oh * 3600 + om * 60)
            index += 6
        } else {
            return nil
        }
        guard index == b.count else { return nil }
        // Years have four digits, so the seconds fit easily; the nanoseconds may not (outside 1677–2262).
        let seconds = Int64(days(fromCivil: year, month, day)) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
            - Int64(offsetSeconds)
        // Before 1970 the fraction is borrowed from the next second, so that the first
        // representable instant (1677-09-21T00:12:43.145224192Z) does not overflow on the way.
        let (whole, fraction) = seconds < 0 && nanos > 0 ? (seconds + 1, Int64(nanos) - 1_000_000_000) : (seconds, Int64(nanos))
        let (scaled, overflowScale) = whole.multipliedReportingOverflow(by: 1_000_000_000)
        let (total, overflowAdd) = scaled.addingReportingOverflow(fraction)
        guard !overflowScale, !overflowAdd else { return nil }
        return ISOTimestamp(nanoseconds: total, fractionDigits: digits)
    }

    private static func daysInMonth(_ year: Int, _ month: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    // Howard Hinnant's days-from-civil algorithm (proleptic Gregorian calendar).
    private static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func civil(fromDays days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

extension Int64 {
    fileprivate func floorDiv(_ divisor: Int64) -> Int64 {
        let q = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? q - 1 : q
    }
}

/// Text that is not an ISO-8601 timestamp.
public enum ISOTimestampError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The text could not be parsed.
    case invalid(String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .invalid(let text): "not an ISO-8601 timestamp: \"\(text)\""
        }
    }
}

extension ISOTimestamp: Codable {
    /// Decodes from an ISO-8601 string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            self = try ISOTimestamp(parsing: text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    /// Encodes the ISO-8601 text.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
