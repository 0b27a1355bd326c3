import Foundation
import ReplicaModel
import Testing
@testable import ReplicaStore

/// Where the store puts the Chat SDK's hidden objects, and how a restriction listing and live
/// events are ordered (`ModerationRows`).
@Suite("Moderation rows: hidden objects and restrictions")
struct ModerationRowsTests {
    typealias Member = ChatMember<DefaultChatCustom>

    static func moderation(_ user: String, _ channel: String, custom: FlatCustom?) throws -> Member {
        try Member(channelId: ChatModeration.moderationChannel(for: channel), userId: user, custom: custom)
    }

    static let ban = ChannelRestriction(userId: "me", channelId: "general", ban: true, mute: false, reason: "spam")
    static let lifted = ChannelRestriction(userId: "me", channelId: "general", ban: false, mute: false)

    @Test("a restriction an event wrote while a listing was read is newer than the listing: neither pruned nor overwritten")
    func eventsDuringAListing() async throws {
        let store = try Fixture.store()
        let restrictions = store.queries.restrictions(of: "me")
        // A ban arrives by event while a listing that started before it (and lacks it) is read.
        try await store.storeTransaction { tx in
            let mark = try tx.moderation.restrictionMark()
            try tx.moderation.write(restriction: Self.ban)
            try tx.moderation.replaceRestrictions(user: "me", listed: [], since: mark, complete: true)
        }
        #expect(try await store.fetch(restrictions) == [Self.ban])
        // A lift arrives while a stale listing that still holds the ban is read.
        try await store.storeTransaction { tx in
            let mark = try tx.moderation.restrictionMark()
            try tx.moderation.write(restriction: Self.lifted)
            try tx.moderation.replaceRestrictions(user: "me", listed: [ListedRestriction(Self.ban, updated: nil, eTag: "a")], since: mark, complete: true)
        }
        #expect(try await store.fetch(restrictions) == [], "the lift is newer than the listing")
        // The next listing settles it either way.
        try await store.storeTransaction { tx in
            let mark = try tx.moderation.restrictionMark()
            try tx.moderation.replaceRestrictions(user: "me", listed: [ListedRestriction(Self.ban, updated: nil, eTag: "b")], since: mark, complete: true)
        }
        #expect(try await store.fetch(restrictions) == [Self.ban])
        // An incomplete listing lifts nothing; a complete one without it lifts it; others' rows leave.
        try await store.storeTransaction { tx in
            try tx.moderation.write(restriction: ChannelRestriction(userId: "other", channelId: "x", ban: true, mute: false))
            try tx.moderation.replaceRestrictions(user: "me", listed: [], since: try tx.moderation.restrictionMark(), complete: false)
        }
        #expect(try await store.fetch(restrictions) == [Self.ban])
        #expect(try await store.fetch(store.queries.restrictions()).count == 1, "another user's restriction left")
        let lifted = try await store.storeTransaction { tx in
            try tx.moderation.replaceRestrictions(user: "me", listed: [], since: try tx.moderation.restrictionMark(), complete: true)
        }
        #expect(lifted == 1)
        #expect(try await store.fetch(restrictions) == [])
    }

    @Test("a moderation membership is stored as a restriction, one without custom data changes nothing, other hidden objects are not stored")
    func hiddenWrites() async throws {
        let store = try Fixture.store()
        try await store.load(members: [try Self.moderation("me", "general", custom: ["ban": .bool(true), "mute": .bool(false), "reason": .string("spam")] as FlatCustom)])
        #expect(try await store.fetch(store.queries.restrictions(of: "me")) == [Self.ban])
        // A membership event that changed only the status carries no custom data: the ban stays.
        try await store.load(members: [try Self.moderation("me", "general", custom: nil)])
        #expect(try await store.fetch(store.queries.restrictions(of: "me")) == [Self.ban])
        try await store.load(members: [try Member(channelId: "PN_PRV.me.mute1", userId: "me")])
        try await store.load(users: [try ChatUser(id: "PN_PRV.me.mute1"), try ChatUser(id: "bot", type: ChatModeration.privateType)])
        try await store.load(channels: [try ChatChannel(id: "PUBNUB_INTERNAL_MODERATION_general"), try ChatChannel(id: "PUBNUB_INTERNAL_THREAD_general_1")])
        #expect(try await store.fetch(store.queries.users()).map(\.id) == [])
        #expect(try await store.fetch(store.queries.channels()).map(\.id) == ["PUBNUB_INTERNAL_THREAD_general_1"], "a thread is not hidden")
        #expect(try await store.fetch(store.queries.memberships(ofUser: "me")).isEmpty)
        // Removing the moderation membership lifts the restriction.
        try await store.storeTransaction { try $0.deleteMember(channelId: "PUBNUB_INTERNAL_MODERATION_general", userId: "me") }
        #expect(try await store.fetch(store.queries.restrictions(of: "me")) == [])
    }
}
