import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whose files a hard delete deletes, and a cache that serves only bytes it can vouch for
/// (docs/files.md; the integrity issue, round three): a peer holding the keys forges a copy of
/// another user's file message, or forwards it, and a moderator or the peer hard-deletes the copy.
@Suite("File integrity: a hard delete deletes only the message's own files; the cache serves the right bytes")
struct FileIntegrityTests {
    static let photo = FileSendTests.bytes(4000, seed: 47)

    /// alice's file message on `general`, sent and drained; the file as stored on the server.
    static func aliceSends(_ server: PubNubServer, _ clock: VirtualClock, shape: FileShape = .fileMessage)
        async throws -> (SimulatedDevice<DefaultChatCustom>, RemoteFile)
    {
        let alice = try SimulatedDevice<DefaultChatCustom>(server: server, clock: clock, userId: "alice")
        _ = try await alice.outbox.messages.send(files: [OutgoingFile(data: photo, name: "holiday.png")], text: "mine", to: "general", shape: shape)
        let report = try await alice.outbox.drain()
        try #require(report.remaining == 0 && report.deadLetters == 0, "\(report)")
        let stored = try await FileSendTests.serverFiles(try alice.observer(), "general")
        try #require(stored.count == 1)
        return (alice, stored[0])
    }

    /// bob, who holds the keys and write on `general`, publishes a file message naming `file`
    /// (under `name`, default its own): nothing is uploaded.
    static func bobPublishesCopy(of file: RemoteFile, named name: String? = nil, on server: PubNubServer) async throws {
        let bob = try PubNubClient.simulated(InProcessTransport(server: server), userId: "bob")
        _ = try await bob.files.publishFile(PublishFileRequest(channel: "general", fileId: file.id, fileName: name ?? file.name))
    }

    /// carol, who first syncs `general` now (hot: its reactions too).
    static func carolSyncs(_ server: PubNubServer, _ clock: VirtualClock, options: ReconcilerOptions = ReconcilerOptions())
        async throws -> SimulatedDevice<DefaultChatCustom>
    {
        let carol = try SimulatedDevice<DefaultChatCustom>(server: server, clock: clock, userId: "carol", reconcilerOptions: options)
        _ = try await carol.reconciler.markHot("general")
        _ = try await carol.sync()
        return carol
    }

    /// `device` hard-deletes the first stored message of `userId` on `general` and drains.
    static func hardDeleteFirst(of userId: String, on device: SimulatedDevice<DefaultChatCustom>) async throws -> DrainReport {
        let messages = try await device.store.fetch(device.store.queries.messages(inChannel: "general"))
        let message = try #require(messages.first { $0.userId == userId }, "no message of \(userId)")
        _ = try await device.outbox.messages.deleteMessage(id: message.id, hard: true)
        return try await device.outbox.drain()
    }

    /// The requests of `device` that would delete the file `id` (any channel).
    static func deletes(of id: String, by device: SimulatedDevice<DefaultChatCustom>) -> [WireRequest] {
        device.transport.requests.filter { $0.method == .delete && $0.pathSegments.contains(id) }
    }

    /// Whether the file still downloads byte-identical (a fault-free observer).
    static func stillThere(_ file: RemoteFile, on server: PubNubServer) async throws -> Bool {
        let observer = try PubNubClient.simulated(InProcessTransport(server: server), userId: "observer")
        return try await observer.files.downloadFile(channel: "general", id: file.id, name: file.name) == photo
    }

    @Test("a moderator whose store never held alice's message hard-deletes bob's forged copy: alice's file stays, no DELETE names it",
          arguments: [FileShape.fileMessage, .chatText])
    func forgedCopy(shape: FileShape) async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        let (_, file) = try await Self.aliceSends(server, clock, shape: shape)
        clock.advance(by: 5)

        // bob holds the keys and write on the channel: he publishes a message naming alice's
        // file (nothing uploaded), as a file message or as the Chat SDK's text message.
        let bob = try PubNubClient.simulated(InProcessTransport(server: server), userId: "bob")
        switch shape {
        case .fileMessage:
            _ = try await bob.files.publishFile(PublishFileRequest(
                channel: "general", fileId: file.id, fileName: file.name, message: .object(["text": "spam"])))
        case .chatText:
            _ = try await bob.publish(PublishRequest(channel: "general", message: .object([
                "type": "text", "text": "spam",
                "files": .array([.object(["id": .string(file.id), "name": .string(file.name), "type": "image/png"])]),
            ])))
        }

        // carol, a moderator, first syncs now and keeps only the newest message: the forged one.
        var options = ReconcilerOptions()
        options.initialMessages = 1
        options.pageSize = 1
        let carol = try await Self.carolSyncs(server, clock, options: options)
        let held = try await carol.store.fetch(carol.store.queries.messages(inChannel: "general"))
        try #require(held.count == 1 && held[0].userId == "bob" && held[0].files.map(\.id) == [file.id], "\(held.map { ($0.userId, $0.files) })")

        _ = try await carol.outbox.messages.deleteMessage(id: held[0].id, hard: true)
        let report = try await carol.outbox.drain()
        #expect(report.remaining == 0 && report.deadLetters == 0 && report.orphanedFiles == 0, "\(report)")
        #expect(Self.deletes(of: file.id, by: carol).isEmpty, "\(Self.deletes(of: file.id, by: carol))")
        #expect(try await Self.stillThere(file, on: server))
        // The forged message itself is gone from history; alice's stays.
        let history = try await carol.observer().history.fetchHistory(HistoryQuery(channels: ["general"], max: 100)).channels["general"] ?? []
        #expect(history.count == 1 && history[0].uuid == "alice")
    }

    @Test("alice deletes her message keeping its file; a copy published two hours later is hard-deleted by a moderator: the file stays")
    func copyAfterTheOriginalIsGone() async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        let (alice, file) = try await Self.aliceSends(server, clock)
        let original = try #require(try await alice.store.fetch(alice.store.queries.messages(inChannel: "general")).first)
        _ = try await alice.outbox.messages.deleteMessage(id: original.id, hard: true, preserveFiles: true)
        _ = try await alice.outbox.drain()
        #expect(try await Self.stillThere(file, on: server))
        clock.advance(by: 7200)
        try await Self.bobPublishesCopy(of: file, on: server)
        let carol = try await Self.carolSyncs(server, clock)
        let report = try await Self.hardDeleteFirst(of: "bob", on: carol)
        #expect(report.remaining == 0 && report.orphanedFiles == 0, "\(report)")
        #expect(Self.deletes(of: file.id, by: carol).isEmpty)
        #expect(try await Self.stillThere(file, on: server))
    }

    @Test("bob hard-deletes his forward of alice's message: the original's file stays, no DELETE names it")
    func forward() async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        let (_, file) = try await Self.aliceSends(server, clock, shape: .chatText)
        let bob = try SimulatedDevice<DefaultChatCustom>(server: server, clock: clock, userId: "bob")
        _ = try await bob.reconciler.markHot("general")
        _ = try await bob.sync()
        let original = try #require(try await bob.store.fetch(bob.store.queries.messages(inChannel: "general")).first)
        let forwarded = try #require(try await bob.outbox.conversations.forward(message: original.id, to: "random").value)
        _ = try await bob.outbox.drain()
        let sent = try #require(try await bob.store.fetch(bob.store.queries.message(id: forwarded.id)))
        try #require(sent.files.map(\.id) == [file.id] && sent.timetoken != nil)

        _ = try await bob.outbox.messages.deleteMessage(id: forwarded.id, hard: true)
        let report = try await bob.outbox.drain()
        #expect(report.remaining == 0 && report.deadLetters == 0 && report.orphanedFiles == 0, "\(report)")
        #expect(Self.deletes(of: file.id, by: bob).isEmpty, "\(Self.deletes(of: file.id, by: bob))")
        #expect(try await Self.stillThere(file, on: server))
    }

    @Test("a moderator hard-deletes alice's own message, never stored before the pull: the server confirms it named the file first, and the file goes")
    func moderatorDeletesTheOriginal() async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        let (_, file) = try await Self.aliceSends(server, clock)
        clock.advance(by: 5)
        // A later copy exists, but the moderator deletes the original.
        try await Self.bobPublishesCopy(of: file, on: server)
        let carol = try await Self.carolSyncs(server, clock)
        let report = try await Self.hardDeleteFirst(of: "alice", on: carol)
        #expect(report.remaining == 0 && report.deadLetters == 0 && report.orphanedFiles == 0, "\(report)")
        #expect(Self.deletes(of: file.id, by: carol).count == 1)
        #expect(try await FileSendTests.serverFiles(try carol.observer(), "general").isEmpty)
    }

    @Test("the author's own hard delete takes the file at once (no listing, no history read); with preserveFiles it stays")
    func ownUploadAndPreserveFiles() async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        let (alice, file) = try await Self.aliceSends(server, clock)
        let id = try #require(try await alice.store.fetch(alice.store.queries.messages(inChannel: "general")).first?.id)
        _ = try await alice.outbox.messages.deleteMessage(id: id, hard: true, preserveFiles: true)
        let before = alice.transport.requests.count
        _ = try await alice.outbox.drain()
        #expect(Self.deletes(of: file.id, by: alice).isEmpty)
        #expect(try await Self.stillThere(file, on: server))
        #expect(alice.transport.requests.count == before + 1, "only the history delete")

        // A second file, hard-deleted without preserveFiles: this device uploaded it for this
        // message, so it goes with no listing or history read.
        let second = try #require(try await alice.outbox.messages.send(files: [OutgoingFile(data: Data("b".utf8), name: "b.txt")], to: "general").value?.id)
        _ = try await alice.outbox.drain()
        let uploaded = try #require(try await alice.store.fetch(alice.store.queries.message(id: second))?.files.first?.id)
        _ = try await alice.outbox.messages.deleteMessage(id: second, hard: true)
        let mark = alice.transport.requests.count
        _ = try await alice.outbox.drain()
        let made = alice.transport.requests.dropFirst(mark).map { "\($0.method) \($0.pathSegments.prefix(2).joined(separator: "/"))" }
        #expect(made == ["delete v3/history", "delete v1/files"], "\(made)")
        #expect(try await FileSendTests.serverFiles(try alice.observer(), "general").map(\.id) == [file.id])
        #expect(!(try await FileSendTests.serverFiles(try alice.observer(), "general").map(\.id).contains(uploaded)))
    }

    @Test("a peer's file id or name of '..' is never a file: no request path carries it, a hard delete of its message sends no DELETE")
    func dotSegments() async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        try await Self.bobPublishesCopy(of: RemoteFile(id: "..", name: "x.png", size: 1), on: server)
        try await Self.bobPublishesCopy(of: RemoteFile(id: "f-1", name: "..", size: 1), on: server)
        let carol = try await Self.carolSyncs(server, clock)
        let held = try await carol.store.fetch(carol.store.queries.messages(inChannel: "general"))
        try #require(held.count == 2)
        #expect(held.allSatisfy { $0.files.isEmpty }, "\(held.map(\.files))")
        for message in held { _ = try await carol.outbox.messages.deleteMessage(id: message.id, hard: true) }
        _ = try await carol.outbox.drain()
        #expect(carol.transport.requests.filter { $0.pathSegments.prefix(2) == ["v1", "files"] }.isEmpty)
        // And the wire client refuses them whoever asks.
        #expect(throws: WireError.self) { _ = try carol.client.files.deleteFileRequest(channel: "general", id: "..", name: "x") }
        #expect(throws: WireError.self) { _ = try carol.client.files.fileLocationRequest(channel: "general", id: "f", name: "..") }
        #expect(throws: WireError.self) { _ = try carol.client.files.fileLocationRequest(channel: "general", id: "f\u{1b}", name: "a") }
    }

    @Test("a peer reuses a file id under another name: the name is the first message's, not the newest")
    func firstNameWins() async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        let (_, file) = try await Self.aliceSends(server, clock)
        clock.advance(by: 5)
        try await Self.bobPublishesCopy(of: file, named: "other.png", on: server)
        let carol = try await Self.carolSyncs(server, clock)
        let named = try await carol.store.fetch(carol.store.queries.file(id: file.id, inChannel: "general"))
        #expect(named?.name == "holiday.png")
    }

    // MARK: The cache

    @Test("a read without the cipher key never leaves ciphertext for a read with it, nor the other way round")
    func cacheKeyedByCrypto() async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        let crypto = CryptoModule(cipherKey: "files-key")
        let alice = try SimulatedDevice<DefaultChatCustom>(server: server, clock: clock, userId: "alice", crypto: crypto)
        _ = try await alice.outbox.messages.send(files: [OutgoingFile(data: Self.photo, name: "p.png")], to: "general")
        _ = try await alice.outbox.drain()
        let stored = try #require(try await FileSendTests.serverFiles(try alice.observer(), "general").first)
        let file = ChatFile(id: stored.id, name: stored.name)

        // One store, read first by a client without the key (as `files get` without it), then with it.
        let path = SimulatedDevice<DefaultChatCustom>.temporaryStorePath()
        let store = try ChatStore<DefaultChatCustom>.open(at: path)
        let keyless = FileCache(store: store, client: try PubNubClient.simulated(InProcessTransport(server: server), userId: "bob"), clock: clock)
        let ciphertext = try await keyless.data(of: file, channel: "general")
        #expect(ciphertext.starts(with: Data("PNED".utf8)))
        let keyed = FileCache(
            store: store, client: try PubNubClient.simulated(InProcessTransport(server: server), userId: "bob", crypto: crypto), clock: clock)
        #expect(try await keyed.data(of: file, channel: "general") == Self.photo)
        #expect(await keyed.downloadCount == 1)
        #expect(try await keyed.data(of: file, channel: "general") == Self.photo)
        #expect(await keyed.downloadCount == 1, "the plaintext is cached for the keyed reader")
        #expect(try await keyless.data(of: file, channel: "general") == ciphertext)
        #expect(await keyless.downloadCount == 1, "the keyless reader's own entry")
        // Another key decrypts nothing: an error, and nothing cached for it.
        let wrong = FileCache(store: store, client: try PubNubClient.simulated(
            InProcessTransport(server: server), userId: "bob", crypto: CryptoModule(cipherKey: "other")), clock: clock)
        await #expect(throws: (any Error).self) { _ = try await wrong.data(of: file, channel: "general") }
        #expect(try await wrong.isCached(file, channel: "general") == false)
        // The sender's own plaintext serves any configuration.
        let senderKeyless = FileCache(store: alice.store, client: try PubNubClient.simulated(InProcessTransport(server: server), userId: "alice"), clock: clock)
        #expect(try await senderKeyless.data(of: file, channel: "general") == Self.photo)
        #expect(await senderKeyless.downloadCount == 0)
    }

    @Test("the channel is part of the key; bytes of another size than the message gives are refused and not cached; a delete evicts")
    func channelSizeAndDelete() async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        let (_, stored) = try await Self.aliceSends(server, clock)
        let bob = try SimulatedDevice<DefaultChatCustom>(server: server, clock: clock, userId: "bob")
        let cache = FileCache(store: bob.store, client: bob.client, clock: clock)
        let file = ChatFile(id: stored.id, name: stored.name, size: Self.photo.count)
        #expect(try await cache.data(of: file, channel: "general") == Self.photo)
        // The same id and name on another channel is another file: not served from the cache.
        await #expect(throws: WireError.self) { _ = try await cache.data(of: file, channel: "random") }
        #expect(try await cache.isCached(file, channel: "random") == false)

        // A message that gives another size: refused, nothing cached.
        let liar = ChatFile(id: stored.id, name: stored.name, size: Self.photo.count + 1)
        let fresh = FileCache(store: try SimulatedDevice<DefaultChatCustom>(server: server, clock: clock, userId: "dan").store, client: bob.client, clock: clock)
        await #expect(throws: FileCacheError.sizeMismatch(name: stored.name, expected: Self.photo.count + 1, downloaded: Self.photo.count)) {
            _ = try await fresh.data(of: liar, channel: "general")
        }
        #expect(try await fresh.isCached(liar, channel: "general") == false)

        // `files delete`: gone from PubNub and from the cache.
        try await cache.deleteFile(id: stored.id, name: stored.name, channel: "general")
        #expect(try await cache.isCached(file, channel: "general") == false)
        #expect(try await FileSendTests.serverFiles(bob.client, "general").isEmpty)
    }

    // MARK: Input

    @Test("send --file of a FIFO or a device names what it is, queues nothing and does not block")
    func irregularFiles() async throws {
        let clock = VirtualClock()
        let alice = try SimulatedDevice<DefaultChatCustom>(server: PubNubServer(clock: clock), clock: clock, userId: "alice")
        let fifo = SimulatedDevice<DefaultChatCustom>.temporaryStorePath() + ".fifo"
        try #require(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        for (path, kind) in [(fifo, "FIFO"), ("/dev/zero", "character device"), (NSTemporaryDirectory(), "directory")] {
            let url = URL(fileURLWithPath: path)
            await #expect(throws: OutboxError.invalidFile("\(url.path) is a \(kind), not a regular file: only a regular file's bytes can be sent")) {
                _ = try await alice.outbox.messages.send(files: [OutgoingFile(url: url, name: "x.bin")], to: "general")
            }
        }
        #expect(try await alice.outboxEntries().isEmpty)
    }

    @Test("file ids, names and push device tokens from a peer or a flag: '..', '/', control characters refused by the one rule")
    func identifierRule() throws {
        for bad in ["", ".", "..", "a/b", "a\u{1b}]0;x\u{07}", "a\u{85}"] {
            #expect(throws: ModelValidationError.self) { try Validation.validateFileId(bad) }
            #expect(throws: ModelValidationError.self) { try Validation.validateFileName(bad, own: true) }
            #expect(throws: PushDeviceError.self) { _ = try PushDevice(token: bad, type: .fcm) }
            #expect(ChatFile(wire: .object(["id": .string(bad), "name": "x.png"])) == nil)
        }
        for bad in ["", ".", "..", "a/b", "a\u{0}b"] {
            #expect(throws: ModelValidationError.self) { try Validation.validateFileName(bad, own: false) }
            #expect(ChatFile(wire: .object(["id": "f-1", "name": .string(bad)])) == nil)
        }
        // Another client's name may carry a terminal escape: it stays addressable (and is printed escaped).
        #expect(throws: Never.self) { try Validation.validateFileName("a\u{1b}]0;x\u{07}", own: false) }
        for good in ["0b7f19b8-fda2-4d6d-9415-ef286cf876d6", "photo 1.png", "..photo", "naïve.txt", "a\\b"] {
            #expect(throws: Never.self) { try Validation.validateFileId(good) }
            #expect(throws: Never.self) { try Validation.validateFileName(good, own: true) }
        }
        #expect(throws: ModelValidationError.self) { try Validation.validateFileName(String(repeating: "a", count: 256), own: true) }
        #expect(throws: Never.self) { try Validation.validateFileName(String(repeating: "a", count: 256), own: false) }
    }
}
