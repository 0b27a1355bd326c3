import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

/// What ``Replica/signOut(discardingUnsent:keepingPushRegistrations:)`` did.
public struct SignOutReport: Sendable, Hashable, Codable {
    /// The files and folders removed (the store, its WAL and shared memory, its lock file, its
    /// files area, migration backups); empty for an in-memory store.
    public var removedFiles: [String]
    /// The ops discarded unsent (`discardingUnsent`).
    public var discardedOps: Int
    /// The devices whose push registrations were removed.
    public var pushDevicesRemoved: Int
}

extension Replica {
    /// Signs the user out of this device: removes the device's push registrations, stops
    /// everything, and removes the store with every file of it (WAL, shared memory, lock file,
    /// files area, migration backups), so that nothing of the user is left behind. The replica is
    /// then done: every call throws ``ReplicaError/signedOut``; the next user gets a new replica
    /// (a new store path per user: `docs/ios.md`).
    ///
    /// It refuses, and changes nothing (a started replica goes on running), when:
    /// - ops are not sent yet (pending, in flight, dead letters, conflicts):
    ///   ``ReplicaError/unsentOps(count:kinds:opIds:)`` names them. Show the user what would be
    ///   lost; `discardingUnsent: true` goes on anyway, and they are lost.
    /// - another process holds the store's lock (a `listen`, a notification service extension
    ///   sending): ``ReplicaError/storeInUse(_:)``.
    /// - a device's push registrations cannot be removed (offline):
    ///   ``ReplicaError/pushRemovalFailed(device:reason:)``; `keepingPushRegistrations: true` goes on
    ///   without (the device keeps getting this user's pushes until the app removes them).
    ///
    /// Past those checks the replica is signed out: a file that cannot be removed then throws
    /// `StoreError.storageFailed` naming it (the ones before it are gone), and a new replica on the
    /// same path can sign out again to finish. Observations end; the status says `stopped`.
    ///
    /// ```swift
    /// do {
    ///     try await replica.signOut()
    /// } catch ReplicaError.unsentOps(let count, _, _) {
    ///     if await askUser("\(count) messages were not sent. Sign out anyway?") {
    ///         try await replica.signOut(discardingUnsent: true)
    ///     }
    /// }
    /// ```
    ///
    /// The devices removed are the ones registered through ``push`` (the store records each);
    /// a device the app registered by other means is not known here: remove it first.
    @discardableResult
    public func signOut(discardingUnsent: Bool = false, keepingPushRegistrations: Bool = false) async throws -> SignOutReport {
        if parts == nil, !signedOut { try await resume() }
        let parts = try currentParts()
        let wasStarted = isStarted
        // Nothing is sent or received from here; a refusal starts the replica again.
        await stop()
        do {
            return try await signOut(parts, discardingUnsent: discardingUnsent, keepingPushRegistrations: keepingPushRegistrations)
        } catch {
            if wasStarted { await start() }
            throw error
        }
    }

    private func signOut(_ parts: Parts, discardingUnsent: Bool, keepingPushRegistrations: Bool) async throws -> SignOutReport {
        let ops = try await parts.store.fetch(queries.outboxCounts()).values.reduce(0, +)
        if ops > 0, !discardingUnsent {
            let oldest = try await parts.store.fetch(queries.outbox(afterSeq: nil, limit: 20))
            let kinds = try await parts.store.fetch(queries.outboxKinds())
            throw ReplicaError.unsentOps(count: ops, kinds: kinds.map(\.rawValue).sorted(), opIds: oldest.map(\.id))
        }
        // Held from here to the last file: no other process starts sending this store meanwhile.
        let lease: DrainLease?
        do {
            lease = try parts.store.path.map(StoreFiles.claim(at:))
        } catch let error as StoreError {
            throw ReplicaError.storeInUse(error.description)
        }
        defer { lease?.release() }
        var removedDevices = 0
        if !keepingPushRegistrations {
            for registration in try await parts.store.fetch(queries.pushDevices()) {
                let name = "\(registration.service) device \(registration.token.prefix(8))…"
                do {
                    try await client.push.removeDevice(try registration.pushDevice())
                } catch {
                    throw ReplicaError.pushRemovalFailed(device: name, reason: "\(error)")
                }
                removedDevices += 1
            }
        }
        // From here the replica is done, whatever happens to the files: observations end first
        // (the store cannot close under one), then the store closes.
        await retire()
        try parts.store.close()
        var removed: [String] = []
        if let path = parts.store.path, let lease { removed = try StoreFiles.remove(at: path, holding: lease) }
        return SignOutReport(removedFiles: removed, discardedOps: ops, pushDevicesRemoved: removedDevices)
    }
}
