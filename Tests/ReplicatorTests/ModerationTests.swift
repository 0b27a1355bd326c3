import Foundation
import GRDB
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
@testable import Replicator
import Testing

/// Custom data read as JSON on every entity (the moderation custom holds a null reason).
enum WireChat: ChatCustomData {
    typealias User = JSONValue
    typealias Channel = JSONValue
    typealias Member = JSONValue
    typealias Message = JSONValue
}

/// Another client making the Chat SDK's moderation calls over the wire, as `ChatImpl.setRestrictions`,
/// `MutedUsersManagerImpl` and `BaseMessage.report` make them (`pubnub/kmp-chat`).
struct ChatSDKClient {
    let client: PubNubClient

    init(_ server: PubNubServer, userId: String) throws {
        client = try PubNubClient.simulated(InProcessTransport(server: server), userId: userId)
    }

    /// A text message in the Chat SDK's shape; returns its timetoken.
    @discardableResult
    func send(_ text: String, to channel: String) async throws -> Timetoken {
        try await client.publish(PublishRequest(channel: channel, message: ["type": "text", "text": .string(text), "files": []]))
    }

    /// `setRestrictions`: the `pn.prv` moderation channel, the user as its member with
    /// `{ban, mute, reason}` (or removed when neither), then the `moderation` event.
    func restrict(_ user: String, in channel: String, ban: Bool, mute: Bool, reason: String? = nil) async throws {
        let moderation = ChatModeration.moderationChannel(for: channel)
        _ = try await client.perform(try client.appContext.setChannelRequest(
            id: moderation, fields: ChannelEdit<JSONValue>(wireFields: ["type": .string(ChatModeration.privateType)]), ifMatch: nil))
        if ban || mute {
            _ = try await client.appContext.setMembers(
                channelId: moderation,
                set: [MembershipSet<JSONValue>(id: user, custom: ChatModeration.restrictionCustom(ban: ban, mute: mute, reason: reason))],
                as: WireChat.self)
        } else {
            _ = try await client.appContext.setMembers(
                channelId: moderation, set: [MembershipSet<JSONValue>](), remove: [user], as: WireChat.self)
        }
        var event = PublishRequest(
            channel: ChatModeration.eventChannel(for: user),
            message: ChatModeration.moderationEvent(channel: channel, ban: ban, mute: mute, reason: reason))
        event.customMessageType = ChatModeration.moderationMessageType
        _ = try await client.publish(event)
    }

    /// The mute list of this client's user, written whole.
    func writeMuteList(owner: String, _ muted: [String]) async throws {
        _ = try await client.perform(try client.appContext.setUserRequest(
            id: ChatModeration.muteListId(of: owner),
            fields: UserEdit<JSONValue>(wireFields: ChatModeration.muteListFields(owner: owner, muted: muted)), ifMatch: nil))
    }
}

/// What the store holds in the entity tables, read raw: no hidden object may be there.
let hiddenRows = StoreQuery<[String]> { db in
    try String.fetchAll(db, sql: """
        SELECT 'user ' || id FROM users WHERE id LIKE 'PN\\_PRV.%' ESCAPE '\\' OR type = 'pn.prv'
        UNION ALL SELECT 'channel ' || id FROM channels WHERE id LIKE 'PUBNUB\\_INTERNAL\\_MOD%' ESCAPE '\\' OR type = 'pn.prv'
        UNION ALL SELECT 'member ' || channel_id || '/' || user_id FROM members
            WHERE channel_id LIKE 'PUBNUB\\_INTERNAL\\_MOD%' ESCAPE '\\' OR user_id LIKE 'PN\\_PRV.%' ESCAPE '\\'
        UNION ALL SELECT 'message ' || channel_id FROM messages WHERE channel_id LIKE 'PUBNUB\\_INTERNAL\\_MOD%' ESCAPE '\\'
        """)
}

@Suite("Chat SDK moderation: hidden objects, restrictions, the mute list, reports")
struct ModerationTests {
    /// A device of "me", a member of "general" where "troll" and "bob" wrote, on a keyset where a
    /// moderator and the user's other device (the Chat SDK) made every moderation call.
    static func moderatedKeyset() async throws -> (World, ChatSDKClient) {
        let world = try World()
        let admin = try ChatSDKClient(world.server, userId: "admin")
        _ = try await world.outbox.memberships.join(channel: "general")
        _ = try await world.outbox.memberships.join(channel: "side")
        _ = try await world.outbox.drain()
        try await ChatSDKClient(world.server, userId: "troll").send("buy now", to: "general")
        try await ChatSDKClient(world.server, userId: "bob").send("hi all", to: "general")
        let bobClient = try ChatSDKClient(world.server, userId: "bob").client
        _ = try await bobClient.perform(try bobClient.appContext.setUserRequest(
            id: "bob", fields: UserEdit<JSONValue>(wireFields: ["name": "Bob"]), ifMatch: nil))
        try await admin.restrict("me", in: "general", ban: true, mute: false, reason: "spamming")
        try await admin.restrict("me", in: "side", ban: false, mute: true)
        try await admin.restrict("other", in: "general", ban: true, mute: false)
        try await ChatSDKClient(world.server, userId: "me").writeMuteList(owner: "me", ["troll"])
        try await ChatSDKClient(world.server, userId: "other").writeMuteList(owner: "other", ["me"])
        let bobs = await world.server.storedMessages(channel: "general").last?.timetoken
        _ = try await ChatSDKClient(world.server, userId: "bob").client.publish(PublishRequest(
            channel: ChatModeration.moderationChannel(for: "general"),
            message: ChatModeration.reportBody(
                text: "hi all", reason: "rude", messageTimetoken: Timetoken(rawValue: bobs ?? 0), channel: "general", author: "bob")))
        return (world, admin)
    }

    @Test("after a sync no internal channel or private object is a channel, user, membership, message or unread count; restrictions and the mute list are read into their own rows")
    func hiddenAfterSync() async throws {
        let (world, _) = try await Self.moderatedKeyset()
        _ = try await world.reconciler().sync()
        let queries = world.store.queries
        #expect(try await world.store.fetch(hiddenRows) == [])
        let channels = try await world.store.fetch(queries.channels()).map(\.id)
        #expect(channels.allSatisfy { !$0.hasPrefix("PUBNUB_INTERNAL") && !$0.hasPrefix("PN_PRV") }, "\(channels)")
        let users = try await world.store.fetch(queries.users()).map(\.id)
        #expect(users.contains("bob") && !users.contains { $0.hasPrefix("PN_PRV") }, "\(users)")
        #expect(Set(try await world.store.fetch(queries.channelIds(memberOf: "me"))) == ["general", "side"])
        #expect(Set(try await world.store.fetch(queries.unreadCounts(for: "me")).keys) == ["general", "side"])
        let restrictions = try await world.store.fetch(queries.restrictions(of: "me"))
        #expect(restrictions == [
            ChannelRestriction(userId: "me", channelId: "general", ban: true, mute: false, reason: "spamming"),
            ChannelRestriction(userId: "me", channelId: "side", ban: false, mute: true),
        ])
        #expect(try await world.store.fetch(queries.mutedUsers(by: "me")) == ["troll"])
        #expect(try await world.store.fetch(queries.mutedUsers(by: "other")) == [], "only the current user's mute list is kept")
    }

    @Test("a ban refuses every write to the channel and a mute refuses sends, before anything is queued; lifting the ban lets the user send again")
    func restrictionsRefuseBeforeQueueing() async throws {
        let (world, admin) = try await Self.moderatedKeyset()
        _ = try await world.reconciler().sync()
        await #expect(throws: OutboxError.restricted(
            ChannelRestriction(userId: "me", channelId: "general", ban: true, mute: false, reason: "spamming"))) {
            try await world.outbox.messages.send(text: "let me in", to: "general")
        }
        let bob = try #require(try await world.store.fetch(world.store.queries.messages(inChannel: "general")).first)
        await #expect(throws: OutboxError.self) { try await world.outbox.messages.addReaction("👍", toMessage: bob.id) }
        await #expect(throws: OutboxError.restricted(ChannelRestriction(userId: "me", channelId: "side", ban: false, mute: true))) {
            try await world.outbox.messages.send(text: "psst", to: "side")
        }
        await #expect(throws: OutboxError.hiddenChannel("PUBNUB_INTERNAL_MODERATION_general")) {
            try await world.outbox.messages.send(text: "x", to: "PUBNUB_INTERNAL_MODERATION_general")
        }
        #expect(try await world.entries().isEmpty, "nothing was queued")
        // Reporting a message of a channel one is banned from is allowed.
        #expect(try await world.outbox.moderation.report(message: bob.id, reason: "rude").opId != nil)

        try await admin.restrict("me", in: "general", ban: false, mute: false)
        _ = try await world.reconciler().sync()
        #expect(try await world.store.fetch(world.store.queries.restriction(inChannel: "general", for: "me")) == nil)
        let sent = try await world.outbox.messages.send(text: "thanks", to: "general")
        _ = try await world.outbox.drain()
        let id = try #require(sent.value?.id)
        #expect(await world.serverMessageIds("general").filter { $0 == id }.count == 1)
    }

    @Test("muted users' messages are left out of message queries (shown marked on request); mute and unmute are offline writes of the Chat SDK's list")
    func muteList() async throws {
        let (world, _) = try await Self.moderatedKeyset()
        _ = try await world.reconciler().sync()
        let queries = world.store.queries
        let shown = try await world.store.fetch(queries.messages(inChannel: "general"))
        #expect(shown.map(\.userId) == ["bob"])
        let all = try await world.store.fetch(queries.messages(inChannel: "general", includeMuted: true))
        #expect(all.map(\.userId) == ["troll", "bob"] && all.map(\.isFromMutedUser) == [true, false])

        world.transport.use(FaultPlan(seed: 2, profile: .offline))
        let unmute = try await world.outbox.moderation.unmute(users: ["troll"])
        let mute = try await world.outbox.moderation.mute(users: ["bob", "zed"])
        #expect(unmute.value == [] && mute.value == ["bob", "zed"])
        #expect(mute.disposition == .merged(into: try #require(unmute.opId)), "one write for both")
        #expect(try await world.store.fetch(queries.messages(inChannel: "general")).map(\.userId) == ["troll"], "at once, offline")
        world.transport.use(FaultPlan(seed: 2, profile: .none))
        _ = try await world.outbox.drain()
        let object = try await ChatSDKClient(world.server, userId: "me").client.appContext.getUser(
            id: "PN_PRV.me.mute1", as: JSONValue.self)
        #expect(object.name == "me" && object.type == "pn.prv" && object.custom == ["m": "bob,zed"])
        // The next sync reads the same list back.
        _ = try await world.reconciler().sync()
        #expect(try await world.store.fetch(queries.mutedUsers(by: "me")) == ["bob", "zed"])
        #expect(try await world.store.fetch(hiddenRows) == [])
    }

    @Test("two devices of one user mute and unmute offline: each write merges with the server's list, so no mute is lost")
    func muteListMergesAcrossDevices() async throws {
        let (phone, _) = try await Self.moderatedKeyset()
        let laptop = try World(seed: 3, clock: phone.clock, server: phone.server)
        _ = try await phone.reconciler().sync()
        _ = try await laptop.reconciler().sync()
        phone.transport.use(FaultPlan(seed: 4, profile: .offline))
        laptop.transport.use(FaultPlan(seed: 5, profile: .offline))
        _ = try await phone.outbox.moderation.mute(users: ["ann"])
        _ = try await laptop.outbox.moderation.mute(users: ["ben"])
        _ = try await laptop.outbox.moderation.unmute(users: ["troll"])
        phone.transport.use(FaultPlan(seed: 4, profile: .none))
        laptop.transport.use(FaultPlan(seed: 5, profile: .none))
        _ = try await phone.outbox.drain()
        _ = try await laptop.outbox.drain()
        let object = try await ChatSDKClient(phone.server, userId: "me").client.appContext.getUser(id: "PN_PRV.me.mute1", as: JSONValue.self)
        #expect(object.custom == ["m": "ann,ben"], "the phone's mute kept, the laptop's mute and unmute applied")
        #expect(try await laptop.store.fetch(laptop.store.queries.mutedUsers(by: "me")) == ["ann", "ben"], "the answer is stored")
        _ = try await phone.reconciler().sync()
        #expect(try await phone.store.fetch(phone.store.queries.mutedUsers(by: "me")) == ["ann", "ben"])
    }

    @Test("a mute made while a mute list write reads the server's list goes with that write; a pull while offline shows the change over the server's list")
    func muteWhileTheListIsRead() async throws {
        let (world, _) = try await Self.moderatedKeyset()
        _ = try await world.reconciler().sync()
        let gate = RequestGate { $0.pathSegments.contains("PN_PRV.me.mute1") && $0.method == .get }
        world.transport.onRequest { await gate.pass($0) }
        let first = try await world.outbox.moderation.mute(users: ["ann"])
        let drain = Task { try await world.outbox.drain() }
        await gate.waitUntilHolding()
        let second = try await world.outbox.moderation.mute(users: ["ben"])
        #expect(second.disposition == .merged(into: try #require(first.opId)), "the op has not been marked in flight yet")
        await gate.open()
        _ = try await drain.value
        _ = try await world.outbox.drain()
        let object = try await ChatSDKClient(world.server, userId: "me").client.appContext.getUser(id: "PN_PRV.me.mute1", as: JSONValue.self)
        #expect(object.custom == ["m": "ann,ben,troll"], "ben, muted during the read, went with the write")
        #expect(try await world.store.fetch(world.store.queries.mutedUsers(by: "me")) == ["ann", "ben", "troll"])
        #expect(try await world.entries().isEmpty)

        // Offline: mute zed; another device unmutes troll; a pull shows both changes.
        world.transport.use(FaultPlan(seed: 6, profile: .offline))
        _ = try await world.outbox.moderation.mute(users: ["zed"])
        try await ChatSDKClient(world.server, userId: "me").writeMuteList(owner: "me", ["ann", "ben"])
        world.transport.use(FaultPlan(seed: 6, profile: .none))
        _ = try await world.reconciler().pullMuteList()
        #expect(try await world.store.fetch(world.store.queries.mutedUsers(by: "me")) == ["ann", "ben", "zed"])
    }

    @Test("every way a write joins the queue honours a ban: an edit folded into an unsent send, a thread reply, a private object as a user")
    func coalescingPathsHonourRestrictions() async throws {
        let (world, admin) = try await Self.moderatedKeyset()
        _ = try await world.reconciler().sync()
        // A send queued to "open" before a ban there, still unsent.
        world.transport.use(FaultPlan(seed: 7, profile: .offline))
        let sent = try await world.outbox.messages.send(text: "before the ban", to: "open")
        let id = try #require(sent.value?.id)
        world.transport.use(FaultPlan(seed: 7, profile: .none))
        try await admin.restrict("me", in: "open", ban: true, mute: false)
        _ = try await world.reconciler().pullObjects()
        world.transport.use(FaultPlan(seed: 7, profile: .offline))
        await #expect(throws: OutboxError.self) { try await world.outbox.messages.edit(message: id, text: "edited after the ban") }
        let ops = try await world.entries()
        #expect(ops.map(\.kind) == [.send], "the refused edit queued nothing and changed no op")
        guard let send = try #require(ops.first).operation.send else { return }
        let (channel, message) = (send.channel, send.message)
        #expect(channel == "open" && message.objectValue?["text"] == "before the ban")
        // A thread of a banned channel has the channel's ban; a muted user may not edit either.
        await #expect(throws: OutboxError.self) {
            try await world.outbox.messages.send(text: "in a thread", to: ChatSDKFormat.threadChannel(of: "general", root: Timetoken(rawValue: 17_000_000_000_000_000)))
        }
        await #expect(throws: OutboxError.hiddenUser("PN_PRV.me.mute1")) { try await world.outbox.metadata.removeUser(id: "PN_PRV.me.mute1") }
        await #expect(throws: OutboxError.hiddenUser("PN_PRV.x")) { try await world.outbox.moderation.mute(users: ["PN_PRV.x"]) }
    }

    @Test("live sync follows the moderation event channel and the mute list only when the token lets them be read")
    func followsWhatTheTokenGrants() async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        await server.configureAccess(secretKey: "sec-c-test")
        let narrow = try await server.grantToken(
            ttlMinutes: 60, grants: AccessGrants(resources: [.channel: ["general": [.read, .write], "me": [.read]]]),
            authorizedUserId: "me")
        let device = try SimulatedDevice<DefaultChatCustom>(
            server: server, clock: clock, userId: "me", plan: FaultPlan(seed: 1, profile: .none), authToken: narrow)
        let live = LiveSync(reconciler: device.reconciler, options: LiveSyncOptions(), clock: clock, random: SplitMix64(seed: 1))
        #expect(try await live.followedChannels().all == ["me"])
        _ = try device.client.access.setToken(try await RequestBudgetTests.everywhereToken(server, user: "me"))
        #expect(try await live.followedChannels().all == ["PN_PRV.me.mute1", "PUBNUB_INTERNAL_MODERATION.me", "me"])
    }

    @Test("a report reaches the moderation channel exactly once, in the Chat SDK's shape, through faults and a crash")
    func reportExactlyOnce() async throws {
        for seed in UInt64(1)...20 {
            let path = World.temporaryPath()
            let (world, _) = try await Self.moderatedKeyset()
            _ = try await world.reconciler().sync()
            let bob = try #require(try await world.store.fetch(world.store.queries.messages(inChannel: "general")).first)
            let crashed = try World(seed: seed, path: path, clock: world.clock, server: world.server)
            _ = try await crashed.reconciler().sync()
            crashed.transport.use(FaultPlan(seed: seed, profile: .flaky))
            let receipt = try await crashed.outbox.moderation.report(message: bob.id, reason: "spam \(seed)")
            _ = try? await crashed.outbox.drain()
            let recovered = try crashed.reopened(seed: seed + 100, profile: .flaky, path: path)
            for _ in 0..<20 where !(try await recovered.entries().isEmpty) {
                _ = try? await recovered.outbox.drain()
                recovered.clock.advance(by: 60)
            }
            #expect(try await recovered.entries().isEmpty, "seed \(seed)")
            let reports = await world.server.storedMessages(channel: "PUBNUB_INTERNAL_MODERATION_general")
                .filter { $0.message.objectValue?["reason"] == .string("spam \(seed)") }
            #expect(reports.count == 1, "seed \(seed): \(reports.count) reports")
            let body = try #require(reports.first?.message.objectValue)
            #expect(body["type"] == "report" && body["reportedUserId"] == "bob" && body["reportedMessageChannelId"] == "general")
            #expect(body["reportedMessageTimetoken"] == .string(String(try #require(bob.timetoken).rawValue)) && body["text"] == "hi all")
            #expect(receipt.value == .object(body), "the op's body is what the server holds")
        }
    }

    @Test("live: a ban, a lift and a mute list change made elsewhere reach the store without a sync")
    func live() async throws {
        let world = try await LiveWorld()
        try await world.join(["me"], ["general"])
        let (device, live) = try world.device("me")
        try await LiveWorld.settle(live)
        let fills = await live.statistics.fills
        let admin = try ChatSDKClient(world.server, userId: "admin")
        try await admin.restrict("me", in: "general", ban: true, mute: false, reason: "cool off")
        try await LiveWorld.settle(live)
        let restriction = try await device.store.fetch(device.store.queries.restriction(inChannel: "general", for: "me"))
        #expect(restriction?.ban == true && restriction?.reason == "cool off")
        await #expect(throws: OutboxError.self) { try await device.outbox.messages.send(text: "x", to: "general") }
        try await admin.restrict("me", in: "general", ban: false, mute: false)
        try await LiveWorld.settle(live)
        #expect(try await device.store.fetch(device.store.queries.restrictions(of: "me")) == [])
        try await ChatSDKClient(world.server, userId: "me").writeMuteList(owner: "me", ["troll"])
        try await LiveWorld.settle(live)
        #expect(try await device.store.fetch(device.store.queries.mutedUsers(by: "me")) == ["troll"])
        #expect(await live.statistics.fills == fills, "all of it from live events, no fill")
        #expect(try await device.store.fetch(hiddenRows) == [])
        #expect(try await device.store.fetch(device.store.queries.channels()).allSatisfy { !$0.id.hasPrefix("PUBNUB_INTERNAL") })
    }
}
