import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator
import Testing

/// Edits, soft deletes and restores as the PubNub Chat SDK stores them (message actions
/// `edited`/`deleted`), written through the outbox and read back from fixtures written "by the
/// Chat SDK" (another client adding the same actions by hand).
@Suite("Chat semantics: edits, soft deletes, restores")
struct ChatSemanticsTests {
    /// A sent message of "me" on channel "c".
    static func sentMessage(_ world: World, _ text: String = "hello") async throws -> (id: String, timetoken: Timetoken) {
        let id = try #require(try await world.outbox.messages.send(text: text, to: "c").value?.id)
        _ = try await world.outbox.drain()
        let timetoken = try #require(try await world.store.fetch(world.store.queries.message(id: id))?.timetoken)
        return (id, timetoken)
    }

    static func shown(_ world: World, _ id: String) async throws -> ChatMessage<DefaultChatCustom.Message>? {
        try await world.store.fetch(world.store.queries.message(id: id))
    }

    @Test("three offline edits send one `edited` action with the last text; the newest edit by action timetoken wins, whoever wrote it, under the Chat SDK's rule")
    func editsCoalesceAndNewestWins() async throws {
        let world = try World()
        let message = try await Self.sentMessage(world)
        world.transport.use(FaultPlan(seed: 1, profile: .offline))
        let first = try await world.outbox.messages.edit(message: message.id, text: "hello?")
        let second = try await world.outbox.messages.edit(message: message.id, text: "hello!")
        let third = try await world.outbox.messages.edit(message: message.id, text: "Hello!")
        let op = try #require(first.opId)
        #expect(second.disposition == .merged(into: op) && third.disposition == .merged(into: op))
        #expect(try await Self.shown(world, message.id)?.shownText == "Hello!", "an edit in the outbox shows at once")
        #expect(try await Self.shown(world, message.id)?.text == "hello", "the published text is kept")
        let local = try await world.store.fetch(world.store.queries.reactions(ofMessage: message.id, currentUserId: "me"))
        #expect(local.filter { $0.type == "edited" }.map(\.value) == ["Hello!"], "one local edit row, with the last text")
        world.transport.use(FaultPlan(seed: 1, profile: .none))
        _ = try await world.outbox.drain()
        let actions = await world.server.storedActions(channel: "c")
        #expect(actions.map(\.type) == ["edited"] && actions.map(\.value) == ["Hello!"])

        // The Chat SDK on another device edits later: by default another user's edit does not
        // count; under the Chat SDK's rule its text shows, after a pull.
        let other = try World.client(InProcessTransport(server: world.server), userId: "sdk-user")
        _ = try await other.messageActions.addMessageAction(channel: "c", messageTimetoken: message.timetoken, type: "edited", value: "Hi [Al](pn-user://al)")
        _ = try await world.reconciler().pullReactions(channel: "c")
        #expect(try await Self.shown(world, message.id)?.shownText == "Hello!")
        try await world.store.setEditAuthority(.anyone)
        let edited = try #require(try await Self.shown(world, message.id))
        #expect(edited.shownText == "Hi [Al](pn-user://al)" && edited.mentionedUserIds == ["al"])
        let mentioning = try await world.store.fetch(world.store.queries.messages(mentioning: "al"))
        #expect(mentioning.map(\.id) == [message.id], "the mention query reads the shown text")
    }

    @Test("an edit of a message whose publish has not gone out rewrites the publish: no action, the new text on the server")
    func editOfPendingMessage() async throws {
        let world = try World(profile: .offline)
        let sent = try await world.outbox.messages.send(text: "typo", to: "c", contentType: ChatSDKFormat.textContentType)
        let id = try #require(sent.value?.id), sendOp = try #require(sent.opId)
        let edit = try await world.outbox.messages.edit(message: id, text: "fixed")
        #expect(edit.disposition == .merged(into: sendOp))
        #expect(try await Self.shown(world, id)?.text == "fixed")
        world.transport.use(FaultPlan(seed: 1, profile: .none))
        _ = try await world.outbox.drain()
        let stored = await world.server.storedMessages(channel: "c")
        #expect(stored.count == 1 && stored[0].message.objectValue?["text"] == "fixed")
        #expect(stored[0].message.objectValue?["type"] == "text", "still in the Chat SDK's shape")
        let actions = await world.server.storedActions(channel: "c")
        #expect(actions.isEmpty)
    }

    @Test("soft delete hides the message, restore brings it back, and both reach the server as the Chat SDK reads them")
    func softDeleteAndRestore() async throws {
        let world = try World()
        let kept = try await Self.sentMessage(world, "kept")
        let message = try await Self.sentMessage(world, "to delete")
        _ = try await world.outbox.messages.deleteMessage(id: message.id)
        #expect(try await world.store.fetch(world.store.queries.messages(inChannel: "c")).map(\.id) == [kept.id])
        let all = try await world.store.fetch(world.store.queries.messages(inChannel: "c", includeDeleted: true))
        #expect(all.map(\.id) == [kept.id, message.id] && all.map(\.isDeleted) == [false, true])
        _ = try await world.outbox.drain()
        let deleted = await world.server.storedActions(channel: "c")
        #expect(deleted.map(\.type) == ["deleted"] && deleted.map(\.value) == ["deleted"])
        #expect(deleted.first?.messageTimetoken == message.timetoken.rawValue)

        let restored = try await world.outbox.messages.restoreMessage(id: message.id)
        #expect(restored.disposition == .enqueued)
        #expect(try await world.store.fetch(world.store.queries.messages(inChannel: "c")).map(\.id) == [kept.id, message.id])
        // A pull before the removal is sent keeps the local restore.
        _ = try await world.reconciler().pullReactions(channel: "c")
        #expect(try await Self.shown(world, message.id)?.isDeleted == false)
        _ = try await world.outbox.drain()
        let remaining = await world.server.storedActions(channel: "c")
        #expect(remaining.isEmpty)
        _ = try await world.reconciler().pullReactions(channel: "c")
        #expect(try await Self.shown(world, message.id)?.isDeleted == false)

        // Deleted by the Chat SDK on another device too (its rule: anyone's deletion counts):
        // PubNub lets only that user remove it.
        try await world.store.setEditAuthority(.anyone)
        _ = try await world.outbox.messages.deleteMessage(id: message.id)
        _ = try await world.outbox.drain()
        let other = try World.client(InProcessTransport(server: world.server), userId: "sdk-user")
        _ = try await other.messageActions.addMessageAction(channel: "c", messageTimetoken: message.timetoken, type: "deleted", value: "deleted")
        _ = try await world.reconciler().pullReactions(channel: "c")
        await #expect(throws: OutboxError.deletedByOthers(messageId: message.id, users: ["sdk-user"])) {
            try await world.outbox.messages.restoreMessage(id: message.id)
        }
        #expect(try await Self.shown(world, message.id)?.isDeleted == true)
        #expect(try await world.entries().isEmpty)
    }

    @Test("a message another user deleted with the Chat SDK stays by default and disappears after a pull under the Chat SDK's rule")
    func deletedElsewhere() async throws {
        let world = try World()
        let message = try await Self.sentMessage(world)
        let other = try World.client(InProcessTransport(server: world.server), userId: "sdk-user")
        _ = try await other.messageActions.addMessageAction(channel: "c", messageTimetoken: message.timetoken, type: "deleted", value: "deleted")
        _ = try await world.reconciler().pullReactions(channel: "c")
        #expect(try await Self.shown(world, message.id)?.isDeleted == false)
        try await world.store.setEditAuthority(.anyone)
        #expect(try await world.store.fetch(world.store.queries.messages(inChannel: "c")).isEmpty)
        #expect(try await Self.shown(world, message.id)?.isDeleted == true)
    }

    @Test("a hard delete removes the message here at once and from history when sent; pulls meanwhile do not bring it back; a discard does")
    func hardDelete() async throws {
        let world = try World()
        let kept = try await Self.sentMessage(world, "kept")
        let message = try await Self.sentMessage(world, "secret")
        world.transport.use(FaultPlan(seed: 1, profile: .offline))
        _ = try await world.outbox.messages.addReaction("👍", toMessage: message.id)   // unsent: goes with the message
        let receipt = try await world.outbox.messages.deleteMessage(id: message.id, hard: true)
        #expect(try await Self.shown(world, message.id) == nil)
        #expect(try await world.entries().map(\.kind) == [.hardDelete])
        let plan = try await world.outbox.plan()
        let request = try #require(plan.first?.request)
        #expect(request.method == "DELETE" && request.path == "/v3/history/sub-key/demo/channel/c", "\(request)")
        #expect(request.query.contains("start=\(message.timetoken.rawValue + 1)") && request.query.contains("end=\(message.timetoken.rawValue)"))

        // Discarded while unsent: the message comes back as it was; deleted again, then sent.
        _ = try await world.outbox.discard(opId: try #require(receipt.opId))
        #expect(try await Self.shown(world, message.id)?.text == "secret")
        _ = try await world.outbox.messages.deleteMessage(id: message.id, hard: true)
        world.transport.use(FaultPlan(seed: 1, profile: .none))
        _ = try await world.reconciler().pullHistory(channels: ["c"])
        #expect(try await Self.shown(world, message.id) == nil, "a pull before the delete is sent skips it")
        _ = try await world.outbox.drain()
        let onServer = await world.serverMessageIds("c")
        #expect(onServer == [kept.id])
        _ = try await world.reconciler().pullHistory(channels: ["c"])
        #expect(try await world.store.fetch(world.store.queries.messages(inChannel: "c")).map(\.id) == [kept.id])
        #expect(try await world.entries().isEmpty)
    }

    @Test("deleting a message that has not gone out withdraws it; an edit of a missing message is a typed error")
    func deleteUnsentAndRefusals() async throws {
        let world = try World(profile: .offline)
        let sent = try await world.outbox.messages.send(text: "oops", to: "c")
        let id = try #require(sent.value?.id)
        let deletion = try await world.outbox.messages.deleteMessage(id: id)
        #expect(deletion.disposition == .cancelled([try #require(sent.opId)]))
        let left = try await world.entries()
        #expect(try await Self.shown(world, id) == nil && left.isEmpty)
        await #expect(throws: OutboxError.messageNotFound("nope")) { try await world.outbox.messages.edit(message: "nope", text: "x") }
        await #expect(throws: OutboxError.messageNotFound("nope")) { try await world.outbox.messages.deleteMessage(id: "nope") }
    }
}

/// Read positions, unread counts and pins, written through the outbox and read back from
/// fixtures in the Chat SDK's shapes.
@Suite("Chat semantics: read receipts, unread counts, pins")
struct ReadAndPinTests {
    /// "me" and "sdk-user" are members of group channel "c" (stored with its eTag); "me" has the
    /// custom key `role`.
    static func setUp(channelType: String = "group") async throws -> (world: World, other: PubNubClient) {
        let world = try World()
        var channel = ChannelEdit<FlatCustom>()
        channel.name = .set("C")
        channel.type = .set(channelType)
        channel.custom = .set(["topic": "news"])
        _ = try await world.outbox.metadata.setChannel(id: "c", edit: channel)
        _ = try await world.outbox.memberships.setMembership(channel: "c", edit: MemberEdit(status: "joined", custom: ["role": "mod"]))
        _ = try await world.outbox.drain()
        let other = try World.client(InProcessTransport(server: world.server), userId: "sdk-user")
        _ = try await other.appContext.setMemberships(userId: "sdk-user", set: [MembershipSet(id: "c", status: "joined")], as: DefaultChatCustom.self)
        return (world, other)
    }

    /// Publishes `count` messages by `client` in the Chat SDK's shape; their timetokens.
    static func publish(_ client: PubNubClient, _ count: Int) async throws -> [Timetoken] {
        var timetokens: [Timetoken] = []
        for i in 0..<count {
            timetokens.append(try await client.publish(PublishRequest(
                channel: "c", message: ["type": "text", "text": .string("m\(i)"), "files": []])))
        }
        return timetokens
    }

    @Test("markRead writes lastReadMessageTimetoken as a string beside the other custom keys, sends only the newest, then one receipt signal")
    func markRead() async throws {
        let (world, other) = try await Self.setUp()
        let theirs = try await Self.publish(other, 4)
        _ = try await world.reconciler().pullHistory(channels: ["c"])
        world.transport.use(FaultPlan(seed: 1, profile: .offline))
        for timetoken in theirs.prefix(3) { _ = try await world.outbox.memberships.markRead(channel: "c", upTo: timetoken) }
        let older = try await world.outbox.memberships.markRead(channel: "c", upTo: theirs[0])
        #expect(older.disposition == .unchanged, "read positions only move forward")
        #expect(try await world.entries().map(\.kind) == [.setMembership, .receipt])
        let unread = try await world.store.fetch(world.store.queries.unreadCount(inChannel: "c", for: "me"))
        #expect(unread == 1, "unread counts follow the local position at once")

        world.transport.use(FaultPlan(seed: 1, profile: .none))
        let before = world.transport.requests.count
        _ = try await world.outbox.drain()
        let sent = world.transport.requests.dropFirst(before).map(\.operation).filter { !$0.hasPrefix("get") }
        #expect(sent == ["setMemberships", "signal"], "one write (after its base check), then the signal: \(sent)")
        let page = try await other.appContext.getMembers(channelId: "c", as: DefaultChatCustom.self)
        let mine = try #require(page.data.first { $0.uuid.id == "me" })
        #expect(mine.custom == ["role": "mod", "lastReadMessageTimetoken": .string(String(theirs[2].rawValue))])
        // PubNub's own counts after the stored position (they would include our own messages too).
        let remote = try await world.reconciler().remoteUnreadCounts()
        #expect(remote == ["c": 1], "\(remote)")
        // The store holds everything after the position: its exact count is used.
        #expect(try await world.reconciler().unreadCounts() == ["c": UnreadCount(count: 1, source: .store)])
        let signal = try #require(world.transport.requests.last { $0.operation == "signal" })
        let payload = try #require(signal.pathSegments.last)
        #expect(try JSONValue(jsonData: Data(payload.utf8)) == ChatSDKFormat.receiptSignal(messageTimetoken: theirs[2]), "\(payload)")
    }

    @Test("a channel read up to a point older than anything stored is counted by PubNub; observed counts follow new messages")
    func countsFromPubNubAndObservation() async throws {
        let (world, other) = try await Self.setUp()
        let early = try await Self.publish(other, 3)
        _ = try await world.outbox.memberships.markRead(channel: "c", upTo: early[0])
        _ = try await world.outbox.drain()
        // The store never pulled the channel's history: its count (0) is not the whole story.
        #expect(try await world.store.fetch(world.store.queries.unreadCount(inChannel: "c", for: "me")) == 0)
        #expect(try await world.reconciler().unreadCounts() == ["c": UnreadCount(count: 2, source: .pubnub)])

        var updates = world.store.observe(world.store.queries.unreadCounts(for: "me")).makeAsyncIterator()
        #expect(try await updates.next() == ["c": 0])
        _ = try await world.reconciler().pullHistory(channels: ["c"])
        var observed = try await updates.next()
        while observed == ["c": 0] { observed = try await updates.next() }   // a write that changed nothing counted
        #expect(observed == ["c": 2], "a pull updates the observed count")
        #expect(try await world.reconciler().unreadCounts() == ["c": UnreadCount(count: 2, source: .store)])
    }

    @Test("a public channel gets the read position but no receipt signal; a channel without membership is a typed error")
    func publicChannelAndRefusal() async throws {
        let (world, other) = try await Self.setUp(channelType: "public")
        let theirs = try await Self.publish(other, 1)
        _ = try await world.outbox.memberships.markRead(channel: "c", upTo: theirs[0])
        #expect(try await world.entries().map(\.kind) == [.setMembership])
        await #expect(throws: OutboxError.notAMember(channel: "elsewhere", user: "me")) {
            try await world.outbox.memberships.markRead(channel: "elsewhere", upTo: theirs[0])
        }
    }

    @Test("read receipts and unread counts read the Chat SDK's membership data; own and deleted messages never count")
    func receiptsAndUnread() async throws {
        let (world, other) = try await Self.setUp()
        let theirs = try await Self.publish(other, 5)
        _ = try await world.outbox.messages.send(text: "mine", to: "c")
        _ = try await world.outbox.drain()
        // The Chat SDK on another device marks sdk-user's position (a string timetoken).
        _ = try await other.appContext.setMemberships(
            userId: "sdk-user",
            set: [MembershipSet(id: "c", status: "joined", custom: ["lastReadMessageTimetoken": .string(String(theirs[3].rawValue))])],
            as: DefaultChatCustom.self)
        let reconciler = try world.reconciler()
        _ = try await reconciler.pullHistory(channels: ["c"])
        _ = try await reconciler.pullObjects(channels: ["c"])
        let receipts = try await world.store.fetch(world.store.queries.readReceipts(inChannel: "c"))
        #expect(receipts == [ReadReceipt(userId: "me", lastRead: nil), ReadReceipt(userId: "sdk-user", lastRead: theirs[3])])

        #expect(try await world.store.fetch(world.store.queries.unreadCount(inChannel: "c", for: "me")) == 5)
        #expect(try await world.store.fetch(world.store.queries.unreadCount(inChannel: "c", for: "sdk-user")) == 1,
                "my message; their own theirs[4] does not count")
        _ = try await other.messageActions.addMessageAction(channel: "c", messageTimetoken: theirs[4], type: "deleted", value: "deleted")
        _ = try await reconciler.pullReactions(channel: "c")
        #expect(try await world.store.fetch(world.store.queries.unreadCounts(for: "me")) == ["c": 4])
        #expect(try await world.store.fetch(world.store.queries.unreadCount(inChannel: "nowhere", for: "me")) == nil)
    }

    @Test("pin and unpin write the Chat SDK's two channel keys with the eTag; a pin made by the Chat SDK shows after a pull")
    func pins() async throws {
        let (world, other) = try await Self.setUp()
        let theirs = try await Self.publish(other, 2)
        let reconciler = try world.reconciler()
        _ = try await reconciler.pullHistory(channels: ["c"])
        let messages = try await world.store.fetch(world.store.queries.messages(inChannel: "c"))
        _ = try await world.outbox.messages.pinMessage(id: messages[0].id)
        #expect(try await world.store.fetch(world.store.queries.pinnedMessage(inChannel: "c"))?.id == messages[0].id)
        let before = world.transport.requests.count
        _ = try await world.outbox.drain()
        #expect(world.transport.requests.dropFirst(before).first?.headers["If-Match"] != nil, "written on the stored eTag")
        var server = try await other.appContext.getChannel(id: "c", as: FlatCustom.self)
        #expect(server.custom == ["topic": "news", "pinnedMessageTimetoken": .string(String(theirs[0].rawValue)), "pinnedMessageChannelID": "c"])

        // The Chat SDK pins the other message.
        var edit = ChannelEdit<FlatCustom>()
        edit.custom = .set(["topic": "news", "pinnedMessageTimetoken": .string(String(theirs[1].rawValue)), "pinnedMessageChannelID": "c"])
        _ = try await other.appContext.setChannel(id: "c", fields: edit)
        _ = try await reconciler.pullObjects(channels: ["c"])
        #expect(try await world.store.fetch(world.store.queries.pinnedMessage(inChannel: "c"))?.id == messages[1].id)

        _ = try await world.outbox.messages.unpinMessage(in: "c")
        #expect(try await world.store.fetch(world.store.queries.pinnedMessage(inChannel: "c")) == nil)
        _ = try await world.outbox.drain()
        server = try await other.appContext.getChannel(id: "c", as: FlatCustom.self)
        #expect(server.custom == ["topic": "news"])
        #expect(try await world.outbox.messages.unpinMessage(in: "c").disposition == .unchanged)
        await #expect(throws: OutboxError.channelNotFound("nowhere")) { try await world.outbox.messages.unpinMessage(in: "nowhere") }
    }
}
