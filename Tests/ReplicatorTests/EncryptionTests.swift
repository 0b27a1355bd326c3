import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator
import Testing

/// Encryption end to end: the outbox publishes ciphertext, pulls and live events decrypt, the
/// simulator stores what it is sent, and nothing undecryptable is lost.
@Suite("Encryption through the outbox, pulls and live events")
struct EncryptionTests {
    static let key = "secret cipher key 🔑"

    @Test("a device on the header cryptor and one on the legacy cryptor read each other's messages from history; the server holds only ciphertext")
    func twoCryptors() async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        let modern = try World(
            server: server, clock: clock, userId: "modern", seed: 1, crypto: CryptoModule(cipherKey: Self.key))
        let legacy = try World(
            server: server, clock: clock, userId: "legacy", seed: 2,
            crypto: CryptoModule(cipherKey: Self.key, encryptWith: .legacy(randomIV: true)))
        _ = try await modern.outbox.send(text: "from the header cryptor", to: "c")
        _ = try await legacy.outbox.send(text: "from the legacy cryptor ✓", to: "c")
        _ = try await modern.outbox.drain()
        _ = try await legacy.outbox.drain()

        let stored = await server.storedMessages(channel: "c")
        #expect(stored.count == 2)
        #expect(stored.allSatisfy { $0.message.stringValue != nil }, "the simulator keeps the ciphertext strings it was sent")
        #expect(stored.first { $0.publisher == "modern" }?.message.stringValue?.hasPrefix("UE5FRAFBQ1JI") == true)
        #expect(stored.first { $0.publisher == "legacy" }?.message.stringValue?.hasPrefix("UE5FRA") == false)

        for device in [modern, legacy] {
            _ = try await device.reconciler.pullHistory(channels: ["c"])
            let texts = try await device.store.fetch(device.store.queries.messages(inChannel: "c")).map(\.text)
            #expect(texts == ["from the header cryptor", "from the legacy cryptor ✓"], "\(device.client.configuration.userId)")
        }
    }

    @Test("without the right key a message is kept as received and marked; decryptPending reads it once the key is right")
    func undecryptableKeptThenDecrypted() async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        let writer = try World(server: server, clock: clock, userId: "writer", seed: 1, crypto: CryptoModule(cipherKey: Self.key))
        let sent = try await writer.outbox.send(text: "for key holders", to: "c")
        _ = try await writer.outbox.drain()
        let other = try World.client(InProcessTransport(server: server), userId: "plain")
        _ = try await other.publish(PublishRequest(channel: "c", message: "not encrypted at all"))

        let path = World.temporaryPath()
        let wrong = try World(server: server, clock: clock, userId: "reader", storePath: path, seed: 3,
                              crypto: CryptoModule(cipherKey: "the wrong key"))
        _ = try await wrong.reconciler.pullHistory(channels: ["c"])
        let marked = try await wrong.store.fetch(
            wrong.store.queries.messages(withContentType: Reconciler<DefaultChatCustom>.undecryptableContentType))
        #expect(marked.count == 2, "neither the wrong key's nor the plain message is lost")
        #expect(marked.first?.content?.stringValue?.hasPrefix("UE5FRAFBQ1JI") == true)

        let right = try World(server: server, clock: clock, userId: "reader", storePath: path, seed: 4,
                              crypto: CryptoModule(cipherKey: Self.key))
        let report = try await right.reconciler.decryptPending()
        #expect(report.decrypted == 1 && report.stillUndecryptable == 1, "\(report)")
        let messages = try await right.store.fetch(right.store.queries.messages(inChannel: "c"))
        #expect(messages.map(\.id).contains(try #require(sent.value?.id)))
        #expect(messages.first { $0.userId == "writer" }?.text == "for key holders")
    }

    @Test("live events are decrypted too; the store file never contains the cipher key")
    func liveAndKeyNeverStored() async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        let reader = try World(server: server, clock: clock, userId: "reader", seed: 1, crypto: CryptoModule(cipherKey: Self.key))
        let writer = try PubNubClient.simulated(
            InProcessTransport(server: server), userId: "writer", crypto: CryptoModule(cipherKey: Self.key))
        let cursor = try await reader.client.handshake(["c"])
        _ = try await writer.publish(PublishRequest(channel: "c", message: ["id": "live-1", "text": "hello live", "createdAt": "2026-11-24T00:00:00Z"]))
        let answer = try await reader.client.subscribe(SubscribeRequest(channels: ["c"], cursor: cursor))
        let envelope = try #require(answer.envelopes.first)
        #expect(envelope.payload.objectValue?["text"] == "hello live" && envelope.decryptionError == nil)

        _ = try await reader.outbox.send(text: "stored as plaintext", to: "c")
        _ = try await reader.outbox.drain()
        _ = try await reader.reconciler.pullHistory(channels: ["c"])
        var bytes = Data()   // the database and its write-ahead log: wherever a page may be
        for file in [reader.path, reader.path + "-wal"] where FileManager.default.fileExists(atPath: file) {
            bytes.append(try Data(contentsOf: URL(fileURLWithPath: file)))
        }
        #expect(bytes.range(of: Data(Self.key.utf8)) == nil, "the store holds the cipher key")
        #expect(bytes.range(of: Data("stored as plaintext".utf8)) != nil, "the store holds plaintext for queries")
    }
}
