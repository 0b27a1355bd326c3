import ReplicaModel
import Testing

@Suite("Version decisions")
struct VersionDecisionTests {
    // The table of cases is in ReplicaStoreTests' VersionRuleTests, which runs it through the Swift
    // rule and the store's SQL twin alike.

    @Test("the decision works across object kinds")
    func acrossKinds() throws {
        let channel = try ChatChannel<FlatCustom>(id: "c", updated: ts("2020-09-23T09:23:35Z"), eTag: "X")
        let member = try ChatMember<DefaultChatCustom>(
            channelId: "c", userId: "u", updated: ts("2020-09-23T09:23:36Z"), eTag: "Y")
        #expect(channel.decision(replacing: member) == .stale)
        #expect(member.decision(replacing: channel) == .apply)
    }
}
