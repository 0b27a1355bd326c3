import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
@testable import Replicator
import Testing

/// Seeds of the integrity property tests: 12 in `swift test`, `PNREPLICATE_INTEGRITY_SEEDS=N` for more.
enum IntegritySeeds {
    /// Zero-based seeds (the property tests mix them into their own).
    static var seeds: [UInt64] { SoakSeeds.range("PNREPLICATE_INTEGRITY_SEEDS", default: 12).map { $0 - 1 } }
}

/// A peer holding the keys cannot change what another user's stored message says: a payload id
/// names a stored message only when it is that message (`MessageIdentity`), and only the author
/// (or a moderator the app names) changes what a message shows through edit and delete actions.
@Suite("Integrity: message identity and who may edit")
struct MessageIdentityTests {
    /// A random payload a hostile publisher sends: another message's id, a derived id, none, or
    /// its own; any text, content, custom data, creation time or none.
    static func hostilePayload(_ dice: inout SplitMix64, claiming ids: [String]) -> JSONValue {
        func pick<T>(_ values: [T]) -> T { values[Int(dice.next() % UInt64(values.count))] }
        var body: [String: JSONValue] = [:]
        switch dice.next() % 5 {
        case 0, 1: body["id"] = .string(pick(ids))
        case 2: body["id"] = .string("pn:\(pick(["c", "d"])):\(dice.next() % 1_000_000)")
        case 3: body["id"] = .string("m-\(dice.next() % 1000)")
        default: break
        }
        if dice.next() % 4 != 0 { body["text"] = .string(pick(["I owe Mallory 1000 USD", "", "hi", "ok 👍"])) }
        if dice.next() % 2 == 0 { body["createdAt"] = .string(pick(["2026-01-01T00:00:00.000Z", "2020-05-05T05:05:05.000Z", "yesterday"])) }
        if dice.next() % 3 == 0 { body["content"] = .object(["evil": .bool(true)]) }
        if dice.next() % 3 == 0 { body["custom"] = .object(["amount": .int(1000)]) }
        if dice.next() % 4 == 0 { body["contentType"] = .string("link") }
        if dice.next() % 6 == 0 { return .string("plain text from mallory") }
        return .object(body)
    }

    /// Every message the server holds in `channel` is stored exactly once, at its own timetoken,
    /// by its own publisher, saying what its payload says.
    static func expectFaithful(_ store: ChatStore<DefaultChatCustom>, server: PubNubServer, channel: String) async throws {
        let local = try await store.fetch(store.queries.messages(inChannel: channel, includeDeleted: true))
        let remote = await server.storedMessages(channel: channel)
        #expect(local.count == remote.count, "one stored row per server message in \(channel)")
        for message in remote {
            let rows = local.filter { $0.timetoken?.rawValue == message.timetoken }
            try #require(rows.count == 1, "exactly one row at \(channel)/\(message.timetoken)")
            let row = rows[0]
            #expect(row.userId == message.publisher, "the row's author is the publisher")
            if case .object(let body) = message.message, case .string(let text)? = body["text"] {
                #expect(row.text == text, "the row says what its own payload says")
            }
            if case .string(let text) = message.message { #expect(row.text == text) }
            #expect(row.shownText == row.text, "nobody but the author edits (none did here)")
        }
    }

    @Test("a second publisher's payloads, whatever ids they claim, never change another user's stored message (pull and live)",
          arguments: IntegritySeeds.seeds)
    func hostilePayloadsNeverRewrite(seed: UInt64) async throws {
        let world = try await LiveWorld()
        try await world.join(["me", "reader"], ["c", "d"])
        let (me, _) = try world.device("me", seed: seed)
        let (reader, live) = try world.device("reader", seed: seed)
        let alice = try PubNubClient.simulated(InProcessTransport(server: world.server), userId: "alice")
        let mallory = try PubNubClient.simulated(InProcessTransport(server: world.server), userId: "mallory")
        try await LiveWorld.settle(live)

        // Alice's message and one of mine, stored everywhere before Mallory starts.
        let aliceId = "alice-\(seed)"
        let aliceTT = try await alice.publish(PublishRequest(channel: "c", message: chatPayload(aliceId, "lunch at noon")))
        let mine = try #require(try await me.outbox.messages.send(text: "on my way", to: "c").value?.id)
        _ = try await me.outbox.drain()
        _ = try await me.sync()
        try await LiveWorld.settle(live)
        let storedAlice = try #require(try await me.store.fetch(me.store.queries.message(id: aliceId)))

        var dice = SplitMix64(seed: seed)
        for round in 0..<(3 + Int(seed % 4)) {
            let payload = Self.hostilePayload(&dice, claiming: [aliceId, mine])
            let channel = dice.next() % 2 == 0 ? "c" : "d"
            _ = try await mallory.publish(PublishRequest(channel: channel, message: payload, meta: ["pnr_op": .string("op-\(round)")]))
            if round % 2 == 0 { try await live.step() }
        }
        // Mallory edits and deletes Alice's message, as the Chat SDK would let anyone.
        _ = try await mallory.messageActions.addMessageAction(channel: "c", messageTimetoken: aliceTT, type: "edited", value: "I owe Mallory 1000 USD")
        _ = try await mallory.messageActions.addMessageAction(channel: "c", messageTimetoken: aliceTT, type: "deleted", value: "deleted")

        _ = try await me.sync()
        try await LiveWorld.settle(live)
        _ = try await reader.reconciler.pullReactions(channel: "c")
        for store in [me.store, reader.store] {
            let now = try #require(try await store.fetch(store.queries.message(id: aliceId)))
            #expect(now.text == storedAlice.text && now.userId == "alice" && now.timetoken == aliceTT && now.channelId == "c")
            #expect(now.createdAt == storedAlice.createdAt && now.content == storedAlice.content && now.custom == storedAlice.custom)
            #expect(now.shownText == "lunch at noon" && !now.isDeleted, "Mallory's edit and delete do not count")
            let myMessage = try #require(try await store.fetch(store.queries.message(id: mine)))
            #expect(myMessage.text == "on my way" && myMessage.userId == "me" && myMessage.channelId == "c")
            try await Self.expectFaithful(store, server: world.server, channel: "c")
            try await Self.expectFaithful(store, server: world.server, channel: "d")
        }
    }

    @Test("the rule itself: same place or own pending message keeps the id; anything else, and any claimed derived id, gets its own")
    func rule() {
        let sent = MessageIdentity.Place(channel: "c", timetoken: 10, userId: "alice")
        let pending = MessageIdentity.Place(channel: "c", timetoken: nil, userId: "me")
        #expect(MessageIdentity.storedId(payloadId: "a", channel: "c", timetoken: 10, publisher: "alice", stored: sent) == "a")
        #expect(MessageIdentity.storedId(payloadId: "a", channel: "c", timetoken: 11, publisher: "alice", stored: sent) == "pn:c:11")
        #expect(MessageIdentity.storedId(payloadId: "a", channel: "d", timetoken: 10, publisher: "alice", stored: sent) == "pn:d:10")
        #expect(MessageIdentity.storedId(payloadId: "p", channel: "c", timetoken: 12, publisher: "me", stored: pending) == "p")
        #expect(MessageIdentity.storedId(payloadId: "p", channel: "c", timetoken: 12, publisher: "mallory", stored: pending) == "pn:c:12")
        #expect(MessageIdentity.storedId(payloadId: "p", channel: "d", timetoken: 12, publisher: "me", stored: pending) == "pn:d:12")
        #expect(MessageIdentity.storedId(payloadId: "new", channel: "c", timetoken: 13, publisher: "x", stored: nil) == "new")
        #expect(MessageIdentity.storedId(payloadId: "pn:c:10", channel: "c", timetoken: 14, publisher: "x", stored: nil) == "pn:c:14")
        #expect(MessageIdentity.storedId(payloadId: "pn:c:14", channel: "c", timetoken: 14, publisher: "x", stored: nil) == "pn:c:14")
    }

    @Test("a probe finishes a publish only on this user's own entry: another publisher's copy of the id or op meta is not it")
    func probeNeedsOwnPublisher() async throws {
        let world = try World(profile: .none)
        let sent = try await world.outbox.messages.send(text: "mine", to: "c")
        let id = try #require(sent.value?.id), opId = try #require(sent.opId)
        // Mallory publishes a copy carrying the id and the op id before mine goes out.
        let mallory = try World.client(InProcessTransport(server: world.server), userId: "mallory")
        _ = try await mallory.publish(PublishRequest(channel: "c", message: chatPayload(id, "forged"), meta: ["pnr_op": .string(opId)]))
        let forged = HistoryMessage(message: chatPayload(id, "forged"), timetoken: 1, uuid: "mallory", meta: ["pnr_op": .string(opId)])
        #expect(!OutboxProbes<DefaultChatCustom>.isMessage(forged, id: id, opId: opId, publisher: "me"))
        let own = HistoryMessage(message: chatPayload(id, "mine"), timetoken: 2, uuid: "me", meta: ["pnr_op": .string(opId)])
        #expect(OutboxProbes<DefaultChatCustom>.isMessage(own, id: id, opId: opId, publisher: "me"))
        // The pull sees Mallory's copy first: my pending message stays pending, hers is a row of its own.
        _ = try await world.reconciler().pullHistory(channels: ["c"])
        #expect(try await world.store.fetch(world.store.queries.message(id: id))?.delivery == .pending)
        _ = try await world.outbox.drain()
        _ = try await world.reconciler().pullHistory(channels: ["c"])
        let rows = try await world.store.fetch(world.store.queries.messages(inChannel: "c"))
        #expect(rows.map(\.text).sorted() == ["forged", "mine"])
        #expect(rows.first { $0.id == id }?.userId == "me" && rows.first { $0.id == id }?.text == "mine")
    }

    @Test("edits and deletions count from the author, from named moderators, or from anyone when the app opts into the Chat SDK's rule")
    func editAuthority() async throws {
        let world = try World()
        let alice = try World.client(InProcessTransport(server: world.server), userId: "alice")
        let mod = try World.client(InProcessTransport(server: world.server), userId: "mod")
        let tt = try await alice.publish(PublishRequest(channel: "c", message: chatPayload("a1", "original")))
        _ = try await mod.messageActions.addMessageAction(channel: "c", messageTimetoken: tt, type: "edited", value: "moderated")
        _ = try await world.reconciler(options: { var o = ReconcilerOptions(); o.channels = ["c"]; o.everyChannelHot = true; return o }()).sync()
        func shown() async throws -> ChatMessage<DefaultChatCustom.Message>? {
            try await world.store.fetch(world.store.queries.message(id: "a1"))
        }
        #expect(try await shown()?.shownText == "original")
        #expect(try await world.store.editAuthority() == .author)

        try await world.store.setEditAuthority(.authorAndModerators(["mod"]))
        #expect(try await shown()?.shownText == "moderated")
        _ = try await alice.messageActions.addMessageAction(channel: "c", messageTimetoken: tt, type: "edited", value: "author's own")
        _ = try await world.reconciler().pullReactions(channel: "c")
        #expect(try await shown()?.shownText == "author's own", "the newest counted edit wins")

        try await world.store.setEditAuthority(.author)
        _ = try await mod.messageActions.addMessageAction(channel: "c", messageTimetoken: tt, type: "deleted", value: "deleted")
        _ = try await world.reconciler().pullReactions(channel: "c")
        #expect(try await shown()?.isDeleted == false)
        #expect(try await world.store.fetch(world.store.queries.messages(inChannel: "c")).count == 1)
        try await world.store.setEditAuthority(.anyone)
        #expect(try await shown()?.isDeleted == true)
        #expect(try await world.store.fetch(world.store.queries.messages(inChannel: "c")).isEmpty)

        // This user ("me") is no moderator: editing or deleting Alice's message is refused, nothing queued.
        try await world.store.setEditAuthority(.author)
        await #expect(throws: OutboxError.notAllowedToChange(messageId: "a1", author: "alice")) {
            _ = try await world.outbox.messages.edit(message: "a1", text: "mine now")
        }
        await #expect(throws: OutboxError.notAllowedToChange(messageId: "a1", author: "alice")) {
            _ = try await world.outbox.messages.deleteMessage(id: "a1")
        }
        #expect(try await world.entries().isEmpty)
        try await world.store.setEditAuthority(.authorAndModerators(["me"]))
        #expect(try await world.outbox.messages.edit(message: "a1", text: "moderated by me").opId != nil)
        await #expect(throws: StoreError.self) { try await world.store.setEditAuthority(.authorAndModerators(["a,b"])) }
    }
}
