import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
@testable import Replicator
import Testing

/// Writes of an app's own DataSync records through the outbox, against the simulator's
/// DataSync with the classes defined: the exact request of each verb, the checks made before
/// anything is stored, a lost answer probed and never applied twice, coalescing, a relationship
/// waiting for its end's create, and the dead letters a server refusal leaves.
@Suite("App-record writes")
struct AppRecordOutboxTests {
    typealias Keyset = AppDataPullTests.Keyset
    static let poll = AppDataPullTests.poll
    static let vote = AppDataPullTests.vote
    static let person = AppClass(entity: "Person")

    /// A device of `me` over a keyset with `polls` polls, synced once.
    static func device(polls: Int = 2) async throws -> (Keyset, World) {
        let keyset = try await Keyset(polls: polls)
        let world = try await keyset.device([poll, vote, person])
        _ = try await world.sync()
        return (keyset, world)
    }

    static func serverRecord(_ keyset: Keyset, _ resource: DataSyncResource, _ id: String) async throws -> DataSyncRow? {
        let answer = await keyset.server.dataSyncAsAdmin(try keyset.admin.getRequest(resource, id: id))
        guard answer.status == 200 else { return nil }
        return try PubNubDataSync.row(from: answer, operation: "get")
    }

    static func body(_ request: WireRequest) -> JSONValue? { request.body.flatMap { JSONValue.parse($0) } }

    /// The DataSync write requests sent since `start`.
    static func writes(_ world: World, from start: Int) -> [WireRequest] {
        world.transport.requests.dropFirst(start).filter { $0.pathSegments.contains("datasync") && $0.method != .get }
    }

    @Test("a create is a POST of the whole record; a change is a PATCH of the changed members with If-Match; a delete a DELETE with If-Match; each answer is stored")
    func verbs() async throws {
        let (keyset, world) = try await Self.device()
        let start = world.transport.requests.count
        let created = try await world.outbox.appRecords.create(
            "Poll", id: "poll.new", payload: ["question": "Lunch?", "closed": false, "votes": 0, "options": ["pizza"]])
        #expect(created.disposition == .enqueued)
        #expect(try await world.store.fetch(AppRecordQueries.record(.entity, id: "poll.new"))?.payload["question"] == "Lunch?",
                "shown before it is sent")
        _ = try await world.outbox.drain()
        let post = try #require(Self.writes(world, from: start).first)
        #expect(post.method == .post && post.pathSegments.last == "entities")
        #expect(Self.body(post) == ["data": [
            "id": "poll.new", "entityClass": "Poll", "entityClassVersion": 1,
            "payload": ["question": "Lunch?", "closed": false, "votes": 0, "options": ["pizza"]],
        ]])
        let stored = try #require(try await world.store.fetch(AppRecordQueries.record(.entity, id: "poll.new")))
        let server = try #require(try await Self.serverRecord(keyset, .entities, "poll.new"))
        #expect(stored.eTag == server.eTag && stored.eTag != nil)

        keyset.clock.advance(by: 1)
        let patchStart = world.transport.requests.count
        try await world.outbox.appRecords.update("Poll", id: "poll.new") { record in
            record.payload["closed"] = true
            record.payload["options"] = ["pizza", "sushi"]
        }
        _ = try await world.outbox.drain()
        let patch = try #require(Self.writes(world, from: patchStart).first)
        #expect(patch.method == .patch && patch.headers["If-Match"] == server.eTag)
        #expect(patch.headers["Content-Type"] == PubNubDataSync.patchContentType)
        #expect(Self.body(patch) == [
            ["op": "add", "path": "/payload/closed", "value": true],
            ["op": "add", "path": "/payload/options", "value": ["pizza", "sushi"]],
        ])
        let patched = try #require(try await Self.serverRecord(keyset, .entities, "poll.new"))
        #expect(patched.payload?["closed"] == true && patched.payload?["options"] == ["pizza", "sushi"])
        #expect(try await world.store.fetch(AppRecordQueries.record(.entity, id: "poll.new"))?.eTag == patched.eTag)

        let deleteStart = world.transport.requests.count
        try await world.outbox.appRecords.delete("Poll", id: "poll.new")
        #expect(try await world.store.fetch(AppRecordQueries.record(.entity, id: "poll.new")) == nil, "gone before it is sent")
        _ = try await world.outbox.drain()
        let delete = try #require(Self.writes(world, from: deleteStart).first)
        #expect(delete.method == .delete && delete.headers["If-Match"] == patched.eTag)
        #expect(try await Self.serverRecord(keyset, .entities, "poll.new") == nil)
        #expect(try await world.outboxEntries().isEmpty)
        // A pull of a page fetched before the delete does not bring it back (its tombstone).
        _ = try await world.sync()
        #expect(try await world.store.fetch(AppRecordQueries.record(.entity, id: "poll.new")) == nil)
    }

    @Test("what the server would refuse is a typed error before anything is stored: a property of the wrong kind, a required one missing, an undeclared class or version, an id DataSync refuses, a wildcard class's id outside its prefix")
    func refusedBeforeQueueing() async throws {
        let (_, world) = try await Self.device()
        let writes = world.outbox.appRecords
        await #expect(throws: AppDataError.propertyKind(className: "Poll", property: "votes", expected: .number, found: "many")) {
            try await writes.create("Poll", id: "poll.x", payload: ["question": "Q", "closed": false, "votes": "many"])
        }
        await #expect(throws: AppDataError.missingProperty(className: "Poll", property: "closed")) {
            try await writes.create("Poll", id: "poll.x", payload: ["question": "Q", "votes": 1])
        }
        await #expect(throws: AppDataError.undeclaredClass("Ticket")) { try await writes.create("Ticket", payload: [:]) }
        await #expect(throws: AppDataError.undeclaredVersion(className: "Poll", version: 2)) {
            try await writes.create("Poll", id: "poll.x", version: 2, payload: ["question": "Q", "closed": false, "votes": 1])
        }
        await #expect(throws: AppDataError.self) {
            try await writes.create("Poll", id: "has space", payload: ["question": "Q", "closed": false, "votes": 1])
        }
        await #expect(throws: AppDataError.wrongClassKind(className: "Vote", expected: .relationship)) {
            try await writes.create("Vote", payload: [:])
        }
        await #expect(throws: AppDataError.recordNotFound(className: "Poll", id: "poll.missing")) {
            try await writes.update("Poll", id: "poll.missing") { $0.payload["closed"] = true }
        }
        // A change of a stored record to a wrong kind is refused as well, and the record stays.
        await #expect(throws: AppDataError.propertyKind(className: "Poll", property: "closed", expected: .boolean, found: "yes")) {
            try await writes.update("Poll", id: "poll.1") { $0.payload["closed"] = "yes" }
        }
        #expect(try await world.outboxEntries().isEmpty)
        #expect(try await world.store.fetch(AppRecordQueries.record(.entity, id: "poll.x")) == nil)
        #expect(try await world.store.fetch(AppRecordQueries.record(.entity, id: "poll.1"))?.payload["closed"] == false)
        // A change that changes nothing queues nothing.
        let same = try await writes.update("Poll", id: "poll.1") { $0.payload["closed"] = false }
        #expect(same.disposition == .unchanged && same.opId == nil)

        let wildcard = AppClass(entity: "Note", routing: .wildcard(prefix: "note"))
        #expect(throws: AppDataError.self) {
            try OpEnqueue<DefaultChatCustom>.check(
                AppRecordWrite(kind: .entity, className: "Note", id: "elsewhere.1", classVersion: 1, payload: [:]),
                against: wildcard)
        }
        #expect(AppRecordWrites<DefaultChatCustom>.newId(for: wildcard).hasPrefix("note."))
    }

    @Test("a create's answer lost: the op turns ambiguous, its probe reads the record, finds it and sends nothing again")
    func lostCreateAnswer() async throws {
        let (keyset, world) = try await Self.device()
        try await world.outbox.appRecords.create("Poll", id: "poll.lost", payload: ["question": "Q", "closed": false, "votes": 1])
        world.transport.script(.dropResponse)
        let start = world.transport.requests.count
        let report = try await world.outbox.drain()
        #expect(report.remaining == 0 && report.deadLetters == 0, "\(report)")
        let sent = world.transport.requests.dropFirst(start)
        #expect(sent.filter { $0.method == .post }.count == 1, "\(sent.map(\.operation))")
        #expect(sent.filter { $0.method == .get && $0.pathSegments.last == "poll.lost" }.count == 1, "probed once")
        let server = try #require(try await Self.serverRecord(keyset, .entities, "poll.lost"))
        #expect(try await world.store.fetch(AppRecordQueries.record(.entity, id: "poll.lost"))?.eTag == server.eTag)
    }

    @Test("a patch's answer lost: the probe finds the change on the server and finishes the op; one that never arrived is sent once")
    func lostPatchAnswer() async throws {
        let (keyset, world) = try await Self.device()
        try await world.outbox.appRecords.update("Poll", id: "poll.1") { $0.payload["votes"] = 10 }
        world.transport.script(.dropResponse)
        let start = world.transport.requests.count
        _ = try await world.outbox.drain()
        #expect(world.transport.requests.dropFirst(start).filter { $0.method == .patch }.count == 1)
        #expect(try await Self.serverRecord(keyset, .entities, "poll.1")?.payload?["votes"] == 10)
        #expect(try await world.outboxEntries().isEmpty)

        // Lost on the way (the server never saw it): sent again after its backoff, and applied once.
        keyset.clock.advance(by: 1)
        try await world.outbox.appRecords.update("Poll", id: "poll.1") { $0.payload["votes"] = 11 }
        world.transport.script(.dropRequest)
        let second = world.transport.requests.count
        _ = try await world.outbox.drain()
        let patches = world.transport.requests.dropFirst(second).filter { $0.method == .patch }
        #expect(patches.count == 2 && patches[patches.startIndex].body == patches[patches.startIndex + 1].body, "the same patch again")
        let server = try #require(try await Self.serverRecord(keyset, .entities, "poll.1"))
        #expect(server.payload?["votes"] == 11)
        #expect(try await world.outboxEntries().isEmpty)
        #expect(try await world.store.fetch(AppRecordQueries.record(.entity, id: "poll.1"))?.eTag == server.eTag)
    }

    @Test("edits made before a create is sent merge into it; a delete before then cancels both and nothing is sent")
    func coalescing() async throws {
        let (_, world) = try await Self.device()
        let writes = world.outbox.appRecords
        let created = try await writes.create("Poll", id: "poll.c", payload: ["question": "Q", "closed": false, "votes": 0])
        let edited = try await writes.update("Poll", id: "poll.c") { $0.payload["votes"] = 5 }
        #expect(edited.disposition == .merged(into: try #require(created.opId)))
        let entries = try await world.outboxEntries()
        #expect(entries.count == 1)
        guard case .setAppRecord(let write)? = entries.first?.operation else { Issue.record("\(entries)"); return }
        #expect(entries.first?.baseSnapshot == nil && write.payload["votes"] == 5, "still a create (no base), with the edit")

        let start = world.transport.requests.count
        let removed = try await writes.delete("Poll", id: "poll.c")
        guard case .cancelled(let ids) = removed.disposition else { Issue.record("\(removed.disposition)"); return }
        #expect(ids == [created.opId])
        _ = try await world.outbox.drain()
        #expect(Self.writes(world, from: start).isEmpty)
        #expect(try await world.store.fetch(AppRecordQueries.record(.entity, id: "poll.c")) == nil)
    }

    @Test("a rehearsed write is checked and planned but nothing is kept: an edit of an unsent create shows the merged POST, an edit of a synced record its PATCH and If-Match, a refused one throws")
    func rehearsal() async throws {
        let (_, world) = try await Self.device()
        let outbox = world.outbox, writes = world.outbox.appRecords
        let created = try await writes.create("Poll", id: "poll.r", payload: ["question": "Q", "closed": false, "votes": 0])
        let before = try await world.outboxEntries()
        let synced = try #require(try await world.store.fetch(AppRecordQueries.record(.entity, id: "poll.1")))

        let merged = try await outbox.rehearsing { try await writes.update("Poll", id: "poll.r") { $0.payload["votes"] = 5 } }
        #expect(merged.value.disposition == .merged(into: try #require(created.opId)))
        let create = try #require(merged.plan.first)
        #expect(merged.plan.count == 1 && create.opId == created.opId && create.request?.method == "POST")
        let createBody = try #require(create.request?.body.flatMap { (text: String) -> JSONValue? in JSONValue.parse(Data(text.utf8)) })
        #expect(createBody.objectValue?["data"]?.objectValue?["payload"]?.objectValue?["votes"] == 5, "the edit, merged")

        let patched = try await outbox.rehearsing { try await writes.update("Poll", id: "poll.1") { $0.payload["closed"] = true } }
        let patch = try #require(patched.plan.first)
        #expect(patch.request?.method == "PATCH" && patch.request?.ifMatch == synced.eTag && patch.position == before.count + 1)
        #expect(patch.request?.body == #"[{"op":"add","path":"/payload/closed","value":true}]"#)
        #expect(patch.waiting == "ready")

        await #expect(throws: AppDataError.self) {
            try await outbox.rehearsing { try await writes.update("Poll", id: "poll.1") { $0.payload["closed"] = "no" } }
        }
        let deleted = try await outbox.rehearsing { try await writes.delete("Poll", id: "poll.r") }
        #expect(deleted.plan.isEmpty, "a delete of an unsent create cancels it: nothing to send")

        // Nothing was kept: the same ops, the records as they were.
        #expect(try await world.outboxEntries() == before)
        #expect(try await world.store.fetch(AppRecordQueries.record(.entity, id: "poll.r"))?.payload["votes"] == 0)
        #expect(try await world.store.fetch(AppRecordQueries.record(.entity, id: "poll.1")) == synced)
    }

    @Test("a vote links a poll created offline: it waits for the poll's create; an end of another class or known deleted is refused; a 404 end is a visible dead letter")
    func relationships() async throws {
        let (keyset, world) = try await Self.device()
        let writes = world.outbox.appRecords
        let poll = try await writes.create("Poll", id: "poll.offline", payload: ["question": "Q", "closed": false, "votes": 0])
        let vote = try await writes.link("Vote", from: "poll.offline", to: "alice", id: "vote.offline.alice", payload: ["choice": 0])
        let entries = try await world.outboxEntries()
        #expect(entries.first { $0.id == vote.opId }?.dependsOn == poll.opId)
        await #expect(throws: AppDataError.invalidEnd(className: "Vote", end: "alice", reason: "it is a Person, not a Poll")) {
            try await writes.link("Vote", from: "alice", to: "alice", id: "vote.bad")
        }
        _ = try await world.outbox.drain()
        let server = try #require(try await Self.serverRecord(keyset, .relationships, "vote.offline.alice"))
        #expect(server.entityAId == "poll.offline" && server.entityBId == "alice")
        let related = try await world.store.fetch(AppRecordQueries.related(to: "alice", through: "Vote", side: .b))
        #expect(related.map(\.id).contains("poll.offline"))

        // The poll deleted here: a vote for it is refused before queueing.
        try await writes.delete("Poll", id: "poll.0")
        await #expect(throws: AppDataError.invalidEnd(className: "Vote", end: "poll.0", reason: "the entity is being deleted")) {
            try await writes.link("Vote", from: "poll.0", to: "alice", id: "vote.0.again")
        }
        // An end missing locally may exist on the server: the link goes, and a 404 is a dead letter that says so.
        let ghost = try await writes.link("Vote", from: "poll.ghost", to: "alice", id: "vote.ghost.alice")
        let report = try await world.outbox.drain()
        #expect(report.deadLetters == 1, "\(report)")
        let dead = try #require(try await world.outboxEntries().first { $0.id == ghost.opId })
        #expect(dead.state == .dead && dead.lastFailure?.httpStatus == 404, "\(String(describing: dead.lastFailure))")
        #expect(try await world.store.fetch(AppRecordQueries.record(.relationship, id: "vote.ghost.alice")) != nil, "shown until discarded")
        _ = try await world.outbox.discard(opId: try #require(ghost.opId))
        #expect(try await world.store.fetch(AppRecordQueries.record(.relationship, id: "vote.ghost.alice")) == nil)
    }

    @Test("a link of two entities both created offline waits for both creates: its recorded parent sent first, it still waits for the other end's, then goes once")
    func linkWaitsForBothEnds() async throws {
        let (keyset, world) = try await Self.device()
        let writes = world.outbox.appRecords
        let bob = try #require(try await writes.create("Person", id: "bob", payload: [:]).opId)
        let poll = try #require(try await writes.create("Poll", id: "poll.both", payload: ["question": "Q", "closed": false, "votes": 0]).opId)
        let vote = try #require(try await writes.link("Vote", from: "poll.both", to: "bob", id: "vote.both.bob").opId)
        #expect(try await world.outboxEntries().first { $0.id == vote }?.dependsOn == poll, "end A's create is its recorded parent")

        // Bob's create is held in flight while the poll's goes through.
        let gate = RequestGate { request in
            request.method == .post && request.body.map { String(decoding: $0, as: UTF8.self).contains(#""id":"bob""#) } == true
        }
        world.transport.onRequest { await gate.pass($0) }
        let outbox = world.outbox
        let drain = Task { try await outbox.drain() }
        await gate.waitUntilHolding()
        _ = await outbox.completion(of: poll)
        let waiting = try await outbox.plan().first { $0.opId == vote }?.waiting
        #expect(waiting == "parent \(bob) inflight", "\(waiting ?? "-")")
        let linkPosts = { world.transport.requests.filter { $0.method == .post && $0.pathSegments.last == "relationships" } }
        #expect(linkPosts().isEmpty, "not sent while an end's create is unanswered")

        await gate.open()
        let report = try await drain.value
        #expect(report.deadLetters == 0 && report.conflicts == 0, "\(report)")
        #expect(linkPosts().count == 1)
        let server = try #require(try await Self.serverRecord(keyset, .relationships, "vote.both.bob"))
        #expect(server.entityAId == "poll.both" && server.entityBId == "bob")
        #expect(try await world.outboxEntries().isEmpty)
    }

    @Test("an entity deleted before its create was sent takes the unsent links to it along, from the outbox and from the store, whichever end it is")
    func deletedEndWithdrawsLinks() async throws {
        let (_, world) = try await Self.device()
        let writes = world.outbox.appRecords
        _ = try await writes.create("Person", id: "bob", payload: [:])
        _ = try await writes.create("Poll", id: "poll.gone", payload: ["question": "Q", "closed": false, "votes": 0])
        _ = try await writes.link("Vote", from: "poll.gone", to: "bob", id: "vote.gone.bob")
        _ = try await writes.link("Vote", from: "poll.1", to: "bob", id: "vote.1.bob")
        _ = try await writes.delete("Person", id: "bob")
        #expect(try await world.outboxEntries().map(\.target).sorted() == [OutboxKeys.appRecord(.entity, "poll.gone")],
                "bob's create and both links to bob withdrawn")
        #expect(try await world.store.fetch(AppRecordQueries.record(.relationship, id: "vote.gone.bob")) == nil)
        #expect(try await world.store.fetch(AppRecordQueries.record(.relationship, id: "vote.1.bob")) == nil)
        _ = try await writes.link("Vote", from: "poll.gone", to: "alice", id: "vote.gone.alice")
        _ = try await writes.delete("Poll", id: "poll.gone")
        #expect(try await world.outboxEntries().isEmpty)
        #expect(try await world.store.fetch(AppRecordQueries.record(.relationship, id: "vote.gone.alice")) == nil,
                "the link to the poll (end A, its recorded parent) leaves the store too")
        let report = try await world.outbox.drain()
        #expect(report.deadLetters == 0 && report.attempts == 0, "\(report)")
    }

    @Test("an upgrade patches the record's class version with its payload's new shape; records of both versions are kept side by side")
    func upgrade() async throws {
        let keyset = try await Keyset(polls: 2)
        await keyset.server.defineDataSyncClass(DataSyncClass(name: "Poll", version: 2))
        var poll2 = Self.poll
        poll2.versions = [1, 2]
        let world = try await keyset.device([poll2, Self.vote, Self.person])
        _ = try await world.sync()
        let start = world.transport.requests.count
        try await world.outbox.appRecords.upgrade("Poll", id: "poll.1", to: 2) { payload in
            var next = payload
            next["options"] = ["yes", "no"]
            return next
        }
        _ = try await world.outbox.drain()
        let patch = try #require(Self.writes(world, from: start).first)
        #expect(Self.body(patch) == [
            ["op": "add", "path": "/entityClassVersion", "value": 2],
            ["op": "add", "path": "/payload/options", "value": ["yes", "no"]],
        ])
        #expect(try await Self.serverRecord(keyset, .entities, "poll.1")?.classVersion == 2)
        let v1 = try await world.store.fetch(AppRecordQueries.records(AppRecordFilter("Poll", version: 1)))
        let v2 = try await world.store.fetch(AppRecordQueries.records(AppRecordFilter("Poll", version: 2)))
        #expect(v1.map(\.id) == ["poll.0"] && v2.map(\.id) == ["poll.1"])
    }
}
