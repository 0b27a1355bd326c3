import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
@testable import Replicator
import Testing

/// Two devices edit the same record of an app's own class: the second one's write meets the
/// first's (a 412 on `If-Match`, a 409 on a create of the same id, a failed `test` under
/// `.touchedFields`) and the class's conflict policy settles it, logged as `record`
/// `Class/id`; the field merge keeps both devices' edits of different payload members.
@Suite("App-record conflicts")
struct AppRecordConflictTests {
    typealias Keyset = AppDataPullTests.Keyset
    static let classes = [AppDataPullTests.poll, AppDataPullTests.vote, AppRecordOutboxTests.person]

    static func two(_ classes: [AppClass] = classes) async throws -> (Keyset, World, World) {
        let keyset = try await Keyset(polls: 2)
        let a = try await keyset.device(classes), b = try await keyset.device(classes)
        _ = try await a.sync()
        _ = try await b.sync()
        return (keyset, a, b)
    }

    static func server(_ keyset: Keyset, _ id: String) async throws -> DataSyncRow? {
        try await AppRecordOutboxTests.serverRecord(keyset, .entities, id)
    }

    @Test("one device closes the poll, the other edits its question offline: the 412 is merged member by member, both edits are kept, the conflict logged")
    func mergedPayload() async throws {
        let (keyset, a, b) = try await Self.two()
        try await a.outbox.appRecords.update("Poll", id: "poll.1") { $0.payload["closed"] = true }
        _ = try await a.outbox.drain()
        keyset.clock.advance(by: 1)
        try await b.outbox.appRecords.update("Poll", id: "poll.1") { $0.payload["question"] = "Dinner?" }
        let report = try await b.sync()
        #expect(report.conflicts.resolved == 1, "\(report.conflicts)")
        let server = try #require(try await Self.server(keyset, "poll.1"))
        #expect(server.payload?["closed"] == true && server.payload?["question"] == "Dinner?", "\(String(describing: server.payload))")
        let local = try #require(try await b.store.fetch(AppRecordQueries.record(.entity, id: "poll.1")))
        #expect(local.payload == server.payload && local.eTag == server.eTag)
        let log = try await b.store.fetch(b.store.queries.conflicts())
        #expect(log.count == 1 && log.first?.entityKind == "record" && log.first?.entityId == "Poll/poll.1", "\(log)")
        #expect(log.first?.policy == "fieldMerge(lastWriter)")
        #expect(try await b.outboxEntries().isEmpty)
    }

    @Test("a class's own policy wins over the records' default: serverWins drops the local edit and shows the server's record")
    func perClassPolicy() async throws {
        let keyset = try await Keyset(polls: 2)
        let a = try await keyset.device(Self.classes)
        var options = ReconcilerOptions()
        options.appData = AppDataDeclaration(classes: Self.classes)
        options.conflicts.classes["Poll"] = .serverWins
        let b = try await keyset.device(Self.classes)
        let reconciler = b.makeReconciler(options: options)
        _ = try await a.sync()
        _ = try await reconciler.sync()
        try await a.outbox.appRecords.update("Poll", id: "poll.1") { $0.payload["votes"] = 100 }
        _ = try await a.outbox.drain()
        keyset.clock.advance(by: 1)
        try await b.outbox.appRecords.update("Poll", id: "poll.1") { $0.payload["votes"] = 5 }
        _ = try await b.outbox.drain()
        let settled = try await reconciler.resolveConflicts()
        #expect(settled.resolved == 1)
        #expect(try await Self.server(keyset, "poll.1")?.payload?["votes"] == 100)
        #expect(try await b.store.fetch(AppRecordQueries.record(.entity, id: "poll.1"))?.payload["votes"] == 100)
        #expect(try await b.store.fetch(b.store.queries.conflicts()).first?.policy == "serverWins")
    }

    @Test("both devices create the same id: the second create's 409 is a conflict; the same record is simply taken, a different one merged")
    func duplicateCreate() async throws {
        let (keyset, a, b) = try await Self.two()
        let payload: [String: JSONValue] = ["question": "Q", "closed": false, "votes": 0]
        try await a.outbox.appRecords.create("Poll", id: "poll.same", payload: payload)
        _ = try await a.outbox.drain()
        try await b.outbox.appRecords.create("Poll", id: "poll.same", payload: payload.merging(["votes": 3]) { $1 })
        let report = try await b.sync()
        #expect(report.conflicts.resolved == 1, "\(report.conflicts) \(report.errors)")
        let server = try #require(try await Self.server(keyset, "poll.same"))
        #expect(server.payload?["votes"] == 3, "the later create's value, by the last writer")
        #expect(try await b.outboxEntries().isEmpty)
        #expect(try await b.store.fetch(AppRecordQueries.record(.entity, id: "poll.same"))?.eTag == server.eTag)
    }

    @Test("under .touchedFields a patch carries tests of what it touches and no If-Match: another device's edit of another member merges on the server")
    func touchedFields() async throws {
        var poll = AppDataPullTests.poll
        poll.concurrency = .touchedFields
        let (keyset, a, b) = try await Self.two([poll, AppDataPullTests.vote, AppRecordOutboxTests.person])
        try await a.outbox.appRecords.update("Poll", id: "poll.1") { $0.payload["closed"] = true }
        _ = try await a.outbox.drain()
        keyset.clock.advance(by: 1)
        let start = b.transport.requests.count
        try await b.outbox.appRecords.update("Poll", id: "poll.1") { $0.payload["votes"] = 9 }
        let report = try await b.outbox.drain()
        #expect(report.remaining == 0 && report.deadLetters == 0, "\(report)")
        let patch = try #require(AppRecordOutboxTests.writes(b, from: start).first)
        #expect(patch.headers["If-Match"] == nil)
        #expect(AppRecordOutboxTests.body(patch) == [
            ["op": "test", "path": "/payload/votes", "value": 1],
            ["op": "add", "path": "/payload/votes", "value": 9],
        ])
        let server = try #require(try await Self.server(keyset, "poll.1"))
        #expect(server.payload?["closed"] == true && server.payload?["votes"] == 9)
        #expect(try await b.store.fetch(b.store.queries.conflicts()).isEmpty)

        // The same member edited on both: the test fails (409), a conflict settled by the policy.
        try await a.outbox.appRecords.update("Poll", id: "poll.1") { $0.payload["question"] = "A" }
        _ = try await a.outbox.drain()
        keyset.clock.advance(by: 1)
        try await b.outbox.appRecords.update("Poll", id: "poll.1") { $0.payload["question"] = "B" }
        let settled = try await b.sync()
        #expect(settled.conflicts.resolved == 1, "\(settled.conflicts)")
        #expect(try await Self.server(keyset, "poll.1")?.payload?["question"] == "B", "the later edit, by the last writer")
    }
}
