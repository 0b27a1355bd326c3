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
    /// Seeds of the flaky two-cryptor test (`PNREPLICATE_CRYPTO_SEEDS=N` for more).
    static var seeds: ClosedRange<UInt64> { SoakSeeds.range("PNREPLICATE_CRYPTO_SEEDS", default: 10) }

    @Test("a device on the header cryptor and one on the legacy cryptor read each other's messages from history; the server holds only ciphertext")
    func twoCryptors() async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        let modern = try World(
            server: server, clock: clock, userId: "modern", seed: 1, crypto: CryptoModule(cipherKey: Self.key))
        let legacy = try World(
            server: server, clock: clock, userId: "legacy", seed: 2,
            crypto: CryptoModule(cipherKey: Self.key, encryptWith: .legacy(randomIV: true)))
        _ = try await modern.outbox.messages.send(text: "from the header cryptor", to: "c")
        _ = try await legacy.outbox.messages.send(text: "from the legacy cryptor ✓", to: "c")
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

    @Test("through a flaky network, a header-cryptor and a legacy-cryptor device each send; after healing both hold every message once, decrypted, and the server only ciphertext",
          arguments: seeds)
    func flakyTwoCryptors(seed: UInt64) async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        let modern = try World(
            server: server, clock: clock, userId: "modern", plan: FaultPlan(seed: seed, profile: .flaky), seed: seed,
            crypto: CryptoModule(cipherKey: Self.key))
        let legacy = try World(
            server: server, clock: clock, userId: "legacy", plan: FaultPlan(seed: seed &+ 1000, profile: .flaky),
            seed: seed &+ 1000, crypto: CryptoModule(cipherKey: Self.key, encryptWith: .legacy(randomIV: true)))
        var sent: [String] = []
        for round in 0..<6 {
            for (name, device) in [("modern", modern), ("legacy", legacy)] {
                clock.advance(by: 1)
                let receipt = try await device.outbox.messages.send(text: "\(name) \(round) ✓ Grüße", to: "c")
                sent.append(try #require(receipt.value?.id))
                // A short sync in the weather: some publishes wait, some answers are lost.
                _ = try await device.sync(pushingFor: 2)
            }
        }
        try await World.healAndSyncUntilQuiet(modern, legacy, clock: clock, seed: seed)

        let stored = await server.storedMessages(channel: "c")
        #expect(stored.count == sent.count, "seed \(seed): each message published once")
        #expect(stored.allSatisfy { $0.message.stringValue != nil }, "seed \(seed): the server holds only ciphertext")
        for device in [modern, legacy] {
            let messages = try await device.store.fetch(device.store.queries.messages(inChannel: "c"))
            #expect(messages.map(\.id).sorted() == sent.sorted(), "seed \(seed), \(device.client.configuration.userId)")
            #expect(messages.allSatisfy { $0.timetoken != nil && $0.text.hasSuffix("✓ Grüße") }, "seed \(seed)")
            let marked = try await device.store.fetch(
                device.store.queries.messages(withContentType: Reconciler<DefaultChatCustom>.undecryptableContentType))
            #expect(marked.isEmpty, "seed \(seed): \(marked.count) undecryptable")
        }
    }

    @Test("GET, POST and gzip POST publish the same ciphertext shape; meta stays in the clear; v3, with-actions and v2 history decrypt all three",
          arguments: [PublishRequest.Method.get, .post, .postGzip])
    func publishMethods(_ method: PublishRequest.Method) async throws {
        let server = PubNubServer(clock: VirtualClock())
        let crypto = CryptoModule(cipherKey: Self.key)
        let client = try PubNubClient.simulated(InProcessTransport(server: server), userId: "w", crypto: crypto)
        let message: JSONValue = ["text": .string("via \(method) — ✓"), "n": 1]
        let request = try client.publishRequest(PublishRequest(channel: "c", message: message, method: method, meta: ["k": "clear"]))
        let wire = request.pathSegments.joined(separator: "/") + String(decoding: request.body ?? Data(), as: UTF8.self)
        #expect(!wire.contains("via") && (method == .postGzip || wire.contains("\"UE5FRAFBQ1JI")), "a JSON string of ciphertext: \(wire)")
        #expect(request.query.contains { $0.name == "meta" && $0.value?.contains("clear") == true }, "meta is sent in the clear")
        _ = try await client.publish(PublishRequest(channel: "c", message: message, method: method, meta: ["k": "clear"]))
        let stored = try #require(await server.storedMessages(channel: "c").first)
        #expect(stored.message.stringValue?.hasPrefix("UE5FRAFBQ1JI") == true, "\(stored.message)")
        let query = HistoryQuery(channels: ["c"], max: 10)
        #expect(try await client.history.fetchHistory(query).channels["c"]?.first?.message == message)
        #expect(try await client.history.fetchHistoryWithActions(query).channels["c"]?.first?.message == message)
        #expect(try await client.history.fetchLegacyHistory(LegacyHistoryQuery(channel: "c")).messages.first?.message == message)
    }

    @Test("without the right key a message is kept as received and marked; decryptPending reads it once the key is right")
    func undecryptableKeptThenDecrypted() async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        let writer = try World(server: server, clock: clock, userId: "writer", seed: 1, crypto: CryptoModule(cipherKey: Self.key))
        let sent = try await writer.outbox.messages.send(text: "for key holders", to: "c")
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

        // Search finds nothing in a payload it cannot read (docs/search.md) ...
        #expect(try await wrong.store.fetch(wrong.store.queries.search(MessageSearch("holders"))).messages.isEmpty)

        let right = try World(server: server, clock: clock, userId: "reader", storePath: path, seed: 4,
                              crypto: CryptoModule(cipherKey: Self.key))
        let report = try await right.reconciler.decryptPending()
        // ... and finds it once decryptPending has read it.
        #expect(try await right.store.fetch(right.store.queries.search(MessageSearch("holders"))).messages.map(\.id) == [try #require(sent.value?.id)])
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
        // Signals: the Swift SDK encrypts them (we send ours in the clear); both kinds read.
        let plain = try PubNubClient.simulated(InProcessTransport(server: server), userId: "sdk")
        _ = try await plain.signal(SignalRequest(channel: "c", message: try CryptoModule(cipherKey: Self.key).encrypt(message: ["t": 1])))
        _ = try await plain.signal(SignalRequest(channel: "c", message: "plain signal"))
        let answer = try await reader.client.subscribe(SubscribeRequest(channels: ["c"], cursor: cursor))
        let envelope = try #require(answer.envelopes.first)
        #expect(envelope.payload.objectValue?["text"] == "hello live" && envelope.decryptionError == nil)
        let signals = answer.envelopes.filter { $0.event == .signal }.map(\.payload)
        #expect(signals == [["t": 1], "plain signal"], "\(signals)")

        _ = try await reader.outbox.messages.send(text: "stored as plaintext", to: "c")
        _ = try await reader.outbox.drain()
        _ = try await reader.reconciler.pullHistory(channels: ["c"])
        var bytes = Data()   // the database and its write-ahead log: wherever a page may be
        for file in [reader.path, reader.path + "-wal"] where FileManager.default.fileExists(atPath: file) {
            bytes.append(try Data(contentsOf: URL(fileURLWithPath: file)))
        }
        #expect(bytes.range(of: Data(Self.key.utf8)) == nil, "the store holds the cipher key")
        #expect(bytes.range(of: Data("stored as plaintext".utf8)) != nil, "the store holds plaintext for queries")
    }

    @Test("live sync stores an encrypted message decrypted and one it cannot read marked; the next sync with the right key reads that one, and a pull with another key never duplicates it")
    func liveSyncDecrypts() async throws {
        let world = try await LiveWorld()
        try await world.join(["reader", "writer", "other"], ["c"])
        let path = World.temporaryPath()
        let (reader, live) = try world.device("reader", seed: 1, storePath: path, crypto: CryptoModule(cipherKey: Self.key))
        let (writer, _) = try world.device("writer", seed: 2, crypto: CryptoModule(cipherKey: Self.key))
        let (other, _) = try world.device("other", seed: 3, crypto: CryptoModule(cipherKey: "the other key"))
        try await LiveWorld.settle(live)
        let readable = try #require(try await writer.outbox.messages.send(text: "readable", to: "c").value?.id)
        let unreadable = try #require(try await other.outbox.messages.send(text: "another key's", to: "c").value?.id)
        _ = try await writer.outbox.drain()
        _ = try await other.outbox.drain()
        try await LiveWorld.settle(live)
        #expect(await live.statistics.recoveredMessages == 0, "both came live")
        let marked = try await reader.store.fetch(
            reader.store.queries.messages(withContentType: Reconciler<DefaultChatCustom>.undecryptableContentType))
        #expect(marked.count == 1 && marked.first?.content?.stringValue?.hasPrefix("UE5FRAFBQ1JI") == true)
        #expect(try await reader.store.fetch(reader.store.queries.message(id: readable))?.text == "readable")

        // The app now has the other key: the next sync reads the marked message, and its history
        // pull meets the first message again, unreadable under this key, without a second row.
        let rekeyed = try World(
            server: world.server, clock: world.clock, userId: "reader", storePath: path, seed: 4,
            crypto: CryptoModule(cipherKey: "the other key"))
        let report = try await rekeyed.sync()
        #expect(report.decrypted == DecryptPendingReport(decrypted: 1, stillUndecryptable: 0), "\(report.errors)")
        let messages = try await rekeyed.store.fetch(rekeyed.store.queries.messages(inChannel: "c"))
        #expect(messages.map(\.id) == [readable, unreadable], "\(messages.map(\.id))")
        #expect(messages.map(\.text) == ["readable", "another key's"])
    }
}
