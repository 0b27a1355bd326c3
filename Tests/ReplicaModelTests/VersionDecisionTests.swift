import ReplicaModel
import Testing

@Suite("Version decisions")
struct VersionDecisionTests {
    private func user(updated: String?, eTag: String?) throws -> ChatUser<FlatCustom> {
        try ChatUser(id: "some-user-id", updated: updated.map { try ISOTimestamp(parsing: $0) }, eTag: eTag)
    }

    @Test(
        "decision(replacing:) follows eTag, then updated",
        arguments: [
            // incoming (updated, eTag), stored (updated, eTag), expected
            ("2020-09-23T09:23:35Z", "A", "2020-09-23T09:23:34Z", "A", VersionDecision.unchanged),
            ("2020-09-23T09:23:33Z", "A", "2020-09-23T09:23:34Z", "A", .unchanged),  // eTag wins over age
            (nil, "A", "2020-09-23T09:23:34Z", "A", .unchanged),
            ("2020-09-23T09:23:33Z", "B", "2020-09-23T09:23:34Z", "A", .stale),
            ("2020-09-23T09:23:34.598493Z", "B", "2020-09-23T09:23:34.598494Z", "A", .stale),
            ("2020-09-23T09:23:35Z", "B", "2020-09-23T09:23:34Z", "A", .apply),
            ("2020-09-23T09:23:34.598495Z", "B", "2020-09-23T09:23:34.598494Z", "A", .apply),
            ("2020-09-23T09:23:34Z", "B", "2020-09-23T09:23:34.000Z", "A", .apply),  // same instant, new eTag
            ("2020-09-23T09:23:34Z", "B", nil, "A", .apply),  // stored without updated
            ("2020-09-23T09:23:34Z", "B", nil, nil, .apply),
            (nil, nil, nil, nil, .apply),  // two missing eTags are not "equal"
            // An unversioned object never replaces a versioned one.
            (nil, "B", "2020-09-23T09:23:34Z", "A", .stale),
            ("2020-09-23T09:23:33Z", nil, "2020-09-23T09:23:34Z", nil, .stale),
        ] as [(String?, String?, String?, String?, VersionDecision)])
    func decision(
        incomingUpdated: String?, incomingETag: String?, storedUpdated: String?, storedETag: String?,
        expected: VersionDecision
    ) throws {
        let incoming = try user(updated: incomingUpdated, eTag: incomingETag)
        let stored = try user(updated: storedUpdated, eTag: storedETag)
        #expect(incoming.decision(replacing: stored) == expected)
    }

    @Test("the decision works across object kinds")
    func acrossKinds() throws {
        let channel = try ChatChannel<FlatCustom>(id: "c", updated: ts("2020-09-23T09:23:35Z"), eTag: "X")
        let member = try ChatMember<DefaultChatCustom>(
            channelId: "c", userId: "u", updated: ts("2020-09-23T09:23:36Z"), eTag: "Y")
        #expect(channel.decision(replacing: member) == .stale)
        #expect(member.decision(replacing: channel) == .apply)
    }
}
