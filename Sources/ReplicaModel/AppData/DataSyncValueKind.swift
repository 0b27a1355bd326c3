/// The kind of value a DataSync class property holds (the Admin API's `valueKind`; the protocol
/// reference, §16), and the one rule for whether a JSON value is of that kind: the simulator
/// refuses a write by it, and a replica checks an app's record by it before queueing the write.
///
/// ```swift
/// DataSyncValueKind.date.accepts("2026-12-02")          // true
/// DataSyncValueKind.number.accepts("3")                 // false: a string
/// ```
public enum DataSyncValueKind: String, Sendable, Hashable, CaseIterable, Codable {
    /// A JSON string.
    case string
    /// A JSON number (whole or not).
    case number
    /// `true` or `false`.
    case boolean
    /// A calendar date written `YYYY-MM-DD`.
    case date
    /// An ISO-8601 UTC instant (`2026-09-07T07:34:55.265874Z`).
    case datetime

    /// Whether `value` is of this kind. `null` is of no kind: whether a property may be null is
    /// the property's `isNullable`, not its kind.
    public func accepts(_ value: JSONValue) -> Bool {
        switch (self, value) {
        case (.string, .string), (.number, .int), (.number, .double), (.boolean, .bool): true
        case (.date, .string(let text)): Self.isDate(text)
        case (.datetime, .string(let text)): (try? ISOTimestamp(parsing: text)) != nil
        default: false
        }
    }

    /// Whether `text` is `YYYY-MM-DD` naming a day of the Gregorian calendar.
    static func isDate(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return false }
        func number(_ range: Range<Int>) -> Int? {
            var result = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                result = result * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return result
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), (1...12).contains(month), day >= 1 else {
            return false
        }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        return day <= days[month - 1]
    }
}
