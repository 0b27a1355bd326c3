import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator
import Testing

/// A transport into the simulator that lets a test rewrite requests on their way in and answers
/// on their way out, counting what it saw: a misbehaving server for one test.
final class RewritingTransport: Transport, @unchecked Sendable {
    let server: PubNubServer
    private let lock = NSLock()
    private var log: [WireRequest] = []
    private let rewrite: @Sendable (WireRequest) -> WireRequest
    private let answer: @Sendable (WireRequest) throws(TransportFailure) -> WireResponse?

    init(
        server: PubNubServer,
        answer: @escaping @Sendable (WireRequest) throws(TransportFailure) -> WireResponse? = { _ in nil },
        rewrite: @escaping @Sendable (WireRequest) -> WireRequest = { $0 }
    ) {
        self.server = server
        self.rewrite = rewrite
        self.answer = answer
    }

    var requests: [WireRequest] { lock.withLock { log } }
    func count(_ operation: String) -> Int { requests.filter { $0.operation == operation }.count }

    func send(_ request: WireRequest, to origin: Origin) async throws(TransportFailure) -> WireResponse {
        lock.withLock { log.append(request) }
        if let canned = try answer(request) { return canned }
        return await server.handle(rewrite(request))
    }

    /// A server whose history endpoints ignore `start` (and `end`): paging back gets the same page.
    static func ignoringHistoryStart(_ server: PubNubServer) -> RewritingTransport {
        RewritingTransport(server: server, rewrite: { request in
            guard request.operation.hasPrefix("fetchHistory") else { return request }
            var copy = request
            copy.query.removeAll { $0.name == "start" || $0.name == "end" }
            return copy
        })
    }
}

/// JSON bytes of a value, for canned answers.
func jsonBody(_ value: JSONValue) -> Data { (try? JSONEncoder().encode(value)) ?? Data() }

@Suite("No server answer or user input crashes, duplicates or hangs")
struct HostileInputTests {
    // MARK: 1. Dates outside 1677–2262

    @Test("a published message dated 9999 or 0001 is kept with its raw payload and the rest of the page applies")
    func oddCreatedAtIsKeptRaw() async throws {
        let world = try World()
        let odd: JSONValue = ["id": "m-9999", "text": "from the future", "createdAt": "9999-12-31T23:59:59Z"]
        let ancient: JSONValue = ["id": "m-0001", "text": "from the past", "createdAt": "0001-01-01T00:00:00.000Z"]
        _ = await world.server.seedMessages(
            channel: "general", [chatPayload("m-ok"), odd, ancient, chatPayload("m-after")], publisher: "mallory")
        let reconciler = try world.reconciler()
        try await reconciler.catchUp(channel: "general")
        let stored = try await world.store.fetch(world.store.queries.messages(inChannel: "general"))
        #expect(stored.count == 4)
        #expect(stored.contains { $0.id == "m-ok" } && stored.contains { $0.id == "m-after" })
        let raw = stored.filter { $0.contentType == Reconciler<DefaultChatCustom>.foreignContentType }
        #expect(raw.count == 2)
        #expect(Set(raw.compactMap { $0.content?.objectValue?["createdAt"]?.stringValue })
            == ["9999-12-31T23:59:59Z", "0001-01-01T00:00:00.000Z"])
        // `history --remote` reads the same page through the same path.
        #expect(try await reconciler.remoteHistory(channel: "general").count == 4)
    }

    // MARK: 2. Huge Retry-After

    @Test("a 429 with Retry-After 1e17 parks the publish for at most an hour and the plan still renders")
    func hugeRetryAfterOnPublish() async throws {
        let world = try World()
        let transport = RewritingTransport(server: world.server) { request throws(TransportFailure) in
            guard request.operation == "publish" else { return nil }
            return WireResponse(status: 429, headers: ["Retry-After": "1e17"], body: jsonBody(["status": 429, "error": true]))
        }
        let outbox = Outbox(store: world.store, client: try World.client(transport), clock: world.clock)
        let receipt = try await outbox.messages.send(text: "slow down", to: "general")
        let start = world.clock.now
        let report = try await outbox.drain(until: start.addingTimeInterval(10))
        #expect(report.remaining == 1 && transport.count("publish") == 1)
        let entry = try #require(try await world.entries().first { $0.id == receipt.opId })
        let next = try #require(entry.nextAttemptAt)
        // The clamped Retry-After (an hour) is waited out whole, and no longer.
        #expect(next >= start.addingTimeInterval(ServiceError.maxRetryAfter))
        #expect(next <= start.addingTimeInterval(ServiceError.maxRetryAfter + 1))
        #expect(try await outbox.plan().first?.nextAttemptAt == next)
    }

    // Found by the fuzz soak (cases 1853 and 1874 of seed 4028784365): a publish answer whose
    // timetoken was another stored message's made the two messages share one identity.
    @Test("a publish answer with a timetoken another message holds is not believed: probed, then sent once")
    func publishAnswerWithATakenTimetoken() async throws {
        let world = try World()
        let taken = await world.server.seedMessages(channel: "general", [chatPayload("theirs")], publisher: "web")[0]
        _ = try await world.reconciler().catchUp(channel: "general")
        let lied = LockedFlag()
        let transport = RewritingTransport(server: world.server) { request throws(TransportFailure) in
            // The first publish is answered "Sent" with the taken timetoken, and never reaches the server.
            guard request.operation == "publish", lied.setOnce() else { return nil }
            return WireResponse(status: 200, body: Data("[1,\"Sent\",\"\(taken)\"]".utf8))
        }
        let outbox = Outbox(store: world.store, client: try World.client(transport), clock: world.clock)
        let events = await outbox.events()
        let receipt = try await outbox.messages.send(text: "mine", to: "general")
        let opId = try #require(receipt.opId)
        let report = try await outbox.drain(until: world.clock.now.addingTimeInterval(600))
        #expect(report.remaining == 0)

        // The answer was not believed: the op turned ambiguous with the reason, its probe found
        // nothing on the server, and the message was sent (once) with its own timetoken.
        var reasons: [String] = []
        for await event in events {
            if case .ambiguous(let id, _, let failure) = event, id == opId { reasons.append("ambiguous: " + failure.message) }
            if case .retrying(let id, _, let failure) = event, id == opId { reasons.append("retrying: " + failure.message) }
            if case .sent(let id, _) = event, id == opId { break }
        }
        #expect(reasons.contains { $0.hasPrefix("ambiguous") && $0.contains("already holds") }, "\(reasons)")
        #expect(transport.count("publish") == 2)
        let stored = try await world.store.fetch(world.store.queries.messages(inChannel: "general"))
        let timetokens = stored.compactMap(\.timetoken)
        #expect(stored.count == 2 && Set(timetokens).count == 2, "\(stored.map { "\($0.id)@\(String(describing: $0.timetoken))" })")
        #expect(await world.serverMessageIds("general") == ["theirs", receipt.value!.id])
    }

    @Test("Retry-After values a server may send are clamped or ignored, never trusted whole",
          arguments: [("1e17", 3600.0), ("-5", 0.0), ("12", 12.0), ("inf", nil), ("nan", nil), ("soon", nil)] as [(String, Double?)])
    func retryAfterClamped(header: String, expected: Double?) async throws {
        let transport = RewritingTransport(server: PubNubServer()) { _ throws(TransportFailure) in
            WireResponse(status: 429, headers: ["Retry-After": header], body: Data())
        }
        let client = try World.client(transport)
        do {
            _ = try await client.time()
            Issue.record("a 429 must throw")
        } catch .service(let error) {
            #expect(error.retryAfter == expected)
        }
    }

    @Test("a pull answered 429 with Retry-After 1e11 waits at most an hour per attempt and fails typed")
    func hugeRetryAfterOnPull() async throws {
        let world = try World()
        let transport = RewritingTransport(server: world.server) { request throws(TransportFailure) in
            guard request.operation == "fetchHistory" else { return nil }
            return WireResponse(status: 429, headers: ["Retry-After": "1e11"], body: Data("{}".utf8))
        }
        var options = ReconcilerOptions()
        options.maxAttempts = 3
        let reconciler = Reconciler(
            store: world.store, client: try World.client(transport), options: options, clock: world.clock)
        let start = world.clock.now
        await #expect(throws: ReconcilerError.self) { try await reconciler.catchUp(channel: "general") }
        #expect(transport.count("fetchHistory") == 3)
        // Two waits between three attempts, each the clamped Retry-After (an hour) and no longer.
        let waited = world.clock.now.timeIntervalSince(start)
        #expect(waited >= 2 * ServiceError.maxRetryAfter && waited <= 2 * ServiceError.maxRetryAfter + 1, "\(waited)")
    }

    // MARK: 3. Ids a URL would rewrite

    @Test("ids . and .. are refused when enqueued, and nothing is stored", arguments: [".", ".."])
    func dotIdsRefused(id: String) async throws {
        let world = try World()
        var edit = UserEdit<FlatCustom>()
        edit.name = .set("x")
        await #expect(throws: ModelValidationError.reservedIdentifier(field: "user.id", id: id)) {
            _ = try await world.outbox.metadata.setUser(id: id, edit: edit)
        }
        await #expect(throws: ModelValidationError.self) { _ = try await world.outbox.messages.send(text: "hi", to: id) }
        #expect(try await world.entries().isEmpty)
    }

    @Test("a user listing holding ids \"\", . and .. skips them and applies the rest")
    func serverDotIdsSkipped() async throws {
        let world = try World()
        let users: [JSONValue] = [
            ["id": "", "name": "empty"], ["id": ".", "name": "dot"], ["id": "..", "name": "dots"],
            ["id": "late", "updated": "9999-12-31T00:00:00Z"], ["id": 7], ["id": "good", "name": "Good"],
        ]
        let transport = RewritingTransport(server: world.server) { request throws(TransportFailure) in
            guard request.operation == "listUsers" else { return nil }
            return WireResponse(status: 200, body: jsonBody(["status": 200, "data": .array(users)]))
        }
        var options = ReconcilerOptions()
        options.pullAllChannels = false
        let reconciler = Reconciler(
            store: world.store, client: try World.client(transport), options: options, clock: world.clock)
        let report = try await reconciler.pullObjects(full: true)
        #expect(report.users.inserted == 1)
        let stored = try await world.store.fetch(world.store.queries.users())
        #expect(stored.map(\.id) == ["good"])
    }

    // MARK: 4. One drainer per store

    @Test("a store opened while another drainer holds the lease leaves its in-flight op alone and waits")
    func leaseKeepsOneDrainer() async throws {
        let first = try World()
        let message = try await first.outbox.messages.send(text: "once", to: "general")
        let lease = try #require(try first.store.maintenance.tryAcquireDrainLease())
        _ = try await first.outbox.markInflightForTest(message.opId!, now: first.clock.now)
        // A second process opens the same store while the first is sending.
        let second = try first.reopened(seed: 2, profile: .none)
        #expect(try await second.entries().first?.state == .inflight)
        #expect(try second.store.maintenance.tryAcquireDrainLease() == nil)
        await #expect(throws: OutboxError.drainLeaseHeld(path: first.path + ".lock", holder: getpid())) {
            _ = try await second.outbox.drain(until: second.clock.now.addingTimeInterval(5))
        }
        #expect(second.transport.requests.isEmpty)
        #expect(try await second.entries().first?.state == .inflight)
        // The first process dies mid-request: its lease goes with it, and the op becomes ambiguous.
        lease.release()
        let report = try await second.outbox.drain()
        #expect(report.completed == 1 && report.probes == 1)
        #expect(await first.serverMessageIds("general") == [message.value!.id])
    }

    // MARK: 5. Pulls that make no progress, deadlines, offline, store failures

    @Test("a history that ignores start stops the pull after two requests with a no-progress error")
    func historyIgnoringStart() async throws {
        let world = try World()
        _ = await world.server.seedMessages(
            channel: "general", (0..<250).map { chatPayload("m\($0)") }, publisher: "other")
        let transport = RewritingTransport.ignoringHistoryStart(world.server)
        let reconciler = Reconciler(store: world.store, client: try World.client(transport), clock: world.clock)
        await #expect(throws: PagingError.self) { try await reconciler.catchUp(channel: "general") }
        #expect(transport.count("fetchHistory") == 2)
        let report = try await reconciler.sync(pushDeadline: world.clock.now)
        #expect(report.errors.contains { $0.contains("no progress") })
        #expect(transport.count("fetchHistory") <= 5)
    }

    @Test("a listing that answers the same next cursor again stops with a no-progress error")
    func repeatedCursor() async throws {
        let world = try World()
        let page: JSONValue = [
            "status": 200, "next": "same", "data": .array((0..<100).map { .object(["id": .string("u\($0)")]) }),
        ]
        let transport = RewritingTransport(server: world.server) { request throws(TransportFailure) in
            request.operation == "listUsers" ? WireResponse(status: 200, body: jsonBody(page)) : nil
        }
        let reconciler = Reconciler(store: world.store, client: try World.client(transport), clock: world.clock)
        await #expect(throws: PagingError.noProgress(scope: SyncCheckpoint.users, cursor: "same")) {
            _ = try await reconciler.pullObjects(full: true)
        }
        #expect(transport.count("listUsers") == 2)
    }

    @Test("a probe against a history that ignores start keeps the op ambiguous and never resends")
    func probeIgnoringStart() async throws {
        let world = try World()
        let message = try await world.outbox.messages.send(text: "maybe", to: "general")
        world.transport.script(.dropResponse)
        _ = try await world.outbox.drain(until: world.clock.now)
        #expect(try await world.entries().first?.state == .ambiguous)
        _ = await world.server.seedMessages(
            channel: "general", (0..<150).map { chatPayload("later\($0)") }, publisher: "other")
        let transport = RewritingTransport.ignoringHistoryStart(world.server)
        let outbox = Outbox(store: world.store, client: try World.client(transport), clock: world.clock)
        world.clock.advance(by: 120)
        _ = try await outbox.drain(until: world.clock.now)
        #expect(transport.count("fetchHistory") == 2 && transport.count("publish") == 0)
        #expect(try await world.entries().first?.state == .ambiguous)
        #expect(await world.serverMessageIds("general").filter { $0 == message.value!.id }.count == 1)
    }

    @Test("a sync whose deadline has passed starts no request and says so")
    func deadlinePassed() async throws {
        let world = try World()
        _ = try await world.outbox.messages.send(text: "later", to: "general")
        var options = ReconcilerOptions()
        options.channels = ["a", "b"]
        let report = try await world.reconciler(options: options).sync(deadline: world.clock.now.addingTimeInterval(-1))
        #expect(world.transport.requests.isEmpty)
        #expect(report.push.remaining == 1 && report.push.stoppedAtDeadline)
        #expect(report.errors.first?.contains("deadline") == true)
        #expect(report.errors.count == 2)
    }

    @Test("an unreachable server is found once per sync, not once per channel")
    func offlineOncePerSync() async throws {
        let world = try World()
        let transport = RewritingTransport(server: world.server) { _ throws(TransportFailure) in
            throw .outcomeUnknown(reason: "connection reset")
        }
        var options = ReconcilerOptions()
        options.channels = ["a", "b", "c", "d"]
        options.maxAttempts = 3
        let reconciler = Reconciler(
            store: world.store, client: try World.client(transport), options: options, clock: world.clock)
        let report = try await reconciler.sync(pushDeadline: world.clock.now)
        #expect(transport.requests.count == 3)
        #expect(report.errors.count == 2 && report.errors[1].contains("5 channels: skipped"), "a, b, c, d and the user's own channel")
    }

    @Test("a drain whose store refuses writes stops with storeFailed instead of looping")
    func storeFailureStopsDrain() async throws {
        let world = try World()
        _ = try await world.outbox.messages.send(text: "disk full", to: "general")
        try await world.store.writer.writeWithoutTransaction { try $0.execute(sql: "PRAGMA query_only = 1") }
        await #expect(throws: OutboxError.self) { _ = try await world.outbox.drain() }
        #expect(world.transport.requests.count <= 1)
        try await world.store.writer.writeWithoutTransaction { try $0.execute(sql: "PRAGMA query_only = 0") }
        let report = try await world.outbox.drain()
        #expect(report.completed == 1 && report.deadLetters == 0)
        #expect(await world.serverMessageIds("general").count == 1)
    }
}

/// A flag that is set once, by the first caller of ``setOnce()``.
final class LockedFlag: @unchecked Sendable {
    // NSLock guards `set`.
    private let lock = NSLock()
    private var set = false

    /// True for the first caller only.
    func setOnce() -> Bool { lock.withLock { set ? false : { set = true; return true }() } }
}
