import Foundation
import ReplicaModel
import ReplicaStore

/// What a replica tells whoever listens: its status now and each change (``Replica/statuses()``),
/// and its open store and each change of it (the observations that follow the store across
/// ``Replica/suspend()`` and ``Replica/resume()``).
///
/// A lock-guarded value the actor holds (`replica.hub`), so that a subscriber is registered and
/// sees the current value at once, from any context, and a status change made in a task the
/// replica started needs no hop to the actor.
final class ReplicaStatusHub<Custom: ChatCustomData>: @unchecked Sendable {
    // NSLock guards every stored property below; continuations are yielded under it, so that
    // two changes reach every subscriber in the order they were made.
    private let lock = NSLock()
    private var current: ReplicaStatus
    private var statusSubscribers: [UUID: AsyncStream<ReplicaStatus>.Continuation] = [:]
    private var openStore: ChatStore<Custom>?
    private var storeSubscribers: [UUID: AsyncStream<ChatStore<Custom>?>.Continuation] = [:]
    /// Whether the store is gone for good (``Replica/signOut(discardingUnsent:keepingPushRegistrations:)``): the store sequences end.
    private var storeRemoved = false
    /// The connection's last changes, oldest first (at most ``transitionsKept``), for the
    /// diagnostics report.
    private var connectionChanges: [(at: Date, connection: ReplicaStatus.Connection)] = []
    private let clock: any ReplicaClock
    /// How many connection changes the hub keeps.
    static var transitionsKept: Int { 20 }

    /// A hub whose status is `status` and whose open store is `store`; `clock` dates the
    /// connection's changes.
    init(status: ReplicaStatus, store: ChatStore<Custom>?, clock: any ReplicaClock) {
        current = status
        openStore = store
        self.clock = clock
    }

    /// The connection's last changes (when, and to what), oldest first.
    var transitions: [(at: Date, connection: ReplicaStatus.Connection)] { lock.withLock { connectionChanges } }

    /// The status now.
    var status: ReplicaStatus { lock.withLock { current } }

    /// The open store now (nil while suspended).
    var store: ChatStore<Custom>? { lock.withLock { openStore } }

    /// Changes the status; subscribers see the new one when it differs.
    func update(_ change: (inout ReplicaStatus) -> Void) {
        lock.withLock {
            var next = current
            change(&next)
            guard next != current else { return }
            if next.connection != current.connection {
                connectionChanges.append((clock.now, next.connection))
                if connectionChanges.count > Self.transitionsKept { connectionChanges.removeFirst() }
            }
            current = next
            for continuation in statusSubscribers.values { continuation.yield(next) }
        }
    }

    /// The status now, then each change, until the consumer stops iterating (up to 16 kept).
    func statuses() -> AsyncStream<ReplicaStatus> {
        subscribe(\.statusSubscribers, now: \.current, keeping: 16)
    }

    /// The open store now, then each change.
    func stores() -> AsyncStream<ChatStore<Custom>?> {
        if lock.withLock({ storeRemoved }) { return AsyncStream { $0.finish() } }
        return subscribe(\.storeSubscribers, now: \.openStore, keeping: 1)
    }

    /// A sequence that starts with the value at `now` and gets what is yielded to `subscribers`,
    /// registered at once and removed when its consumer stops.
    private func subscribe<Value: Sendable>(
        _ subscribers: ReferenceWritableKeyPath<ReplicaStatusHub, [UUID: AsyncStream<Value>.Continuation]> & Sendable,
        now: KeyPath<ReplicaStatusHub, Value>, keeping newest: Int
    ) -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream<Value>.makeStream(bufferingPolicy: .bufferingNewest(newest))
        let id = UUID()
        lock.withLock {
            self[keyPath: subscribers][id] = continuation
            continuation.yield(self[keyPath: now])
        }
        continuation.onTermination = { [weak self] _ in self?.lock.withLock { self?[keyPath: subscribers][id] = nil } }
        return stream
    }

    /// Makes `store` the open one (nil: closed) and tells the store subscribers.
    func announce(_ store: ChatStore<Custom>?) {
        lock.withLock {
            openStore = store
            for continuation in storeSubscribers.values { continuation.yield(store) }
        }
    }

    /// The store is gone for good (signed out): every store sequence, and each one asked for
    /// later, ends, so that the observations built on them end too.
    func removeStore() {
        let subscribers = lock.withLock {
            openStore = nil
            storeRemoved = true
            defer { storeSubscribers = [:] }
            return storeSubscribers.values
        }
        // Finished outside the lock: a finished sequence's termination handler takes it.
        for continuation in subscribers { continuation.finish() }
    }
}
