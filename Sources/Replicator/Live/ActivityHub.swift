import Foundation
import ReplicaStore

/// Adds up the history pull's per-channel progress into one ``CatchUpProgress`` and reports each
/// new total. A channel's reports count up within a pass (its pages strictly grow); a report with
/// no more pages than the last starts a new pass of that channel (a shared page, then its own
/// paging), whose counts add to the earlier ones. Made at the start of a catch-up, it reports
/// the zero progress first.
final class ProgressTally: @unchecked Sendable {
    // NSLock guards the counts.
    private let lock = NSLock()
    private let hub: ActivityHub
    private var total: CatchUpProgress
    private var last: [String: PullProgress] = [:]

    init(channels: Int, hub: ActivityHub) {
        total = CatchUpProgress(channels: channels)
        self.hub = hub
        hub.send(.catchUpProgress(total))
    }

    func add(_ progress: PullProgress) {
        let now = lock.withLock {
            let previous = last[progress.scope]
            let (pages, items) = previous.map { progress.pages > $0.pages ? ($0.pages, $0.items) : (0, 0) } ?? (0, 0)
            total.pages += progress.pages - pages
            total.messages += progress.items - items
            last[progress.scope] = progress
            return total
        }
        hub.send(.catchUpProgress(now))
    }
}

/// The continuations of ``LiveSync/states()`` and ``LiveSync/activity()``, behind a lock so that
/// subscribing needs no `await`.
final class ActivityHub: @unchecked Sendable {
    private let lock = NSLock()
    private var states: [AsyncStream<LiveState>.Continuation] = []
    private var activity: [AsyncStream<LiveActivity>.Continuation] = []
    private var finished = false

    func addStates(_ continuation: AsyncStream<LiveState>.Continuation) {
        let done = lock.withLock {
            if !finished { states.append(continuation) }
            return finished
        }
        if done { continuation.finish() }
    }

    func addActivity(_ continuation: AsyncStream<LiveActivity>.Continuation) {
        let done = lock.withLock {
            if !finished { activity.append(continuation) }
            return finished
        }
        if done { continuation.finish() }
    }

    func send(_ element: LiveActivity) {
        let (states, activity) = lock.withLock { (self.states, self.activity) }
        if case .state(let state) = element { for c in states { c.yield(state) } }
        for c in activity { c.yield(element) }
    }

    func finish() {
        let (states, activity) = lock.withLock {
            finished = true
            defer {
                self.states = []
                self.activity = []
            }
            return (self.states, self.activity)
        }
        for c in states { c.finish() }
        for c in activity { c.finish() }
    }
}
