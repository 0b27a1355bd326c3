import Foundation
import GRDB
import PubNubSimulator
import PubNubSimulatorTesting
import ReplicaModel
import ReplicaStore
import Replicator
import Testing

/// A phone with little free space can drain (`docs/store.md`, "Disk space"): while the outbox
/// drains, its commits keep the store's WAL under a quarter of the free space (at least 128 KiB),
/// so draining 1,000 sends needs at most 256 KiB of free space beyond what its rows take; with
/// plenty of space the drain checkpoints no more than SQLite would. Without it SQLite checkpoints
/// only at 1,000 pages (4 MiB) and the WAL file keeps its largest size.
@Suite("Disk space")
struct DiskSpaceTests {
    /// alice with `count` sends queued in 8 channels and an empty WAL, the store's volume reporting
    /// `freeBytes` free.
    static func queued(_ count: Int, freeBytes: Int) async throws -> SimulatedDevice<DefaultChatCustom> {
        let clock = VirtualClock()
        let alice = try SimulatedDevice<DefaultChatCustom>(server: PubNubServer(clock: clock), clock: clock, userId: "alice")
        alice.store.maintenance.setFreeSpace { freeBytes }
        let messages = (0..<count).map { OutgoingMessage<FlatCustom>(text: "message \($0) " + String(repeating: "x", count: 200), to: "room-\($0 % 8)") }
        _ = try await alice.outbox.messages.send(many: messages)
        // The enqueue's own WAL is not the drain's: start from an empty one.
        try await alice.store.writer.writeWithoutTransaction { _ = try $0.checkpoint(.truncate) }
        try #require(alice.store.maintenance.walBytes == 0)
        return alice
    }

    @Test("with 256 KiB free, a drain of 1,000 sends in 8 channels keeps the WAL within it")
    func drainWithinLittleSpace() async throws {
        let limit = 256 * 1024
        let alice = try await Self.queued(1000, freeBytes: limit)
        // Every size the WAL file takes while the drain runs, seen after each op's commit.
        let sizes = Sampler()
        let watcher = Task {
            for await event in await alice.outbox.events() {
                if case .sent = event { sizes.add(alice.store.maintenance.walBytes) }
            }
        }
        let report = try await alice.outbox.drain()
        watcher.cancel()
        #expect(report.completed == 1000 && report.remaining == 0, "\(report)")
        #expect(report.peakWALBytes > 0 && report.peakWALBytes <= limit, "peak \(report.peakWALBytes) bytes")
        #expect(sizes.max <= limit, "sampled peak \(sizes.max) bytes")
        #expect(alice.store.maintenance.walBytes <= limit)
        #expect(try await alice.store.fetch(alice.store.queries.outbox()).isEmpty)
    }

    @Test("with plenty of space, the drain lets the WAL grow past the small budget (each checkpoint costs fsyncs)")
    func drainWithPlentyOfSpace() async throws {
        // 400 sends, not 1,000: enough to pass twice the small budget, at less than half the cost
        // of the test above in a full run.
        let alice = try await Self.queued(400, freeBytes: 64 << 30)
        let report = try await alice.outbox.drain()
        #expect(report.completed == 400 && report.remaining == 0, "\(report)")
        #expect(report.peakWALBytes > 512 << 10, "peak \(report.peakWALBytes) bytes: checkpointed early")
        #expect(report.peakWALBytes <= 5 << 20, "peak \(report.peakWALBytes) bytes")
    }
}

/// The largest value added, from any task.
private final class Sampler: @unchecked Sendable {
    private let lock = NSLock()
    private var largest = 0
    func add(_ size: Int) { lock.withLock { largest = Swift.max(largest, size) } }
    var max: Int { lock.withLock { largest } }
}
