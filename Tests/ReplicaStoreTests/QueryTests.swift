import Foundation
import Testing
import ReplicaModel
@testable import ReplicaStore

@Suite("Queries filter and sort like the seed's fetch requests")
struct QueryTests {
    @Test("channel by id carries its local member count; unknown ids give nil")
    func channelById() async throws {
        let store = try Fixture.store()
        try await store.load(members: [try Fixture.member("c", "a"), try Fixture.member("c", "b")])
        try await store.load(channels: [try Fixture.channel("c", name: "General", at: 5)])
        let channel = try await store.fetch(store.queries.channel(id: "c"))
        #expect(channel?.name == "General")
        #expect(channel?.memberCount == 2)
        #expect(try await store.fetch(store.queries.channel(id: "missing")) == nil)
        #expect(try await store.fetch(store.queries.user(id: "missing")) == nil)
    }

    @Test("memberships of a user: channel type descending, then channel name; other users excluded")
    func membershipsSorted() async throws {
        let store = try Fixture.store()
        try await store.load(channels: [
            try Fixture.channel("d1", name: "Zed", type: "direct"),
            try Fixture.channel("g2", name: "beta", type: "group"),
            try Fixture.channel("g1", name: "alpha", type: "group"),
            try Fixture.channel("p1", name: "Public", type: "default"),
        ])
        try await store.load(members: ["d1", "g2", "g1", "p1"].map { try Fixture.member($0, "me") }
            + [try Fixture.member("g1", "other")])
        let ids = try await store.fetch(store.queries.memberships(ofUser: "me")).map(\.channelId)
        #expect(ids == ["g1", "g2", "d1", "p1"])  // group > direct > default; alpha < beta
        let sections = try await store.fetch(store.queries.membershipSections(ofUser: "me"))
        #expect(sections.map(\.type) == ["group", "direct", "default"])
        #expect(sections.map { $0.members.map(\.channelId) } == [["g1", "g2"], ["d1"], ["p1"]])
    }

    @Test("members of a channel: by user name, optionally excluding a user and only present ones")
    func membersOfChannel() async throws {
        let store = try Fixture.store()
        try await store.load(users: [
            try Fixture.user("u1", name: "Carol"), try Fixture.user("u2", name: "Alice"),
            try Fixture.user("u3", name: "Bob"),
        ])
        try await store.load(members: [
            try Fixture.member("c", "u1", present: true), try Fixture.member("c", "u2", present: false),
            try Fixture.member("c", "u3", present: true), try Fixture.member("other", "u1"),
        ])
        let q = store.queries
        #expect(try await store.fetch(q.members(ofChannel: "c")).map(\.user.name) == ["Alice", "Bob", "Carol"])
        #expect(try await store.fetch(q.members(ofChannel: "c", excludingUser: "u3")).map(\.userId) == ["u2", "u1"])
        #expect(try await store.fetch(q.members(ofChannel: "c", onlyPresent: true)).map(\.userId) == ["u3", "u1"])
        #expect(
            try await store.fetch(q.members(ofChannel: "c", excludingUser: "u1", onlyPresent: true)).map(\.userId)
                == ["u3"])
        let member = try await store.fetch(q.member(channelId: "c", userId: "u2"))
        #expect(member?.user.name == "Alice" && member?.isPresent == false)
        #expect(try await store.fetch(q.member(channelId: "c", userId: "nobody")) == nil)
    }

    @Test("messages of a channel: ascending timetoken, then pending ones in local send order")
    func messagesOfChannel() async throws {
        let store = try Fixture.store()
        try await store.load(messages: [
            try Fixture.message("p2"), try Fixture.message("m3", timetoken: 30), try Fixture.message("p1"),
            try Fixture.message("m1", timetoken: 10), try Fixture.message("x", channel: "other", timetoken: 20),
        ])
        try await store.load(messages: [try Fixture.message("m2", timetoken: 20), try Fixture.message("p3")])
        let messages = try await store.fetch(store.queries.messages(inChannel: "general"))
        #expect(messages.map(\.id) == ["m1", "m2", "m3", "p2", "p1", "p3"])
        #expect(messages.map(\.delivery) == [.sent, .sent, .sent, .pending, .pending, .pending])
    }

    @Test("messages by user and message by id")
    func messagesByUser() async throws {
        let store = try Fixture.store()
        try await store.load(messages: [
            try Fixture.message("a2", user: "alice", timetoken: 20), try Fixture.message("b1", user: "bob", timetoken: 5),
            try Fixture.message("a1", channel: "c2", user: "alice", timetoken: 10), try Fixture.message("a3", user: "alice"),
        ])
        #expect(try await store.fetch(store.queries.messages(byUser: "alice")).map(\.id) == ["a1", "a2", "a3"])
        let message = try await store.fetch(store.queries.message(id: "b1"))
        #expect(message?.userId == "bob" && message?.timetoken == 5 && message?.text == "text of b1")
        #expect(try await store.fetch(store.queries.message(id: "none")) == nil)
    }

    @Test("a pending message that comes back with a timetoken becomes sent, and keeps its timetoken")
    func pendingBecomesSent() async throws {
        let store = try Fixture.store()
        try await store.load(messages: [try Fixture.message("m")])
        let report = try await store.load(messages: [try Fixture.message("m", timetoken: 42)])
        #expect(report.updated == 1)
        #expect(try await store.fetch(store.queries.message(id: "m"))?.delivery == .sent)
        // A version without a timetoken never erases it.
        try await store.load(messages: [try Fixture.message("m", text: "edited")])
        let stored = try await store.fetch(store.queries.message(id: "m"))
        #expect(stored?.timetoken == 42 && stored?.delivery == .sent && stored?.text == "edited")
        #expect(try await store.load(messages: [try Fixture.message("m", text: "edited", timetoken: 42)]).unchanged == 1)
    }

    @Test("reactions aggregate by type and value with count, users and whether the current user reacted")
    func reactionsAggregated() async throws {
        let store = try Fixture.store()
        try await store.load(messages: [try Fixture.message("m", timetoken: 100), try Fixture.message("n", timetoken: 200)])
        func action(_ value: String, _ user: String, at tt: UInt64?, on message: UInt64 = 100) throws -> ChatMessageAction {
            try ChatMessageAction(
                type: "reaction", value: value, userId: user, channelId: "general",
                messageTimetoken: Timetoken(rawValue: message), actionTimetoken: tt.map(Timetoken.init(rawValue:)))
        }
        try await store.load(messageActions: [
            try action("👍", "bob", at: 110), try action("😂", "carol", at: 105), try action("👍", "me", at: 120),
            try action("🎉", "bob", at: nil), try action("👍", "zed", at: 130, on: 200),
        ])
        let summary = try await store.fetch(store.queries.reactions(ofMessage: "m", currentUserId: "me"))
        #expect(summary.map(\.value) == ["😂", "👍", "🎉"])  // by first reaction, pending last
        #expect(summary[1].count == 2 && summary[1].userIds == ["bob", "me"] && summary[1].reactedByCurrentUser)
        #expect(summary[0].reactedByCurrentUser == false)
        // Loading the same action again changes nothing.
        #expect(try await store.load(messageActions: [try action("👍", "bob", at: 110)]).unchanged == 1)
        #expect(
            try await store.removeMessageAction(
                channelId: "general", messageTimetoken: 100, type: "reaction", value: "👍", userId: "me"))
        let after = try await store.fetch(store.queries.reactions(ofMessage: "m", currentUserId: "me"))
        #expect(after.first { $0.value == "👍" }?.count == 1)
    }

    @Test("a reaction on a pending message follows the message when it gets its timetoken")
    func reactionOnPendingMessage() async throws {
        let store = try Fixture.store()
        try await store.load(messages: [try Fixture.message("m")])
        let pending = try ChatMessageAction(type: "reaction", value: "👍", userId: "me", channelId: "general", messageId: "m")
        try await store.load(messageActions: [pending])
        #expect(try await store.fetch(store.queries.reactions(ofMessage: "m", currentUserId: "me")).map(\.count) == [1])
        try await store.load(messages: [try Fixture.message("m", timetoken: 500)])
        let actions = try await store.fetch(store.queries.actions(ofMessage: "m"))
        #expect(actions.map(\.messageTimetoken) == [500])
        // The server's copy of the same action now matches the stored row instead of adding one.
        let acked = try ChatMessageAction(
            type: "reaction", value: "👍", userId: "me", channelId: "general", messageTimetoken: 500,
            actionTimetoken: 510)
        #expect(try await store.load(messageActions: [acked]).updated == 1)
        #expect(try await store.fetch(store.queries.actions(ofMessage: "m")).map(\.actionTimetoken) == [510])
    }

    @Test("history-with-actions messages store their embedded actions when asked")
    func processMessageActions() async throws {
        let store = try Fixture.store()
        var message = try Fixture.message("m", timetoken: 100)
        message.messageActions = [
            try ChatMessageAction(
                type: "reaction", value: "❤️", userId: "bob", channelId: "general", messageTimetoken: 100,
                actionTimetoken: 101)
        ]
        try await store.load(messages: [message], processMessageActions: false)
        #expect(try await store.fetch(store.queries.actions(ofMessage: "m")).isEmpty)
        try await store.load(messages: [message])
        #expect(try await store.fetch(store.queries.actions(ofMessage: "m")).map(\.value) == ["❤️"])
    }
}
