import Foundation
import PubNubSimulator
import ReplicaModel
import Testing

// The fast JSON parser and writer against Foundation's JSONDecoder and JSONEncoder: on every
// input they take, they must give what Foundation gives (stored columns written by either compare
// equal, and a history page decodes the same); on every input they leave, they must say so (nil)
// rather than guess.

/// A random JSON value: every kind, integers at the Int64 edges, doubles from random bits, strings
/// with escapes, control characters, non-ASCII text and surrogate pairs, nesting a few levels deep.
private func randomValue(_ random: inout SplitMix64, depth: Int = 0, asciiKeys: Bool = true) -> JSONValue {
    let kind = random.below(depth > 3 ? 5 : 7)
    switch kind {
    case 0: return .null
    case 1: return .bool(random.chance(50))
    case 2:
        let edges: [Int64] = [0, 1, -1, 9, 10, .max, .min, 1 << 53, -(1 << 53) - 1]
        return .int(random.chance(30) ? edges[random.below(edges.count)] : Int64(bitPattern: random.next()) >> random.below(64))
    case 3:
        // A finite double that is not integral (integral ones read back as `.int`, as JSONDecoder reads them).
        while true {
            let value = random.chance(50)
                ? Double(bitPattern: random.next())
                : Double(Int64(bitPattern: random.next()) >> random.below(60)) / Double(1 << random.below(40))
            if value.isFinite, value.rounded(.towardZero) != value { return .double(value) }
        }
    case 4: return .string(randomString(&random))
    case 5: return .array((0..<random.below(5)).map { _ in randomValue(&random, depth: depth + 1, asciiKeys: asciiKeys) })
    default:
        var members: [String: JSONValue] = [:]
        for _ in 0..<random.below(5) {
            let key = asciiKeys ? String(randomString(&random).unicodeScalars.filter(\.isASCII)) : randomString(&random)
            members[key] = randomValue(&random, depth: depth + 1, asciiKeys: asciiKeys)
        }
        return .object(members)
    }
}

private let stringPieces: [String] = [
    "a", "Z", "_", "0", " ", "/", "\"", "\\", "\n", "\t", "\r", "\u{8}", "\u{c}", "\u{0}", "\u{1}", "\u{1f}", "\u{7f}",
    "é", "ß", "\u{301}", "\u{2028}", "\u{fffd}", "👍", "🇵🇱", "𝒳", "日本",
]

private func randomString(_ random: inout SplitMix64) -> String {
    (0..<random.below(8)).map { _ in stringPieces[random.below(stringPieces.count)] }.joined()
}

private func foundationText(_ value: JSONValue) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}

@Suite("Fast JSON")
struct FastJSONTests {
    @Test("2,000 random values: the parser reads what JSONDecoder reads, from the encoder's text and from spaced text")
    func parserMatchesDecoder() throws {
        var random = SplitMix64(seed: 17)
        for round in 0..<2000 {
            let value = randomValue(&random, asciiKeys: round % 2 == 0)
            let text = try foundationText(value)
            let decoded = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
            #expect(JSONValue.parse(Data(text.utf8)) == decoded, "round \(round): \(text)")
            // The same document pretty-printed (other whitespace, escaped slashes).
            let pretty = JSONEncoder()
            pretty.outputFormatting = [.prettyPrinted]
            let spaced = try pretty.encode(value)
            #expect(JSONValue.parse(spaced) == (try JSONDecoder().decode(JSONValue.self, from: spaced)), "round \(round) pretty")
        }
    }

    @Test("2,000 random values: the writer writes JSONEncoder's bytes, or leaves non-ASCII keys to it")
    func writerMatchesEncoder() throws {
        var random = SplitMix64(seed: 23)
        var written = 0
        for round in 0..<2000 {
            let value = randomValue(&random, asciiKeys: round % 3 != 0)
            let expected = try foundationText(value)
            if let bytes = value.compactJSONBytes() {
                written += 1
                #expect(String(decoding: bytes, as: UTF8.self) == expected, "round \(round)")
            } else {
                #expect(expected.contains { !$0.isASCII }, "round \(round): left to the encoder without a non-ASCII key")
            }
            #expect(try value.jsonString() == expected, "round \(round): jsonString")
        }
        #expect(written > 1500, "the fast writer took only \(written) of 2,000 values")
    }

    @Test(
        "numbers read as JSONDecoder reads them",
        arguments: [
            ("1.0", JSONValue.int(1)), ("1e2", .int(100)), ("2.0e0", .int(2)), ("-1.5e3", .int(-1500)), ("1.25E+2", .int(125)),
            ("-0", .int(0)), ("-0.0", .int(0)), ("1e-400", .int(0)), ("9223372036854775807", .int(.max)),
            ("-9223372036854775808", .int(.min)), ("9223372036854775808", .double(9_223_372_036_854_775_808)),
            ("12345678901234567890", .double(12_345_678_901_234_567_168)), ("100000000000000000000000", .double(1e23)),
            ("0.1", .double(0.1)), ("1.5", .double(1.5)),
        ] as [(String, JSONValue)])
    func numbers(text: String, expected: JSONValue) throws {
        #expect(JSONValue.parse(Data(text.utf8)) == expected)
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) == expected)
    }

    @Test(
        "what it leaves to JSONDecoder: nil, never a guess",
        arguments: [
            "", " ", "[1,]", #"{"a":1,}"#, #"{"a":1,"a":2}"#, #"{"é":1,"e\u0301":2}"#, #""\ud800""#, #""\udc00x""#,
            "\"\u{1}\"", "01", "1.", ".5", "+1", "1e", "1E400", "-", "tru", "nul", "[1 2]", #"{"a" 1}"#, "[", "{", #""abc"#,
            #""\x""#, #""\u12""#, "1 2", "NaN", "Infinity",
        ])
    func refusals(text: String) {
        #expect(JSONValue.parse(Data(text.utf8)) == nil, "\(text)")
    }

    @Test("invalid UTF-8 and nesting past 512 are refused, and deep nesting does not exhaust the stack")
    func hostileInput() throws {
        #expect(JSONValue.parse(Data([0x22, 0xFF, 0xFE, 0x22])) == nil)
        #expect(JSONValue.parse(Data([0x22, 0xC3, 0x22])) == nil)
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(JSONValue.parse(Data(deep.utf8)) == nil)
        let fine = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        #expect(JSONValue.parse(Data(fine.utf8)) != nil)
        // Through the public initializer the refusal becomes JSONDecoder's error, not a crash.
        #expect(throws: (any Error).self) { try JSONValue(jsonData: Data(deep.utf8)) }
    }

    @Test("escapes decode, surrogate pairs included; a duplicate key still decodes through the fallback")
    func escapesAndFallback() throws {
        #expect(JSONValue.parse(Data(#""\u00e9\ud83d\udc4d\/\b\f\n\r\t\"\\""#.utf8)) == .string("é👍/\u{8}\u{c}\n\r\t\"\\"))
        // `init(jsonData:)` takes what the fast parser leaves: JSONDecoder keeps the first of two keys.
        #expect(try JSONValue(jsonData: Data(#"{"a":1,"a":2}"#.utf8)) == .object(["a": .int(1)]))
        #expect(try JSONValue(jsonData: Data("[1,]".utf8)) == .array([.int(1)]))
    }

    @Test("the writer leaves a non-finite double to JSONEncoder, which refuses it")
    func nonFinite() {
        #expect(JSONValue.double(.infinity).compactJSONBytes() == nil)
        #expect(JSONValue.array([.double(.nan)]).compactJSONBytes() == nil)
        #expect(throws: (any Error).self) { try JSONValue.double(.nan).jsonData() }
    }
}
