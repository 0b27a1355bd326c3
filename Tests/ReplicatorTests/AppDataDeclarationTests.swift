import Foundation
import ReplicaModel
import Replicator
import Testing

/// What a replica's start refuses in an app-data declaration, before anything is stored.
@Suite("App classes: the declaration's rules")
struct AppDataDeclarationTests {
    static let poll = AppClass(entity: "Poll", properties: [AppProperty("closed", kind: .boolean), AppProperty("votes", kind: .number)],
                               rule: .matching([AppPredicate("closed", .equal, false)]), routing: .wildcard(prefix: "poll"))

    @Test("a poll and its votes pass")
    func valid() throws {
        try AppDataDeclaration(classes: [Self.poll, AppClass(relationship: "Vote", from: "Poll", to: "User")]).validate()
        try AppDataDeclaration().validate()
    }

    @Test("each broken rule is refused, naming the class and why")
    func refusals() {
        func with(_ change: (inout AppClass) -> Void) -> AppClass {
            var type = Self.poll
            change(&type)
            return type
        }
        let cases: [(String, [AppClass], String)] = [
            ("a bad name", [with { $0.name = "2polls" }], "starts with a letter"),
            ("a built-in", [with { $0.name = "User" }], "built-in"),
            ("twice", [Self.poll, Self.poll], "declared twice"),
            ("no version", [with { $0.versions = [] }], "versions"),
            ("versions down", [with { $0.versions = [2, 1] }], "versions"),
            ("version 0", [with { $0.versions = [0] }], "versions"),
            ("seven properties", [with { $0.properties = (1...7).map { AppProperty("p\($0)", kind: .string) } }], "at most 6"),
            ("a property twice", [with { $0.properties.append(AppProperty("closed", at: ["other"], kind: .boolean)) }], "used twice"),
            ("a path twice", [with { $0.properties.append(AppProperty("shut", at: ["closed"], kind: .boolean)) }], "used twice"),
            ("an empty path", [with { $0.properties.append(AppProperty("x", at: [], kind: .string)) }], "empty path"),
            ("a system field", [with { $0.properties.append(AppProperty("status", kind: .string)) }], "system field"),
            ("a rule on an undeclared property", [with { $0.rule = .matching([AppPredicate("team", .equal, "a")]) }], "does not declare"),
            ("a rule of another kind", [with { $0.rule = .matching([AppPredicate("votes", .greater, "3")]) }], "another kind"),
            ("a quote in a rule", [with { $0.rule = .matching([AppPredicate("status", .equal, "a\"b")]) }], "quote"),
            ("ten predicates", [with { $0.rule = .matching(Array(repeating: AppPredicate("closed", .equal, true), count: 10)) }], "1 to 9"),
            ("a prefix with a dot", [with { $0.routing = .wildcard(prefix: "a.b") }], "wildcard prefix"),
            ("a prefix with a colon", [with { $0.routing = .wildcard(prefix: "a:b") }], "wildcard prefix"),
            ("an empty prefix", [with { $0.routing = .wildcard(prefix: "") }], "wildcard prefix"),
            ("ends for an entity", [with { $0.routing = .ends }], "relationship classes"),
            ("a listing each second", [with { $0.fullListingInterval = .seconds(1) }], "once a minute"),
            ("a Membership end", [AppClass(relationship: "Vote", from: "Membership", to: "User")], "end class"),
        ]
        for (what, classes, reason) in cases {
            #expect(throws: AppDataError.self, "\(what)") { try AppDataDeclaration(classes: classes).validate() }
            do {
                try AppDataDeclaration(classes: classes).validate()
            } catch {
                #expect(error.description.contains(reason), "\(what): \(error)")
            }
        }
    }
}
