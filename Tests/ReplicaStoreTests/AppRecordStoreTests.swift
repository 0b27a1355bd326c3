import Foundation
import GRDB
import ReplicaModel
@testable import ReplicaStore
import Testing

/// App-data records in the store (migration 0019): the catalog's slots, the ingest's version rule
/// and tombstones, and the queries with their plans.
@Suite("App-data records in the store")
struct AppRecordStoreTests {
    static let poll = AppClass(entity: "Poll", versions: [1, 2], properties: [
        AppProperty("question", kind: .string),
        AppProperty("votes", kind: .number),
        AppProperty("closed", kind: .boolean),
        AppProperty("closesAt", kind: .datetime, isOptional: true),
        AppProperty("team", at: ["meta", "team"], kind: .string, isOptional: true),
    ])
    static let vote = AppClass(relationship: "Vote", from: "Poll", to: "User")

    static func poll(
        _ id: String, question: String = "?", votes: JSONValue = 0, closed: Bool = false, closesAt: String? = nil,
        team: String? = nil, at seconds: Int64 = 0, eTag: String? = nil, version: Int = 1
    ) -> AppRecord {
        var payload: [String: JSONValue] = ["question": .string(question), "votes": votes, "closed": .bool(closed)]
        if let closesAt { payload["closesAt"] = .string(closesAt) }
        if let team { payload["meta"] = ["team": .string(team)] }
        return AppRecord(
            kind: .entity, id: id, className: "Poll", classVersion: version, status: "open", payload: payload,
            eTag: eTag ?? "e-\(id)-\(seconds)", createdAt: Fixture.ts(0), updatedAt: Fixture.ts(seconds),
            expiresAt: Fixture.ts(86_400))
    }

    static func store(_ classes: [AppClass] = [poll, vote]) throws -> Store {
        let store = try Fixture.store()
        try store.transactionNow { tx in _ = try tx.appRecords.bind(classes) }
        return store
    }

    static func apply(_ store: Store, _ records: [AppRecord]) throws -> AppRecordIngest.Outcome {
        try store.transactionNow { tx in try tx.appRecords.apply(records) }
    }

    static func ids(_ store: Store, _ filter: AppRecordFilter) throws -> [String] {
        try store.fetchNow(AppRecordQueries.records(filter)).map(\.id)
    }

    @Test("a record lands with every system field, its payload and its ends, and reads back equal")
    func roundTrip() throws {
        let store = try Self.store()
        let poll = Self.poll("poll.1", question: "Lunch?", closesAt: "2026-12-31T12:00:00.000Z", team: "ops")
        let link = AppRecord(
            kind: .relationship, id: "vote.poll.1.alice", className: "Vote", payload: ["choice": 2], eTag: "v1",
            updatedAt: Fixture.ts(3), endA: "poll.1", endB: "alice")
        let outcome = try Self.apply(store, [poll, link])
        #expect(outcome.inserted == 2 && outcome.skipped.isEmpty)
        #expect(try store.fetchNow(AppRecordQueries.record(.entity, id: "poll.1")) == poll)
        #expect(try store.fetchNow(AppRecordQueries.record(.relationship, id: "vote.poll.1.alice")) == link)
        #expect(try store.fetchNow(AppRecordQueries.record(.relationship, id: "poll.1")) == nil, "entities and relationships have their own ids")
    }

    @Test("the version rule: an older copy or the same eTag changes nothing, a newer one replaces the row")
    func versionRule() throws {
        let store = try Self.store()
        _ = try Self.apply(store, [Self.poll("p", question: "v5", at: 5)])
        let older = try Self.apply(store, [Self.poll("p", question: "v4", at: 4)])
        let same = try Self.apply(store, [Self.poll("p", question: "other", at: 9, eTag: "e-p-5")])
        let newer = try Self.apply(store, [Self.poll("p", question: "v6", at: 6)])
        #expect(older.unchanged == 1 && same.unchanged == 1 && newer.updated == 1)
        #expect(try store.fetchNow(AppRecordQueries.record(.entity, id: "p"))?.payload["question"] == "v6")
    }

    @Test("a removed record leaves a tombstone: an older copy stays out, a record written after the deletion comes in")
    func tombstones() throws {
        let store = try Self.store()
        _ = try Self.apply(store, [Self.poll("p", at: 5)])
        let removed = try store.transactionNow { tx in
            try tx.appRecords.remove(.entity, id: "p", className: "Poll", deletedAt: Fixture.ts(7))
        }
        #expect(removed)
        #expect(try Self.apply(store, [Self.poll("p", at: 6)]).inserted == 0, "a page fetched before the delete")
        #expect(try store.fetchNow(AppRecordQueries.record(.entity, id: "p")) == nil)
        #expect(try Self.apply(store, [Self.poll("p", at: 8)]).inserted == 1, "re-created after the delete")
        let stale = try store.transactionNow { tx in
            try tx.appRecords.remove(.entity, id: "p", className: "Poll", deletedAt: Fixture.ts(7))
        }
        #expect(!stale, "a delete older than the stored copy leaves it")
    }

    @Test("records of a class, version or kind not declared are counted as skipped and not stored")
    func skipped() throws {
        let store = try Self.store()
        var unknown = Self.poll("x")
        unknown.className = "Ticket"
        let v3 = Self.poll("y", version: 3)
        var wrongKind = Self.poll("z")
        wrongKind.kind = .relationship
        let outcome = try Self.apply(store, [unknown, v3, wrongKind, Self.poll("ok", version: 2)])
        #expect(outcome.skipped == ["Ticket/x", "Poll/y", "Poll/z"])
        #expect(outcome.inserted == 1)
        #expect(try Self.ids(store, AppRecordFilter("Poll")) == ["ok"])
        var infinite = Self.poll("inf")
        infinite.payload["votes"] = .double(.infinity)
        #expect { try Self.apply(store, [infinite]) } throws: { "\($0)".contains("Poll/inf: its payload is not JSON") }
        #expect(try store.fetchNow(AppRecordQueries.record(.entity, id: "inf")) == nil, "nothing stored in its place")
    }

    @Test("queries compare each declared property as its kind: text, numbers, booleans, date-times, nested paths, in, null")
    func queries() throws {
        let store = try Self.store()
        _ = try Self.apply(store, [
            Self.poll("a", question: "Lunch", votes: 10, closesAt: "2026-12-01T10:00:00Z", team: "ops", at: 1),
            Self.poll("b", question: "Dinner", votes: 9.5, closed: true, closesAt: "2026-12-01T09:00:00.500Z", at: 2),
            Self.poll("c", question: "Tea", votes: 100, team: "dev", at: 3),
            Self.poll("d", question: "Bad", votes: "many", at: 4),
        ])
        #expect(try Self.ids(store, AppRecordFilter("Poll")) == ["d", "c", "b", "a"], "newest change first by default")
        #expect(try Self.ids(store, AppRecordFilter("Poll", where: [.init("closed", .equal, true)])) == ["b"])
        #expect(try Self.ids(store, AppRecordFilter("Poll", where: [.init("votes", .greater, 9.75)], sortedBy: .init("votes"))) == ["a", "c"],
                "numbers compare as numbers (100 > 10 > 9.5), not as text")
        #expect(try Self.ids(store, AppRecordFilter("Poll", where: [.init("closesAt", .less, "2026-12-01T09:30:00.000000Z")])) == ["b"])
        #expect(try Self.ids(store, AppRecordFilter("Poll", where: [.init("team", .in, ["ops", "dev"])], sortedBy: .init("team"))) == ["c", "a"])
        #expect(try Self.ids(store, AppRecordFilter("Poll", where: [.init("votes", .isNull)])) == ["d"], "a value of another kind is not queryable")
        #expect(try Self.ids(store, AppRecordFilter("Poll", sortedBy: .init("question", descending: true), limit: 2, offset: 1)) == ["a", "b"],
                "Tea, [Lunch, Dinner], Bad")
        #expect(try store.fetchNow(AppRecordQueries.count(AppRecordFilter("Poll", where: [.init("closed", .equal, false)], limit: 1))) == 3)
        #expect(try Self.ids(store, AppRecordFilter("Poll", where: [.init("updatedAt", .greaterOrEqual, .string(Fixture.ts(3).description))])) == ["d", "c"])
        #expect(try store.fetchNow(AppRecordQueries.record(.entity, id: "d"))?.payload["votes"] == "many", "the record is kept whole")
    }

    @Test("a filter on an undeclared class or property, or with a value of the wrong kind, is a typed error naming it")
    func filterErrors() throws {
        let store = try Self.store()
        #expect {
            try store.fetchNow(AppRecordQueries.records(AppRecordFilter("Ticket")))
        } throws: { "\($0)".contains("Ticket is not declared") }
        #expect {
            try store.fetchNow(AppRecordQueries.records(AppRecordFilter("Poll", where: [.init("color", .equal, "red")])))
        } throws: { "\($0)".contains("color is not a declared property of Poll") }
        #expect {
            try store.fetchNow(AppRecordQueries.records(AppRecordFilter("Poll", where: [.init("votes", .equal, "ten")])))
        } throws: { "\($0)".contains("number") }
    }

    @Test("related entities: a poll's voters through Vote, and the polls a user voted in")
    func related() throws {
        let store = try Self.store([Self.poll, Self.vote, AppClass(entity: "Person")])
        let people = ["alice", "bob"].map { AppRecord(kind: .entity, id: $0, className: "Person", updatedAt: Fixture.ts(1)) }
        let pairs: [(poll: String, user: String)] = [("p1", "alice"), ("p1", "bob"), ("p2", "alice")]
        let votes = pairs.map { poll, user in
            AppRecord(kind: .relationship, id: "vote.\(poll).\(user)", className: "Vote", updatedAt: Fixture.ts(1), endA: poll, endB: user)
        }
        _ = try Self.apply(store, people + votes + [Self.poll("p1"), Self.poll("p2")])
        #expect(try store.fetchNow(AppRecordQueries.related(to: "p1", through: "Vote")).map(\.id) == ["alice", "bob"])
        #expect(try store.fetchNow(AppRecordQueries.related(to: "alice", through: "Vote", side: .b)).map(\.id) == ["p1", "p2"])
    }

    @Test("EXPLAIN QUERY PLAN: equality, range and order on a property search its slot index; related searches the end index; nothing scans")
    func plans() throws {
        let store = try Self.store()
        func plan(_ filter: AppRecordFilter) throws -> String {
            try store.fetchNow(StoreQuery { db in
                let (sql, arguments) = try AppRecordQueries.select(filter, in: db)
                return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String }
            }).joined(separator: "\n")
        }
        let slots = try store.readingNow { tx in try AppDataCatalog.declaration(of: "Poll", in: tx.db)!.slots }
        let closed = slots.column(of: "closed")!, votes = slots.column(of: "votes")!, question = slots.column(of: "question")!
        let equal = try plan(AppRecordFilter("Poll", where: [.init("closed", .equal, true)]))
        #expect(equal.contains("USING INDEX app_records_\(closed) (class_name=? AND \(closed)=?)"), "\(equal)")
        let mixed = try plan(AppRecordFilter("Poll", where: [.init("closed", .equal, true)], sortedBy: .init("question"), limit: 20))
        #expect(mixed.contains("USING INDEX app_records_\(closed) (class_name=? AND \(closed)=?)"), "a search, then a sort: \(mixed)")
        let range = try plan(AppRecordFilter("Poll", where: [.init("votes", .greater, 3)], sortedBy: .init("votes")))
        #expect(range.contains("USING INDEX app_records_\(votes) (class_name=? AND \(votes)>?)") && !range.contains("TEMP B-TREE"), "\(range)")
        let sorted = try plan(AppRecordFilter("Poll", sortedBy: .init("question", descending: true), limit: 20))
        #expect(sorted.contains("USING INDEX app_records_\(question) (class_name=?)") && !sorted.contains("TEMP B-TREE"), "\(sorted)")
        let recent = try plan(AppRecordFilter("Poll", limit: 20))
        #expect(recent.contains("app_records_changed") && !recent.contains("TEMP B-TREE"), "\(recent)")
        let related = try store.fetchNow(StoreQuery { db in
            try Row.fetchAll(db, sql: """
                EXPLAIN QUERY PLAN SELECT e.id FROM app_records r JOIN app_records e ON e.resource = 'entities' AND e.id = r.end_b
                WHERE r.class_name = ? AND r.end_a = ? ORDER BY r.rowid
                """, arguments: ["Vote", "p1"]).map { $0["detail"] as String }
        }).joined(separator: "\n")
        #expect(related.contains("app_records_a (class_name=? AND end_a=?)"), "\(related)")
        for text in [equal, mixed, range, sorted, recent, related] {
            #expect(!text.contains("SCAN app_records") && !text.contains("SCAN r") && !text.contains("SCAN e"), "\(text)")
        }
    }

    @Test("binding again changes nothing; a new or moved property is filled from the stored payloads; an undeclared class loses its rows")
    func catalog() throws {
        let store = try Self.store()
        _ = try Self.apply(store, [Self.poll("a", team: "ops", at: 1), Self.poll("b", team: "dev", at: 2)])
        let again = try store.transactionNow { tx in try tx.appRecords.bind([Self.poll, Self.vote]) }
        #expect(again == AppDataCatalog.Binding())

        var moved = Self.poll
        moved.properties = [AppProperty("owner", at: ["meta", "team"], kind: .string)] + moved.properties.filter { $0.name != "team" && $0.name != "votes" }
        let binding = try store.transactionNow { tx in try tx.appRecords.bind([moved]) }
        #expect(binding.refilled == ["Poll"] && binding.dropped == ["Vote": 0] && binding.reset.isEmpty)
        #expect(try Self.ids(store, AppRecordFilter("Poll", where: [.init("owner", .equal, "dev")])) == ["b"], "filled from the payloads")
        #expect {
            try Self.ids(store, AppRecordFilter("Poll", where: [.init("votes", .equal, 0)]))
        } throws: { "\($0)".contains("votes is not a declared property") }
        let kept = try store.readingNow { tx in try AppDataCatalog.declaration(of: "Poll", in: tx.db)!.slots }
        let before = AppDataCatalog.assignSlots(Self.poll, previous: nil)
        #expect(kept.byProperty["question"] == before.byProperty["question"], "a kept property keeps its slot")
        #expect(Set(kept.byProperty.values).count == moved.properties.count, "one slot each")

        var ruled = moved
        ruled.rule = .matching([AppPredicate("closed", .equal, false)])
        try store.transactionNow { tx in
            try tx.write(SyncCheckpoint(scope: AppDataCatalog.checkpointScope("Poll"), cursor: "2026", updatedAt: Date()))
        }
        let reset = try store.transactionNow { tx in try tx.appRecords.bind([ruled]) }
        #expect(reset.reset == ["Poll"] && reset.refilled.isEmpty)
        #expect(try store.readingNow { tx in try tx.checkpoint(AppDataCatalog.checkpointScope("Poll")) } == nil, "the next pull lists the class whole")

        let dropped = try store.transactionNow { tx in try tx.appRecords.bind([]) }
        #expect(dropped.dropped == ["Poll": 2])
        #expect(try store.readingNow { tx in try tx.appRecords.record(.entity, id: "a") } == nil)
    }

    @Test("a class that declares six properties fills all six slots, and each is queried through its own index")
    func sixSlots() throws {
        let names = ["a", "b", "c", "d", "e", "f"]
        let wide = AppClass(entity: "Wide", properties: names.map { AppProperty($0, kind: .number) })
        let store = try Self.store([wide])
        _ = try Self.apply(store, (0..<10).map { i in
            AppRecord(kind: .entity, id: "w\(i)", className: "Wide",
                      payload: Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, JSONValue.int(Int64(i * ($0 + 1)))) }),
                      updatedAt: Fixture.ts(Int64(i)))
        })
        for (offset, name) in names.enumerated() {
            let ids = try Self.ids(store, AppRecordFilter("Wide", where: [.init(name, .equal, .int(Int64(3 * (offset + 1))))]))
            #expect(ids == ["w3"], "\(name)")
        }
    }
}
