import Foundation
import Testing
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel

/// Seeded fuzzing of the grant endpoint and the signature check: mutated grant bodies (signed, so
/// that the body is what is judged) get a 200 with a token that parses or a 400, and mutated
/// request targets never get past the signature.
@Suite("Access Manager under mutated grants and requests")
struct AccessFuzzTests {
    static let cases = 1000

    /// A random JSON value, small.
    static func value(_ random: inout SplitMix64, depth: Int = 0) -> JSONValue {
        switch Int(random.next() % (depth > 2 ? 6 : 8)) {
        case 0: return .null
        case 1: return .bool(random.next() % 2 == 0)
        case 2: return .int(Int64(random.next() % 90_000) - 1000)
        case 3: return .double(Double(random.next() % 1000) / 7)
        case 4: return .string(["", "room-1", "^a.*$", "([", "é", "\u{0}"][Int(random.next() % 6)])
        case 5: return .int(Int64(random.next() % 300))
        case 6: return .array((0..<Int(random.next() % 3)).map { _ in value(&random, depth: depth + 1) })
        default:
            var fields: [String: JSONValue] = [:]
            for _ in 0..<Int(random.next() % 3) {
                fields[["channels", "groups", "uuids", "users", "x", "ttl"][Int(random.next() % 6)]] = value(&random, depth: depth + 1)
            }
            return .object(fields)
        }
    }

    /// `json` with one node replaced by a random value, or one key removed.
    static func mutated(_ json: JSONValue, _ random: inout SplitMix64, depth: Int = 0) -> JSONValue {
        guard case .object(var fields) = json, !fields.isEmpty else { return value(&random, depth: depth) }
        let keys = fields.keys.sorted()
        let key = keys[Int(random.next() % UInt64(keys.count))]
        switch random.next() % 4 {
        case 0: fields[key] = nil
        case 1: fields[key] = value(&random, depth: depth)
        default: fields[key] = mutated(fields[key] ?? .null, &random, depth: depth + 1)
        }
        return .object(fields)
    }

    @Test("a mutated grant body, signed: 200 with a token that parses and says what was granted, or a 400 in the grant shape")
    func mutatedGrantBodies() async throws {
        let world = AccessWorld()
        let original = try #require(JSONValue.parse(text: AccessManagerTests.grantBody))
        var random = SplitMix64(seed: 30)
        var granted = 0
        for index in 0..<Self.cases {
            var body = original
            for _ in 0...(random.next() % 3) { body = Self.mutated(body, &random) }
            let text = try body.jsonString()
            let answer = try await world.sendSigned("POST", "/v3/pam/sub-c-demo/grant?uuid=fuzz", body: text)
            let reply = AccessWorld.text(answer)
            if answer.status == 200 {
                granted += 1
                let token = try #require(JSONValue.parse(answer.body)?.objectValue?["data"]?.objectValue?["token"]?.stringValue, "case \(index)")
                let parsed = try AccessToken(parsing: token)
                // As the server read it (a whole double such as 89.0 is written `89`).
                #expect(.int(Int64(parsed.ttlMinutes)) == JSONValue.parse(text: text)?.objectValue?["ttl"], "case \(index): \(text)")
            } else {
                #expect(answer.status == 400 && reply.contains(#""source":"grant""#), "case \(index): \(answer.status) \(reply) for \(text)")
            }
        }
        // The mutations leave a good share of bodies valid: both ways are exercised.
        #expect(granted > Self.cases / 20 && granted < Self.cases, "\(granted) of \(Self.cases) granted")
    }

    @Test("a signed request whose path or query changed after signing is refused with 403")
    func tamperedAfterSigning() async throws {
        let world = AccessWorld()
        var random = SplitMix64(seed: 31)
        let alphabet = Array("abcXYZ019-_.~%2F,=&")
        var tampered = 0
        for index in 0..<Self.cases {
            let channel = "room-\(random.next() % 50)"
            let request = world.signed(try world.request("GET", "/publish/pub-c-demo/sub-c-demo/0/\(channel)/0/%22m%22?uuid=u\(index)"))
            var target = RawRequest(encoding: request, for: try Origin(parsing: "http://sim.invalid", secure: false)).target
            // Change one character of the path or of a query value other than the signature.
            let cut = target.range(of: "&signature=")?.lowerBound ?? target.endIndex
            let offset = Int(random.next() % UInt64(target.distance(from: target.startIndex, to: cut) - 1)) + 1
            let position = target.index(target.startIndex, offsetBy: offset)
            let replacement = alphabet[Int(random.next() % UInt64(alphabet.count))]
            guard target[position] != replacement else { continue }
            target.replaceSubrange(position...position, with: String(replacement))
            guard let changed = RawRequest(method: "GET", target: target).decoded(),
                  AccessSignature.stringToSign(changed, publishKey: AccessWorld.publishKey, subscribeKey: AccessWorld.subscribeKey)
                    != AccessSignature.stringToSign(request, publishKey: AccessWorld.publishKey, subscribeKey: AccessWorld.subscribeKey)
            else { continue }
            tampered += 1
            let answer = await world.server.respond(changed)
            #expect(answer.status == 403, "case \(index): \(target) answered \(answer.status)")
        }
        #expect(tampered > Self.cases / 2)
        #expect(await world.server.stateDigest() == AccessWorld().server.stateDigest())
    }
}
