import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
import Testing

@testable import Replicator

/// The progress values a catch-up reported, one per commit.
private final class Commits: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [PullProgress] = []
    func add(_ value: PullProgress) { lock.withLock { values.append(value) } }
    var all: [PullProgress] { lock.withLock { values } }
}

/// Opened once, from any thread; `wait()` suspends until then.
private final class Gate: @unchecked Sendable {
    private let lock = NSLock()
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func open() {
        let waiting = lock.withLock {
            isOpen = true
            defer { waiters = [] }
            return waiters
        }
        for waiter in waiting { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let now = lock.withLock {
                if isOpen { return true }
                waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}

/// Makes the first two commits of a catch-up deterministic: the fetcher's second request waits
/// until the first commit (of page 1 alone) has begun, and that commit is held, inside its
/// transaction, until the fetcher has made its sixth request, which it makes only after handing
/// over pages 2-5. With `pagesPerCommit` = 4 the fetcher then waits, so the second commit takes
/// exactly pages 2-5. `then` runs for the commits after the first.
private func holdFirstCommit(_ world: World, options: inout ReconcilerOptions, then: @escaping @Sendable (Int) throws -> Void = { _ in }) {
    let requests = Counter()
    let firstCommit = Gate()
    let sixth = DispatchSemaphore(value: 0)
    world.transport.onRequest { request in
        guard request.operation == "fetchHistory" else { return }
        switch requests.next() {
        case 2: await firstCommit.wait()
        case 6: sixth.signal()
        default: break
        }
    }
    let commits = Counter()
    options.pagesPerCommit = 4
    options.beforeHistoryCommit = { _ in
        let commit = commits.next()
        if commit == 1 {
            firstCommit.open()
            // On GRDB's writer thread, not the cooperative pool: the fetcher goes on meanwhile.
            _ = sixth.wait(timeout: .now() + 60)
        } else {
            try then(commit)
        }
    }
}

@Suite("Catch-up pipeline")
struct CatchUpPipelineTests {
    /// 1,000 messages in 10 full pages (and an empty eleventh), the first two commits held as
    /// ``holdFirstCommit(_:options:then:)`` says.
    @Test("pages that are ready together commit together, each commit with its checkpoint")
    func readyPagesCommitTogether() async throws {
        let world = try World()
        await world.server.seedMessages(channel: "alpha", (0..<1000).map { chatPayload("m\($0)") }, publisher: "x")
        var options = ReconcilerOptions()
        holdFirstCommit(world, options: &options)
        let progress = Commits()
        let report = try await world.reconciler(options: options).catchUp(channel: "alpha") { progress.add($0) }
        #expect(report.inserted == 1000 && report.pages == 11)
        let pages = progress.all.map(\.pages)
        let perCommit = zip(pages, [0] + pages).map { $0 - $1 }
        #expect(perCommit.prefix(2) == [1, 4], "pages per commit: \(perCommit)")
        #expect(perCommit.allSatisfy { (1...4).contains($0) }, "pages per commit: \(perCommit)")
        #expect(pages.last == 11)
        #expect(progress.all.last?.items == 1000)
        #expect(try await world.localMessages("alpha").map(\.id) == (0..<1000).map { "m\($0)" })
        let checkpoint = try #require(try await world.store.fetch(world.store.queries.checkpoint("history:alpha")))
        #expect(checkpoint.applied == (await world.serverMessages("alpha")).last.map { Timetoken(rawValue: $0.timetoken) })
        #expect(!checkpoint.isFilling)
    }

    @Test("with pagesPerCommit 1 every page is its own transaction")
    func onePagePerCommit() async throws {
        let world = try World()
        await world.server.seedMessages(channel: "alpha", (0..<450).map { chatPayload("m\($0)") }, publisher: "x")
        var options = ReconcilerOptions()
        options.pagesPerCommit = 1
        let progress = Commits()
        let report = try await world.reconciler(options: options).catchUp(channel: "alpha") { progress.add($0) }
        #expect(report.pages == 5 && report.inserted == 450)
        #expect(progress.all.map(\.pages) == [1, 2, 3, 4, 5])
    }

    /// A crash in the transaction of a multi-page commit rolls back all its pages and the
    /// checkpoint with them; the next catch-up resumes where the last commit left off.
    @Test("a failed multi-page commit leaves the checkpoint at the previous commit; the next catch-up completes")
    func failedBatch() async throws {
        let world = try World()
        await world.server.seedMessages(channel: "alpha", (0..<1000).map { chatPayload("m\($0)") }, publisher: "x")
        var options = ReconcilerOptions()
        holdFirstCommit(world, options: &options) { commit in
            if commit == 2 { throw SimulatedCrash() }
        }
        await #expect(throws: (any Error).self) { try await world.reconciler(options: options).catchUp(channel: "alpha") }
        // Only the first commit's page (the newest 100) is stored, and the checkpoint's fill
        // covers exactly it: the four pages of the second commit went with it.
        let stored = try await world.localMessages("alpha")
        #expect(stored.map(\.id) == (900..<1000).map { "m\($0)" })
        let checkpoint = try #require(try await world.store.fetch(world.store.queries.checkpoint("history:alpha")))
        let server = await world.serverMessages("alpha")
        #expect(checkpoint.fillCursor?.rawValue == stored.first?.timetoken && checkpoint.fillTop?.rawValue == server[999].timetoken)
        let report = try await world.reconciler().catchUp(channel: "alpha")
        #expect(report.inserted == 900)
        #expect(try await world.localMessages("alpha").map(\.id) == (0..<1000).map { "m\($0)" })
    }
}

@Suite("Hand-off")
struct HandOffTests {
    @Test("the producer waits at capacity; the consumer takes everything held at once")
    func capacity() async throws {
        let handOff = HandOff<Int>(capacity: 3)
        let produced = Counter()
        let producer = Task {
            for value in 1...7 {
                guard await handOff.put(value) else { return }
                _ = produced.next()
            }
            await handOff.finish()
        }
        var taken: [[Int]] = []
        while let batch = try await handOff.takeAll() {
            #expect(batch.count <= 3)
            taken.append(batch)
        }
        await producer.value
        #expect(taken.flatMap { $0 } == Array(1...7))
        #expect(produced.value == 7)
    }

    @Test("a producer's error reaches the consumer after the items before it")
    func errorAfterItems() async throws {
        struct Failure: Error {}
        let handOff = HandOff<Int>(capacity: 4)
        _ = await handOff.put(1)
        _ = await handOff.put(2)
        await handOff.finish(throwing: Failure())
        #expect(try await handOff.takeAll() == [1, 2])
        await #expect(throws: Failure.self) { try await handOff.takeAll() }
    }

    @Test("close releases a producer waiting at capacity, and later puts are refused")
    func close() async throws {
        let handOff = HandOff<Int>(capacity: 1)
        #expect(await handOff.put(1))
        let waiting = Task { await handOff.put(2) }
        await handOff.close()
        #expect(await waiting.value == false)
        #expect(await handOff.put(3) == false)
    }
}
