import Foundation
import GRDB
import ReplicaModel

extension ChatStore {
    /// Writes `items` in batches of `batchSize`, one transaction per batch (the seed's `load`).
    ///
    /// A batch that fails is rolled back whole, reported with its error, and the next batch is
    /// still tried: one bad object never silently drops the others, and never half-writes its batch.
    func loadInBatches<Item: Sendable>(
        _ items: [Item], batchSize: Int, onBatch: (@Sendable (LoadBatchResult) -> Void)?,
        write: @escaping @Sendable (Database, StoreCoding, Item, inout BatchState) throws -> Void
    ) async throws -> LoadReport {
        guard batchSize > 0 else { throw StoreError.invalidInput("batchSize must be positive, got \(batchSize)") }
        var report = LoadReport()
        var start = 0
        var index = 0
        while start < items.count {
            // Stop between batches when the task is cancelled; written batches stay written.
            try Task.checkCancellation()
            let batch = Array(items[start..<min(start + batchSize, items.count)])
            let batchIndex = index
            var result: LoadBatchResult
            do {
                result = try await writer.write { db in
                    let coding = StoreCoding()
                    var state = BatchState(result: LoadBatchResult(index: batchIndex, count: batch.count))
                    for item in batch {
                        try write(db, coding, item, &state)
                    }
                    return state.result
                }
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                result = LoadBatchResult(index: batchIndex, count: batch.count)
                result.error = StoreError.wrapping(error)
                logger.error(
                    "load batch failed", metadata: ["batch": "\(batchIndex)", "error": "\(result.error!)"])
            }
            onBatch?(result)
            report.batches.append(result)
            start += batchSize
            index += 1
        }
        return report
    }

    /// Runs a read and maps errors to ``StoreError``.
    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        do {
            return try await writer.read(body)
        } catch {
            throw StoreError.wrapping(error)
        }
    }

    /// Runs a write and maps errors to ``StoreError``.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        do {
            return try await writer.write { db in try body(db) }
        } catch {
            throw StoreError.wrapping(error)
        }
    }
}

/// What one batch's transaction keeps while it writes.
struct BatchState {
    var result: LoadBatchResult
    private var localSequence: Int64?

    init(result: LoadBatchResult) {
        self.result = result
    }

    /// Increasing local send sequence numbers; the stored maximum is read once per transaction.
    mutating func nextLocalSequence(_ db: Database) throws -> Int64 {
        let next = try localSequence.map { $0 + 1 } ?? Self.storedNextSequence(db)
        localSequence = next
        return next
    }

    static func storedNextSequence(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT coalesce(max(local_seq), 0) + 1 FROM messages") ?? 1
    }
}
