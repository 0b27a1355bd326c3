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
        let id = try #require(try await world.outbox.send(text: text, to: "c").value?.id)
        _ = try await world.outbox.drain()
        let timetoken = try #require(try await world.store.fetch(world.store.queries.message(id: id))?.timetoken)
        return (id, timetoken)
    }

    static func shown(_ world: World, _ id: String) async throws -> ChatMessage<DefaultChatCustom.Message>? {
        try await world.store.fetch(world.store.queries.message(id: id))
    }

    @Test("three offline edits send one `edited` action with the last text; the newest edit by action timetoken wins, whoever wrote it")
    func editsCoalesceAndNewestWins() async throws {
        let world = try World()
        let message = try await Self.sentMessage(world)
        world.transport.use(FaultPlan(seed: 1, profile: .offline))
        let first = try await world.outbox.edit(message: message.id, text: "hello?")
        let second = try await world.outbox.edit(message: message.id, text: "hello!")
        let third = try await world.outbox.edit(message: message.id, text: "Hello!")
        let op = try #require(first.opId)
        #expect(second.disposition == .merged(into: op) && third.disposition == .merged(into: op))
        #expect(try await Self.shown(world, message.id)?.shownText == "Hello!", "an edit in the outbox shows at once")
        #expect(try await Self.shown(world, message.id)?.text == "hello", "the published text is kept")
        world.transport.use(FaultPlan(seed: 1, profile: .none))
        _ = try await world.outbox.drain()
        let actions = await world.server.storedActions(channel: "c")
        #expect(actions.map(\.type) == ["edited"] && actions.map(\.value) == ["Hello!"])

        // The Chat SDK on another device edits later: its text shows, after a pull.
        let other = try World.client(InProcessTransport(server: world.server), userId: "sdk-user")
        _ = try await other.addMessageAction(channel: "c", messageTimetoken: message.timetoken, type: "edited", value: "Hi [Al](pn-user://al)")
        _ = try await world.reconciler().pullReactions(channel: "c")
        let edited = try #require(try await Self.shown(world, message.id))
        #expect(edited.shownText == "Hi [Al](pn-user://al)" && edited.mentionedUserIds == ["al"])
        let mentioning = try await world.store.fetch(world.store.queries.messages(mentioning: "al"))
        #expect(mentioning.map(\.id) == [message.id], "the mention query reads the shown text")
    }

    @Test("an edit of a message whose publish has not gone out rewrites the publish: no action, the new text on the server")
    func editOfPendingMessage() async throws {
        let world = try World(profile: .offline)
        let sent = try await world.outbox.send(text: "typo", to: "c", contentType: ChatSDKFormat.textContentType)
        let id = try #require(sent.value?.id), sendOp = try #require(sent.opId)
        let edit = try await world.outbox.edit(message: id, text: "fixed")
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
        _ = try await world.outbox.deleteMessage(id: message.id)
        #expect(try await world.store.fetch(world.store.queries.messages(inChannel: "c")).map(\.id) == [kept.id])
        let all = try await world.store.fetch(world.store.queries.messages(inChannel: "c", includeDeleted: true))
        #expect(all.map(\.id) == [kept.id, message.id] && all.map(\.isDeleted) == [false, true])
        _ = try await world.outbox.drain()
        let deleted = await world.server.storedActions(channel: "c")
        #expect(deleted.map(\.type) == ["deleted"] && deleted.map(\.value) == ["deleted"])
        #expect(deleted.first?.messageTimetoken == message.timetoken.rawValue)

        let restored = try await world.outbox.restoreMessage(id: message.id)
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

        // Deleted by the Chat SDK on another device too: PubNub lets only that user remove it.
        _ = try await world.outbox.deleteMessage(id: message.id)
        _ = try await world.outbox.drain()
        let other = try World.client(InProcessTransport(server: world.server), userId: "sdk-user")
        _ = try await other.addMessageAction(channel: "c", messageTimetoken: message.timetoken, type: "deleted", value: "deleted")
        _ = try await world.reconciler().pullReactions(channel: "c")
        await #expect(throws: OutboxError.deletedByOthers(messageId: message.id, users: ["sdk-user"])) {
            try await world.outbox.restoreMessage(id: message.id)
        }
        #expect(try await Self.shown(world, message.id)?.isDeleted == true)
        #expect(try await world.entries().isEmpty)
    }

    @Test("a message deleted by the Chat SDK elsewhere disappears here after a pull")
    func deletedElsewhere() async throws {
        let world = try World()
        let message = try await Self.sentMessage(world)
        let other = try World.client(InProcessTransport(server: world.server), userId: "sdk-user")
        _ = try await other.addMessageAction(channel: "c", messageTimetoken: message.timetoken, type: "deleted", value: "deleted")
        _ = try await world.reconciler().pullReactions(channel: "c")
        #expect(try await world.store.fetch(world.store.queries.messages(inChannel: "c")).isEmpty)
        #expect(try await Self.shown(world, message.id)?.isDeleted == true)
    }

    @Test("deleting a message that has not gone out withdraws it; an edit of a missing message is a typed error")
    func deleteUnsentAndRefusals() async throws {
        let world = try World(profile: .offline)
        let sent = try await world.outbox.send(text: "oops", to: "c")
        let id = try #require(sent.value?.id)
        let deletion = try await world.outbox.deleteMessage(id: id)
        #expect(deletion.disposition == .cancelled([try #require(sent.opId)]))
        let left = try await world.entries()
        #expect(try await Self.shown(world, id) == nil && left.isEmpty)
        await #expect(throws: OutboxError.messageNotFound("nope")) { try await world.outbox.edit(message: "nope", text: "x") }
        await #expect(throws: OutboxError.messageNotFound("nope")) { try await world.outbox.deleteMessage(id: "nope") }
    }
}
