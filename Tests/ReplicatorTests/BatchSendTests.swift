import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator
import Testing

/// `Outbox.send(many:)`: one transaction for a batch, all or nothing, sent in order per channel.
@Suite("Batch send")
struct BatchSendTests {
    @Test("a batch queues every message in one transaction; the drain publishes each once, in order per channel")
    func batchThenDrain() async throws {
        let world = try World(seed: 1)
        let batch = (0..<300).map { OutgoingMessage<FlatCustom>(text: "m\($0)", to: "c\($0 % 2)") }
        let receipts = try await world.outbox.messages.send(many: batch)
        #expect(receipts.count == 300 && Set(receipts.compactMap(\.opId)).count == 300)
        #expect(try await world.entries().count == 300)
        let pending = try await world.store.fetch(world.store.queries.messages(inChannel: "c0"))
        #expect(pending.map(\.text) == stride(from: 0, to: 300, by: 2).map { "m\($0)" })
        #expect(pending.allSatisfy { $0.delivery == .pending })

        let report = try await world.outbox.drain()
        #expect(report.completed == 300 && report.remaining == 0, "\(report)")
        for channel in ["c0", "c1"] {
            let stored = await world.server.storedMessages(channel: channel)
            let texts = stored.compactMap { $0.message.objectValue?["text"]?.stringValue }
            let first = channel == "c0" ? 0 : 1
            #expect(texts == stride(from: first, to: 300, by: 2).map { "m\($0)" }, "\(channel)")
        }
    }

    @Test("one refused message refuses the whole batch: nothing is stored or queued")
    func allOrNothing() async throws {
        let world = try World(seed: 2)
        var batch = (0..<5).map { OutgoingMessage<FlatCustom>(text: "m\($0)", to: "c") }
        batch[3].meta = "not an object"
        await #expect(throws: OutboxError.metaNotAnObject) { try await world.outbox.messages.send(many: batch) }
        #expect(try await world.entries().isEmpty)
        #expect(try await world.store.fetch(world.store.queries.messages(inChannel: "c")).isEmpty)
        batch[3].meta = nil
        batch[4].channel = ""
        await #expect(throws: ModelValidationError.emptyIdentifier(field: "message.channelId")) { try await world.outbox.messages.send(many: batch) }
        #expect(try await world.entries().isEmpty)
    }

    @Test("a batch's payloads are encoded before its transaction; one the fast writer leaves to JSONEncoder (a non-ASCII key) is encoded at insert, and both publish what a single send does")
    func preparedPayloads() async throws {
        let world = try World(seed: 3)
        let content: JSONValue = ["ключ": 1, "plain": "x"]
        _ = try await world.outbox.messages.send(many: [
            OutgoingMessage(text: "fast", to: "c"),
            OutgoingMessage(text: "slow", to: "c", contentType: "poll", content: content),
        ])
        _ = try await world.outbox.messages.send(text: "single", to: "c", contentType: "poll", content: content)
        let report = try await world.outbox.drain()
        #expect(report.completed == 3 && report.remaining == 0, "\(report)")
        let stored = await world.server.storedMessages(channel: "c").compactMap(\.message.objectValue)
        #expect(stored.map { $0["text"] } == ["fast", "slow", "single"])
        #expect(stored[1]["content"] == content && stored[2]["content"] == content)
        #expect(stored[1].keys.sorted() == stored[2].keys.sorted())
    }

    @Test("a row's encoded payload is dropped when its operation changes, so the insert never stores a stale one")
    func encodedPayloadFollowsTheOperation() {
        var row = NewOutboxRow(
            .send(MessageSend(channel: "c", messageId: "m1", message: ["text": "one"], meta: nil, customMessageType: nil, files: nil)),
            lane: "send:c", target: "message:m1")
        #expect(row.encodedPayload == nil)
        row.encodePayload()
        #expect(row.encodedPayload?.contains("\"one\"") == true)
        row.operation = .send(MessageSend(channel: "c", messageId: "m1", message: ["text": "two"], meta: nil, customMessageType: nil, files: nil))
        #expect(row.encodedPayload == nil)
        row.dependsOn = "other"
        row.encodePayload()
        #expect(row.encodedPayload?.contains("\"two\"") == true)
    }
}
