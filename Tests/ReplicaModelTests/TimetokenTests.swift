import Foundation
import ReplicaModel
import Testing

@Suite("Timetoken")
struct TimetokenTests {
    @Test(
        "decodes from a JSON string or a JSON number, exactly",
        arguments: [
            (#""15644265196692560""#, 15_644_265_196_692_560 as UInt64),
            ("15644265196692560", 15_644_265_196_692_560),
            // 2^53 + 1: a Double would round it to 2^53.
            (#""9007199254740993""#, 9_007_199_254_740_993),
            ("9007199254740993", 9_007_199_254_740_993),
            (#""18446744073709551615""#, UInt64.max),
            (#""0""#, 0),
            ("0", 0),
        ])
    func decodes(jsonText: String, raw: UInt64) throws {
        let decoded = try decodeJSON([Timetoken].self, from: "[\(jsonText)]")
        #expect(decoded == [Timetoken(rawValue: raw)])
    }

    @Test(
        "rejects values that are not timetokens with a DecodingError",
        arguments: [
            #""""#, #""12a""#, #""-1""#, "true", "-1", "1.5", "null", #"" 12""#, #""12 ""#, #""+12""#,
            #""1e5""#, #""18446744073709551616""#, #"{"tt":"1"}"#,
        ])
    func rejects(jsonText: String) {
        #expect(throws: DecodingError.self) {
            try decodeJSON([Timetoken].self, from: "[\(jsonText)]")
        }
    }

    @Test("parsing non-digits throws notATimetoken with the text", arguments: ["", "12a", "-1", "0x10", "１２"])
    func parsingErrors(text: String) {
        #expect(throws: TimetokenError.notATimetoken(text)) { try Timetoken(parsing: text) }
    }

    @Test("encodes as a JSON string of digits, above 2^53 too")
    func encodesAsString() throws {
        let tokens: [Timetoken] = [15_644_265_196_692_560, 9_007_199_254_740_993, 0]
        let text = String(decoding: try encodeJSON(tokens), as: UTF8.self)
        #expect(text == #"["15644265196692560","9007199254740993","0"]"#)
        #expect(try JSONDecoder().decode([Timetoken].self, from: Data(text.utf8)) == tokens)
    }

    @Test("a current date gives a 17-digit timetoken")
    func seventeenDigits() throws {
        let token = try Timetoken(date: Date(timeIntervalSince1970: 1_600_000_000))
        #expect(token.description == "16000000000000000")
        #expect(token.description.count == 17)
        #expect(try Timetoken(parsing: "15644265196692560").description == "15644265196692560")
    }

    @Test(
        "converts dates to timetokens (100 ns units)",
        arguments: [
            (1_600_000_000.0, 16_000_000_000_000_000 as UInt64),
            (1_600_000_000.5, 16_000_000_005_000_000),
            (1_600_000_000.25, 16_000_000_002_500_000),
            (0.0, 0),
            (1.0, 10_000_000),
        ])
    func fromDate(seconds: Double, raw: UInt64) throws {
        #expect(try Timetoken(date: Date(timeIntervalSince1970: seconds)) == Timetoken(rawValue: raw))
    }

    @Test(
        "converts timetokens to dates",
        arguments: [
            (16_000_000_000_000_000 as UInt64, 1_600_000_000.0),
            (16_000_000_005_000_000, 1_600_000_000.5),
            (10_000_000, 1.0),
            (5_000_000, 0.5),
        ])
    func toDate(raw: UInt64, seconds: Double) {
        #expect(Timetoken(rawValue: raw).date == Date(timeIntervalSince1970: seconds))
    }

    @Test("a date-derived timetoken converts back to the same timetoken")
    func dateRoundTrip() throws {
        let token: Timetoken = 16_000_000_005_000_000
        #expect(try Timetoken(date: token.date) == token)
    }

    @Test("dates before 1970 are out of range")
    func beforeEpoch() {
        #expect(throws: TimetokenError.self) { try Timetoken(date: Date(timeIntervalSince1970: -1)) }
        #expect(throws: TimetokenError.self) { try Timetoken(date: .distantPast) }
    }

    @Test("orders numerically, not as text, and distinguishes neighbours above 2^53")
    func ordering() {
        let nine: Timetoken = 9
        let ten: Timetoken = 10
        #expect(nine < ten)
        #expect(!(ten < nine))
        let big: Timetoken = 15_644_265_196_692_560
        #expect(big < big.next)
        #expect(big.next.rawValue == 15_644_265_196_692_561)
        #expect(big != big.next)
        let shuffled: [Timetoken] = [15_644_265_196_692_561, 10, 9_007_199_254_740_993, 9, 15_644_265_196_692_560]
        #expect(shuffled.sorted() == [9, 10, 9_007_199_254_740_993, 15_644_265_196_692_560, 15_644_265_196_692_561])
    }

    @Test("max is the largest value SQLite can hold")
    func maxValue() {
        #expect(Timetoken.max.rawValue == UInt64(Int64.max))
    }
}
