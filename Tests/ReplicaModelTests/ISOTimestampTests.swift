import Foundation
import ReplicaModel
import Testing

@Suite("ISOTimestamp")
struct ISOTimestampTests {
    // 2001-09-09T01:46:40Z is exactly 10^9 seconds after the epoch.
    static let billion: Int64 = 1_000_000_000 * 1_000_000_000

    @Test(
        "parses 0, 3, 6 and 9 fraction digits exactly",
        arguments: [
            ("2001-09-09T01:46:40Z", 0, billion),
            ("2001-09-09T01:46:40.598Z", 3, billion + 598_000_000),
            ("2001-09-09T01:46:40.598494Z", 6, billion + 598_494_000),
            ("2001-09-09T01:46:40.598494123Z", 9, billion + 598_494_123),
            ("2001-09-09T01:46:40.000001Z", 6, billion + 1_000),
            ("2001-09-09T01:46:40.5Z", 1, billion + 500_000_000),
        ])
    func parsesFractions(text: String, digits: Int, nanoseconds: Int64) throws {
        let timestamp = try ISOTimestamp(parsing: text)
        #expect(timestamp.fractionDigits == digits)
        #expect(timestamp.nanoseconds == nanoseconds)
        #expect(timestamp.description == text)
    }

    @Test(
        "round-trips its text exactly through Codable",
        arguments: [
            "2020-09-23T09:23:34.598494Z", "2022-05-10T14:48:00.000Z", "2020-09-23T09:23:37Z",
            "1970-01-01T00:00:00Z", "2024-02-29T23:59:59.999999999Z", "2000-02-29T12:00:00.120Z",
            "1969-12-31T23:59:59.5Z", "2100-03-01T00:00:00.000001Z",
        ])
    func codableRoundTrip(text: String) throws {
        let decoded = try decodeJSON([ISOTimestamp].self, from: #"[""# + text + #""]"#)
        #expect(decoded.map(\.description) == [text])
        #expect(String(decoding: try encodeJSON(decoded), as: UTF8.self) == #"[""# + text + #""]"#)
    }

    @Test(
        "converts +00:00 and other offsets to UTC",
        arguments: [
            ("2020-09-13T12:26:40+00:00", "2020-09-13T12:26:40Z"),
            ("2020-09-13T12:26:40.123-00:00", "2020-09-13T12:26:40.123Z"),
            ("2020-09-13T14:26:40+02:00", "2020-09-13T12:26:40Z"),
            ("2020-09-13T07:56:40.5-04:30", "2020-09-13T12:26:40.5Z"),
            ("2020-09-14T01:00:00+05:00", "2020-09-13T20:00:00Z"),
            ("2020-12-31T22:00:00-03:00", "2021-01-01T01:00:00Z"),
        ])
    func offsets(text: String, utc: String) throws {
        let timestamp = try ISOTimestamp(parsing: text)
        #expect(timestamp.description == utc)
        #expect(timestamp == (try ISOTimestamp(parsing: utc)))
    }

    @Test("knows where the epoch and 1.6e9 seconds are")
    func anchors() throws {
        #expect(try ISOTimestamp(parsing: "1970-01-01T00:00:00Z").nanoseconds == 0)
        #expect(try ISOTimestamp(parsing: "2020-09-13T12:26:40Z").nanoseconds == 1_600_000_000 * 1_000_000_000)
        #expect(try ISOTimestamp(parsing: "2020-09-13T12:26:40Z").date == Date(timeIntervalSince1970: 1_600_000_000))
        #expect(ISOTimestamp(nanoseconds: -1, fractionDigits: 9).description == "1969-12-31T23:59:59.999999999Z")
    }

    @Test("a date converts to microseconds with six digits")
    func fromDate() {
        let timestamp = ISOTimestamp(date: Date(timeIntervalSince1970: 1_600_000_000.5))
        #expect(timestamp.description == "2020-09-13T12:26:40.500000Z")
        #expect(timestamp.nanoseconds == 1_600_000_000_500_000_000)
    }

    @Test(
        "invalid text throws ISOTimestampError.invalid with the text",
        arguments: [
            "", "2020-09-23", "2020-09-23T09:23:34", "2020-09-23T09:23:34.598494", "2020-13-01T00:00:00Z",
            "2020-00-10T00:00:00Z", "2020-09-00T00:00:00Z", "2020-09-23T24:00:00Z", "2020-09-23T09:60:00Z",
            "2020-09-23T09:23:34.Z", "2020-09-23T09:23:34Zjunk", "2020-09-23T09:23:34+0200",
            "2020-09-23T09:23:34+02", "2020/09/23T09:23:34Z", "20-09-23T09:23:34.598Z", "not a timestamp at all",
            "2020-09-23T09:23:34,598Z", "2020-09-23X09:23:34Z",
        ])
    func invalid(text: String) {
        #expect(throws: ISOTimestampError.invalid(text)) { try ISOTimestamp(parsing: text) }
    }

    @Test("invalid text in JSON throws a DecodingError")
    func invalidJSON() {
        #expect(throws: DecodingError.self) { try decodeJSON([ISOTimestamp].self, from: #"["2020-09-23"]"#) }
        #expect(throws: DecodingError.self) { try decodeJSON([ISOTimestamp].self, from: "[1600000000]") }
    }

    @Test("equality and hashing ignore the number of fraction digits")
    func equalityIgnoresDigits() throws {
        let short = try ISOTimestamp(parsing: "2020-09-23T09:23:34.5Z")
        let micro = try ISOTimestamp(parsing: "2020-09-23T09:23:34.500000Z")
        let nano = try ISOTimestamp(parsing: "2020-09-23T09:23:34.500000000Z")
        #expect(short == micro)
        #expect(micro == nano)
        #expect(Set([short, micro, nano]).count == 1)
        #expect(short.description != micro.description)
        #expect(try ISOTimestamp(parsing: "2020-09-23T09:23:34Z") == ISOTimestamp(parsing: "2020-09-23T09:23:34.000Z"))
        #expect(
            try ISOTimestamp(parsing: "2020-09-23T09:23:34.5Z") != ISOTimestamp(parsing: "2020-09-23T09:23:34.500001Z"))
    }

    @Test("orders by instant, to the nanosecond and across offsets")
    func ordering() throws {
        let texts = [
            "2020-09-23T09:23:34.598495Z",
            "2020-09-23T10:00:00+02:00",  // 08:00Z
            "2020-09-23T09:23:34.598494Z",
            "2019-12-31T23:59:59.999999999Z",
            "2020-09-23T09:23:34.598494001Z",
        ]
        let sorted = try texts.map(ISOTimestamp.init(parsing:)).sorted().map(\.description)
        #expect(
            sorted == [
                "2019-12-31T23:59:59.999999999Z", "2020-09-23T08:00:00Z", "2020-09-23T09:23:34.598494Z",
                "2020-09-23T09:23:34.598494001Z", "2020-09-23T09:23:34.598495Z",
            ])
        #expect(
            try ISOTimestamp(parsing: "2020-09-23T09:23:34.598494Z")
                < ISOTimestamp(parsing: "2020-09-23T09:23:34.598495Z"))
    }

    @Test("more than nine fraction digits keep nanosecond precision")
    func extraDigits() throws {
        let timestamp = try ISOTimestamp(parsing: "2020-09-23T09:23:34.1234567899Z")
        #expect(timestamp.nanoseconds % 1_000_000_000 == 123_456_789)
        #expect(timestamp.description == "2020-09-23T09:23:34.123456789Z")
    }

    @Test("years outside 1677–2262 and impossible days are refused, never a trap",
          arguments: ["9999-12-31T23:59:59Z", "0001-01-01T00:00:00.000Z", "1677-09-21T00:12:43Z", "2262-04-11T23:47:17Z",
                      "2021-02-29T00:00:00Z", "2020-04-31T00:00:00Z", "0000-01-01T00:00:00+23:59"])
    func outOfRange(text: String) {
        #expect(throws: ISOTimestampError.invalid(text)) { try ISOTimestamp(parsing: text) }
    }

    @Test("the first and last representable instants parse and print back")
    func representableEdges() throws {
        #expect(try ISOTimestamp(parsing: "1677-09-21T00:12:43.145224192Z") == .earliest)
        #expect(try ISOTimestamp(parsing: "2262-04-11T23:47:16.854775807Z") == .latest)
        #expect(ISOTimestamp.earliest.description == "1677-09-21T00:12:43.145224192Z")
        #expect(ISOTimestamp.latest.description == "2262-04-11T23:47:16.854775807Z")
        #expect(try ISOTimestamp(parsing: "2024-02-29T12:00:00Z").description == "2024-02-29T12:00:00Z")
    }

    @Test("a date beyond the range is clamped, not trapped on")
    func clampedDates() {
        #expect(ISOTimestamp(date: .distantFuture).nanoseconds == Int64.max)
        #expect(ISOTimestamp(date: Date(timeIntervalSince1970: -1e12)).nanoseconds == Int64.min)
        #expect(ISOTimestamp(date: Date(timeIntervalSince1970: .infinity)).nanoseconds == Int64.max)
        #expect(ISOTimestamp(date: Date(timeIntervalSince1970: 1e12)).description.hasPrefix("2262-"))
    }

    @Test("a timetoken of a date past Timetoken.max throws instead of trapping")
    func timetokenFromHugeDate() throws {
        #expect(throws: TimetokenError.self) { try Timetoken(date: Date(timeIntervalSince1970: 1e15)) }
        #expect(throws: TimetokenError.self) { try Timetoken(date: Date(timeIntervalSince1970: .infinity)) }
        #expect(try Timetoken(date: Date(timeIntervalSince1970: 1_700_000_000)).rawValue == 17_000_000_000_000_000)
    }
}
