import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
@testable import Replicator
import Testing

/// Another client writing conversations over the wire as the Chat SDK does (`pubnub/kmp-chat`,
/// `ChatImpl.createDirectConversation`, `BaseChannel.invite`, `emitUserMention`,
/// `ThreadChannelImpl`).
struct ChatSDKConversations {
    let chat: ChatSDKClient
    let user: String

    init(_ server: PubNubServer, userId: String) throws {
        chat = try ChatSDKClient(server, userId: userId)
        user = userId
    }

    var client: PubNubClient { chat.client }

    /// `createDirectConversation(with:)`: the channel only where none exists, the host's
    /// membership, then `invite`.
    func openDirect(with other: String) async throws -> String {
        let id = ChatSDKFormat.directChannelId(user, other)
        do {
            _ = try await client.appContext.getChannel(id: id, as: JSONValue.self)
        } catch {
            _ = try await client.appContext.setChannel(
                id: id, fields: ChannelEdit<JSONValue>(wireFields: ["name": .string(id), "type": "direct"]), ifMatch: nil)
        }
        _ = try await client.appContext.setMemberships(userId: user, set: [MembershipSet<JSONValue>(id: id)], as: WireChat.self)
        try await invite(other, to: id, type: "direct")
        return id
    }

    /// `invite`: nothing for a member; else a pending membership, its read position, the event.
    func invite(_ other: String, to channel: String, type: String) async throws {
        let members = try await client.appContext.getMembers(channelId: channel, ObjectListQuery(filter: "uuid.id == '\(other)'"), as: WireChat.self)
        guard members.data.isEmpty else { return }
        _ = try await client.appContext.setMemberships(
            userId: other, set: [MembershipSet<JSONValue>(id: channel, status: "pending")], as: WireChat.self)
        _ = try await client.appContext.setMemberships(
            userId: other, set: [MembershipSet<JSONValue>(id: channel, custom: [ChatSDKFormat.lastReadKey: "17000000000000000"])],
            as: WireChat.self)
        _ = try await client.publish(PublishRequest(
            channel: other, message: ChatConversations.inviteEvent(channelType: type, channelId: channel)))
    }

    /// A text mentioning `mentioned`, then the mention event on their channel.
    @discardableResult
    func send(_ text: String, to channel: String, mentioning mentioned: String? = nil, parent: String? = nil) async throws -> Timetoken {
        let tt = try await chat.send(text, to: channel)
        if let mentioned {
            _ = try await client.publish(PublishRequest(
                channel: mentioned, message: ChatSDKFormat.mentionEvent(messageTimetoken: tt, channel: channel, parentChannel: parent)))
        }
        return tt
    }

    /// A thread reply as `ThreadChannelImpl` makes the first one: the thread channel's metadata,
    /// the `threadRootId` action on the root, then the reply.
    @discardableResult
    func reply(_ text: String, in channel: String, to root: Timetoken, mentioning mentioned: String? = nil) async throws -> Timetoken {
        let thread = ChatSDKFormat.threadChannel(of: channel, root: root)
        _ = try await client.appContext.setChannel(
            id: thread,
            fields: ChannelEdit<JSONValue>(wireFields: ["description": .string(ChatConversations.threadDescription(channel: channel, root: root))]),
            ifMatch: nil)
        let actions = try await client.messageActions.messageActionPages(channel: channel, end: root).reduce(into: []) { $0 += $1.data }
        if !actions.contains(where: { $0.messageTimetoken == root && $0.type == ChatSDKFormat.threadRootType }) {
            _ = try await client.messageActions.addMessageAction(channel: channel, messageTimetoken: root, type: ChatSDKFormat.threadRootType, value: thread)
        }
        return try await send(text, to: thread, mentioning: mentioned, parent: mentioned == nil ? nil : channel)
    }
}

extension World {
    /// A device (user `me`) whose joins of `channels` have reached the simulator.
    static func joined(_ channels: [String]) async throws -> World {
        let world = try World()
        for channel in channels { _ = try await world.outbox.memberships.join(channel: channel) }
        _ = try await world.outbox.drain()
        return world
    }
}

@Suite("Chat SDK conversations: direct and group channels, invitations, mentions, threads, forwarding")
struct ConversationTests {
    @Test("a direct conversation opened offline gets the Chat SDK's channel id, type, the host's membership, a pending invitation and one invite event")
    func directOffline() async throws {
        let world = try World()
        let opened = try await world.outbox.conversations.openDirectConversation(with: "bob")
        #expect(opened.channelId == ChatSDKFormat.directChannelId("me", "bob"))
        #expect(opened.channel?.type == "direct" && opened.membership?.status == "joined" && opened.invitations.map(\.status) == ["pending"])
        #expect(try await world.store.fetch(world.store.queries.invitations(for: "bob")).map(\.channelId) == [opened.channelId])
        // Again: the store holds everything, nothing more is queued.
        let again = try await world.outbox.conversations.openDirectConversation(with: "bob")
        #expect(again.opIds.isEmpty && again.channelId == opened.channelId)
        _ = try await world.outbox.messages.send(text: "hi bob", to: opened.channelId)
        let report = try await world.outbox.drain()
        let left = try await world.entries()
        #expect(report.deadLetters == 0 && left.isEmpty, "\(left)")

        let observer = try world.observer()
        let channel = try await observer.appContext.getChannel(id: opened.channelId, as: JSONValue.self)
        #expect(channel.type == "direct" && channel.name == opened.channelId)
        let members = try await observer.appContext.getMembers(channelId: opened.channelId, as: WireChat.self).data
        #expect(Set(members.map { "\($0.uuid.id):\($0.status ?? "-")" }) == ["me:joined", "bob:pending"])
        let events = await world.server.storedMessages(channel: "bob")
        #expect(events.map(\.message) == [ChatConversations.inviteEvent(channelType: "direct", channelId: opened.channelId)])
        #expect(await world.server.storedMessages(channel: opened.channelId).count == 1)
    }

    @Test("both users open the direct conversation offline: one channel, two memberships, each invitation only where none existed, every message once")
    func directFromBothSides() async throws {
        let world = try World()
        let bob = try ChatSDKConversations(world.server, userId: "bob")
        _ = try await world.outbox.conversations.openDirectConversation(with: "bob")
        _ = try await world.outbox.messages.send(text: "from me", to: ChatSDKFormat.directChannelId("me", "bob"))
        // Bob's Chat SDK opens it first (it finds no channel, creates it and invites me).
        let id = try await bob.openDirect(with: "me")
        try await bob.send("from bob", to: id)
        #expect(id == ChatSDKFormat.directChannelId("me", "bob"))
        _ = try await world.sync()
        #expect(try await world.entries().isEmpty)
        let members = try await world.observer().appContext.getMembers(channelId: id, as: WireChat.self).data
        #expect(members.count == 2)
        #expect(members.first { $0.uuid.id == "bob" }?.status == nil, "bob's own membership is kept, not made pending")
        #expect(members.first { $0.uuid.id == "me" }?.status == "pending", "my membership write is create-only: bob's invitation stays, as in the Chat SDK")
        #expect(await world.server.storedMessages(channel: "bob").isEmpty, "no invitation to a member")
        let texts = await world.server.storedMessages(channel: id).map { $0.message.objectValue?["text"]?.stringValue ?? "" }
        #expect(texts.sorted() == ["from bob", "from me"])
        let stored = try await world.store.fetch(world.store.queries.messages(inChannel: id)).map(\.shownText)
        #expect(stored.sorted() == ["from bob", "from me"])
        #expect(try await world.store.fetch(world.store.queries.invitations(for: "me")).map(\.channelId) == [id])
    }

    @Test("an invitation and a mention on the user's channel are stored as events, not messages: the invitation with its inviter, the mention resolved to its message")
    func invitationsAndMentions() async throws {
        let world = try await World.joined(["general"])
        let alice = try ChatSDKConversations(world.server, userId: "alice")
        _ = try await alice.client.appContext.setChannel(id: "team", fields: ChannelEdit<JSONValue>(wireFields: ["type": "group"]), ifMatch: nil)
        try await alice.invite("me", to: "team", type: "group")
        let tt = try await alice.send("hey [me](pn-user://me)", to: "general", mentioning: "me")
        _ = try await world.sync()
        #expect(try await world.store.fetch(world.store.queries.messages(inChannel: "me")).isEmpty)
        let invitations = try await world.store.fetch(world.store.queries.invitations(for: "me"))
        #expect(invitations.map(\.channelId) == ["team"])
        #expect(invitations.first?.event?.publisher == "alice")
        #expect(invitations.first?.event?.kind == .invite(channelType: "group", channel: "team"))
        let feed = try await world.store.fetch(world.store.queries.mentions(of: "me"))
        #expect(feed.count == 1)
        #expect(feed.first?.event.kind == .mention(messageTimetoken: tt, channel: "general", parentChannel: nil))
        #expect(feed.first?.message.shownText == "hey [me](pn-user://me)")
        // Accepting: the join replaces `pending`.
        _ = try await world.outbox.conversations.acceptInvitation(to: "team")
        #expect(try await world.store.fetch(world.store.queries.invitations(for: "me")).isEmpty)
        _ = try await world.outbox.drain()
        let member = try await world.observer().appContext.getMembers(channelId: "team", as: WireChat.self).data.first { $0.uuid.id == "me" }
        #expect(member?.status == "joined")
        // A second sync stores nothing twice.
        let again = try await world.sync()
        #expect(again.history.reduce(0) { $0 + $1.events } == 0)
        #expect(try await world.store.fetch(world.store.queries.mentions(of: "me")).count == 1)
    }

    @Test("a thread: reply count and hasThread from the store, the replies pulled from the thread channel in the sync that learns the root, a mention in a reply carries the parent channel")
    func threads() async throws {
        let world = try await World.joined(["general"])
        let alice = try ChatSDKConversations(world.server, userId: "alice")
        let root = try await alice.send("root", to: "general")
        try await alice.send("plain", to: "general")
        try await alice.reply("first", in: "general", to: root)
        let second = try await alice.reply("second [me](pn-user://me)", in: "general", to: root, mentioning: "me")
        // Actions (a thread's `threadRootId` among them) are listed for the channels the app
        // marked hot (the one on screen), and arrive live on the followed ones.
        try await world.reconciler.markHot("general")
        // One sync: the reactions name the thread, and its channel is pulled in the same sync.
        let sync = try await world.sync()
        #expect(sync.history.contains { $0.channel == ChatSDKFormat.threadChannel(of: "general", root: root) && $0.inserted == 2 })
        let messages = try await world.store.fetch(world.store.queries.messages(inChannel: "general"))
        #expect(messages.filter(\.hasThread).map(\.shownText) == ["root"])
        let threads = try await world.store.fetch(world.store.queries.threads(inChannel: "general"))
        #expect(threads.count == 1 && threads.first?.replyCount == 2 && threads.first?.newestReply == second)
        #expect(threads.first?.channelId == ChatSDKFormat.threadChannel(of: "general", root: root))
        let replies = try await world.store.fetch(world.store.queries.replies(inChannel: "general", root: root)).map(\.shownText)
        #expect(replies == ["first", "second [me](pn-user://me)"])
        let feed = try await world.store.fetch(world.store.queries.mentions(of: "me"))
        #expect(feed.first?.event.kind == .mention(
            messageTimetoken: second, channel: ChatSDKFormat.threadChannel(of: "general", root: root), parentChannel: "general"))
        #expect(feed.first?.message.shownText == "second [me](pn-user://me)")
    }

    @Test("a first reply from this device creates the thread channel (only where none exists) and the root's action; a thread id over the limit is refused")
    func replyCreatesThread() async throws {
        let world = try await World.joined(["general"])
        let root = try await ChatSDKConversations(world.server, userId: "alice").send("root", to: "general")
        _ = try await world.sync()
        let key = DraftKey(channelId: "general", threadRoot: root)
        _ = try await world.store.drafts.edit(key) { $0.update(text: "my reply") }
        _ = try await world.outbox.messages.send(draft: key)
        _ = try await world.outbox.drain()
        #expect(try await world.entries().isEmpty)
        let thread = ChatSDKFormat.threadChannel(of: "general", root: root)
        let channel = try await world.observer().appContext.getChannel(id: thread, as: JSONValue.self)
        #expect(channel.details == ChatConversations.threadDescription(channel: "general", root: root))
        #expect(await world.server.storedMessages(channel: thread).count == 1)

        // A channel id of 80 bytes: its thread id would be 121, over PubNub's 92.
        let long = String(repeating: "c", count: 80)
        _ = try await world.outbox.memberships.join(channel: long)
        let tt = try await ChatSDKConversations(world.server, userId: "alice").send("root", to: long)
        _ = try await world.sync()
        let longKey = DraftKey(channelId: long, threadRoot: tt)
        _ = try await world.store.drafts.edit(longKey) { $0.update(text: "reply") }
        await #expect(throws: ModelValidationError.identifierTooLong(field: "threadChannel", bytes: 121, limit: 92)) {
            try await world.outbox.messages.send(draft: longKey)
        }
        // One the server gave is stored as given.
        let given = ChatSDKFormat.threadChannel(of: long, root: tt)
        try await ChatSDKConversations(world.server, userId: "alice").send("theirs", to: given)
        _ = try await world.sync()
        _ = try await world.sync()
        #expect(try await world.store.fetch(world.store.queries.messages(inChannel: given)).isEmpty, "no action names it yet")
    }

    @Test("forwarding: a new message with the original's content and files, its meta and the two keys; the same channel is refused")
    func forward() async throws {
        let world = try await World.joined(["general"])
        let alice = try ChatSDKConversations(world.server, userId: "alice")
        _ = try await alice.client.publish(PublishRequest(
            channel: "general",
            message: ["type": "text", "text": "look", "files": [["name": "cat.png", "id": "f-1", "url": "https://files.example/general/f-1/cat.png", "type": "image/png"]]],
            meta: ["quotedMessage": ["timetoken": "1"]]))
        _ = try await world.sync()
        let original = try #require(try await world.store.fetch(world.store.queries.messages(inChannel: "general")).first)
        await #expect(throws: OutboxError.forwardToSameChannel("general")) {
            try await world.outbox.conversations.forward(message: original.id, to: "general")
        }
        let receipt = try await world.outbox.conversations.forward(message: original.id, to: "elsewhere")
        #expect(receipt.value?.id != original.id && receipt.value?.channelId == "elsewhere")
        _ = try await world.outbox.drain()
        let sent = try #require(await world.server.storedMessages(channel: "elsewhere").first)
        #expect(ChatSDKFormat.text(ofBody: sent.message) == "look")
        #expect(sent.message.objectValue?["files"] == .array(original.files.map(\.chatSDKValue)) && original.files.count == 1,
                "the original's files go along as listed: \(sent.message)")
        _ = try await world.reconciler.pullHistory(channels: ["elsewhere"])
        let stored = try #require(try await world.store.fetch(world.store.queries.messages(inChannel: "elsewhere")).first)
        #expect(stored.files.map(\.id) == ["f-1"] && stored.id == receipt.value?.id)
        let history = try await world.observer().history.fetchHistory(HistoryQuery(channels: ["elsewhere"]))
        let meta = history.channels["elsewhere"]?.first?.meta?.objectValue
        #expect(meta?["originalPublisher"] == "alice" && meta?["originalChannelId"] == "general")
        #expect(meta?["quotedMessage"] == ["timetoken": "1"], "the original's meta is kept")
    }

    @Test("user events parse only when well formed")
    func userEventParsing() {
        #expect(ChatUserEvent.kind(ofBody: ["type": "mention", "messageTimetoken": "17", "channel": "c"])
            == .mention(messageTimetoken: Timetoken(rawValue: 17), channel: "c", parentChannel: nil))
        #expect(ChatUserEvent.kind(ofBody: ["type": "mention", "messageTimetoken": 17, "channel": "c", "parentChannel": "p"])
            == .mention(messageTimetoken: Timetoken(rawValue: 17), channel: "c", parentChannel: "p"))
        #expect(ChatUserEvent.kind(ofBody: ["type": "invite", "channelId": "c"]) == .invite(channelType: "unknown", channel: "c"))
        #expect(ChatUserEvent.kind(ofBody: ["type": "mention", "messageTimetoken": "x", "channel": "c"]) == nil)
        #expect(ChatUserEvent.kind(ofBody: ["type": "mention", "messageTimetoken": "1", "channel": ""]) == nil)
        #expect(ChatUserEvent.kind(ofBody: ["type": "invite"]) == nil)
        #expect(ChatUserEvent.kind(ofBody: ["type": "text", "text": "hi"]) == nil)
        #expect(ChatUserEvent.kind(ofBody: "mention") == nil)
    }

    @Test("a stored thread id may exceed 92 bytes when its parent does not; one this device makes may not")
    func threadIdLimits() throws {
        let parent = String(repeating: "p", count: 92)
        let thread = ChatSDKFormat.threadChannel(of: parent, root: Timetoken(rawValue: 17_000_000_000_000_000))
        try Validation.validateStoredIdentifier(thread, field: "channel")
        #expect(throws: ModelValidationError.self) { try Validation.validateIdentifier(thread, field: "channel") }
        #expect(throws: ModelValidationError.self) {
            try Validation.validateStoredIdentifier(ChatSDKFormat.threadChannel(of: parent + "p", root: Timetoken(rawValue: 1)), field: "c")
        }
        #expect(throws: ModelValidationError.self) {
            try Validation.validateStoredIdentifier(String(repeating: "x", count: 93), field: "c")
        }
    }

    @Test("push registration is an offline op per change, sent in order; the server's registrations follow (FCM and APNs2)")
    func pushRegistration() async throws {
        let world = try World()
        let fcm = try PushDevice(token: "fcm-token-1", type: .fcm)
        let apns = try PushDevice(token: "a1b2c3", type: .apns2(topic: "com.example.chat", environment: .production))
        _ = try await world.outbox.push.registerPush(fcm, channels: ["general", "direct.1"])
        _ = try await world.outbox.push.registerPush(apns, channels: ["general"])
        _ = try await world.outbox.push.unregisterPush(fcm, channels: ["general"])
        await #expect(throws: OutboxError.self) { try await world.outbox.push.registerPush(fcm, channels: []) }
        await #expect(throws: ModelValidationError.self) { try await world.outbox.push.registerPush(fcm, channels: ["a,b"]) }
        #expect(await world.server.pushChannels(of: fcm).isEmpty, "nothing sent offline")
        _ = try await world.outbox.drain()
        #expect(try await world.entries().isEmpty)
        #expect(await world.server.pushChannels(of: fcm) == ["direct.1"])
        #expect(await world.server.pushChannels(of: apns) == ["general"])
        _ = try await world.outbox.push.removePushDevice(apns)
        _ = try await world.outbox.drain()
        #expect(await world.server.pushChannels(of: apns).isEmpty)
    }

    @Test("with a push configuration, a chat-text message and its mention events carry the Chat SDK's push keys; without one, none")
    func pushKeys() async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        var options = OutboxOptions()
        options.push = ChatPushConfiguration(sendPushes: true, apnsTopic: "com.example.chat")
        let world = try SimulatedDevice<DefaultChatCustom>(server: server, clock: clock, outboxOptions: options)
        var user = UserEdit<FlatCustom>()
        user.name = .set("Me Myself")
        var channel = ChannelEdit<FlatCustom>()
        channel.name = .set("General")
        _ = try await world.outbox.metadata.setUser(id: "me", edit: user)
        _ = try await world.outbox.metadata.setChannel(id: "general", edit: channel)
        var draft = MessageDraft()
        try draft.insertText(offset: 0, text: "hi bob")
        try draft.addMention(offset: 3, length: 3, target: .user("bob"))
        _ = try await world.outbox.messages.send(draft: draft, in: DraftKey(channelId: "general"))
        _ = try await world.outbox.drain()
        let expected = ChatPushPayload.keys(
            title: "Me Myself", body: "hi [bob](pn-user://bob)", channelName: "General", configuration: try #require(options.push))
        let message = try #require(await server.storedMessages(channel: "general").first?.message.objectValue)
        #expect(message["pn_fcm"] == expected["pn_fcm"] && message["pn_apns"] == expected["pn_apns"] && message["pn_apns"] != nil)
        let mention = try #require(await server.storedMessages(channel: "bob").first?.message.objectValue)
        #expect(mention["type"] == "mention" && mention["pn_fcm"] == expected["pn_fcm"] && mention["pn_apns"] == expected["pn_apns"])
        // A batch prepares its bodies before its transaction, without the store's push settings:
        // a chat-text message in it is prepared again with the keys; a plain one gets none.
        _ = try await world.outbox.messages.send(many: [
            OutgoingMessage(text: "batch", to: "general", contentType: ChatSDKFormat.textContentType),
            OutgoingMessage(text: "plain", to: "general"),
        ])
        _ = try await world.outbox.drain()
        let batched = await server.storedMessages(channel: "general").suffix(2).compactMap(\.message.objectValue)
        let batchKeys = ChatPushPayload.keys(
            title: "Me Myself", body: "batch", channelName: "General", configuration: try #require(options.push))
        #expect(batched.map { $0["text"] } == ["batch", "plain"])
        #expect(batched.first?["pn_apns"] == batchKeys["pn_apns"] && batched.first?["pn_fcm"] == batchKeys["pn_fcm"] && batchKeys["pn_apns"] != nil)
        #expect(batched.last?["pn_apns"] == nil && batched.last?["pn_fcm"] == nil)

        let plain = try World(server: server)
        _ = try await plain.outbox.messages.send(draft: draft, in: DraftKey(channelId: "general"))
        _ = try await plain.outbox.drain()
        let second = try #require(await server.storedMessages(channel: "general").last?.message.objectValue)
        #expect(second["pn_fcm"] == nil && second["pn_apns"] == nil && second["type"] == "text")
    }

    @Test("live: an invitation and a mention on the user's channel reach the invitations and the mentions feed without a sync")
    func liveEvents() async throws {
        let world = try await LiveWorld()
        try await world.join(["me"], ["general"])
        let (device, live) = try world.device("me")
        try await LiveWorld.settle(live)
        // The user's channel is filled after a gap like a channel with messages.
        #expect(try await live.followedChannels().messages == ["general", "me"])
        let alice = try ChatSDKConversations(world.server, userId: "alice")
        _ = try await alice.client.appContext.setChannel(id: "team", fields: ChannelEdit<JSONValue>(wireFields: ["type": "group"]), ifMatch: nil)
        try await alice.invite("me", to: "team", type: "group")
        let tt = try await alice.send("hi [me](pn-user://me)", to: "general", mentioning: "me")
        try await LiveWorld.settle(live)
        let feed = try await device.store.fetch(device.store.queries.mentions(of: "me"))
        #expect(feed.map(\.event.kind) == [.mention(messageTimetoken: tt, channel: "general", parentChannel: nil)])
        #expect(feed.first?.message.shownText == "hi [me](pn-user://me)")
        let invitations = try await device.store.fetch(device.store.queries.invitations(for: "me"))
        #expect(invitations.first?.event?.kind == .invite(channelType: "group", channel: "team"), "\(invitations)")
        #expect(try await device.store.fetch(device.store.queries.messages(inChannel: "me")).isEmpty)
    }

    @Test("removing a thread removes its root's action and deletes its channel; restoring adds the action back; soft marks the channel deleted and restore clears it; another user's thread is refused")
    func removeAndRestoreThread() async throws {
        let world = try await World.joined(["general"])
        let alice = try ChatSDKConversations(world.server, userId: "alice")
        let theirs = try await alice.send("their root", to: "general")
        try await alice.reply("a reply", in: "general", to: theirs)
        let root = try await alice.send("root", to: "general")
        try await world.reconciler.markHot("general")
        _ = try await world.sync()
        let stored = try await world.store.fetch(world.store.queries.messages(inChannel: "general"))
        let started = try #require(stored.first { $0.timetoken == theirs })
        await #expect(throws: OutboxError.notAllowedToChange(messageId: started.id, author: "alice")) {
            try await world.outbox.conversations.removeThread(ofMessage: started.id)
        }
        let message = try #require(stored.first { $0.timetoken == root })
        await #expect(throws: OutboxError.noThread(message.id)) { try await world.outbox.conversations.removeThread(ofMessage: message.id) }
        let key = DraftKey(channelId: "general", threadRoot: root)
        _ = try await world.store.drafts.edit(key) { $0.update(text: "my reply") }
        _ = try await world.outbox.messages.send(draft: key)
        _ = try await world.outbox.drain()
        let thread = ChatSDKFormat.threadChannel(of: "general", root: root)

        #expect(try await world.outbox.conversations.removeThread(ofMessage: message.id).count == 2)
        #expect(try await world.store.fetch(world.store.queries.threads(inChannel: "general")).map(\.root.id) == [started.id], "gone at once")
        _ = try await world.outbox.drain()
        #expect(try await world.entries().isEmpty)
        let actions = try await world.observer().messageActions.messageActionPages(channel: "general", end: root).reduce(into: []) { $0 += $1.data }
        #expect(!actions.contains { $0.type == ChatSDKFormat.threadRootType && $0.messageTimetoken == root })
        await #expect(throws: WireError.self) { try await world.observer().appContext.getChannel(id: thread, as: JSONValue.self) }

        // A hard removal deleted the thread channel: as in the Chat SDK, nothing to restore.
        #expect(try await world.outbox.conversations.restoreThread(ofMessage: message.id).isEmpty)
        #expect(try await world.entries().isEmpty)

        // Soft: the channel is kept with status `deleted`; restore clears it.
        let other = try await alice.send("other root", to: "general")
        _ = try await world.sync()
        let second = try #require(try await world.store.fetch(world.store.queries.messages(inChannel: "general")).first { $0.timetoken == other })
        let otherKey = DraftKey(channelId: "general", threadRoot: other)
        _ = try await world.store.drafts.edit(otherKey) { $0.update(text: "another reply") }
        _ = try await world.outbox.messages.send(draft: otherKey)
        _ = try await world.outbox.drain()
        let secondThread = ChatSDKFormat.threadChannel(of: "general", root: other)
        #expect(try await world.store.fetch(world.store.queries.channel(id: secondThread)) != nil)
        #expect(try await world.outbox.conversations.removeThread(ofMessage: second.id, soft: true).count == 2)
        _ = try await world.outbox.drain()
        #expect(try await world.observer().appContext.getChannel(id: secondThread, as: JSONValue.self).status == "deleted")
        #expect(try await world.outbox.conversations.restoreThread(ofMessage: second.id).count == 2)
        _ = try await world.outbox.drain()
        #expect(try await world.entries().isEmpty)
        #expect(try await world.observer().appContext.getChannel(id: secondThread, as: JSONValue.self).status == nil)
        #expect(try await world.store.fetch(world.store.queries.threads(inChannel: "general")).count == 2)
    }

    @Test("the user's own channel and an empty conversation get a checkpoint on their first pull: later syncs ask for every channel in one shared history request")
    func emptyChannelsShareRequests() async throws {
        let world = try World()
        _ = try await world.outbox.memberships.join(channel: "general")
        _ = try await world.outbox.conversations.openDirectConversation(with: "bob")
        _ = try await world.outbox.drain()
        try await ChatSDKConversations(world.server, userId: "alice").send("hi", to: "general")
        _ = try await world.sync()
        let second = try await RequestBudgetTests.requests(world) { _ = try await world.sync() }
        let paths = world.transport.records.suffix(second.count).filter { $0.request.operation == "fetchHistory" }.map { $0.request.encodedPath + "?" + $0.request.encodedQuery }
        let checkpoints = try await world.store.fetch(world.store.queries.checkpoints())
        #expect(second.filter { $0 == "fetchHistory" }.count == 1, "\(RequestBudgetTests.tally(second)) \(paths) \(checkpoints)")
        // A mention arriving later still comes in that shared request.
        try await ChatSDKConversations(world.server, userId: "alice").send("[me](pn-user://me)", to: "general", mentioning: "me")
        let third = try await RequestBudgetTests.requests(world) { _ = try await world.sync() }
        #expect(third.filter { $0 == "fetchHistory" }.count == 1, "\(RequestBudgetTests.tally(third))")
        #expect(try await world.store.fetch(world.store.queries.mentions(of: "me")).count == 1)
    }

    @Test("hostile events: a mention naming an impossible timetoken is not an event and stops nothing; a mention body on another channel stays a message; a mention its message's author did not publish is not in the feed; an action on an unknown message names no thread to pull")
    func hostileEvents() async throws {
        let world = try await World.joined(["general"])
        let mallory = try ChatSDKConversations(world.server, userId: "mallory")
        _ = try await mallory.client.publish(PublishRequest(
            channel: "me", message: ["type": "mention", "channel": "general", "messageTimetoken": "18446744073709551615"]))
        _ = try await mallory.client.publish(PublishRequest(
            channel: "me", message: ["type": "mention", "channel": "a,b", "messageTimetoken": "1"]))
        let alice = try ChatSDKConversations(world.server, userId: "alice")
        let real = try await alice.send("hi [me](pn-user://me)", to: "general", mentioning: "me")
        // mallory claims alice's message mentioned me, and posts a mention body into general.
        _ = try await mallory.client.publish(PublishRequest(
            channel: "me", message: ChatSDKFormat.mentionEvent(messageTimetoken: real, channel: "general", parentChannel: nil)))
        _ = try await mallory.client.publish(PublishRequest(
            channel: "general", message: ChatSDKFormat.mentionEvent(messageTimetoken: real, channel: "general", parentChannel: nil)))
        // An action naming the thread of a message nobody sent.
        _ = try await mallory.client.messageActions.addMessageAction(
            channel: "general", messageTimetoken: Timetoken(rawValue: 17_000_000_000_000_001), type: ChatSDKFormat.threadRootType,
            value: ChatSDKFormat.threadChannel(of: "general", root: Timetoken(rawValue: 17_000_000_000_000_001)))
        try await world.reconciler.markHot("general")
        let report = try await world.sync()
        #expect(report.errors.isEmpty, "\(report.errors)")
        let feed = try await world.store.fetch(world.store.queries.mentions(of: "me"))
        #expect(feed.map(\.event.publisher) == ["alice"], "\(feed)")
        let general = try await world.store.fetch(world.store.queries.messages(inChannel: "general"))
        #expect(general.count == 2, "the mention body published into general is a message of general")
        let me = try await world.store.fetch(world.store.queries.messages(inChannel: "me"))
        #expect(me.count == 2, "the two malformed bodies stay raw messages of the user's channel: \(me.map(\.content))")
        let channels = try await world.reconciler.channelsOfInterest()
        #expect(!channels.contains { $0.hasPrefix(ChatSDKFormat.threadChannelPrefix) }, "\(channels)")
    }

    @Test("an empty channel's first checkpoint is set 10 s below the time trusted before its request, so a message published just before is fetched next")
    func emptyCheckpointMargin() async throws {
        let world = try World()
        _ = try await world.outbox.conversations.openDirectConversation(with: "bob")
        _ = try await world.outbox.drain()
        _ = try await world.sync()
        let id = ChatSDKFormat.directChannelId("me", "bob")
        let checkpoint = try #require(try await world.store.fetch(world.store.queries.checkpoint(SyncCheckpoint.history(id))))
        let now = try Timetoken(date: world.clock.now)
        let applied = try #require(checkpoint.applied)
        #expect(applied < now && now.rawValue - applied.rawValue >= 100_000_000, "\(applied) vs \(now)")
        // A message whose timetoken lies in that margin (it reached history late) is still fetched.
        await world.server.seedMessages(channel: id, [chatPayload("late")], publisher: "bob")
        _ = try await world.sync()
        #expect(try await world.store.fetch(world.store.queries.messages(inChannel: id)).count == 1)
    }

    @Test("an invitation's check of the invitee's membership is one filtered request, however many memberships they have")
    func inviteLooksUpOneMembership() async throws {
        let world = try World()
        let bob = try ChatSDKConversations(world.server, userId: "bob")
        _ = try await bob.client.appContext.setMemberships(
            userId: "bob", set: (0..<250).map { MembershipSet<JSONValue>(id: "room-\($0)") }, as: WireChat.self)
        _ = try await world.outbox.conversations.createGroupConversation(with: ["bob"], channelId: "team")
        let requests = try await RequestBudgetTests.requests(world) { _ = try await world.outbox.drain() }
        #expect(try await world.entries().isEmpty)
        #expect(requests.filter { $0 == "getMemberships" }.count == 2, "me and bob, one each: \(RequestBudgetTests.tally(requests))")
        let members = try await world.observer().appContext.getMembers(channelId: "team", as: WireChat.self).data
        #expect(Set(members.map { "\($0.uuid.id):\($0.status ?? "-")" }) == ["me:joined", "bob:pending"])
    }

    @Test("inviting a user someone else invited already (a pending membership) keeps theirs and sends no second invitation event, as the Chat SDK's invite")
    func inviteOfAnInvitee() async throws {
        let world = try World()
        let carol = try ChatSDKConversations(world.server, userId: "carol")
        _ = try await carol.client.appContext.setChannel(id: "team", fields: ChannelEdit<JSONValue>(wireFields: ["type": "group"]), ifMatch: nil)
        try await carol.invite("bob", to: "team", type: "group")
        let before = await world.server.storedMessages(channel: "bob").count
        _ = try await world.outbox.memberships.join(channel: "team")
        _ = try await world.outbox.drain()
        _ = try await world.outbox.conversations.invite("bob", to: "team")
        let report = try await world.outbox.drain()
        #expect(report.remaining == 0 && report.deadLetters == 0 && report.completed == 2, "the membership and the skipped event: \(report)")
        #expect(await world.server.storedMessages(channel: "bob").count == before, "no second invitation")
        let members = try await world.observer().appContext.getMembers(channelId: "team", as: WireChat.self).data
        let bob = try #require(members.first { $0.uuid.id == "bob" })
        #expect(bob.status == "pending" && bob.custom?.objectValue?[ChatSDKFormat.lastReadKey] == "17000000000000000", "carol's invitation is kept")
    }

    @Test("a thread's reply count leaves out replies their author soft-deleted, not ones another user marked deleted")
    func replyCountFollowsDeletion() async throws {
        let world = try await World.joined(["general"])
        let alice = try ChatSDKConversations(world.server, userId: "alice")
        let root = try await alice.send("root", to: "general")
        let first = try await alice.reply("first", in: "general", to: root)
        let second = try await alice.reply("second", in: "general", to: root)
        try await alice.reply("third", in: "general", to: root)
        let thread = ChatSDKFormat.threadChannel(of: "general", root: root)
        _ = try await alice.client.messageActions.addMessageAction(
            channel: thread, messageTimetoken: first, type: ChatSDKFormat.deletedType, value: ChatSDKFormat.deletedValue)
        let mallory = try ChatSDKConversations(world.server, userId: "mallory")
        _ = try await mallory.client.messageActions.addMessageAction(
            channel: thread, messageTimetoken: second, type: ChatSDKFormat.deletedType, value: ChatSDKFormat.deletedValue)
        try await world.reconciler.markHot("general")
        try await world.reconciler.markHot(thread)
        _ = try await world.sync()
        _ = try await world.sync()
        let threads = try await world.store.fetch(world.store.queries.threads(inChannel: "general"))
        #expect(threads.map(\.replyCount) == [2], "third, and second (mallory may not delete it)")
    }
}
