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
}
