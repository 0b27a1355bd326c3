import Foundation
import Testing
import PubNubWire
import ReplicaModel

@Suite("Each request needs the permission PubNub's table names, and grants decide it")
struct AccessNeedTests {
    static let configuration = try! PubNubConfiguration(publishKey: "pub", subscribeKey: "sub", userId: "alice")
    static let client = PubNubClient(configuration: configuration, transport: NoTransport())

    struct NoTransport: Transport {
        func send(_ request: WireRequest, to origin: Origin) async throws(TransportFailure) -> WireResponse {
            throw .notSent(reason: "no transport")
        }
    }

    static func need(_ method: HTTPMethod, _ path: String, body: String? = nil) -> AccessNeed {
        let request = WireRequest(
            method: method, pathSegments: path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init),
            body: body.map { Data($0.utf8) }, operation: "x")
        return AccessNeed.of(request)
    }

    @Test("the table", arguments: [
        (HTTPMethod.get, "/publish/pub/sub/0/room/0/%22hi%22", "write on channel \"room\""),
        (.post, "/publish/pub/sub/0/room/0", "write on channel \"room\""),
        (.get, "/signal/pub/sub/0/room/0/1", "write on channel \"room\""),
        (.get, "/v2/subscribe/sub/a,b-pnpres/0", "read on channel \"a\"|read on channel \"b-pnpres\""),
        (.get, "/v2/presence/sub-key/sub/channel/a/heartbeat", "read on channel \"a\""),
        (.get, "/v2/presence/sub-key/sub/channel/a", "read on channel \"a\""),
        (.get, "/v3/history/sub-key/sub/channel/a,b", "read on channel \"a\"|read on channel \"b\""),
        (.get, "/v3/history/sub-key/sub/message-counts/a", "read on channel \"a\""),
        (.delete, "/v3/history/sub-key/sub/channel/a", "delete on channel \"a\""),
        (.get, "/v3/history-with-actions/sub-key/sub/channel/a", "read on channel \"a\""),
        (.get, "/v1/message-actions/sub/channel/a", "read on channel \"a\""),
        (.post, "/v1/message-actions/sub/channel/a/message/1", "write on channel \"a\""),
        (.delete, "/v1/message-actions/sub/channel/a/message/1/action/2", "delete on channel \"a\""),
        (.post, "/v1/files/sub/channels/a/generate-upload-url", "write on channel \"a\""),
        (.get, "/v1/files/sub/channels/a/files", "read on channel \"a\""),
        (.get, "/v1/files/sub/channels/a/files/id/n.txt", "read on channel \"a\""),
        (.delete, "/v1/files/sub/channels/a/files/id/n.txt", "delete on channel \"a\""),
        (.get, "/v1/files/publish-file/pub/sub/0/a/0/m", "write on channel \"a\""),
        (.get, "/v2/objects/sub/uuids", "get on every user"),
        (.get, "/v2/objects/sub/uuids/u", "get on user \"u\""),
        (.patch, "/v2/objects/sub/uuids/u", "update on user \"u\""),
        (.delete, "/v2/objects/sub/uuids/u", "delete on user \"u\""),
        (.get, "/v2/objects/sub/channels", "get on every channel"),
        (.patch, "/v2/objects/sub/channels/c", "update on channel \"c\""),
        (.get, "/v2/objects/sub/channels/c/uuids", "get on channel \"c\""),
        (.patch, "/v2/objects/sub/channels/c/uuids", "manage on channel \"c\""),
        (.get, "/v2/objects/sub/uuids/u/channels", "get on user \"u\""),
    ])
    func table(_ method: HTTPMethod, _ path: String, _ expected: String) {
        guard case .all(let requirements) = Self.need(method, path) else {
            Issue.record("not a plain requirement")
            return
        }
        #expect(requirements.map(\.description).joined(separator: "|") == expected)
    }

    @Test("time, leave and where-now need nothing; token endpoints need the secret key")
    func nothingAndSecret() {
        #expect(Self.need(.get, "/time/0") == .nothing)
        #expect(Self.need(.get, "/v2/presence/sub-key/sub/channel/a/leave") == .nothing)
        #expect(Self.need(.get, "/v2/presence/sub-key/sub/uuid/u") == .nothing)
        #expect(Self.need(.post, "/v3/pam/sub/grant") == .secretKey)
        #expect(Self.need(.get, "/nonsense") == .secretKey)
    }

    @Test("memberships: join on the user, or update on the user and join on each channel of the body")
    func memberships() {
        let need = Self.need(
            .patch, "/v2/objects/sub/uuids/u/channels",
            body: #"{"set":[{"channel":{"id":"a"}}],"delete":[{"channel":{"id":"b"}}]}"#)
        var grants = AccessGrants(resources: [.uuid: ["u": .update], .channel: ["a": .join]])
        #expect(need.missing(in: grants).map(\.description) == ["join on user \"u\""])
        grants.resources[.channel]?["b"] = .join
        #expect(need.missing(in: grants).isEmpty)
        #expect(need.missing(in: AccessGrants(resources: [.uuid: ["u": .join]])).isEmpty)
    }

    @Test("the client's real requests carry the table's needs (publish, history, objects)")
    func clientRequests() throws {
        let publish = try Self.client.publishRequest(PublishRequest(channel: "room/1", message: .string("hi")))
        #expect(AccessNeed.of(publish) == .all([AccessRequirement(.channel, "room/1", .write)]))
        #expect(AccessNeed.of(publish).channels == ["room/1"])
    }

    @Test("patterns match whole names only; invalid and overlong patterns grant nothing; categories for listings")
    func patterns() {
        let grants = AccessGrants(
            patterns: [.channel: ["^team-[0-9]+$": .read, "(": .write, String(repeating: "a", count: 300): .write]],
            categories: [.uuid: .get])
        #expect(grants.permissions(.channel, name: "team-12") == .read)
        #expect(grants.permissions(.channel, name: "team-12x") == [])
        #expect(grants.permissions(.channel, name: String(repeating: "a", count: 300)) == [])
        #expect(grants.allows(AccessRequirement(.uuid, nil, .get)))
        #expect(!grants.allows(AccessRequirement(.channel, nil, .get)))
    }

    @Test("the shapes evaluated: anchored prefixes, classes, a few quantifiers; not evaluated: a repeated group holding a quantifier or an alternation, backreferences, more than three unbounded quantifiers")
    func patternShapes() {
        for pattern in ["^thread-.*$", "^team-[0-9]+$", "^(dm|group)\\.[a-z]{2,8}-.*$", "^room-(?:1|2)$", "^a{3}$", "^[^)]+$",
                        "^x(ab)?y$", "^.*-.*-.*$", "^\\p{L}+$", "^(?i)room-[a-z]+$", "^(?<kind>dm|group)\\..*$", "^(?:ab)+$"] {
            #expect(AccessGrants.isEvaluable(pattern: pattern), "\(pattern)")
        }
        for pattern in ["(a+)+$", "(a|aa)+$", "(\\w+\\s?)+$", "^(a*)*$", "^(a{1,5}){2,}$", "^(.)\\1$", "^.*.*.*.*$", "^((ab)+c)+$",
                        "^(a?a?)+$", "^(a?){40}a{40}$", "^" + String(repeating: ".{0,99}", count: 8) + "!$",
                        "^(?:a+\\Q)\\E?\\Q(\\E?)+$", "^(?:a+(?#())+$", "^(?x)(?:a+#)(\n)+$", "^\\c(a+\\c)+$",
                        "^[[:alpha:]]+$", "^[a-z", "^(a", String(repeating: "a", count: 300)] {
            #expect(!AccessGrants.isEvaluable(pattern: pattern), "\(pattern)")
        }
        let grants = AccessGrants(resources: [.channel: ["x": .read]], patterns: [.channel: ["(a+)+$": .write, "^b.*$": .write]])
        let forty = String(repeating: "a", count: 39) + "!"
        #expect(grants.verdict(AccessRequirement(.channel, forty, .write)) == .undecided)
        #expect(grants.verdict(AccessRequirement(.channel, forty, .read)) == .notGranted)
        #expect(grants.verdict(AccessRequirement(.channel, "bee", .write)) == .granted)
        #expect(grants.verdict(AccessRequirement(.channel, "x", .read)) == .granted)
        #expect(!grants.allows(AccessRequirement(.channel, forty, .write)))
    }

    @Test("the global here-now needs the secret key; a channel group's registration names the group; an unreadable or gzipped memberships body")
    func reviewCases() throws {
        #expect(Self.need(.get, "/v2/presence/sub-key/sub") == .secretKey)
        #expect(Self.need(.get, "/v1/channel-registration/sub-key/sub/channel-group/team") == .all([AccessRequirement(.group, "team", .manage)]))
        // Unreadable: only join on the user can allow it (no channel list to check).
        #expect(Self.need(.patch, "/v2/objects/sub/uuids/u/channels", body: "{not json") == .all([AccessRequirement(.uuid, "u", .join)]))
        #expect(Self.need(.patch, "/v2/objects/sub/uuids/u/channels", body: #"{"set":[{"nochannel":1}]}"#) == .all([AccessRequirement(.uuid, "u", .join)]))
        let body = try Gzip.compress(Data(#"{"set":[{"channel":{"id":"a"}}]}"#.utf8))
        let gzipped = WireRequest(
            method: .patch, pathSegments: ["v2", "objects", "sub", "uuids", "u", "channels"],
            headers: ["Content-Encoding": "gzip"], body: body, operation: "x")
        #expect(AccessNeed.of(gzipped) == .anyOf([
            [AccessRequirement(.uuid, "u", .join)], [AccessRequirement(.uuid, "u", .update), AccessRequirement(.channel, "a", .join)],
        ]))
        #expect(QuerySecrets.redacted("DELETE /v3/pam/sub/grant/qEF2AkF0%3D%3D?uuid=s&signature=v2.x")
            == "DELETE /v3/pam/sub/grant/REDACTED?uuid=s&signature=REDACTED")
    }
}

