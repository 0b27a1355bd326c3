import Foundation
import Testing
@testable import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel

/// The path a request signature covers is the path as the client sent it (reference §2.2), and
/// the official SDKs spell the same path differently: Python escapes a message's `,` and `:`,
/// Kotlin leaves them raw, Python signs App Context ids and file names unescaped. The simulator
/// accepts each SDK's signature and still refuses one made for another request.
@Suite("Access Manager: signatures over the path as each official SDK spells it")
struct AccessSignaturePathTests {
    /// One signed request as an SDK sends it.
    struct Signed: CustomTestStringConvertible, Sendable {
        let name: String
        let method: String
        let path: String
        let query: String
        let signature: String
        var body: String? = nil
        /// The status once the signature is accepted (a file never uploaded is a 404).
        var status = 200

        var testDescription: String { name }
        var target: String { "\(path)?\(query)&signature=\(signature)" }
    }

    static let pythonQuery = "pnsdk=PubNub-Python%2F10.4.0&uuid=server&timestamp=1700000000"

    /// Sent by pubnub 10.8.0 (keys `pub-c-demo`/`sub-c-demo`/`sec-c-demo`, uuid `server`,
    /// timestamp pinned to 1700000000) to a server that recorded the request line.
    static let python: [Signed] = [
        Signed(name: #"publish {"a": 1, "b": 2}"#, method: "GET",
               path: "/publish/pub-c-demo/sub-c-demo/0/room-1/0/%7B%22a%22%3A%201%2C%20%22b%22%3A%202%7D",
               query: pythonQuery, signature: "v2.U8oSBOG0bQUqcfXCyH8arJEpDXEwA3SelO1HTZjDzOY"),
        Signed(name: #"publish "a,b""#, method: "GET", path: "/publish/pub-c-demo/sub-c-demo/0/room-1/0/%22a%2Cb%22",
               query: pythonQuery, signature: "v2.SA_7Qvl6skD1d6x66WngiTZ49soewIGBZ4pgk1o50i4"),
        Signed(name: "publish [1, 2]", method: "GET", path: "/publish/pub-c-demo/sub-c-demo/0/room-1/0/%5B1%2C%202%5D",
               query: pythonQuery, signature: "v2.or4XHxg4FeZpxEipaVUHoZSTllyKCzEYewXAzlIjRTY"),
        Signed(name: #"publish "a:b""#, method: "GET", path: "/publish/pub-c-demo/sub-c-demo/0/room-1/0/%22a%3Ab%22",
               query: pythonQuery, signature: "v2.nLqHxczMCvlA4y4cnS2PYXOQzviXRI1-HM7ie1s7g6U"),
        Signed(name: #"publish "a b""#, method: "GET", path: "/publish/pub-c-demo/sub-c-demo/0/room-1/0/%22a%20b%22",
               query: pythonQuery, signature: "v2.CODp_84OBmYNh4nUUgCJPwG-wfjfOSui0uGMaICL9Ok"),
        Signed(name: #"publish "a+b""#, method: "GET", path: "/publish/pub-c-demo/sub-c-demo/0/room-1/0/%22a%2Bb%22",
               query: pythonQuery, signature: "v2.Kxt2TyKh-JpEKrvSLFDsyHbz0w6AdpKmNQd_25qUEWY"),
        // json.dumps writes non-ASCII as \u escapes: the path carries %5Cu00e9.
        Signed(name: #"publish "héllo, wörld ☃ 😀""#, method: "GET",
               path: "/publish/pub-c-demo/sub-c-demo/0/room-1/0/%22h%5Cu00e9llo%2C%20w%5Cu00f6rld%20%5Cu2603%20%5Cud83d%5Cude00%22",
               query: pythonQuery, signature: "v2.YWH01M8TbwIHabZEUe89l-okbueIWawZVKyW5QJI5kM"),
        Signed(name: #"publish {"k": "~*!'()[]@$&;="}"#, method: "GET",
               path: "/publish/pub-c-demo/sub-c-demo/0/room-1/0/%7B%22k%22%3A%20%22~%2A%21%27%28%29%5B%5D%40%24%26%3B%3D%22%7D",
               query: pythonQuery, signature: "v2.RFfD2TYqONaczLue7qHHY3icawiA1UlzOzXHXGy0_wk"),
        Signed(name: #"publish "a,b" on channel "café ☃, 1""#, method: "GET",
               path: "/publish/pub-c-demo/sub-c-demo/0/caf%C3%A9%20%E2%98%83%2C%201/0/%22a%2Cb%22",
               query: pythonQuery, signature: "v2.bktvWTDPo2eIRJ-9rBTYCUpd1L1x_5hC5_hHBQh08S4"),
        Signed(name: #"signal {"x": [1, 2]}"#, method: "GET",
               path: "/signal/pub-c-demo/sub-c-demo/0/room-1/0/%7B%22x%22%3A%20%5B1%2C%202%5D%7D",
               query: pythonQuery, signature: "v2.jcgt8alPNaDIiTmgY-wf4m2p_UPC7XY_Q52mLyVjbHE"),
        Signed(name: "publish by POST (version 1)", method: "POST", path: "/publish/pub-c-demo/sub-c-demo/0/room-1/0",
               query: pythonQuery, signature: "gjN3UtSlfNfLJ63rO9MH5i2qlfNc582AWnxYc7WIZrM=", body: #"{"a": [1, 2]}"#),
        // join_channels: the `,` between names raw, a space in a name escaped.
        Signed(name: "here_now on room 1,room-2", method: "GET", path: "/v2/presence/sub-key/sub-c-demo/channel/room%201,room-2",
               query: "limit=1000&" + pythonQuery, signature: "v2.SlcIerKA_K8c1xrspWqh9n9DY4iSlxYcRh0govHKzZo"),
        // The id goes into the path unescaped and is signed so ("a:b c,d"); requests escapes the space.
        Signed(name: #"set_uuid_metadata of "a:b c,d""#, method: "PATCH", path: "/v2/objects/sub-c-demo/uuids/a:b%20c,d",
               query: "include=status,type&" + pythonQuery, signature: "v2.Oio9ctegGog4wdPtFnqmys8loIsasTWL_eLjnbmYLp4",
               body: #"{"name": "n", "email": null, "externalId": null, "profileUrl": null}"#),
        // Two spellings in one path: the channel escaped, the file name signed as it is.
        Signed(name: #"delete_file "my file, v2.txt" on "room 1""#, method: "DELETE",
               path: "/v1/files/sub-c-demo/channels/room%201/files/id-1/my%20file,%20v2.txt",
               query: pythonQuery, signature: "v2.UZdWhXpyaLRaMrwADDtw4bYORx3JIKb1L7qSTvw1Mno", status: 404),
    ]

    /// Spelled and signed as the Kotlin SDK (Retrofit `@Path`, signing OkHttp's `encodedPath`) and
    /// the JavaScript SDK (`encodeString`, `encodeNames`, a `POST` publish signed as a `GET`) do,
    /// per their source; the signatures made with Python's `hmac`, apart from the simulator.
    static let others: [Signed] = [
        Signed(name: "Kotlin: publish with , : [ ] + ~ raw", method: "GET",
               path: "/publish/pub-c-demo/sub-c-demo/0/room%201/0/%7B%22a%22:1,%22b%22:[1,2],%22t%22:%22x+y~z:%20ok%22%7D",
               query: "pnsdk=PubNub-Kotlin%2F12.0.0&uuid=server&timestamp=1700000000",
               signature: "v2.tE1xxXU9jR5LDtx8-9Mwbc07q8V7fClQox1dFE8-a9U"),
        Signed(name: "Kotlin: heartbeat on room 1,room-2", method: "GET",
               path: "/v2/presence/sub-key/sub-c-demo/channel/room%201,room-2/heartbeat",
               query: "pnsdk=PubNub-Kotlin%2F12.0.0&uuid=server&timestamp=1700000000",
               signature: "v2.Po3t5PRkW6Tpe9NjaSon9xACymh8ZVlDW8ghuS1_yPE"),
        Signed(name: "JavaScript: publish with ! ~ * ' ( ) escaped", method: "GET",
               path: "/publish/pub-c-demo/sub-c-demo/0/room-1/0/%7B%22a%22%3A1%2C%22t%22%3A%22it%27s%20%28ok%29%21%20%7E%2A%22%7D",
               query: "pnsdk=PubNub-JS-Nodejs%2F9.0.0&uuid=server&timestamp=1700000000",
               signature: "v2.sojR7fPOXrIQgHy9lJ_zqk0u7GBpznChjO4quaAQH2c"),
        Signed(name: "JavaScript: here_now on room 1,room~2", method: "GET",
               path: "/v2/presence/sub-key/sub-c-demo/channel/room%201,room%7E2",
               query: "pnsdk=PubNub-JS-Nodejs%2F9.0.0&uuid=server&timestamp=1700000000",
               signature: "v2._Q_9Synqd2vivRJSOjtg-MKWLaWByuQtSTE4PXZ2ALA"),
        Signed(name: "JavaScript: publish by POST, signed as a GET in version 2", method: "POST",
               path: "/publish/pub-c-demo/sub-c-demo/0/room-1/0",
               query: "pnsdk=PubNub-JS-Nodejs%2F9.0.0&uuid=server&timestamp=1700000000",
               signature: "v2.pFNFa2iU-EQcgOnIx2ZPiBDHiTJiZpUGPrRFmRnxgJ8", body: #"{"a":1}"#),
    ]

    @Test("what pubnub 10.8.0 signs is accepted: , : space + ~ ' ( ) [ ] and escaped unicode in a message, unicode and , in a channel, channel lists, unescaped ids", arguments: python)
    func pythonSignatures(_ signed: Signed) async throws {
        let world = AccessWorld()
        let answer = try await world.send(signed.method, signed.target, body: signed.body)
        #expect(answer.status == signed.status, "\(AccessWorld.text(answer))")
    }

    @Test("what the Kotlin and JavaScript SDKs sign is accepted", arguments: others)
    func otherSignatures(_ signed: Signed) async throws {
        let world = AccessWorld()
        let answer = try await world.send(signed.method, signed.target, body: signed.body)
        #expect(answer.status == signed.status, "\(AccessWorld.text(answer))")
    }

    @Test("the published messages are stored as sent: the one with commas too", arguments: [python[0], python[1], others[0]])
    func storedAsSent(_ signed: Signed) async throws {
        let world = AccessWorld()
        let answer = try await world.send(signed.method, signed.target)
        #expect(answer.status == 200)
        // /publish/{pub}/{sub}/0/{channel}/0/{message}
        let segments = try world.request(signed.method, signed.target).pathSegments
        let sent = try #require(JSONValue.parse(text: segments[6]))
        #expect(await world.server.storedMessages(channel: segments[4]).map(\.message) == [sent])
    }

    @Test("a comma added to the path after signing is refused, in each SDK's spelling (raw and %2C)", arguments: python + others)
    func commaAddedAfterSigning(_ signed: Signed) async throws {
        let world = AccessWorld()
        for comma in [",", "%2C"] {
            let tampered = Signed(name: signed.name, method: signed.method, path: signed.path + comma, query: signed.query,
                                  signature: signed.signature, body: signed.body)
            let answer = try await world.send(tampered.method, tampered.target, body: tampered.body)
            #expect(answer.status == 403, "\(tampered.path): \(AccessWorld.text(answer))")
            #expect(AccessWorld.text(answer) == #"{"error":true,"status":403,"service":"Access Manager","message":"Invalid Signature"}"#)
        }
        #expect(await world.server.stateDigest() == AccessWorld().server.stateDigest())
    }

    @Test("a message changed after signing is refused: a comma for a semicolon, one character of unicode, another key")
    func messageChangedAfterSigning() async throws {
        let world = AccessWorld()
        let changes: [(Signed, String, String)] = [
            (Self.python[1], "%22a%2Cb%22", "%22a%3Bb%22"),
            (Self.python[6], "%5Cu00e9", "%5Cu00e8"),
            (Self.others[0], "%22a%22:1,", "%22a%22:2,"),
            (Self.python[0], "%22b%22%3A%202", "%22b%22%3A%203"),
        ]
        for (signed, original, replacement) in changes {
            let path = signed.path.replacingOccurrences(of: original, with: replacement)
            #expect(path != signed.path)
            let answer = try await world.send("GET", "\(path)?\(signed.query)&signature=\(signed.signature)")
            #expect(answer.status == 403, "\(path)")
        }
        let foreign = AccessWorld(secretKey: "another-key")
        for signed in Self.python + Self.others {
            let answer = try await foreign.send(signed.method, signed.target, body: signed.body)
            #expect(answer.status == 403, "\(signed.name) under another secret key")
        }
        #expect(await world.server.stateDigest() == AccessWorld().server.stateDigest())
    }

    @Test("a path with many segments of many spellings: the spellings tried are bounded, each SDK's whole-path spelling among them")
    func spellingsAreBounded() throws {
        let world = AccessWorld()
        let segment = "a,b c:d~e"
        let request = try world.request("GET", "/" + Array(repeating: PercentEncoding.pathSegment(segment), count: 10).joined(separator: "/"))
        let paths = AccessSignature.signedPaths(request)
        #expect(paths.count <= AccessSignature.maximumSignedPaths)
        let kotlin = "/" + Array(repeating: "a,b%20c:d~e", count: 10).joined(separator: "/")
        let python = "/" + Array(repeating: "a%2Cb%20c%3Ad~e", count: 10).joined(separator: "/")
        #expect(paths.contains(kotlin) && paths.contains(python))
        #expect(paths.first == "/" + Array(repeating: "a,b%20c%3Ad~e", count: 10).joined(separator: "/"))
        // Three segments of all six spellings each: every combination still, a Python-escaped
        // one next to an unescaped one among them.
        let three = try world.request("GET", "/" + Array(repeating: PercentEncoding.pathSegment(segment), count: 3).joined(separator: "/"))
        let threePaths = AccessSignature.signedPaths(three)
        #expect(threePaths.count == 6 * 6 * 6 && Set(threePaths).count == threePaths.count)
        #expect(threePaths.contains("/a%2Cb%20c%3Ad~e/a,b c:d~e/a,b%20c:d~e"))
        // Three segments of two spellings each ("a,b" or "a%2Cb", "c%20d" or "c d", "e%3Af" or
        // "e:f"): every combination.
        let mixed = try world.request("GET", "/a%2Cb/c%20d/e:f")
        #expect(AccessSignature.signedPaths(mixed).count == 2 * 2 * 2)
    }
}
