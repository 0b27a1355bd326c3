import Foundation
import PubNubSimulator
import ReplicaModel
import Testing

@testable import PubNubWire

// History pages are read by the fast path (JSONValue.parse, then field by field) and fall back to
// JSONDecoder. Both must give the same page for every answer the fast path takes, and the fast
// path must give up (nil) on every answer whose fields are not as expected, so that JSONDecoder
// decodes it or names the error exactly as before.

private func codable(_ body: String) throws -> HistoryPage {
    try JSONDecoder().decode(HistoryPage.self, from: Data(body.utf8))
}

private func fast(_ body: String) -> HistoryPage? {
    JSONValue.parse(Data(body.utf8)).flatMap(HistoryPage.init(json:))
}

private func through(_ body: String) throws(WireError) -> HistoryPage {
    try PubNubClient.decode(HistoryPage.self, from: WireResponse(status: 200, body: Data(body.utf8)), operation: "fetchHistory")
}

/// One random history entry as PubNub (or an odd server) writes it.
private func randomEntry(_ random: inout SplitMix64, index: Int) -> String {
    func pick<T>(_ options: [T]) -> T { options[Int(random.next() % UInt64(options.count))] }
    var fields = [#""message":\#(pick([#""text""#, "42", "1.5", "null", "[1,2]", #"{"id":"x","text":"hi","createdAt":"2026-01-01T00:00:00Z"}"#, #"{"a":{"b":[true,false]}}"#]))"#]
    fields.append(#""timetoken":\#(pick([#""\#(17_000_000_000_000_000 + index)""#, "\(17_000_000_000_000_000 + index)"]))"#)
    if random.next() % 3 != 0 { fields.append(#""uuid":\#(pick([#""user-1""#, "null", #""""#]))"#) }
    if random.next() % 2 == 0 { fields.append(#""meta":\#(pick([#""""#, "null", #"{"k":1}"#, #""m""#, "7"]))"#) }
    if random.next() % 2 == 0 { fields.append(#""message_type":\#(pick(["0", "4", "null", #""4""#, #""x""#, "1.5", "true"]))"#) }
    if random.next() % 3 == 0 { fields.append(#""custom_message_type":\#(pick([#""t""#, "null"]))"#) }
    if random.next() % 3 == 0 {
        fields.append(#""actions":{"reaction":{"👍":[{"uuid":"u","actionTimetoken":"\#(17_000_000_000_000_100 + index)"}]},"receipt":{}}"#)
    }
    if random.next() % 4 == 0 { fields.append(#""extra":{"ignored":[1]}"#) }
    return "{" + fields.shuffled(using: &random).joined(separator: ",") + "}"
}

@Suite("History page decoding")
struct HistoryDecodingTests {
    @Test("500 random pages: the fast path gives JSONDecoder's page")
    func fastMatchesCodable() throws {
        var random = SplitMix64(seed: 5)
        for round in 0..<500 {
            let entries = (0..<Int(random.next() % 6)).map { randomEntry(&random, index: $0) }
            var channels = [#""general":[\#(entries.joined(separator: ","))]"#]
            if random.next() % 3 == 0 { channels.append(#""a%2Fb":[]"#) }
            var body = #"{"status":200,"error":false,"error_message":"","channels":{\#(channels.joined(separator: ","))}"#
            if random.next() % 4 == 0 { body += #","more":{"start":"17000000000000005","url":"/v3/x","max":25}"# }
            body += "}"
            let expected = try codable(body)
            let page = try #require(fast(body), "round \(round): the fast path gave up on \(body)")
            #expect(page == expected, "round \(round): \(body)")
            #expect(try through(body) == expected)
        }
    }

    @Test(
        "fields of the wrong type: the fast path gives up and JSONDecoder's error is reported",
        arguments: [
            #"{"channels":{"c":[{"message":1,"timetoken":"x1"}]}}"#,
            #"{"channels":{"c":[{"message":1,"timetoken":-1}]}}"#,
            #"{"channels":{"c":[{"message":1,"timetoken":"1","uuid":5}]}}"#,
            #"{"channels":{"c":[{"message":1,"timetoken":"1","custom_message_type":1}]}}"#,
            #"{"channels":{"c":[{"message":1,"timetoken":"1","actions":{"r":{"v":[{"uuid":1,"actionTimetoken":"2"}]}}}]}}"#,
            #"{"channels":{"c":[{"timetoken":"1"}]}}"#,
            #"{"channels":{"c":{"message":1}}}"#,
            #"{"channels":[]}"#,
            #"{"channels":{},"more":{"max":"25"}}"#,
            "[]",
        ])
    func wrongTypes(body: String) {
        #expect(fast(body) == nil)
        #expect(throws: WireError.self) { try through(body) }
    }

    @Test("an answer the parser leaves (a trailing comma) still decodes through JSONDecoder")
    func fallback() throws {
        let body = #"{"channels":{"c":[{"message":"m","timetoken":"15",},]}}"#
        #expect(JSONValue.parse(Data(body.utf8)) == nil)
        #expect(try through(body).channels["c"]?.map(\.timetoken) == [15])
    }

    @Test("channel keys are percent-decoded and merged as JSONDecoder's path merges them")
    func channelKeys() throws {
        let body = #"{"channels":{"a%2Fb":[{"message":1,"timetoken":"1"}],"c":[]}}"#
        #expect(fast(body) == (try codable(body)))
        #expect(fast(body)?.channels["a/b"]?.count == 1)
    }
}

/// One random element of a subscribe answer's `m`, fields of every type PubNub (or an odd server) sends.
private func randomElement(_ random: inout SplitMix64) -> String {
    func pick<T>(_ options: [T]) -> T { options[Int(random.next() % UInt64(options.count))] }
    if random.next() % 10 == 0 { return pick(["1", #""text""#, "null", "[1]"]) }
    var fields: [String] = []
    if random.next() % 8 != 0 { fields.append(#""c":\#(pick([#""general""#, "7", "1.5", "null", "true"]))"#) }
    if random.next() % 2 == 0 { fields.append(#""b":\#(pick([#""general""#, #""g.*""#, "3"]))"#) }
    if random.next() % 8 != 0 {
        fields.append(#""p":\#(pick([#"{"t":"17000000000000001","r":1}"#, #"{"t":17000000000000002,"r":"2"}"#, #"{"t":"x"}"#, "5", #"{"r":1.5}"#]))"#)
    }
    if random.next() % 2 == 0 { fields.append(#""i":\#(pick([#""user-1""#, "42", "null", "[]"]))"#) }
    if random.next() % 2 == 0 { fields.append(#""e":\#(pick(["0", "1", "3", #""4""#, #""x""#, "2.5", "null"]))"#) }
    if random.next() % 8 != 0 { fields.append(#""d":\#(pick([#""hi""#, #"{"id":"m","text":"t","createdAt":"2026-01-01T00:00:00Z"}"#, "null", "[1,{}]", #"{"source":"actions","event":"added","data":{"type":"reaction","value":"👍","uuid":"u","actionTimetoken":"17000000000000009","messageTimetoken":"17000000000000001"}}"#, #"{"action":"join","uuid":"u","occupancy":2,"timestamp":1}"#]))"#) }
    if random.next() % 3 == 0 { fields.append(#""u":\#(pick([#"{"k":1}"#, "null", #""""#]))"#) }
    if random.next() % 4 == 0 { fields.append(#""cmt":\#(pick([#""t""#, "9", "null"]))"#) }
    return "{" + fields.shuffled(using: &random).joined(separator: ",") + "}"
}

@Suite("Subscribe answer decoding")
struct SubscribeDecodingTests {
    @Test("500 random answers: the fast path gives JSONDecoder's cursor and envelopes")
    func fastMatchesCodable() throws {
        var random = SplitMix64(seed: 9)
        for round in 0..<500 {
            let elements = (0..<Int(random.next() % 5)).map { _ in randomElement(&random) }
            let t = [#"{"t":"17000000000000005","r":3}"#, #"{"t":17000000000000005}"#, #"{"t":"x"}"#, "5"][Int(random.next() % 4)]
            let body = #"{"t":\#(t),"m":[\#(elements.joined(separator: ","))]}"#
            let codable = try JSONDecoder().decode(SubscribeDecoding.Answer.self, from: Data(body.utf8))
            let fast = try #require(JSONValue.parse(Data(body.utf8)).flatMap(SubscribeDecoding.Answer.init(json:)), "round \(round)")
            #expect(fast.t?.t == codable.t?.t && fast.t?.r == codable.t?.r, "round \(round): \(body)")
            #expect(fast.m?.map(\.envelope) == codable.m?.map(\.envelope), "round \(round): \(body)")
        }
    }

    @Test("an m that is not an array: the fast path gives up and the answer fails as before")
    func notAnArray() {
        let body = #"{"t":{"t":"1","r":1},"m":{}}"#
        #expect(JSONValue.parse(Data(body.utf8)).flatMap(SubscribeDecoding.Answer.init(json:)) == nil)
        #expect(throws: WireError.self) {
            try PubNubClient.subscribeAnswer(from: WireResponse(status: 200, body: Data(body.utf8)))
        }
    }
}
