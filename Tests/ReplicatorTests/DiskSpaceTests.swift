import Foundation
import GRDB
import PubNubSimulator
import PubNubSimulatorTesting
import ReplicaModel
import ReplicaStore
import Replicator
import Testing

/// A phone with little free space can drain (`docs/store.md`, "Disk space"): the drain
/// checkpoints the store's WAL as it goes, so draining 1,000 sends needs at most 256 KiB of free
/// space beyond what its rows take. Without it SQLite checkpoints only at 1,000 pages (4 MiB) and
/// the WAL file keeps its largest size.
@Suite("Disk space")
struct DiskSpaceTests {
    @Test("a drain of 1,000 sends in 8 channels keeps the WAL under 256 KiB")
    func drainKeepsTheWALSmall() async throws {
        let clock = VirtualClock()
        let alice = try SimulatedDevice<DefaultChatCustom>(server: PubNubServer(clock: clock), clock: clock, userId: "alice")
        let messages = (0..<1000).map { OutgoingMessage<FlatCustom>(text: "message \($0) " + String(repeating: "x", count: 200), to: "room-\($0 % 8)") }
        _ = try await alice.outbox.send(many: messages)
        // The enqueue's own WAL is not the drain's: start from an empty one.
        try await alice.store.writer.writeWithoutTransaction { _ = try $0.checkpoint(.truncate) }
        try #require(alice.store.walBytes == 0)

        // Every size the WAL file takes while the drain runs, seen after each op's commit.
        let sizes = Sampler()
        let watcher = Task {
            for await event in await alice.outbox.events() {
                if case .sent = event { sizes.add(alice.store.walBytes) }
            }
        }
        let report = try await alice.outbox.drain()
        watcher.cancel()
        #expect(report.completed == 1000 && report.remaining == 0, "\(report)")
        let limit = 256 * 1024
        #expect(report.peakWALBytes > 0 && report.peakWALBytes <= limit, "peak \(report.peakWALBytes) bytes")
        #expect(sizes.max <= limit, "sampled peak \(sizes.max) bytes")
        #expect(alice.store.walBytes <= limit)
        #expect(try await alice.store.fetch(alice.store.queries.outbox()).isEmpty)
    }
}

/// The largest value added, from any task.
private final class Sampler: @unchecked Sendable {
    private let lock = NSLock()
    private var largest = 0
    func add(_ size: Int) { lock.withLock { largest = Swift.max(largest, size) } }
    var max: Int { lock.withLock { largest } }
}
