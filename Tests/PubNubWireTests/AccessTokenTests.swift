import Foundation
import Testing
import PubNubWire
import ReplicaModel

@Suite("Access Manager tokens parse as the Python SDK parses them, and nothing else crashes the decoder")
struct AccessTokenTests {
    /// The reference's worked example (built with cbor2, accepted by the Python SDK's parse_token).
    static let worked =
        "qEF2AkF0GmVT8QBDdHRsGDxDcmVzo0RjaGFuoWZyb29tLTEDQ2dycKBEdXVpZKFlYWxpY2UYYENwYXSjRGNoYW6ha150aHJlYWQtLiokAUNncnCgRHV1aWSgRG1ldGGhZHJvbGVmbWVtYmVyRHV1aWRlYWxpY2VDc2lnWCBOzqdb6UvzRtO0koBmAlmGqH4-6eL2_tFy9p5cWXJjpQ=="
    /// A token the real service minted (python's fixtures, revoke_token_verify_operations).
    static let recorded =
        "qEF2AkF0GmgwSytDdHRsAUNyZXOlRGNoYW6hbHRlc3RfY2hhbm5lbBjPQ2dycKBDc3BjoWx0ZXN0X2NoYW5uZWwYz0N1c3KgRHV1aWSgQ3BhdKVEY2hhbqBDZ3JwoENzcGOgQ3VzcqBEdXVpZKBEbWV0YaBEdXVpZHJ0ZXN0X3Jldm9rZV92ZXJpZnlDc2lnWCCpIDaBECABP5cv5d8p0nsiMqgtR1uB4oUMKVMAJa_EQQ=="

    @Test("the worked example: issue time, ttl, user, resources, patterns and meta")
    func workedExample() throws {
        let token = try AccessToken(parsing: Self.worked)
        #expect(token.version == 2)
        #expect(token.issued == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(token.ttlMinutes == 60)
        #expect(token.expires == Date(timeIntervalSince1970: 1_700_003_600))
        #expect(token.authorizedUserId == "alice")
        #expect(token.grants.resources[.channel] == ["room-1": [.read, .write]])
        #expect(token.grants.resources[.uuid] == ["alice": [.get, .update]])
        #expect(token.grants.patterns[.channel] == ["^thread-.*$": .read])
        #expect(token.meta == .object(["role": .string("member")]))
        #expect(token.grants.permissions(.channel, name: "thread-9") == .read)
        #expect(token.grants.permissions(.channel, name: "xthread-9") == [])
        #expect(token.isExpired(at: Date(timeIntervalSince1970: 1_700_003_599)) == false)
        #expect(token.isExpired(at: Date(timeIntervalSince1970: 1_700_003_600)))
    }

    @Test("parsedJSON has parse_token's keys and booleans, no signature and no create")
    func parsedJSON() throws {
        let json = try AccessToken(parsing: Self.worked).parsedJSON
        #expect(json["version"] == .int(2))
        #expect(json["timestamp"] == .int(1_700_000_000))
        #expect(json["authorized_uuid"] == .string("alice"))
        let room = json["resources"]?["channels"]?["room-1"]
        #expect(room?["read"] == .bool(true))
        #expect(room?["write"] == .bool(true))
        #expect(room?["manage"] == .bool(false))
        #expect(room?["create"] == nil)
        #expect(json["patterns"]?["channels"]?["^thread-.*$"]?["read"] == .bool(true))
        #expect(json["sig"] == nil)
        #expect(json["categories"] == nil)
    }

    @Test("a recorded token: legacy spc/usr mirrors ignored, 207 on a channel, padding optional")
    func recordedToken() throws {
        let token = try AccessToken(parsing: Self.recorded)
        #expect(token.ttlMinutes == 1)
        #expect(token.authorizedUserId == "test_revoke_verify")
        #expect(token.grants.resources[.channel]?["test_channel"]?.rawValue == 207)
        #expect(token.grants.resources[.channel]?["test_channel"]?.contains(.get) == false)
        let unpadded = Self.recorded.trimmingCharacters(in: CharacterSet(charactersIn: "="))
        #expect(unpadded.count == Self.recorded.count - 2)
        let again = try AccessToken(parsing: unpadded)
        #expect(again.grants == token.grants && again.issued == token.issued && again.authorizedUserId == token.authorizedUserId)
    }

    @Test("descriptions never show the token's text")
    func redaction() throws {
        let token = try AccessToken(parsing: Self.worked)
        var dumped = ""
        dump(token, to: &dumped)
        for text in [token.description, token.debugDescription, "\(token)", dumped] {
            #expect(!text.contains(Self.worked.prefix(12)))
        }
    }

    @Test("a token for another user is refused by checkUser")
    func otherUser() throws {
        let token = try AccessToken(parsing: Self.worked)
        try token.checkUser("alice")
        #expect(throws: AccessTokenError.otherUser(tokenUser: "alice", configuredUser: "bob")) { try token.checkUser("bob") }
    }

    @Test("typed errors: empty, not base64, trailing bytes, deep nesting, lengths past the end, not a token")
    func typedErrors() {
        #expect(throws: AccessTokenError.empty) { try AccessToken(parsing: "") }
        #expect(throws: AccessTokenError.notBase64) { try AccessToken(parsing: "é") }
        #expect(throws: AccessTokenError.tooLong(characters: AccessToken.maxLength + 1)) {
            try AccessToken(parsing: String(repeating: "A", count: AccessToken.maxLength + 1))
        }
        #expect(throws: CBORError.trailingBytes(offset: 1)) { try CBORDecoder.decode([0x01, 0x02]) }
        #expect(throws: CBORError.tooDeep) { try CBORDecoder.decode([UInt8](repeating: 0x81, count: 40) + [0x00]) }
        // A byte string claiming 2^64-1 bytes: refused before anything is allocated.
        #expect(throws: CBORError.truncated(offset: 9)) { try CBORDecoder.decode([0x5B] + [UInt8](repeating: 0xFF, count: 8)) }
        #expect(throws: CBORError.indefiniteLength(offset: 0)) { try CBORDecoder.decode([0x9F, 0xFF]) }
        #expect(throws: AccessTokenError.malformed("not a map")) {
            try AccessToken(parsing: Data([0x83, 1, 2, 3]).base64EncodedString())
        }
    }

    /// How many fuzz cases run (`PNREPLICATE_TOKEN_FUZZ`, 10,000 by default).
    static let fuzzCount = ProcessInfo.processInfo.environment["PNREPLICATE_TOKEN_FUZZ"].flatMap(Int.init) ?? 10_000

    @Test("fuzz: mutated, truncated, spliced and random tokens end parsed or in a typed error")
    func fuzz() throws {
        let seeds = [Self.worked, Self.recorded].map { AccessTokenTests.bytes($0) }
        var random = SplitMix64(seed: 30)
        var outcomes: [String: Int] = [:]
        for round in 0..<Self.fuzzCount {
            var bytes = seeds[round % 2]
            switch round % 6 {
            case 0:  // flipped bits
                for _ in 0...Int(random.next() % 4) { bytes[Int(random.next() % UInt64(bytes.count))] ^= UInt8(1 << (random.next() % 8)) }
            case 1:  // truncated
                bytes = Array(bytes.prefix(Int(random.next() % UInt64(bytes.count))))
            case 2:  // a random byte overwritten (initial bytes become other majors and lengths)
                bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next())
            case 3:  // a slice inserted from elsewhere
                let from = Int(random.next() % UInt64(bytes.count))
                let slice = bytes[from..<min(bytes.count, from + Int(random.next() % 12))]
                bytes.insert(contentsOf: slice, at: Int(random.next() % UInt64(bytes.count)))
            case 4:  // random bytes
                bytes = (0..<Int(random.next() % 64)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            default:  // random text
                let alphabet = Array("ABCabc012-_=+/é".unicodeScalars)
                let text = String(String.UnicodeScalarView((0..<Int(random.next() % 40)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }))
                outcomes[Self.outcome(text), default: 0] += 1
                continue
            }
            outcomes[Self.outcome(Data(bytes).base64EncodedString()), default: 0] += 1
        }
        #expect(outcomes.values.reduce(0, +) == Self.fuzzCount)
        // The mutations reach deep into the decoder: several kinds of failure, and some tokens survive.
        #expect(outcomes.count >= 6, "\(outcomes)")
        #expect(outcomes["parsed", default: 0] > 0)
    }

    static func outcome(_ text: String) -> String {
        do {
            _ = try AccessToken(parsing: text)
            return "parsed"
        } catch {
            switch error {
            case .cbor(let inner): return "cbor \(String(describing: inner).prefix(20))"
            case .malformed(let what): return "malformed \(what.prefix(12))"
            default: return String(describing: error).prefix(16).description
            }
        }
    }

    static func bytes(_ token: String) -> [UInt8] {
        let base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        return [UInt8](Data(base64Encoded: base64)!)
    }
}

extension JSONValue {
    /// A field of an object (tests only).
    fileprivate subscript(key: String) -> JSONValue? {
        if case .object(let fields) = self { return fields[key] }
        return nil
    }
}
