import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator
import Testing

/// Sending a stored draft through the outbox: one message in the Chat SDK's format, the draft
/// gone in the same transaction, one mention event per mentioned user after the message.
@Suite("Sending drafts")
struct DraftSendTests {
    static let key = DraftKey(channelId: "general")

    /// "Hi Alice and Bob, see #random and docs; Alice again" with mentions of alice (twice), bob,
    /// a channel and a URL, quoting a message.
    static func storeDraft(_ world: World, key: DraftKey = key) async throws -> MessageDraft {
        try await world.store.drafts.edit(key) { draft in
            try draft.insertText(offset: 0, text: "Hi Alice and Bob, see #random and docs; Alice again")
            try draft.addMention(offset: 3, length: 5, target: .user("alice"))
            try draft.addMention(offset: 13, length: 3, target: .user("bob"))
            try draft.addMention(offset: 22, length: 7, target: .channel("random"))
            try draft.addMention(offset: 34, length: 4, target: .url("https://example.com/a)b"))
            try draft.addMention(offset: 40, length: 5, target: .user("alice"))
            draft.quotedMessage = QuotedMessage(timetoken: Timetoken(rawValue: 17_000_000_000_000_000), text: "earlier", userId: "carol")
        }
    }

    /// Every history entry of `channel` on the server, oldest first.
    static func history(_ world: World, _ channel: String) async throws -> [HistoryMessage] {
        let page = try await world.observer().history.fetchHistory(HistoryQuery(channels: [channel], max: 100))
        return page.channels[channel] ?? []
    }

    @Test("through a flaky network: the message arrives once, the draft is gone, each mentioned user gets one mention event after it",
          arguments: 1...12 as ClosedRange<UInt64>)
    func flakySend(seed: UInt64) async throws {
        let world = try World(seed: seed, profile: .offline)
        let draft = try await Self.storeDraft(world)
        let receipt = try await world.outbox.messages.send(draft: Self.key)
        let messageId = try #require(receipt.message.value?.id)
        // The same transaction queued the message and deleted the draft.
        #expect(try await world.store.fetch(world.store.queries.draft(Self.key)) == nil)
        #expect(receipt.mentionOpIds.count == 2, "one event per mentioned user, not per mention")
        let pending = try #require(try await world.store.fetch(world.store.queries.message(id: messageId)))
        #expect(pending.delivery == .pending && pending.elements == draft.elements && pending.text == draft.render())

        world.transport.use(FaultPlan(seed: seed, profile: .flaky))
        let report = try await world.outbox.drain()
        #expect(report.remaining == 0 && report.deadLetters == 0 && report.conflicts == 0, "seed \(seed): \(report)")

        let onServer = try await Self.history(world, "general")
        try #require(onServer.count == 1, "seed \(seed): \(onServer.count) messages on the server")
        let sent = onServer[0]
        // The Chat SDK's body beside pnreplicate's own fields; the quote in meta.
        let body = try #require(sent.message.objectValue)
        #expect(body["type"] == "text" && body["text"] == .string(draft.render()) && body["files"] == .array([]))
        #expect(body["id"] == .string(messageId))
        #expect(ChatSDKFormat.quotedMessage(inMeta: sent.meta) == draft.quotedMessage)
        #expect(MessageDraft.elements(parsing: ChatSDKFormat.text(ofBody: sent.message) ?? "") == draft.elements)

        for user in ["alice", "bob"] {
            let events = try await Self.history(world, user)
            try #require(events.count == 1, "seed \(seed): \(events.count) mention events for \(user)")
            #expect(events[0].message == ChatSDKFormat.mentionEvent(
                messageTimetoken: sent.timetoken, channel: "general", parentChannel: nil))
            #expect(events[0].timetoken > sent.timetoken, "the event comes after the message")
            #expect(events[0].uuid == "me")
        }
        let local = try #require(try await world.store.fetch(world.store.queries.message(id: messageId)))
        #expect(local.delivery == .sent && local.timetoken == sent.timetoken)
        #expect(try await world.entries().isEmpty)
    }

    @Test("a draft the UI holds is sent as given, and the stored draft of its key is deleted with it")
    func sendGivenDraft() async throws {
        let world = try World()
        _ = try await Self.storeDraft(world)
        var typed = MessageDraft()
        try typed.insertText(offset: 0, text: "hello @bob")
        try typed.addMention(offset: 6, length: 4, target: .user("bob"))
        let receipt = try await world.outbox.messages.send(draft: typed, in: Self.key)
        #expect(receipt.message.value?.text == "hello [@bob](pn-user://bob)")
        #expect(receipt.mentionOpIds.count == 1 && receipt.threadRootOpId == nil)
        #expect(try await world.store.fetch(world.store.queries.draft(Self.key)) == nil)
        _ = try await world.outbox.drain()
        #expect(try await Self.history(world, "bob").count == 1)
        #expect(try await Self.history(world, "alice").isEmpty)
    }

    @Test("nothing to send: a typed error, nothing queued, the stored draft kept")
    func refusals() async throws {
        let world = try World()
        await #expect(throws: OutboxError.emptyDraft(Self.key)) { try await world.outbox.messages.send(draft: Self.key) }
        await #expect(throws: OutboxError.emptyDraft(Self.key)) { try await world.outbox.messages.send(draft: MessageDraft(), in: Self.key) }
        let draft = try await Self.storeDraft(world)
        await #expect(throws: OutboxError.metaNotAnObject) { try await world.outbox.messages.send(draft: Self.key, meta: "x") }
        let thread = DraftKey(channelId: "general", threadRoot: Timetoken(rawValue: 42))
        await #expect(throws: OutboxError.threadRootNotFound(channel: "general", timetoken: Timetoken(rawValue: 42))) {
            try await world.outbox.messages.send(draft: draft, in: thread)
        }
        #expect(try await world.store.fetch(world.store.queries.draft(Self.key)) == draft)
        #expect(try await world.entries().isEmpty)
    }

    @Test("a mention event waits for the message: the dry run says so, and a discarded message takes its events with it")
    func mentionWaitsForMessage() async throws {
        let world = try World(profile: .offline)
        _ = try await Self.storeDraft(world)
        let receipt = try await world.outbox.messages.send(draft: Self.key)
        let plan = try await world.outbox.plan()
        let mentions = plan.filter { $0.kind == .mention }
        #expect(mentions.count == 2)
        #expect(mentions.allSatisfy { $0.request == nil && $0.requestNote == "not known yet: the message's timetoken" })
        let messageId = try #require(receipt.message.value?.id), sendOp = try #require(receipt.message.opId)
        let discarded = try await world.outbox.messages.discardMessage(id: messageId)
        #expect(Set(discarded) == Set([sendOp] + receipt.mentionOpIds))
        #expect(try await world.entries().isEmpty)
    }

    @Test("a mention event whose answer was lost is found by the probe, not published twice")
    func ambiguousMentionIsProbed() async throws {
        let world = try World()
        var draft = MessageDraft()
        try draft.insertText(offset: 0, text: "ping bob")
        try draft.addMention(offset: 5, length: 3, target: .user("bob"))
        let receipt = try await world.outbox.messages.send(draft: draft, in: Self.key)
        // The message goes; the mention's request reaches the server and its answer is lost.
        world.transport.script(.none, .dropResponse)
        let report = try await world.outbox.drain()
        #expect(report.remaining == 0 && report.deadLetters == 0, "\(report)")
        #expect(report.probes >= 1)
        #expect(try await Self.history(world, "general").count == 1)
        #expect(try await Self.history(world, "bob").count == 1, "one mention event, whatever was lost")
        #expect(receipt.mentionOpIds.count == 1)
    }

    @Test("a thread reply goes to the thread channel; the root gets the threadRootId action once; events name the parent channel")
    func threadReply() async throws {
        let world = try World()
        let root = try await world.outbox.messages.send(text: "root", to: "general")
        _ = try await world.outbox.drain()
        let rootId = try #require(root.value?.id)
        let rootTimetoken = try #require(try await world.store.fetch(world.store.queries.message(id: rootId))?.timetoken)
        let key = DraftKey(channelId: "general", threadRoot: rootTimetoken)
        let thread = ChatSDKFormat.threadChannel(of: "general", root: rootTimetoken)
        #expect(thread == "PUBNUB_INTERNAL_THREAD_general_\(rootTimetoken.rawValue)")

        var draft = MessageDraft()
        try draft.insertText(offset: 0, text: "reply to alice")
        try draft.addMention(offset: 9, length: 5, target: .user("alice"))
        let first = try await world.outbox.messages.send(draft: draft, in: key)
        #expect(first.message.value?.channelId == thread && first.threadRootOpId != nil)
        _ = try await world.outbox.drain()
        let second = try await world.outbox.messages.send(draft: draft, in: key)
        #expect(second.threadRootOpId == nil, "the root already has its threadRootId action")
        _ = try await world.outbox.drain()

        #expect(try await Self.history(world, thread).count == 2)
        let actions = await world.server.storedActions(channel: "general")
        #expect(actions.map(\.type) == [ChatSDKFormat.threadRootType] && actions.map(\.value) == [thread])
        #expect(actions.first?.messageTimetoken == rootTimetoken.rawValue)
        let events = try await Self.history(world, "alice")
        #expect(events.count == 2)
        #expect(events.allSatisfy { $0.message.objectValue?["parentChannel"] == "general" && $0.message.objectValue?["channel"] == .string(thread) })
    }
}
