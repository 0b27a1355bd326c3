import Foundation
import ReplicaModel
import Testing
@testable import ReplicaStore

/// The version rule has one owner (`VersionDecision`) in two forms: Swift, for changesets, and the
/// SQL condition of the store's upserts. Both run the same table of cases here.
@Suite("The version rule, in Swift and in SQL")
struct VersionRuleTests {
    /// incoming (updated, eTag), stored (updated, eTag), expected.
    static let cases: [(String?, String?, String?, String?, VersionDecision)] = [
        ("2020-09-23T09:23:35Z", "A", "2020-09-23T09:23:34Z", "A", .unchanged),
        ("2020-09-23T09:23:33Z", "A", "2020-09-23T09:23:34Z", "A", .unchanged),  // eTag wins over age
        (nil, "A", "2020-09-23T09:23:34Z", "A", .unchanged),
        ("2020-09-23T09:23:33Z", "B", "2020-09-23T09:23:34Z", "A", .stale),
        ("2020-09-23T09:23:34.598493Z", "B", "2020-09-23T09:23:34.598494Z", "A", .stale),
        ("2020-09-23T09:23:35Z", "B", "2020-09-23T09:23:34Z", "A", .apply),
        ("2020-09-23T09:23:34.598495Z", "B", "2020-09-23T09:23:34.598494Z", "A", .apply),
        ("2020-09-23T09:23:34Z", "B", "2020-09-23T09:23:34.000Z", "A", .apply),  // same instant, new eTag
        ("2020-09-23T09:23:34Z", "B", nil, "A", .apply),  // stored without updated
        ("2020-09-23T09:23:34Z", "B", nil, nil, .apply),
        ("2020-09-23T09:23:34Z", nil, "2020-09-23T09:23:34Z", "A", .apply),  // no eTag: age alone
        (nil, nil, nil, nil, .apply),  // two missing eTags are not "equal"
        // An unversioned object never replaces a versioned one.
        (nil, "B", "2020-09-23T09:23:34Z", "A", .stale),
        ("2020-09-23T09:23:33Z", nil, "2020-09-23T09:23:34Z", nil, .stale),
    ]

    private static func user(_ name: String, updated: String?, eTag: String?) throws -> ChatUser<FlatCustom> {
        try ChatUser(id: "some-user-id", name: name, updated: updated.map { try ISOTimestamp(parsing: $0) }, eTag: eTag)
    }

    @Test("the Swift rule decides each case of the table", arguments: cases)
    func swiftRule(
        incomingUpdated: String?, incomingETag: String?, storedUpdated: String?, storedETag: String?,
        expected: VersionDecision
    ) throws {
        let incoming = try Self.user("incoming", updated: incomingUpdated, eTag: incomingETag)
        let stored = try Self.user("stored", updated: storedUpdated, eTag: storedETag)
        #expect(incoming.decision(replacing: stored) == expected)
    }

    @Test("the store's upsert writes exactly the cases the Swift rule applies", arguments: cases)
    func sqlTwin(
        incomingUpdated: String?, incomingETag: String?, storedUpdated: String?, storedETag: String?,
        expected: VersionDecision
    ) async throws {
        let store = try Fixture.store()
        try await store.load(users: [try Self.user("stored", updated: storedUpdated, eTag: storedETag)])
        let report = try await store.load(users: [try Self.user("incoming", updated: incomingUpdated, eTag: incomingETag)])
        let shown = try await store.fetch(store.queries.user(id: "some-user-id"))?.name
        #expect((shown == "incoming") == (expected == .apply))
        #expect((report.updated == 1) == (expected == .apply))
    }

    @Test("a changeset follows the same rule: its eTag, then its `updated`", arguments: cases.filter { $0.0 != nil && $0.1 != nil })
    func changesets(
        incomingUpdated: String?, incomingETag: String?, storedUpdated: String?, storedETag: String?,
        expected: VersionDecision
    ) throws {
        let stored = try Self.user("stored", updated: storedUpdated, eTag: storedETag)
        var change = UserChangeset<FlatCustom>(
            id: stored.id, updated: try ISOTimestamp(parsing: incomingUpdated!), eTag: incomingETag!)
        change.name = .set("incoming")
        #expect((change.apply(to: stored) != nil) == (expected == .apply))
    }
}
