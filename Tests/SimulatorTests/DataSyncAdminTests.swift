import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import Testing

/// The simulator's Admin API for DataSync classes (the protocol reference, §16): a class defined
/// as a team's script defines one, its answers, every refusal naming its field, and the data plane
/// taking records of the class afterwards.
@Suite("The simulator's DataSync Admin API")
struct DataSyncAdminTests {
    static let poll: JSONValue = [
        "description": "A poll in a chat",
        "config": ["ttlSec": 86_400],
        "properties": [
            ["name": "question", "path": "/payload/question", "valueKind": "string", "filtering": "full", "isNullable": false],
            ["name": "closed", "path": "/payload/closed", "valueKind": "boolean", "filtering": "simple"],
            ["name": "closesAt", "path": "/payload/closesAt", "valueKind": "datetime", "projections": [["name": "admin"]]],
        ],
    ]

    static func request(
        _ method: HTTPMethod, _ kind: String = "entity", _ name: String = "Poll", version: String = "1",
        body: JSONValue? = nil, key: String? = "sec", contentType: String? = nil, subscribeKey: String = "sub"
    ) throws -> WireRequest {
        var headers = ["PubNub-Version": "2026-09-17"]
        if let key { headers["Authorization"] = key }
        if body != nil { headers["Content-Type"] = contentType ?? "application/vnd.pubnub.objects.\(kind)-class+json;version=1" }
        return WireRequest(
            method: method, pathSegments: ["v2", "datasync", "subkeys", subscribeKey, "\(kind)-classes", name, "versions", version],
            headers: headers, body: try body.map { try JSONValue.object(["data": $0]).jsonData() }, operation: "defineClass")
    }

    static func json(_ response: WireResponse) -> JSONValue? { try? JSONValue(jsonData: response.body) }

    /// The first error's code and path.
    static func error(_ response: WireResponse) -> (code: String?, path: String?) {
        let item = json(response)?.objectValue?["errors"]?.arrayValue?.first?.objectValue
        return (item?["errorCode"]?.stringValue, item?["path"]?.stringValue)
    }

    static func server(secretKey: String? = "sec") -> PubNubServer {
        PubNubServer(subscribeKey: "sub", clock: VirtualClock(start: Date(timeIntervalSince1970: 1_788_766_495)), secretKey: secretKey)
    }

    @Test("an entity class: 201 with the definition, GET the same, 409 for the version again, records of it created, DELETE refused while they exist")
    func entityClass() async throws {
        let server = Self.server()
        let created = await server.respond(try Self.request(.post, body: Self.poll))
        #expect(created.status == 201 && created.header("content-type") == "application/vnd.pubnub.objects.entity-class+json")
        let data = try #require(Self.json(created)?.objectValue?["data"]?.objectValue)
        #expect(data["name"] == "Poll" && data["version"] == 1 && data["level"] == "SubKey" && data["description"] == "A poll in a chat")
        #expect(data["config"] == ["ttlSec": 86_400])
        let properties = try #require(data["properties"]?.arrayValue)
        #expect(properties.count == 3)
        #expect(properties[0] == [
            "name": "question", "path": "/payload/question", "valueKind": "string", "filtering": "full", "isNullable": false,
            "projections": [["name": "__default__"]],
        ])
        #expect(properties[1].objectValue?["isNullable"] == true && properties[1].objectValue?["filtering"] == "simple")
        #expect(properties[2].objectValue?["filtering"] == "none" && properties[2].objectValue?["projections"] == [["name": "admin"]])

        let read = await server.respond(try Self.request(.get))
        #expect(read.status == 200 && Self.json(read) == Self.json(created))
        let again = await server.respond(try Self.request(.post, body: Self.poll))
        #expect(again.status == 409)
        #expect(await server.respond(try Self.request(.get, version: "2")).status == 404)

        // The data plane takes the class; its TTL is the definition's (a day, to the next midnight).
        let record = await server.dataSyncAsAdmin(WireRequest(
            method: .post, pathSegments: ["v1", "datasync", "subkeys", "sub", "entities"],
            headers: ["Content-Type": "application/vnd.pubnub.objects.entity+json;version=1"],
            body: try JSONValue.object(["data": ["id": "poll-1", "entityClass": "Poll", "entityClassVersion": 1, "payload": ["question": "Lunch?"]]]).jsonData(),
            operation: "create"))
        #expect(record.status == 201, "\(String(decoding: record.body, as: UTF8.self))")
        let stored = try #require(await server.dataSyncRecord(.entities, id: "poll-1")?.objectValue)
        #expect(stored["entityClass"] == "Poll" && stored["expiresAt"] == "2026-09-09T00:00:00Z")

        let busy = await server.respond(try Self.request(.delete))
        #expect(busy.status == 409)
        _ = await server.dataSyncAsAdmin(WireRequest(
            method: .delete, pathSegments: ["v1", "datasync", "subkeys", "sub", "entities", "poll-1"], operation: "delete"))
        let deleted = await server.respond(try Self.request(.delete))
        #expect(deleted.status == 200 && deleted.body.isEmpty)
        #expect(await server.respond(try Self.request(.get)).status == 404)
    }

    @Test("a relationship class: ends of defined entity classes or built-ins, its cardinality, Membership as the only base")
    func relationshipClass() async throws {
        let server = Self.server()
        #expect(await server.respond(try Self.request(.post, body: Self.poll)).status == 201)
        let vote: JSONValue = ["cardinality": "one-to-one", "entityAClass": "Poll", "entityBClass": "User"]
        let created = await server.respond(try Self.request(.post, "relationship", "Vote", body: vote))
        #expect(created.status == 201 && created.header("content-type") == "application/vnd.pubnub.objects.relationship-class+json")
        let data = try #require(Self.json(created)?.objectValue?["data"]?.objectValue)
        #expect(data["cardinality"] == "one-to-one" && data["entityAClass"] == "Poll" && data["entityBClass"] == "User")
        #expect(data["config"] == ["ttlSec": 2_678_400], "31 days when the definition gives none")

        let plain = await server.respond(try Self.request(.post, "relationship", "Tag", body: ["entityAClass": "Poll", "entityBClass": "Poll"]))
        #expect(Self.json(plain)?.objectValue?["data"]?.objectValue?["cardinality"] == "many-to-many")
        let membership = await server.respond(try Self.request(.post, "relationship", "ChatMembership", body: ["extends": ["name": "Membership", "version": 1]]))
        #expect(membership.status == 201)
        let member = try #require(Self.json(membership)?.objectValue?["data"]?.objectValue)
        #expect(member["extends"] == ["name": "Membership", "version": 1] && member["entityAClass"] == nil)
    }

    @Test("the Admin API key: the secret key by default, the configured one instead, 401 without it, 404 for another subscribe key")
    func adminKey() async throws {
        let server = Self.server()
        #expect(await server.adminKey == "sec")
        #expect(await server.respond(try Self.request(.post, body: Self.poll, key: nil)).status == 401)
        #expect(await server.respond(try Self.request(.post, body: Self.poll, key: "wrong")).status == 401)
        await server.configureAdminKey("admin")
        #expect(await server.respond(try Self.request(.post, body: Self.poll)).status == 401, "the secret key is no longer the admin key")
        #expect(await server.respond(try Self.request(.post, body: Self.poll, key: "admin", subscribeKey: "other")).status == 404)
        #expect(await server.respond(try Self.request(.post, body: Self.poll, key: "admin")).status == 201)
        let open = Self.server(secretKey: nil)
        #expect(await open.adminKey == nil)
        #expect(await open.respond(try Self.request(.get, key: "")).status == 401, "no key set: nothing is accepted")
    }

    @Test("each refusal: its status, code and the field it names")
    func refusals() async throws {
        let server = Self.server()
        #expect(await server.respond(try Self.request(.post, body: Self.poll)).status == 201)
        func property(_ fields: [String: JSONValue]) -> JSONValue {
            var base: [String: JSONValue] = ["name": "p", "path": "/payload/p", "valueKind": "string"]
            base.merge(fields) { $1 }
            return ["properties": [.object(base)]]
        }
        let cases: [(String, WireRequest, Int, String?, String?)] = [
            ("a bad valueKind", try Self.request(.post, "entity", "A", body: property(["valueKind": "text"])), 400, "DS-0004", "properties/0/valueKind"),
            ("a bad filtering", try Self.request(.post, "entity", "A", body: property(["filtering": "fast"])), 400, "DS-0004", "properties/0/filtering"),
            ("a path outside the payload", try Self.request(.post, "entity", "A", body: property(["path": "/status"])), 400, "DS-0004", "properties/0/path"),
            ("a path that is no pointer", try Self.request(.post, "entity", "A", body: property(["path": "payload.p"])), 400, "DS-0004", "properties/0/path"),
            ("a nullable flag as text", try Self.request(.post, "entity", "A", body: property(["isNullable": "no"])), 400, "DS-0004", "properties/0/isNullable"),
            ("a bad projection name", try Self.request(.post, "entity", "A", body: property(["projections": [["name": "-x"]]])), 400, "DS-0004", "properties/0/projections"),
            ("two properties of one name", try Self.request(.post, "entity", "A", body: ["properties": [
                ["name": "p", "path": "/payload/p", "valueKind": "string"], ["name": "p", "path": "/payload/q", "valueKind": "number"],
            ]]), 400, "DS-0004", "properties/1"),
            ("four projections", try Self.request(.post, "entity", "A", body: ["properties": [
                ["name": "p", "path": "/payload/p", "valueKind": "string", "projections": [["name": "a"], ["name": "b"]]],
                ["name": "q", "path": "/payload/q", "valueKind": "string", "projections": [["name": "c"]]],
            ]]), 400, "DS-0004", "properties/1/projections"),
            ("a time to live past ten years", try Self.request(.post, "entity", "A", body: ["config": ["ttlSec": 315_569_261]]), 400, "DS-0004", "config/ttlSec"),
            ("a name from a digit", try Self.request(.post, "entity", "2A", body: [:]), 400, "DS-0004", "name"),
            ("version 0", try Self.request(.post, "entity", "A", version: "0", body: [:]), 400, "DS-0004", "version"),
            ("an entity class with a cardinality", try Self.request(.post, "entity", "A", body: ["cardinality": "one-to-one"]), 400, "DS-0004", "cardinality"),
            ("a bad cardinality", try Self.request(.post, "relationship", "R", body: ["cardinality": "one-to-many", "entityAClass": "Poll", "entityBClass": "User"]), 400, "DS-0004", "cardinality"),
            ("a relationship without end A", try Self.request(.post, "relationship", "R", body: ["entityBClass": "User"]), 400, "SYN-0004", "entityAClass"),
            ("an end class nobody defined", try Self.request(.post, "relationship", "R", body: ["entityAClass": "Poll", "entityBClass": "Ballot"]), 404, "DS-0100", "entityBClass"),
            ("extending a class that is no built-in base", try Self.request(.post, "entity", "A", body: ["extends": ["name": "Poll", "version": 1]]), 400, "DS-0006", "extends/name"),
            ("extending User v2", try Self.request(.post, "entity", "A", body: ["extends": ["name": "User", "version": 2]]), 404, "DS-0100", "extends/version"),
            ("a body without data", WireRequest(
                method: .post, pathSegments: ["v2", "datasync", "subkeys", "sub", "entity-classes", "A", "versions", "1"],
                headers: ["Authorization": "sec", "Content-Type": "application/json"], body: Data("[1]".utf8), operation: "defineClass"), 400, "SYN-0001", nil),
            ("a form body", try Self.request(.post, "entity", "A", body: [:], contentType: "application/x-www-form-urlencoded"), 415, nil, nil),
            ("another kind of class", WireRequest(
                method: .post, pathSegments: ["v2", "datasync", "subkeys", "sub", "view-classes", "A", "versions", "1"],
                headers: ["Authorization": "sec"], operation: "defineClass"), 404, nil, nil),
            ("a PUT", try Self.request(.put, body: Self.poll), 405, nil, nil),
        ]
        for (what, request, status, code, path) in cases {
            let answer = await server.respond(request)
            let error = Self.error(answer)
            #expect(answer.status == status && error.code == code && error.path == path,
                    "\(what): \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
        }
        #expect(await server.respond(try Self.request(.get, "entity", "A")).status == 404, "nothing refused was defined")
        #expect(await server.respond(try Self.request(.get, "relationship", "R")).status == 404)
    }

    @Test("a fuzzed definition never crashes the server and is either defined whole or refused with an error naming why")
    func fuzzedDefinitions() async throws {
        var random = SplitMix64(seed: 54)
        let server = Self.server()
        let values: [JSONValue] = [
            .null, true, 0, -1, 1.5, "", "x", "string", "full", "/payload/x", "/payload/", "one-to-one", [], [:],
            ["name": "User", "version": 1], [["name": "admin"]], ["ttlSec": 60],
        ]
        let fields = ["description", "extends", "config", "properties", "cardinality", "entityAClass", "entityBClass", "name", "valueKind",
                      "path", "filtering", "isNullable", "projections"]
        func value(_ depth: Int) -> JSONValue {
            if depth == 0 || (depth < 2 && random.next() % 3 == 0) {
                var object: [String: JSONValue] = [:]
                for _ in 0..<(random.next() % 4) { object[fields[Int(random.next() % UInt64(fields.count))]] = value(depth + 1) }
                return depth == 0 || random.next() % 2 == 0 ? .object(object) : .array([.object(object)])
            }
            return values[Int(random.next() % UInt64(values.count))]
        }
        var defined = 0
        for round in 0..<300 {
            let kind = random.next() % 2 == 0 ? "entity" : "relationship"
            let answer = await server.respond(try Self.request(.post, kind, "C\(round)", body: value(0)))
            switch answer.status {
            case 201:
                defined += 1
                #expect(await server.respond(try Self.request(.get, kind, "C\(round)")).status == 200)
            case 400, 404:
                #expect(Self.error(answer).code != nil, "a refusal names its code: \(String(decoding: answer.body, as: UTF8.self))")
                #expect(await server.respond(try Self.request(.get, kind, "C\(round)")).status == 404, "a refused class is not half defined")
            default:
                Issue.record("round \(round): \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
            }
        }
        #expect(defined > 10 && defined < 290, "the fuzz reaches both outcomes: \(defined) defined")
    }
}
