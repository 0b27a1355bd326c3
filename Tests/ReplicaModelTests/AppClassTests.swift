import Foundation
import ReplicaModel
import Testing

/// The declaration of an app's own DataSync classes: its JSON form, the sync rule as DataSync's
/// filter, property pointers, and the one rule for a value's kind.
@Suite("App classes: the declaration's model")
struct AppClassTests {
    static let poll = AppClass(entity: "Poll", versions: [1, 2], properties: [
        AppProperty("question", kind: .string), AppProperty("closed", kind: .boolean),
        AppProperty("city", at: ["where/when", "c~ty"], kind: .string, isOptional: true),
    ], rule: .matching([AppPredicate("closed", .equal, false), AppPredicate("question", .notEqual, "x")]), routing: .wildcard(prefix: "poll"))
    static let vote = AppClass(relationship: "Vote", from: "Poll", to: "User", concurrency: .touchedFields)

    @Test("a declaration survives its JSON form (the CLI's --app-classes file), relationship ends and routing included")
    func codable() throws {
        let data = try JSONEncoder().encode([Self.poll, Self.vote])
        let decoded = try JSONDecoder().decode([AppClass].self, from: data)
        #expect(decoded == [Self.poll, Self.vote])
        #expect(decoded[1].kind == .relationship(a: "Poll", b: "User") && decoded[1].routing == .ends)
        #expect(decoded[0].currentVersion == 2 && decoded[1].currentVersion == 1)
        #expect(decoded[0].fullListingInterval == .seconds(86_400))
    }

    @Test("the sync rule is DataSync's filter_fast: predicates joined by &&, strings quoted, numbers and booleans bare")
    func filterFast() {
        #expect(Self.poll.rule.filterFast == #"closed == false && question != "x""#)
        #expect(AppSyncRule.all.filterFast == nil && AppSyncRule.matching([]).filterFast == nil)
        #expect(AppPredicate("votes", .greaterOrEqual, 2.5).filterText == "votes >= 2.5")
        #expect(AppPredicate("votes", .less, 3).filterText == "votes < 3")
    }

    @Test("a property's pointer escapes ~ and / as RFC 6901 says; its value is read along its path")
    func pointers() {
        let city = Self.poll.properties[2]
        #expect(city.pointer == "/payload/where~1when/c~0ty")
        #expect(Self.poll.property(named: "closed")?.pointer == "/payload/closed")
        #expect(city.value(in: ["where/when": ["c~ty": "Pune"]]) == "Pune")
        #expect(city.value(in: ["where/when": "flat"]) == nil && city.value(in: [:]) == nil)
    }

    @Test("a value's kind: strings, numbers, booleans, YYYY-MM-DD dates of the calendar, ISO-8601 instants; null is of none")
    func kinds() {
        let cases: [(DataSyncValueKind, JSONValue, Bool)] = [
            (.string, "a", true), (.string, 1, false), (.number, 1, true), (.number, 1.5, true), (.number, "1", false),
            (.boolean, true, true), (.boolean, 0, false), (.date, "2028-02-29", true), (.date, "2027-02-29", false),
            (.date, "1900-02-29", false), (.date, "2000-02-29", true), (.date, "2026-13-01", false), (.date, "2026-1-01", false),
            (.date, "2026-12-00", false), (.date, "2026-04-31", false), (.datetime, "2026-09-07T07:34:55.265874Z", true),
            (.datetime, "2026-09-07", false), (.datetime, 5, false), (.string, .null, false), (.number, [1], false),
        ]
        for (kind, value, accepted) in cases {
            #expect(kind.accepts(value) == accepted, "\(kind) \(value)")
        }
    }
}
