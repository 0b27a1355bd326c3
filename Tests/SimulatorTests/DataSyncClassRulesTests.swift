import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import Testing

/// What the simulator's DataSync enforces from a class definition (the protocol reference, §1,
/// §4, §5, §10, §16): declared properties' kinds and nullability on every write, a relationship's
/// ends and cardinality, a class-version upgrade by PATCH, what a list may filter and sort on,
/// numbers compared as numbers, and each write's `updatedAt` later than every earlier one.
@Suite("The simulator's DataSync: a class's rules")
struct DataSyncClassRulesTests {
    struct World {
        let clock = VirtualClock(start: Date(timeIntervalSince1970: 1_788_766_495))
        let server: PubNubServer

        init() async {
            server = PubNubServer(subscribeKey: "sub", clock: clock, secretKey: "sec")
            func property(_ name: String, _ kind: DataSyncValueKind, _ filtering: DataSyncProperty.Filtering = .none, nullable: Bool = true)
                -> DataSyncProperty
            {
                DataSyncProperty(name: name, pointer: JSONPointer(["payload", name]), valueKind: kind, filtering: filtering, isNullable: nullable)
            }
            let v1 = [
                property("question", .string, .full, nullable: false), property("votes", .number, .simple),
                property("closed", .boolean, .simple), property("day", .date), property("closesAt", .datetime),
            ]
            await server.defineDataSyncClass(DataSyncClass(name: "Poll", properties: v1))
            await server.defineDataSyncClass(DataSyncClass(name: "Poll", version: 2, properties: v1 + [property("kind", .string, nullable: false)]))
            await server.defineDataSyncClass(DataSyncClass(name: "Vote", kind: .relationship, cardinality: .oneToOne, ends: ("Poll", "User")))
        }

        /// Sends `method` on `path` (after `subkeys/sub/`) as the secret key's holder.
        func send(_ method: HTTPMethod, _ path: String, _ body: JSONValue? = nil, ifMatch: String? = nil) async throws -> (Int, JSONValue?) {
            var headers: [String: String] = [:]
            if body != nil { headers["Content-Type"] = method == .patch ? "application/json-patch+json" : "application/json" }
            if let ifMatch { headers["If-Match"] = ifMatch }
            let request = WireRequest(
                method: method, pathSegments: ["v1", "datasync", "subkeys", "sub"] + path.split(separator: "/").map(String.init),
                headers: headers, body: try body?.jsonData(), operation: "test")
            let answer = await server.dataSyncAsAdmin(request)
            return (answer.status, try? JSONValue(jsonData: answer.body))
        }

        func poll(_ id: String, _ payload: JSONValue, version: Int64 = 1) async throws -> (Int, JSONValue?) {
            try await send(.post, "entities", ["data": ["id": .string(id), "entityClass": "Poll", "entityClassVersion": .int(version), "payload": payload]])
        }

        /// A list of entities with `query` (`name=value&…`, values as they are, not encoded): its
        /// status, the ids of its page, and its next cursor.
        func page(_ query: String) async -> (status: Int, ids: [String], next: String?) {
            var request = WireRequest(method: .get, pathSegments: ["v1", "datasync", "subkeys", "sub", "entities"], operation: "list")
            request.query = query.split(separator: "&").map { item in
                let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
                return QueryItem(parts[0], parts.count > 1 ? parts[1] : "")
            }
            let answer = await server.dataSyncAsAdmin(request)
            let body = (try? JSONValue(jsonData: answer.body))?.objectValue
            let ids = body?["data"]?.arrayValue?.compactMap { $0.objectValue?["id"]?.stringValue } ?? []
            return (answer.status, ids, body?["meta"]?.objectValue?["next_cursor"]?.stringValue)
        }

        func list(_ query: String) async -> (Int, [String]) {
            let page = await page(query)
            return (page.status, page.ids)
        }
    }

    static func error(_ body: JSONValue?) -> (code: String?, path: String?) {
        let item = body?.objectValue?["errors"]?.arrayValue?.first?.objectValue
        return (item?["errorCode"]?.stringValue, item?["path"]?.stringValue)
    }

    @Test("declared properties: a value of another kind 400 DS-0008, a required one missing 400 DS-0650, each naming its pointer; the record unchanged")
    func propertyKinds() async throws {
        let world = await World()
        for (payload, code, path) in [
            (["question": "Lunch?", "votes": "3"], "DS-0008", "/payload/votes"),
            (["question": "Lunch?", "closed": 1], "DS-0008", "/payload/closed"),
            (["question": "Lunch?", "day": "2026-02-30"], "DS-0008", "/payload/day"),
            (["question": "Lunch?", "closesAt": "tomorrow"], "DS-0008", "/payload/closesAt"),
            (["question": 7], "DS-0008", "/payload/question"),
            (["votes": 1], "DS-0650", "/payload/question"),
            (["question": nil], "DS-0650", "/payload/question"),
        ] as [(JSONValue, String, String)] {
            let (status, body) = try await world.poll("p", payload)
            #expect(status == 400 && Self.error(body).code == code && Self.error(body).path == path, "\(payload): \(status) \(String(describing: body))")
        }
        let (created, body) = try await world.poll("p", [
            "question": "Lunch?", "votes": 2.5, "closed": false, "day": "2028-02-29", "closesAt": "2026-09-08T12:00:00.5Z", "extra": ["any": "thing"],
        ])
        #expect(created == 201, "\(String(describing: body))")
        let eTag = try #require(body?.objectValue?["data"]?.objectValue?["eTag"]?.stringValue)

        let (replaced, replaceBody) = try await world.send(.put, "entities/p", ["data": ["entityClassVersion": 1, "payload": ["question": "Tea?", "votes": "many"]]])
        #expect(replaced == 400 && Self.error(replaceBody).path == "/payload/votes")
        let (patched, patchBody) = try await world.send(.patch, "entities/p", [["op": "remove", "path": "/payload/question"]], ifMatch: eTag)
        #expect(patched == 400 && Self.error(patchBody).code == "DS-0650")
        let stored = try #require(await world.server.dataSyncRecord(.entities, id: "p")?.objectValue)
        #expect(stored["eTag"]?.stringValue == eTag && stored["payload"]?.objectValue?["question"] == "Lunch?", "nothing refused was applied")
    }

    @Test("a relationship's ends: of the classes its class declares (400 naming the end), existing (404); one-to-one: a second link on either side 409 DS-0801")
    func endsAndCardinality() async throws {
        let world = await World()
        for id in ["poll-1", "poll-2"] { #expect(try await world.poll(id, ["question": "?"]).0 == 201) }
        for id in ["alice", "bob"] {
            #expect(try await world.send(.post, "users", ["data": ["id": .string(id), "entityClassVersion": 1]]).0 == 201)
        }
        func vote(_ id: String, _ a: String, _ b: String) async throws -> (Int, JSONValue?) {
            try await world.send(.post, "relationships", ["data": [
                "id": .string(id), "entityAId": .string(a), "entityBId": .string(b), "relationshipClass": "Vote", "relationshipClassVersion": 1,
            ]])
        }
        #expect(try await vote("v1", "poll-1", "alice").0 == 201)
        let second = try await vote("v2", "poll-1", "bob")
        #expect(second.0 == 409 && Self.error(second.1).code == "DS-0801", "poll-1 already has its one vote")
        let again = try await vote("v3", "poll-2", "alice")
        #expect(again.0 == 409 && Self.error(again.1).code == "DS-0801", "alice already voted once")
        let swapped = try await vote("v4", "bob", "poll-2")
        #expect(swapped.0 == 400 && Self.error(swapped.1).path == "entityAId", "end A must be a Poll")
        let missing = try await vote("v5", "poll-2", "carol")
        #expect(missing.0 == 404 && Self.error(missing.1).code == "DS-0100")
        #expect(try await vote("v6", "poll-2", "bob").0 == 201)
    }

    @Test("a PATCH of /entityClassVersion upgrades to a defined version, validated against it, the expiry kept; an undefined version 404")
    func versionUpgrade() async throws {
        let world = await World()
        let (_, body) = try await world.poll("p", ["question": "?"])
        let created = try #require(body?.objectValue?["data"]?.objectValue)
        let eTag = try #require(created["eTag"]?.stringValue)
        world.clock.advance(by: .seconds(3 * 86_400))
        let toV2: JSONValue = [["op": "replace", "path": "/entityClassVersion", "value": 2]]
        let incomplete = try await world.send(.patch, "entities/p", toV2, ifMatch: eTag)
        #expect(incomplete.0 == 400 && Self.error(incomplete.1).path == "/payload/kind", "v2 requires kind")
        let upgrade: JSONValue = [["op": "replace", "path": "/entityClassVersion", "value": 2], ["op": "add", "path": "/payload/kind", "value": "single"]]
        let (status, answer) = try await world.send(.patch, "entities/p", upgrade, ifMatch: eTag)
        let upgraded = try #require(answer?.objectValue?["data"]?.objectValue, "\(status)")
        #expect(status == 200 && upgraded["entityClassVersion"] == 2 && upgraded["expiresAt"] == created["expiresAt"])
        let (v1Status, v1) = await world.list("entity_class=Poll&entity_class_version=1")
        let (v2Status, v2) = await world.list("entity_class=Poll&entity_class_version=2")
        #expect(v1Status == 200 && v1.isEmpty && v2Status == 200 && v2 == ["p"])
        let undefined = try await world.send(.patch, "entities/p", [["op": "replace", "path": "/entityClassVersion", "value": 3]])
        #expect(undefined.0 == 404 && Self.error(undefined.1).code == "DS-0100")
    }

    @Test("lists: filter_fast and sort take simple or full properties, filter only full ones (else 400 DS-0005); numbers compare and sort as numbers, across pages")
    func filteringAndNumbers() async throws {
        let world = await World()
        for (id, votes) in [("a", 9), ("b", 10), ("c", 100), ("d", -1)] {
            #expect(try await world.poll(id, ["question": .string("q\(id)"), "votes": .int(Int64(votes)), "closed": .bool(votes > 9)]).0 == 201)
        }
        #expect(await world.list("entity_class=Poll&filter_fast=votes > 9") == (200, ["b", "c"]))
        #expect(await world.list("entity_class=Poll&filter_fast=closed == true&sort=votes:desc") == (200, ["c", "b"]))
        #expect(await world.list("entity_class=Poll&filter=question == 'qa'") == (200, ["a"]))
        #expect(await world.list("entity_class=Poll&filter=votes > 9").0 == 400, "votes is simple: filter_fast only")
        #expect(await world.list("entity_class=Poll&sort=closesAt").0 == 400, "closesAt is not filterable")
        #expect(await world.list("entity_class=Poll&sort=day").0 == 400)
        #expect(await world.list("entity_class=Poll&sort=votes") == (200, ["d", "a", "b", "c"]))
        // One row a page: the cursor keeps the numeric order.
        var seen: [String] = []
        var query = "entity_class=Poll&sort=votes:desc&limit=1"
        for _ in 0..<5 {
            let page = await world.page(query)
            seen += page.ids
            guard let next = page.next else { break }
            query = "entity_class=Poll&sort=votes:desc&limit=1&cursor=\(next)"
        }
        #expect(seen == ["c", "b", "a", "d"])
    }

    @Test("each write's updatedAt is later than every earlier write's, at one instant of the clock")
    func monotonicStamps() async throws {
        let world = await World()
        var stamps: [ISOTimestamp] = []
        for id in ["a", "b", "c"] {
            let (_, body) = try await world.poll(id, ["question": "?"])
            stamps.append(try ISOTimestamp(parsing: try #require(body?.objectValue?["data"]?.objectValue?["updatedAt"]?.stringValue)))
        }
        let (_, patched) = try await world.send(.patch, "entities/a", [["op": "add", "path": "/payload/votes", "value": 1]])
        stamps.append(try ISOTimestamp(parsing: try #require(patched?.objectValue?["data"]?.objectValue?["updatedAt"]?.stringValue)))
        #expect(zip(stamps, stamps.dropFirst()).allSatisfy { $0 < $1 }, "\(stamps)")
        #expect(stamps.last!.nanoseconds - stamps.first!.nanoseconds == 3_000, "a microsecond apart, the clock not moved")
    }
}
