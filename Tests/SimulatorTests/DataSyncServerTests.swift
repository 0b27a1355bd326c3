import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import Testing

/// The simulator's DataSync through this package's wire client (`client.dataSync`): credentials,
/// create-only writes, JSON Patch, If-Match, delete and its cascade, cursors, filters, sorting,
/// lists filtered by the token, TTL on the server's clock, and `e: 5` events.
@Suite("The simulator's DataSync")
struct DataSyncServerTests {
    /// A server with Access Manager on virtual time, and clients holding tokens.
    struct World {
        /// 2026-09-07T07:34:55Z, the creation time of the recording `datasync_users-02`.
        let clock = VirtualClock(start: Date(timeIntervalSince1970: 1_788_766_495))
        let server: PubNubServer

        init(secretKey: String? = "sec") {
            server = PubNubServer(subscribeKey: "sub", clock: clock, secretKey: secretKey)
        }

        /// Everything on every DataSync resource and channel, for `user`.
        static let everything = AccessGrants(patterns: [
            .user: ["^.*$": AccessPermissions(rawValue: 255)], .channel: ["^.*$": AccessPermissions(rawValue: 255)],
            .dataSyncMembership: ["^.*$": AccessPermissions(rawValue: 255)], .dataSyncEntity: ["^.*$": AccessPermissions(rawValue: 255)],
        ])

        func client(_ user: String = "alice", grants: AccessGrants? = World.everything, token: String? = nil) async throws -> PubNubClient {
            var auth = token
            if auth == nil, let grants { auth = try await server.grantToken(grants: grants, authorizedUserId: user) }
            return try PubNubClient.simulated(
                InProcessTransport(server: server), userId: user, subscribeKey: "sub", authToken: auth, clock: clock)
        }
    }

    static func failure(_ body: () async throws -> Void) async -> ServiceError? {
        do {
            try await body()
        } catch let error as WireError {
            if case .service(let service) = error { return service }
            if case .accessDenied(let denial) = error, case .refused(let service) = denial.reason { return service }
        } catch {}
        return nil
    }

    @Test("credentials as PubNub checks them: no Access Manager, none, both, a token that does not grant")
    func credentials() async throws {
        let off = World(secretKey: nil)
        let refused = await Self.failure { _ = try await off.client(grants: nil).dataSync.list(.users) }
        #expect(refused?.status == 403 && refused?.codes == ["DS-0201"] && refused?.reason == .notConfigured)
        let world = World()
        let none = await Self.failure { _ = try await world.client(grants: nil).dataSync.list(.users) }
        #expect(none?.status == 401 && none?.codes == ["DS-0203"])
        let narrow = try await world.client(grants: AccessGrants(resources: [.user: ["alice": .get]]))
        // The client's own check refuses before sending; the server's answer is Access Manager's body.
        await #expect {
            _ = try await narrow.dataSync.create(.users, DataSyncObject(id: "bob"))
        } throws: { error in
            guard case WireError.accessDenied(let denial) = error, case .notGranted(let missing) = denial.reason else { return false }
            return missing == [AccessRequirement(.user, "bob", .create)]
        }
        let denied = await world.server.respond(try narrow.dataSync.createRequest(.users, DataSyncObject(id: "bob")))
        #expect(denied.status == 403 && denied.header("content-type") == "text/javascript; charset=UTF-8")
        #expect(String(decoding: denied.body, as: UTF8.self) == #"{"error":true,"status":403,"service":"Access Manager","message":"Forbidden"}"#)
        var both = try narrow.dataSync.listRequest(.users)
        both.query.append(QueryItem("signature", "v2.x"))
        both.query.append(QueryItem("timestamp", "1"))
        let answer = await world.server.respond(both)
        #expect(answer.status == 403 && String(decoding: answer.body, as: UTF8.self).contains("DS-0201"))
    }

    @Test("create-only: 201 with system fields and the expiry at the next midnight, 409 on a duplicate id or pair, 404 on a missing end")
    func create() async throws {
        let world = World()
        let alice = try await world.client()
        let user = try await alice.dataSync.create(.users, DataSyncObject(id: "alice", status: "active", payload: ["name": "Alice"]))
        #expect(user.className == "User" && user.classLevel == "Global" && user.classVersion == 1 && user.eTag != nil)
        #expect(user.createdAt == user.updatedAt && user.payload == ["name": "Alice"])
        // Created at 2026-09-07T07:34:55Z + 30 days → 2026-10-08T00:00:00Z (the recording's).
        #expect(user.expiresAt?.description == "2026-10-08T00:00:00Z")
        let duplicate = await Self.failure { _ = try await alice.dataSync.create(.users, DataSyncObject(id: "alice")) }
        #expect(duplicate?.status == 409 && duplicate?.reason == .conflict)
        let orphan = await Self.failure {
            _ = try await alice.dataSync.create(.memberships, DataSyncObject(id: "m1", channelId: "general", userId: "alice"))
        }
        #expect(orphan?.status == 404 && orphan?.codes == ["DS-0100"] && orphan?.message == "Entity not found: general")
        _ = try await alice.dataSync.create(.channels, DataSyncObject(id: "general"))
        let membership = try await alice.dataSync.create(.memberships, DataSyncObject(id: "m1", channelId: "general", userId: "alice"))
        #expect(membership.className == "Membership" && membership.channelId == "general" && membership.userId == "alice")
        let pair = await Self.failure {
            _ = try await alice.dataSync.create(.memberships, DataSyncObject(id: "m2", channelId: "general", userId: "alice"))
        }
        #expect(pair?.status == 409)
        let notUser = await Self.failure { _ = try await alice.dataSync.create(.users, DataSyncObject(id: "x", className: "Channel")) }
        #expect(notUser?.codes == ["DS-0006"] && notUser?.reason == .notConfigured)
    }

    @Test("each code table answers with its own codes, and the client reads each the same way",
          arguments: [("reference", DataSyncCodes()), ("Kotlin stubs", .kotlinStubs), ("Dart stubs", .dartStubs)])
    func codeTables(name: String, codes: DataSyncCodes) async throws {
        let world = World()
        var choices = DataSyncChoices()
        choices.codes = codes
        await world.server.configureDataSync(choices)
        let alice = try await world.client()
        let created = try await alice.dataSync.create(.users, DataSyncObject(id: "alice", payload: ["x": .int(1)]))
        _ = try await alice.dataSync.patch(.users, id: "alice", [.add(JSONPointer(["payload", "y"]), .int(2))], ifMatch: created.eTag)
        let stale = await Self.failure {
            _ = try await alice.dataSync.patch(.users, id: "alice", [.remove(JSONPointer(["payload", "x"]))], ifMatch: created.eTag)
        }
        #expect(stale?.status == 412 && stale?.codes == (codes.stale.map { [$0] } ?? []) && stale?.reason == .preconditionFailed, "\(name)")
        let duplicate = await Self.failure { _ = try await alice.dataSync.create(.users, DataSyncObject(id: "alice")) }
        #expect(duplicate?.status == 409 && duplicate?.codes == (codes.duplicate.map { [$0] } ?? []), "\(name)")
        let missing = await Self.failure { _ = try await alice.dataSync.patch(.users, id: "nobody", [.remove(JSONPointer(["status"]))], ifMatch: nil) }
        #expect(missing?.status == 404 && missing?.codes == [codes.notFound] && missing?.reason == .notFound, "\(name)")
        var unfilterable = DataSyncListQuery()
        unfilterable.filterFast = #"email == "x""#
        let refused = await Self.failure { _ = try await alice.dataSync.list(.users, unfilterable) }
        #expect(refused?.status == 400 && refused?.codes == [codes.unfilterable] && refused?.reason == .badRequest, "\(name)")
    }

    @Test("JSON Patch: atomic with test (409 DS-0302), If-Match (412), missing members, immutable paths, PUT replaces all")
    func patch() async throws {
        let world = World()
        let alice = try await world.client()
        let created = try await alice.dataSync.create(.users, DataSyncObject(id: "alice", status: "active", payload: ["name": "Alice", "x": 1]))
        world.clock.advance(by: .seconds(1))
        let patched = try await alice.dataSync.patch(
            .users, id: "alice", [.test(JSONPointer(["payload", "name"]), "Alice"), .add(JSONPointer(["payload", "nick"]), "Ali"),
                                  .remove(JSONPointer(["status"]))], ifMatch: created.eTag)
        #expect(patched.payload == ["name": "Alice", "x": 1, "nick": "Ali"] && patched.status == nil)
        #expect(patched.eTag != created.eTag && patched.updatedAt! > created.updatedAt! && patched.expiresAt == created.expiresAt)
        let stale = await Self.failure { _ = try await alice.dataSync.patch(.users, id: "alice", [.remove(JSONPointer(["payload", "x"]))], ifMatch: created.eTag) }
        #expect(stale?.status == 412 && stale?.reason == .preconditionFailed)
        let failedTest = await Self.failure {
            _ = try await alice.dataSync.patch(.users, id: "alice", [.add(JSONPointer(["status"]), "away"), .test(JSONPointer(["payload", "name"]), "Bob")])
        }
        #expect(failedTest?.status == 409 && failedTest?.codes == ["DS-0302"] && failedTest?.reason == .preconditionFailed)
        let missing = await Self.failure { _ = try await alice.dataSync.patch(.users, id: "alice", [.replace(JSONPointer(["status"]), "away")]) }
        #expect(missing?.codes == ["SYN-0006"])
        let immutable = await Self.failure { _ = try await alice.dataSync.patch(.users, id: "alice", [.add(JSONPointer(["eTag"]), "x")]) }
        #expect(immutable?.codes == ["DS-0004"])
        #expect(try await alice.dataSync.get(.users, id: "alice") == patched, "nothing of the refused patches applied")
        let replaced = try await alice.dataSync.replace(.users, id: "alice", DataSyncObject(payload: ["name": "A"]))
        #expect(replaced.payload == ["name": "A"] && replaced.status == nil)
        let absent = await Self.failure { _ = try await alice.dataSync.patch(.users, id: "nobody", [.remove(JSONPointer(["status"]))]) }
        #expect(absent?.status == 404 && absent?.message == "Entity not found: nobody")
    }

    @Test("delete answers 200 with no body, takes a user's memberships with it; a stale If-Match is a 412")
    func delete() async throws {
        let world = World()
        let alice = try await world.client()
        let user = try await alice.dataSync.create(.users, DataSyncObject(id: "alice"))
        for channel in ["a", "b"] {
            _ = try await alice.dataSync.create(.channels, DataSyncObject(id: channel))
            _ = try await alice.dataSync.create(.memberships, DataSyncObject(id: "m-\(channel)", channelId: channel, userId: "alice"))
        }
        _ = try await alice.dataSync.patch(.users, id: "alice", [.add(JSONPointer(["status"]), "x")])
        let stale = await Self.failure { try await alice.dataSync.delete(.users, id: "alice", ifMatch: user.eTag) }
        #expect(stale?.status == 412)
        let answer = await world.server.respond(try alice.dataSync.deleteRequest(.memberships, id: "m-a"))
        #expect(answer.status == 200 && answer.body.isEmpty)
        let gone = await Self.failure { try await alice.dataSync.delete(.memberships, id: "m-a") }
        #expect(gone?.status == 404 && gone?.message == "Relationship 'm-a' not found")
        try await alice.dataSync.delete(.users, id: "alice")
        #expect(await world.server.dataSyncRecord(.memberships, id: "m-b") == nil)
        #expect(await world.server.dataSyncRecord(.channels, id: "b") != nil)
    }

    @Test("lists: forward cursors to the last page, filter_fast and sort on updatedAt, unknown fields refused, the token's rows only")
    func lists() async throws {
        let world = World()
        let alice = try await world.client()
        for index in 0..<250 {
            world.clock.advance(by: .milliseconds(10))
            _ = try await alice.dataSync.create(.users, DataSyncObject(id: "u\(index)", payload: ["name": .string("User \(index % 7)")]))
        }
        var query = DataSyncListQuery()
        var seen: [String] = []
        var pages = 0
        while true {
            let page = try await alice.dataSync.list(.users, query)
            pages += 1
            seen += page.data.map(\.id)
            guard let next = page.next else {
                #expect(page.nextCursor == nil && !page.hasNext)
                break
            }
            query.cursor = next
        }
        #expect(pages == 3 && seen == (0..<250).map { "u\($0)" })
        let since = try #require(try await alice.dataSync.get(.users, id: "u239")?.updatedAt)
        var recent = DataSyncListQuery()
        recent.filterFast = #"updatedAt >= "\#(since)""#
        recent.sort = ["updatedAt:desc"]
        recent.limit = 4
        let first = try await alice.dataSync.list(.users, recent)
        #expect(first.data.map(\.id) == ["u249", "u248", "u247", "u246"] && first.hasNext)
        recent.cursor = first.next
        let second = try await alice.dataSync.list(.users, recent)
        #expect(second.data.map(\.id) == ["u245", "u244", "u243", "u242"])
        var named = DataSyncListQuery()
        named.filter = #"name == 'User 3' AND id LIKE 'u1*'"#
        let expected = (0..<250).filter { $0 % 7 == 3 && String($0).hasPrefix("1") }.map { "u\($0)" }
        #expect(try await alice.dataSync.list(.users, named).data.map(\.id) == expected && expected.count == 17)
        var unknown = DataSyncListQuery()
        unknown.filterFast = #"email == "x""#
        #expect(await Self.failure { _ = try await alice.dataSync.list(.users, unknown) }?.codes == ["DS-0005"])
        let bob = try await world.client("bob", grants: AccessGrants(resources: [.user: ["u1": .get, "u2": .get, "u3": .update]]))
        #expect(try await bob.dataSync.list(.users).data.map(\.id) == ["u1", "u2"])
    }

    @Test("TTL on the server's clock: an expired record is gone from get and lists, a write meets a 404, the id can be created again")
    func expiry() async throws {
        let world = World()
        _ = try await world.client().dataSync.create(.users, DataSyncObject(id: "alice"))
        world.clock.advance(by: .seconds(30 * 86_400))
        // Tokens live an hour at most here: a new one after each jump.
        #expect(try await world.client().dataSync.get(.users, id: "alice") != nil, "until the next midnight")
        world.clock.advance(by: .seconds(86_400))
        let alice = try await world.client()
        #expect(try await alice.dataSync.get(.users, id: "alice") == nil)
        #expect(try await alice.dataSync.list(.users).data.isEmpty)
        #expect(await Self.failure { _ = try await alice.dataSync.patch(.users, id: "alice", [.add(JSONPointer(["status"]), "x")]) }?.status == 404)
        _ = try await alice.dataSync.create(.users, DataSyncObject(id: "alice"))
    }

    @Test("e:5 events: a user's on its id channel, a membership's on both ends', none for a class whose events are off")
    func events() async throws {
        let world = World()
        let alice = try await world.client()
        let handshake = try await alice.subscribe(SubscribeRequest(channels: ["alice", "general"]))
        _ = try await alice.dataSync.create(.users, DataSyncObject(id: "alice", payload: ["name": "Alice"]))
        _ = try await alice.dataSync.create(.channels, DataSyncObject(id: "general"))
        _ = try await alice.dataSync.create(.memberships, DataSyncObject(id: "m1", channelId: "general", userId: "alice"))
        _ = try await alice.dataSync.patch(.users, id: "alice", [.add(JSONPointer(["payload", "name"]), "Al")])
        await world.server.setDataSyncEvents(className: "User", on: false)
        _ = try await alice.dataSync.patch(.users, id: "alice", [.add(JSONPointer(["payload", "name"]), "A")])
        try await alice.dataSync.delete(.memberships, id: "m1")
        var request = SubscribeRequest(channels: ["alice", "general"], cursor: handshake.cursor)
        request.timeout = .seconds(5)
        let answer = PubNubClient.subscribeAnswer(from: await world.server.respond(try alice.subscribeRequest(request)))
        let seen = try answer.get().envelopes.compactMap { envelope -> String? in
            guard case .dataSync(let event) = envelope.event else { return nil }
            return "\(envelope.channel):\(event.type):\(event.verb):\(event.row.id)"
        }
        #expect(seen == [
            "alice:user:create:alice", "general:channel:create:general", "general:membership:create:m1", "alice:membership:create:m1",
            "alice:user:update:alice", "general:membership:delete:m1", "alice:membership:delete:m1",
        ])
    }
}

extension PubNubClient {
    /// `subscribeAnswer(from:)` as a `Result`, for a test that reads an answer without throwing there.
    static func subscribeAnswer(from response: WireResponse) -> Result<SubscribeAnswer, WireError> {
        Result { () throws(WireError) in try PubNubClient.subscribeAnswer(from: response, operation: "subscribe") }
    }
}
