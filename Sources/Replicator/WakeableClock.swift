import Foundation
import ReplicaModel

/// A clock whose sleeps can be cut short: the one owner of "the network is back, stop waiting".
///
/// Every backoff of the outbox, the reconciler and the live sync sleeps on the clock they were
/// given. Handing them this wrapper (the `Replica` does) lets one call, ``wake()``, end every sleep
/// in progress at once: each sleeper returns as if its time had come, and looks again (an outbox
/// lane reads its head, the live loop retries its request). Sleeps that start after the call wait
/// normally. Time itself is the base clock's.
package final class WakeableClock: ReplicaClock, @unchecked Sendable {
    /// The clock that tells the time and does the waiting.
    package let base: any ReplicaClock
    // NSLock guards `sleepers` and `counter` (Mutex needs macOS 15).
    private let lock = NSLock()
    private var sleepers: [UInt64: CheckedContinuation<Void, Never>] = [:]
    private var counter: UInt64 = 0
    /// How many times ``wake()`` was called: a sleep that began before a wake it did not hear
    /// (its waiter was not registered yet) sees the count moved and returns.
    private var wakes: UInt64 = 0

    package init(_ base: any ReplicaClock) { self.base = base }

    package var now: Date { base.now }

    /// Sleeps on the base clock until `date`, or until ``wake()`` is called, whichever is first.
    /// Throws `CancellationError` when the task is cancelled.
    package func sleep(until date: Date) async throws {
        // Read before any suspension: a wake after this moment ends this sleep.
        let seen = lock.withLock { wakes }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.base.sleep(until: date) }
            group.addTask { await self.waitForWake(after: seen) }
            defer { group.cancelAll() }
            try await group.next()
        }
        try Task.checkCancellation()
    }

    /// Ends every sleep in progress.
    package func wake() {
        let woken = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            wakes += 1
            defer { sleepers = [:] }
            return Array(sleepers.values)
        }
        for continuation in woken { continuation.resume() }
    }

    private func waitForWake(after seen: UInt64) async {
        let id = lock.withLock { () -> UInt64 in
            counter += 1
            return counter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let cancelled = lock.withLock { () -> Bool in
                    if Task.isCancelled || wakes != seen { return true }
                    sleepers[id] = continuation
                    return false
                }
                if cancelled { continuation.resume() }
            }
        } onCancel: {
            let continuation = lock.withLock { sleepers.removeValue(forKey: id) }
            continuation?.resume()
        }
    }
}
