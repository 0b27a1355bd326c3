import Foundation
import Testing
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel

/// The simulator's Access Manager: grant and revoke over the wire with the request signature,
/// the token it mints, TTLs on the server's clock, admin requests (reference §2).
@Suite("Access Manager: grant, signature, token, revoke, expiry")
struct AccessManagerTests {
    /// The grant body of reference §2.1, as the Python SDK's `json.dumps` writes it.
    static let grantBody = #"{"ttl": 60, "permissions": {"resources": {"channels": {"room-1": 3}, "groups": {}, "uuids": {"alice": 96}, "users": {"alice": 96}, "spaces": {"room-1": 3}}, "patterns": {"channels": {}, "groups": {}, "uuids": {}, "users": {}, "spaces": {}}, "meta": {}, "uuid": "alice"}}"#
    /// The query as the SDK sends it (not sorted: the signature sorts it).
    static let sdkQuery = "pnsdk=PubNub-Python%2F10.4.0&uuid=server&timestamp=1700000000"

    static func grantBody(ttl: Int) -> String { grantBody.replacingOccurrences(of: #""ttl": 60"#, with: #""ttl": \#(ttl)"#) }

    @Test("the worked example of §2.2: the grant's v2 signature, and the server grants with it")
    func grantSignatureWorkedExample() async throws {
        let world = AccessWorld()
        let signature = "v2.IBGbzHHpP_YMkS0pcWy9oKxyTPKf-lh3xZjffaC6VdE"
        let target = "/v3/pam/sub-c-demo/grant?\(Self.sdkQuery)&signature=\(signature)"
        let request = try world.request("POST", target, body: Self.grantBody)
        #expect(AccessSignature.signature(of: request, publishKey: "pub-c-demo", subscribeKey: "sub-c-demo", secretKey: "sec-c-demo") == signature)
        #expect(AccessSignature.stringToSign(request, publishKey: "pub-c-demo", subscribeKey: "sub-c-demo")
            == "POST\npub-c-demo\n/v3/pam/sub-c-demo/grant\npnsdk=PubNub-Python%2F10.4.0&timestamp=1700000000&uuid=server\n\(Self.grantBody)")

        let answer = await world.server.respond(request)
        #expect(answer.status == 200, "\(AccessWorld.text(answer))")
        let token = try #require(JSONValue.parse(answer.body)?.objectValue?["data"]?.objectValue?["token"]?.stringValue)
        #expect(AccessWorld.text(answer)
            == #"{"data":{"message":"Success","token":"\#(token)"},"service":"Access Manager","status":200}"#)
        let parsed = try AccessToken(parsing: token)
        #expect(parsed.ttlMinutes == 60)
        #expect(parsed.issued == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(parsed.authorizedUserId == "alice")
        #expect(parsed.grants.resources[.channel] == ["room-1": [.read, .write]])
        #expect(parsed.grants.resources[.uuid] == ["alice": [.get, .update]])
        #expect(parsed.grants.resources[.group] == [:])
        #expect(parsed.meta == [:])
    }

    @Test("the worked example of §2.2: the revoke's signature is accepted (a token never minted here is a 400, not a 403)")
    func revokeSignatureWorkedExample() async throws {
        let world = AccessWorld()
        let signature = "v2.eT3D2FGjQ2lMN8zsZsb4p5AwmKie2FXQlxQXZj49WV0"
        let request = try world.request("DELETE", "/v3/pam/sub-c-demo/grant/p0F2AkF0Gmg-?\(Self.sdkQuery)&signature=\(signature)")
        #expect(AccessSignature.signature(of: request, publishKey: "pub-c-demo", subscribeKey: "sub-c-demo", secretKey: "sec-c-demo") == signature)
        let answer = await world.server.respond(request)
        #expect(answer.status == 400)
        #expect(AccessWorld.text(answer).contains(#""source":"revoke""#))
    }

    @Test("publish signatures as the Python SDK makes them: v1 for POST (padding kept), v2 for GET (encoded path)")
    func publishSignatures() async throws {
        let world = AccessWorld()
        // Made by pubnub 10.8.0 (timestamp pinned to 1700000000), channel "room 1/é", meta {"k": "v"}.
        let query = "meta=%7B%22k%22%3A%20%22v%22%7D&pnsdk=PubNub-Python%2F10.4.0&uuid=server&timestamp=1700000000"
        let post = try world.request(
            "POST", "/publish/pub-c-demo/sub-c-demo/0/room%201%2F%C3%A9/0?\(query)&signature=Sc2ENHx9EbrNM-cF7myP3tXuyJ4-RiCmNZvDEPn9LzI=",
            body: #"{"text": "hi ~*!"}"#)
        let get = try world.request(
            "GET",
            "/publish/pub-c-demo/sub-c-demo/0/room%201%2F%C3%A9/0/%7B%22text%22%3A%20%22hi%20~%2A%21%22%7D?\(query)&signature=v2.FmmPlXoY-oZoCxMteonyOUDjIzr_KT-e7gMsUzUVyMA")
        for request in [post, get] {
            let answer = await world.server.respond(request)
            #expect(answer.status == 200, "\(request.method): \(AccessWorld.text(answer))")
        }
        #expect(await world.server.storedMessages(channel: "room 1/é").count == 2)
    }

    @Test("a wrong, missing or foreign signature is refused with 403; nothing is granted")
    func badSignatures() async throws {
        let world = AccessWorld()
        let good = "v2.IBGbzHHpP_YMkS0pcWy9oKxyTPKf-lh3xZjffaC6VdE"
        let targets = [
            "/v3/pam/sub-c-demo/grant?\(Self.sdkQuery)&signature=v2.IBGbzHHpP_YMkS0pcWy9oKxyTPKf-lh3xZjffaC6VdF",
            "/v3/pam/sub-c-demo/grant?\(Self.sdkQuery)",
            "/v3/pam/sub-c-demo/grant?pnsdk=PubNub-Python%2F10.4.0&uuid=server&signature=\(good)",
            "/v3/pam/sub-c-demo/grant?\(Self.sdkQuery)&extra=1&signature=\(good)",
        ]
        for target in targets {
            let answer = try await world.send("POST", target, body: Self.grantBody)
            #expect(answer.status == 403, "\(target)")
            #expect(AccessWorld.text(answer) == #"{"error":true,"status":403,"service":"Access Manager","message":"Invalid Signature"}"#)
        }
        // The body is signed too.
        let tampered = try await world.send(
            "POST", "/v3/pam/sub-c-demo/grant?\(Self.sdkQuery)&signature=\(good)", body: Self.grantBody(ttl: 61))
        #expect(tampered.status == 403)
        // An admin request signed with another key.
        let foreign = try await world.sendSigned("GET", "/publish/pub-c-demo/sub-c-demo/0/room-1/0/1?uuid=x", secretKey: "not-the-key")
        #expect(foreign.status == 403)
        #expect(await world.server.storedMessages(channel: "room-1").isEmpty)
    }

    @Test("ttl outside 1...43200 minutes gets the recorded 400; the bounds are granted", arguments: [0, -5, 43_201, 1, 43_200])
    func ttlRange(ttl: Int) async throws {
        let world = AccessWorld()
        let answer = try await world.sendSigned("POST", "/v3/pam/sub-c-demo/grant?uuid=server", body: Self.grantBody(ttl: ttl))
        if (1...43_200).contains(ttl) {
            #expect(answer.status == 200)
            let token = try #require(JSONValue.parse(answer.body)?.objectValue?["data"]?.objectValue?["token"]?.stringValue)
            #expect(try AccessToken(parsing: token).ttlMinutes == ttl)
        } else {
            #expect(answer.status == 400)
            #expect(AccessWorld.text(answer)
                == #"{"error":{"message":"Invalid ttl","source":"grant","details":[{"message":"Range should be 1 to 43200 minute(s).","location":"ttl","locationType":"body"}]},"service":"Access Manager","status":400}"#)
        }
        await #expect(throws: AccessGrantError.invalidTTL) {
            try await world.server.grantToken(ttlMinutes: 0, grants: AccessGrants())
        }
    }

    @Test("a grant body that is not a grant is a 400 naming the field; a bad pattern too")
    func invalidGrantBodies() async throws {
        let world = AccessWorld()
        let bodies = [
            #"{"ttl": 5}"#, #"{"ttl": 5, "permissions": {"resources": {"channels": {"a": "read"}}}}"#,
            #"{"ttl": 5, "permissions": {"resources": {"channels": {"a": 256}}}}"#,
            #"{"ttl": 5, "permissions": {"patterns": {"channels": {"([": 1}}}}"#,
            #"{"ttl": 5, "permissions": {"meta": [1]}}"#, #"{"ttl": 5, "permissions": {"uuid": 7}}"#,
            #"{"ttl": 5, "permissions": {"categories": {"groups": 32}}}"#, "[1]",
        ]
        for body in bodies {
            let answer = try await world.sendSigned("POST", "/v3/pam/sub-c-demo/grant?uuid=server", body: body)
            #expect(answer.status == 400, "\(body)")
            #expect(AccessWorld.text(answer).contains(#""source":"grant""#), "\(body)")
        }
    }

    @Test("the worked example of §2.3: the same grant at the same second mints the very token of the reference")
    func mintWorkedExample() async throws {
        let clock = VirtualClock(start: Date(timeIntervalSince1970: 1_700_000_000))
        let server = PubNubServer(clock: clock, secretKey: "sim-secret")
        let token = try await server.grantToken(
            ttlMinutes: 60,
            grants: AccessGrants(
                resources: [.channel: ["room-1": [.read, .write]], .uuid: ["alice": [.get, .update]]],
                patterns: [.channel: ["^thread-.*$": .read]]),
            authorizedUserId: "alice", meta: ["role": "member"])
        #expect(token
            == "qEF2AkF0GmVT8QBDdHRsGDxDcmVzo0RjaGFuoWZyb29tLTEDQ2dycKBEdXVpZKFlYWxpY2UYYENwYXSjRGNoYW6ha150aHJlYWQtLiokAUNncnCgRHV1aWSgRG1ldGGhZHJvbGVmbWVtYmVyRHV1aWRlYWxpY2VDc2lnWCBOzqdb6UvzRtO0koBmAlmGqH4-6eL2_tFy9p5cWXJjpQ==")
    }

    @Test("a minted token: padded base64url of a CBOR map with byte-string keys, decoded back field by field")
    func mintFormat() async throws {
        let world = AccessWorld()
        world.clock.advance(by: 0.75)
        let grants = AccessGrants(
            resources: [.channel: ["a": .read, "b": [.write, .delete]], .group: ["g": .manage]],
            patterns: [.uuid: ["^u-[0-9]+$": [.get, .join]]], categories: [.channel: .get, .uuid: .get])
        let token = try await world.server.grantToken(ttlMinutes: 5, grants: grants, meta: ["n": 1, "f": 1.5, "s": "x", "no": .null])
        #expect(token.utf8.count % 4 == 0)
        #expect(!token.contains("+") && !token.contains("/"))
        let bytes = try #require(Data(base64Encoded: token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")))
        let root = try CBORDecoder.decode([UInt8](bytes))
        guard case .map(let pairs) = root else {
            Issue.record("not a map")
            return
        }
        #expect(pairs.map(\.key) == ["v", "t", "ttl", "res", "pat", "meta", "cat", "sig"].map { CBORValue.bytes(Array($0.utf8)) })
        #expect(root["v"] == .unsigned(2))
        #expect(root["t"] == .unsigned(1_700_000_000))
        #expect(root["ttl"] == .unsigned(5))
        #expect(root["res"]?["chan"] == .map([CBORPair(key: .text("a"), value: .unsigned(1)), CBORPair(key: .text("b"), value: .unsigned(10))]))
        #expect(root["res"]?["grp"] == .map([CBORPair(key: .text("g"), value: .unsigned(4))]))
        #expect(root["res"]?["uuid"] == .map([]))
        #expect(root["pat"]?["uuid"] == .map([CBORPair(key: .text("^u-[0-9]+$"), value: .unsigned(160))]))
        guard case .bytes(let sig)? = root["sig"] else {
            Issue.record("no byte-string sig")
            return
        }
        #expect(sig.count == 32)
        let parsed = try AccessToken(parsing: token)
        // The parser lists every kind, empty or not.
        #expect(parsed.grants.resources.filter { !$0.value.isEmpty } == grants.resources)
        #expect(parsed.grants.patterns.filter { !$0.value.isEmpty } == grants.patterns)
        #expect(parsed.grants.categories == grants.categories)
        #expect(parsed.authorizedUserId == nil)
        #expect(parsed.meta == ["n": 1, "f": 1.5, "s": "x", "no": .null])
    }

    @Test("revoke: 200, then the token is refused as revoked; an expired token cannot be revoked")
    func revoke() async throws {
        let world = AccessWorld()
        let token = try await world.token(AccessGrants(resources: [.channel: ["room-1": .write]]), ttl: 2)
        let publish = "/publish/pub-c-demo/sub-c-demo/0/room-1/0/%22hi%22"
        #expect(try await world.send("GET", publish, token: token).status == 200)
        let unsigned = try await world.send("DELETE", "/v3/pam/sub-c-demo/grant/\(PercentEncoding.pathSegment(token))?uuid=server")
        #expect(unsigned.status == 403)
        let answer = try await world.sendSigned("DELETE", "/v3/pam/sub-c-demo/grant/\(PercentEncoding.pathSegment(token))?uuid=server")
        #expect(answer.status == 200)
        #expect(AccessWorld.text(answer) == #"{"data":{"message":"Success"},"service":"Access Manager","status":200}"#)
        let refused = try await world.send("GET", publish, token: token)
        #expect(refused.status == 403)
        #expect(AccessWorld.text(refused) == AccessBodies.revoked)
        #expect(await world.server.storedMessages(channel: "room-1").count == 1)

        let other = try await world.token(AccessGrants(resources: [.channel: ["room-1": .write]]), ttl: 1)
        world.clock.advance(by: 60)
        let late = try await world.sendSigned("DELETE", "/v3/pam/sub-c-demo/grant/\(PercentEncoding.pathSegment(other))?uuid=server")
        #expect(late.status == 400)
        #expect(AccessWorld.text(late)
            == #"{"error":{"details":[{"location":"token","locationType":"path","message":"Token is expired."}],"message":"Invalid token","source":"revoke"},"service":"Access Manager","status":400}"#)
        #expect(await world.server.revokeToken(other) == false)
    }

    @Test("a token expires at t + ttl × 60 on the server's clock")
    func expiry() async throws {
        let world = AccessWorld()
        world.clock.advance(by: 0.9)  // issued at the whole second 1700000000
        let token = try await world.token(AccessGrants(resources: [.channel: ["room-1": [.read, .write]]]), ttl: 1)
        let history = "/v3/history/sub-key/sub-c-demo/channel/room-1"
        #expect(try await world.send("GET", history, token: token).status == 200)
        world.clock.advance(by: 59)  // 1700000059.9
        #expect(try await world.send("GET", history, token: token).status == 200)
        world.clock.advance(by: 0.1)  // 1700000060: expired
        let refused = try await world.send("GET", history, token: token)
        #expect(refused.status == 403)
        #expect(AccessWorld.text(refused) == AccessBodies.expired)
        // Subscribe is refused the same way (its own path through the server).
        let subscribe = try await world.send("GET", "/v2/subscribe/sub-c-demo/room-1/0?tt=0", token: token)
        #expect(AccessWorld.text(subscribe) == AccessBodies.expired)
    }

    @Test("no token, an unknown token, or a uuid other than the token's authorized user: the family's 403")
    func missingUnknownAndOtherUser() async throws {
        let world = AccessWorld()
        let publish = "/publish/pub-c-demo/sub-c-demo/0/room-1/0/%22hi%22"
        let forbidden = AccessBodies.forbidden(channels: ["room-1"])
        #expect(AccessWorld.text(try await world.send("GET", publish, token: nil)) == forbidden)
        #expect(AccessWorld.text(try await world.send("GET", publish, token: "qEF2AkF0GmVT8QBDdHRsGDw=")) == forbidden)
        let token = try await world.token(AccessGrants(resources: [.channel: ["room-1": .write]]), user: "alice")
        let bob = try await world.send("GET", publish, token: token, user: "bob")
        #expect(bob.status == 403)
        #expect(AccessWorld.text(bob) == forbidden)
        #expect(try await world.send("GET", publish, token: token, user: "alice").status == 200)
        #expect(await world.server.storedMessages(channel: "room-1").map(\.publisher) == ["alice"])
    }

    @Test("a request signed with the secret key is an admin's: it may publish, set objects and list, with no token")
    func adminRequests() async throws {
        let world = AccessWorld()
        #expect(try await world.sendSigned("GET", "/publish/pub-c-demo/sub-c-demo/0/room-1/0/%22hi%22?uuid=admin").status == 200)
        #expect(try await world.sendSigned("PATCH", "/v2/objects/sub-c-demo/uuids/alice?uuid=admin", body: #"{"name":"Alice"}"#).status == 200)
        #expect(try await world.sendSigned("GET", "/v2/objects/sub-c-demo/uuids?uuid=admin").status == 200)
        #expect(try await world.sendSigned("GET", "/v3/history/sub-key/sub-c-demo/channel/room-1?uuid=admin").status == 200)
        #expect(await world.server.storedMessages(channel: "room-1").count == 1)
    }

    @Test("what needs nothing: /time, where-now, leave; and without a secret key everything is granted")
    func openEndpoints() async throws {
        let world = AccessWorld()
        #expect(try await world.send("GET", "/time/0").status == 200)
        #expect(try await world.send("GET", "/v2/presence/sub-key/sub-c-demo/uuid/alice?uuid=alice").status == 200)
        #expect(try await world.send("GET", "/v2/presence/sub-key/sub-c-demo/channel/room-1/leave?uuid=alice").status == 200)
        #expect(try await world.send("GET", "/publish/pub-c-demo/sub-c-demo/0/room-1/0/1?uuid=alice").status == 403)

        let open = AccessWorld(secretKey: nil)
        #expect(await open.server.enforcesAccess == false)
        #expect(try await open.send("GET", "/publish/pub-c-demo/sub-c-demo/0/room-1/0/1?uuid=alice").status == 200)
        #expect(try await open.send("GET", "/publish/pub-c-demo/sub-c-demo/0/room-1/0/1?uuid=alice&auth=anything").status == 200)
        await #expect(throws: AccessGrantError.accessManagerOff) { try await open.server.grantToken(grants: AccessGrants()) }
        #expect(try await open.send("POST", "/v3/pam/sub-c-demo/grant?uuid=x", body: Self.grantBody).status == 404)

        // Turned on later, it enforces from then on; off again, it forgets.
        await open.server.configureAccess(secretKey: "k")
        #expect(try await open.send("GET", "/publish/pub-c-demo/sub-c-demo/0/room-1/0/1?uuid=alice").status == 403)
        await open.server.configureAccess(secretKey: nil)
        #expect(try await open.send("GET", "/publish/pub-c-demo/sub-c-demo/0/room-1/0/1?uuid=alice").status == 200)
    }

    @Test("patterns grant every name they match in full; categories grant the listings")
    func patternsAndCategories() async throws {
        let world = AccessWorld()
        let token = try await world.token(AccessGrants(patterns: [.channel: ["^thread-.*$": .write]], categories: [.uuid: .get]))
        #expect(try await world.send("GET", "/publish/pub-c-demo/sub-c-demo/0/thread-7/0/1", token: token).status == 200)
        #expect(try await world.send("GET", "/publish/pub-c-demo/sub-c-demo/0/a-thread-7/0/1", token: token).status == 403)
        #expect(try await world.send("GET", "/v2/objects/sub-c-demo/uuids", token: token).status == 200)
        let channels = try await world.send("GET", "/v2/objects/sub-c-demo/channels", token: token)
        #expect(AccessWorld.text(channels) == AccessBodies.objects)
    }
}
