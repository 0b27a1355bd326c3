import Foundation
import GRDB
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

/// A server whose every answer is a 400 carrying a huge JSON error message.
struct HugeErrorTransport: Transport {
    let message: String

    func send(_ request: WireRequest, to origin: Origin) async throws(TransportFailure) -> WireResponse {
        let body = try! JSONSerialization.data(withJSONObject: ["status": 400, "error": true, "message": message])
        return WireResponse(status: 400, headers: ["Content-Type": "application/json"], body: body)
    }
}

@Suite("error text kept in the store is capped")
struct StoredErrorTextTests {
    /// The `last_error` column as stored, read around the model types.
    static func storedLastError(_ store: Store, opId: String) async throws -> String? {
        try await store.writer.read { db in
            try String.fetchOne(db, sql: "SELECT last_error FROM outbox WHERE op_id = ?", arguments: [opId])
        }
    }

    @Test("a publish answered with a 1 MB error message stores at most 4 KiB, noting the size")
    func hugeServerMessage() async throws {
        let store = try Store.open(at: World.temporaryPath())
        let huge = String(repeating: "é", count: 512 * 1024)  // 1 MiB of two-byte characters
        let outbox = Outbox(
            store: store, client: try World.client(HugeErrorTransport(message: huge)), clock: VirtualClock(),
            random: SplitMix64(seed: 7))
        let receipt = try await outbox.messages.send(text: "hello", to: "general")
        let report = try await outbox.drain()
        #expect(report.deadLetters == 1)
        let stored = try #require(try await Self.storedLastError(store, opId: receipt.opId!))
        #expect(stored.utf8.count <= StoredErrorText.maxBytes)
        #expect(stored.contains("éééé"))
        let note = try #require(stored.firstRange(of: "…(truncated, "))
        let size = try #require(Int(stored[note.upperBound...].prefix { $0.isNumber }))
        #expect(size >= 1_048_576)
        #expect(stored.hasSuffix(" bytes)"))
        let entry = try #require(try await store.fetch(store.queries.outbox()).first)
        #expect(entry.lastFailure?.message == stored)
    }

    @Test("recordFailure with a 1 MB message keeps 4 KiB; the row stays small attempt after attempt")
    func recordFailureCaps() async throws {
        let world = try World()
        let receipt = try await world.outbox.messages.send(text: "hello", to: "general")
        let message = String(repeating: "x", count: 1_048_576)
        for _ in 0..<4 {
            _ = try await world.outbox.markInflightForTest(receipt.opId!, now: world.clock.now)
            try await world.outbox.recordFailureForTest(
                receipt.opId!, state: .pending, retryAt: nil,
                failure: OutboxFailure(errorClass: .server, httpStatus: 500, message: message), serverFailure: true,
                now: world.clock.now)
        }
        let stored = try #require(try await Self.storedLastError(world.store, opId: receipt.opId!))
        #expect(stored.utf8.count <= 4096)
        #expect(stored.hasSuffix("…(truncated, 1048576 bytes)"))
        #expect(stored.hasPrefix(String(repeating: "x", count: 4000)))
    }

    @Test("text within the cap is stored unchanged")
    func shortTextUnchanged() {
        #expect(StoredErrorText.capped("HTTP 400: Invalid JSON") == "HTTP 400: Invalid JSON")
        let exactly = String(repeating: "a", count: 4096)
        #expect(StoredErrorText.capped(exactly) == exactly)
        #expect(StoredErrorText.capped(exactly + "a").utf8.count <= 4096)
    }

    @Test("truncation never splits a character", arguments: ["é", "€", "👍", "🇫🇷", "e\u{301}"])
    func utf8Safe(unit: String) {
        for offset in 0..<5 {
            let text = String(repeating: "a", count: offset) + String(repeating: unit, count: 5000)
            let capped = StoredErrorText.capped(text)
            let note = "…(truncated, \(text.utf8.count) bytes)"
            #expect(capped.hasSuffix(note))
            #expect(capped.utf8.count <= StoredErrorText.maxBytes)
            // The kept part is whole characters of the original, and as many as fit.
            let kept = capped.dropLast(note.count)
            #expect(text.hasPrefix(kept))
            #expect(kept.dropFirst(offset).allSatisfy { String($0) == unit })
            let budget = StoredErrorText.maxBytes - note.utf8.count
            #expect(kept.utf8.count + unit.utf8.count > budget)
        }
    }
}

@Suite("the publish size check counts the whole published message")
struct PublishSizeTests {
    /// The bytes of `entry`'s publish as the check counts them.
    static func publishedBytes(_ entry: OutboxEntry) throws -> Int {
        guard let send = entry.operation.send else {
            Issue.record("op \(entry.id) is not a publish")
            return 0
        }
        return Validation.publishedByteCount(message: send.message, channel: send.channel, meta: send.meta)
    }

    @Test("a 32,766-byte text is refused at enqueue, naming size and limit, and nothing is stored")
    func oversizedTextRefused() async throws {
        let world = try World()
        let text = String(repeating: "a", count: 32_766)
        await #expect {
            _ = try await world.outbox.messages.send(text: text, to: "general")
        } throws: { error in
            guard case .messageTooLarge(let field, let bytes, let limit)? = error as? ModelValidationError else { return false }
            return field == "message" && bytes > 32_766 + 100 && limit == 32_768
        }
        #expect(try await world.entries().isEmpty)
        #expect(try await world.store.fetch(world.store.queries.messages(inChannel: "general")).isEmpty)
        #expect(world.transport.requests.isEmpty)
    }

    @Test("a message exactly at the limit is accepted and the simulator stores it; one byte more is refused")
    func atTheLimit() async throws {
        let world = try World()
        // Everything but the text has a fixed size (UUIDs, a fixed-width timestamp): measure it once.
        let probe = try await world.outbox.messages.send(text: "x", to: "general")
        let overhead = try Self.publishedBytes(try #require(try await world.entries().first)) - 1
        _ = try await world.outbox.discard(opId: probe.opId!)

        let fits = String(repeating: "b", count: Validation.maxPublishBytes - overhead)
        let receipt = try await world.outbox.messages.send(text: fits, to: "general")
        #expect(try Self.publishedBytes(try #require(try await world.entries().first)) == Validation.maxPublishBytes)
        let report = try await world.outbox.drain()
        #expect(report.completed == 1 && report.deadLetters == 0)
        #expect(await world.serverMessageIds("general") == [receipt.value!.id])

        await #expect(throws: ModelValidationError.messageTooLarge(
            field: "message", bytes: Validation.maxPublishBytes + 1, limit: Validation.maxPublishBytes)
        ) {
            _ = try await world.outbox.messages.send(text: fits + "b", to: "general")
        }
        #expect(try await world.entries().isEmpty)
    }

    @Test("content, custom data and meta count toward the limit, not only the text")
    func everythingCounts() async throws {
        let world = try World()
        let half = String(repeating: "c", count: 17_000)
        await #expect(throws: ModelValidationError.self) {
            _ = try await world.outbox.messages.send(text: half, to: "general", content: .string(half))
        }
        await #expect(throws: ModelValidationError.self) {
            _ = try await world.outbox.messages.send(text: half, to: "general", meta: ["note": .string(half)])
        }
        #expect(try await world.entries().isEmpty)
        _ = try await world.outbox.messages.send(text: half, to: "general")
        #expect(try await world.entries().count == 1)
    }
}

@Suite("a store path that is not a regular file is refused before opening")
struct StorePathTests {
    @Test("a FIFO is refused by open and migrationPlan without blocking")
    func fifoRefused() throws {
        let path = World.temporaryPath()
        try #require(mkfifo(path, 0o600) == 0)
        defer { unlink(path) }
        #expect(throws: StoreError.notARegularFile(path: path, kind: "FIFO")) { _ = try Store.open(at: path) }
        var readOnly = StoreOptions()
        readOnly.readOnly = true
        #expect(throws: StoreError.notARegularFile(path: path, kind: "FIFO")) { _ = try Store.open(at: path, options: readOnly) }
        #expect(throws: StoreError.notARegularFile(path: path, kind: "FIFO")) { _ = try Store.migrationPlan(forStoreAt: path) }
    }

    @Test("a directory is refused, and so is a FIFO in place of the WAL")
    func directoryAndWal() throws {
        let directory = World.temporaryPath()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        #expect(throws: StoreError.notARegularFile(path: directory, kind: "directory")) { _ = try Store.open(at: directory) }

        let path = World.temporaryPath()
        try #require(mkfifo(path + "-wal", 0o600) == 0)
        defer { unlink(path + "-wal") }
        #expect(throws: StoreError.notARegularFile(path: path + "-wal", kind: "FIFO")) { _ = try Store.open(at: path) }
    }

    @Test("an empty file is one case for every open: a store never created; read-only says so and leaves it, a writer creates the store in it")
    func emptyFileOneRule() throws {
        let path = World.temporaryPath()
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        var readOnly = StoreOptions()
        readOnly.readOnly = true
        readOnly.migration = .manual
        #expect(throws: StoreError.emptyStoreFile(path: path)) { _ = try Store.open(at: path, options: readOnly) }
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int == 0)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        // What a migration would do to it: everything, as for a missing file.
        #expect(try Store.migrationPlan(forStoreAt: path).pending == Store.migrationPlan(forStoreAt: path + "-missing").pending)
        // A writer creates the store in it.
        let store = try Store.open(at: path)
        #expect(try store.fetchNow(store.queries.checkpoints()).isEmpty)
        #expect(try Store.open(at: path, options: readOnly).path == path)
    }

    @Test("an empty file beside a WAL that holds data is a damaged store: every open refuses it and leaves both files as they were")
    func emptyFileWithWAL() throws {
        let path = World.temporaryPath()
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let wal = Data(repeating: 7, count: 4096)
        #expect(FileManager.default.createFile(atPath: path + "-wal", contents: wal))
        var readOnly = StoreOptions()
        readOnly.readOnly = true
        let refusal = StoreError.notAStore(path: path, reason: "its main file is empty but its -wal holds 4096 bytes")
        #expect(throws: refusal) { _ = try Store.open(at: path, options: readOnly) }
        #expect(throws: refusal) { _ = try Store.open(at: path) }
        #expect(throws: refusal) { _ = try Store.migrationPlan(forStoreAt: path) }
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int == 0)
        #expect(FileManager.default.contents(atPath: path + "-wal") == wal)
    }
}
