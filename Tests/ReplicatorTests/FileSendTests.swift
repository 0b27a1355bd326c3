import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator
import Testing

/// Sending files through the outbox (docs/files.md): one op per send, uploaded once, exactly one
/// stored file message, no orphaned upload left on the server, the other device's copy
/// byte-identical through the cache.
@Suite("Sending files")
struct FileSendTests {
    /// `count` bytes that differ with `seed`.
    static func bytes(_ count: Int, seed: UInt64) -> Data {
        var random = SplitMix64(seed: seed)
        return Data((0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) })
    }

    /// Every file stored on `channel` on the server (all pages).
    static func serverFiles(_ client: PubNubClient, _ channel: String) async throws -> [RemoteFile] {
        var files: [RemoteFile] = [], next: String?
        repeat {
            let page = try await client.files.listFiles(channel: channel, next: next)
            files += page.files
            next = page.next
        } while next != nil
        return files
    }

    /// The file messages of `channel` in history.
    static func fileMessages(_ client: PubNubClient, _ channel: String) async throws -> [HistoryMessage] {
        let page = try await client.history.fetchHistory(HistoryQuery(channels: [channel], max: 100))
        return (page.channels[channel] ?? []).filter { $0.messageType == ChatFile.fileMessageType }
    }

    @Test("sent offline then through a flaky network: one file message, one stored file, the other device reads the same bytes once",
          arguments: [(1, FileShape.fileMessage), (2, .fileMessage), (3, .chatText), (4, .chatText), (5, .fileMessage)] as [(UInt64, FileShape)])
    func flaky(seed: UInt64, shape: FileShape) async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        let a = try SimulatedDevice<DefaultChatCustom>(
            server: server, clock: clock, userId: "alice", plan: FaultPlan(seed: seed, profile: .offline), seed: seed)
        let photo = Self.bytes(3000 + Int(seed) * 17, seed: seed)
        let receipt = try await a.outbox.messages.send(
            files: [OutgoingFile(data: photo, name: "photo \(seed).png")], text: "the view", to: "general", shape: shape)
        let messageId = try #require(receipt.value?.id)
        let pending = try #require(try await a.store.fetch(a.store.queries.message(id: messageId)))
        #expect(pending.delivery == .pending && pending.files.count == 1 && pending.files[0].id == nil)
        _ = try await a.outbox.drain(until: clock.now.addingTimeInterval(60))

        a.transport.use(FaultPlan(seed: seed, profile: .flaky))
        let report = try await a.outbox.drain()
        #expect(report.remaining == 0 && report.deadLetters == 0, "seed \(seed): \(report)")

        let observer = try a.observer()
        let files = try await Self.serverFiles(observer, "general")
        try #require(files.count == 1, "seed \(seed): \(files.count) files stored, orphans left: \(files)")
        let history = try await observer.history.fetchHistory(HistoryQuery(channels: ["general"], max: 100)).channels["general"] ?? []
        switch shape {
        case .fileMessage:
            #expect(history.count == 1 && history[0].messageType == ChatFile.fileMessageType, "seed \(seed): \(history)")
        case .chatText:
            // The file event went with store=0; the text message lists the file.
            #expect(history.count == 1 && history[0].messageType != ChatFile.fileMessageType, "seed \(seed): \(history)")
            let listed = history.first?.message.objectValue?["files"]?.arrayValue ?? []
            #expect(listed.count == 1 && listed.first?.objectValue?["id"] == .string(files[0].id))
        }
        let sent = try #require(try await a.store.fetch(a.store.queries.message(id: messageId)))
        #expect(sent.delivery == .sent && sent.files.map(\.id) == [files[0].id])

        // The other device: the message with its file; the bytes downloaded once, then cached.
        let b = try SimulatedDevice<DefaultChatCustom>(server: server, clock: clock, userId: "bob", seed: seed)
        _ = try await b.reconciler.markHot("general")
        _ = try await b.sync()
        let received = try #require(try await b.store.fetch(b.store.queries.message(id: messageId)), "seed \(seed)")
        #expect(received.text == "the view" && received.files.count == 1 && received.files[0].name == "photo \(seed).png")
        let cache = FileCache(store: b.store, client: b.client, clock: clock)
        #expect(try await cache.data(of: received.files[0], channel: "general") == photo)
        #expect(try await cache.data(of: received.files[0], channel: "general") == photo)
        #expect(await cache.downloadCount == 1)
        // The sender's own copy is cached at completion: nothing to download.
        let senderCache = FileCache(store: a.store, client: a.client, clock: clock)
        #expect(try await senderCache.data(of: sent.files[0], channel: "general") == photo)
        #expect(await senderCache.downloadCount == 0)
    }

    @Test("the process dies after every request of the send in turn: one file message and one stored file each time",
          arguments: 1...6 as ClosedRange<Int>)
    func restartAtEveryStep(crashAfter: Int) async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        var a = try SimulatedDevice<DefaultChatCustom>(server: server, clock: clock, userId: "alice")
        let photo = Self.bytes(5000, seed: UInt64(crashAfter))
        let id = try #require(try await a.outbox.messages.send(files: [OutgoingFile(data: photo, name: "a.bin")], to: "general").value?.id)
        a.transport.crash(afterRequests: crashAfter)
        try await a.drainUntilCrash()
        // The dead process's store and attachment area as they were.
        let copy = SimulatedDevice<DefaultChatCustom>.temporaryStorePath()
        try a.store.maintenance.backup(to: copy)
        try? FileManager.default.copyItem(at: a.store.attachments.root, to: URL(fileURLWithPath: copy + ".files"))
        // Upload forms expire after 60 s: a restart much later redoes the upload.
        clock.advance(by: .seconds(crashAfter % 2 == 0 ? 120 : 1))
        a = try a.reopened(plan: FaultPlan(seed: 0, profile: .none), seed: 2, storePath: copy)
        let report = try await a.outbox.drain()
        let left = try await a.outboxEntries().map { "\($0.state) \($0.lastFailure?.description ?? "-")" }
        #expect(report.remaining == 0 && report.deadLetters == 0, "crash after \(crashAfter): \(report) \(left)")
        let observer = try a.observer()
        #expect(try await Self.fileMessages(observer, "general").count == 1, "crash after \(crashAfter)")
        let files = try await Self.serverFiles(observer, "general")
        try #require(files.count == 1, "crash after \(crashAfter): \(files)")
        let sent = try #require(try await a.store.fetch(a.store.queries.message(id: id)))
        #expect(sent.delivery == .sent && sent.files.first?.id == files.first?.id)
        #expect(try await observer.files.downloadFile(channel: "general", id: files[0].id, name: files[0].name) == photo)
    }

    @Test("the answer of each step is lost (the server did it): one file message, one stored file, the lost upload deleted",
          arguments: 0...4 as ClosedRange<Int>)
    func lostAnswerAtEveryStep(step: Int) async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        let a = try SimulatedDevice<DefaultChatCustom>(server: server, clock: clock, userId: "alice")
        let photo = Self.bytes(4000, seed: UInt64(step))
        let id = try #require(try await a.outbox.messages.send(
            files: [OutgoingFile(data: photo, name: "lost.bin")], to: "general", shape: step == 4 ? .chatText : .fileMessage).value?.id)
        // Requests: 1 generate-upload-url, 2 the upload, 3 the publish (or, in the chat shape, the
        // store=0 file event, then 4 the text message).
        a.transport.script(Array(repeating: Fault.none, count: min(step, 3)) + [.dropResponse])
        let report = try await a.outbox.drain()
        #expect(report.remaining == 0 && report.deadLetters == 0, "step \(step): \(report)")
        let observer = try a.observer()
        let history = try await observer.history.fetchHistory(HistoryQuery(channels: ["general"], max: 100)).channels["general"] ?? []
        #expect(history.count == 1, "step \(step): \(history.count) messages")
        let files = try await Self.serverFiles(observer, "general")
        try #require(files.count == 1, "step \(step): \(files.count) files stored (an orphan left?)")
        let sent = try #require(try await a.store.fetch(a.store.queries.message(id: id)))
        #expect(sent.delivery == .sent && sent.files.first?.id == files[0].id)
    }

    @Test("refused before anything is stored: too large once encrypted, empty when encrypted, two files as one file message")
    func refusals() async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        let a = try SimulatedDevice<DefaultChatCustom>(
            server: server, clock: clock, userId: "alice", crypto: CryptoModule(cipherKey: "secret"))
        // Exactly the limit in plaintext: over it once padded and headed.
        let big = Data(count: FileLimits.maxUploadBytes)
        await #expect(throws: OutboxError.self) { try await a.outbox.messages.send(files: [OutgoingFile(data: big, name: "big")], to: "general") }
        await #expect(throws: OutboxError.self) { try await a.outbox.messages.send(files: [OutgoingFile(data: Data(), name: "empty")], to: "general") }
        let two = [OutgoingFile(data: Data([1]), name: "a"), OutgoingFile(data: Data([2]), name: "b")]
        await #expect(throws: OutboxError.self) { try await a.outbox.messages.send(files: two, to: "general") }
        #expect(try await a.outboxEntries().isEmpty)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: a.store.attachments.folder(.outgoing).path)) ?? []).isEmpty)
        // Just under the limit once encrypted: accepted, uploaded and sent.
        let fits = Data(count: FileLimits.maxUploadBytes - 64)
        _ = try await a.outbox.messages.send(files: [OutgoingFile(data: fits, name: "fits.bin")], to: "general")
        let report = try await a.outbox.drain()
        #expect(report.remaining == 0 && report.deadLetters == 0, "\(report)")
    }

    @Test("a hard delete takes the message's file along: gone from the server's storage and the cache")
    func hardDeleteDeletesFiles() async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        let a = try SimulatedDevice<DefaultChatCustom>(server: server, clock: clock, userId: "alice")
        let id = try #require(try await a.outbox.messages.send(files: [OutgoingFile(data: Data("hello".utf8), name: "a.txt")], to: "general").value?.id)
        _ = try await a.outbox.drain()
        let observer = try a.observer()
        let stored = try await Self.serverFiles(observer, "general")
        try #require(stored.count == 1)
        // Another file on the channel stays.
        let other = try await observer.files.generateUploadURL(channel: "general", name: "keep.txt")
        try await observer.files.upload(other, bytes: Data("keep".utf8), contentType: "text/plain")
        _ = try await a.outbox.messages.deleteMessage(id: id, hard: true)
        let report = try await a.outbox.drain()
        #expect(report.remaining == 0 && report.deadLetters == 0, "\(report)")
        #expect(try await Self.serverFiles(observer, "general").map(\.id) == [other.id])
        #expect(try await Self.fileMessages(observer, "general").isEmpty)
        let cache = FileCache(store: a.store, client: a.client, clock: clock)
        #expect(try await cache.isCached(ChatFile(id: stored[0].id, name: "a.txt"), channel: "general") == false)
    }
}
