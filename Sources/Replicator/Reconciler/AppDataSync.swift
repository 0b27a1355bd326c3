import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

/// What one sync's pull of one app-data class did (``SyncReport/appData``).
public struct AppClassPullResult: Sendable, Hashable {
    /// Records that were new.
    public var inserted = 0
    /// Records that replaced an older version.
    public var updated = 0
    /// Records listed again unchanged (the checkpoint's instant is read again rather than risk
    /// missing a record of it).
    public var unchanged = 0
    /// Records removed: not listed by a full listing, or expired.
    public var removed = 0
    /// Records listed but not stored: of a version the class does not declare, or unreadable.
    public var skipped = 0
    /// Whether the class was listed whole (which learns of deletions no event told).
    public var full = false

    /// A result.
    public init() {}

    /// Whether the pull changed the store.
    public var changedAnything: Bool { inserted + updated + removed > 0 }
}

/// The pull of the app's own DataSync classes (`docs/app-data.md`, "Pulls"): per declared
/// class, the records changed since its checkpoint (the newest `updatedAt` pulled), within its
/// sync rule, 100 a page, committed 32 pages at a time; when nothing changed, one request per
/// class. A class is listed whole the first time, after its declaration's rule or versions
/// changed, and each ``ReplicaModel/AppClass/fullListingInterval`` (staggered by up to a tenth
/// by the class name, so that classes do not all list at once): that listing removes what it
/// no longer lists, the way a replica learns of a deletion whose event it missed. Records whose
/// `expiresAt` passed are removed after the pulls.
struct AppDataSync<Custom: ChatCustomData>: ReconcilerPart {
    let context: PullContext<Custom>

    /// Binds the declared classes to the store (``ReplicaStore/AppDataCatalog``): what opening a
    /// replica does, after it checked them (``AppDataDeclaration/validate()``) before opening
    /// any file.
    func bind() throws -> AppDataCatalog.Binding {
        let classes = options.appData.classes
        // An app that declares nothing and never did (most) pays one read at open, not a write.
        if classes.isEmpty, try !store.readingNow({ tx in try tx.appRecords.anyBound() }) { return AppDataCatalog.Binding() }
        let binding = try store.transactionNow { tx in try tx.appRecords.bind(classes) }
        if binding != AppDataCatalog.Binding() {
            logger.notice("app-data classes bound", metadata: [
                "added": "\(binding.added)", "refilled": "\(binding.refilled)", "reset": "\(binding.reset)",
                "dropped": "\(binding.dropped)",
            ])
        }
        return binding
    }

    /// Pulls every declared class in declaration order, then removes expired records. A class
    /// whose pull fails is reported in `errors` and the others still run, unless the server
    /// cannot be reached (the rest are skipped) or the store fails (thrown).
    func pull(full: Bool?) async throws -> (results: [String: AppClassPullResult], errors: [String], unreachable: String?) {
        var results: [String: AppClassPullResult] = [:]
        var errors: [String] = []
        var unreachable: String?
        for type in options.appData.classes {
            do {
                results[type.name] = try await pull(type, full: full)
            } catch {
                if let line = try Self.pullFailure(error, unreachable: &unreachable) { errors.append("app data \(type.name): \(line)") }
                if unreachable != nil { break }
            }
        }
        guard !options.appData.classes.isEmpty else { return (results, errors, unreachable) }
        let now = ISOTimestamp(date: clock.now)
        let expired = try await store.transaction { tx in
            try tx.appRecords.removeExpired(at: now, keeping: try LocalOverlay(tx: tx).recordsWithPendingOps())
        }
        for record in expired {
            results[record.className, default: AppClassPullResult()].removed += 1
            logger.notice("removed an expired record", metadata: ["record": "\(record.className)/\(record.id)"])
        }
        return (results, errors, unreachable)
    }

    /// Pulls one class, as the type's summary says.
    func pull(_ type: AppClass, full: Bool?) async throws -> AppClassPullResult {
        let scope = AppDataCatalog.checkpointScope(type.name), fullScope = AppDataCatalog.fullListingScope(type.name)
        let checkpoints = try await store.fetch(store.queries.checkpoints([scope, fullScope]))
        let since = checkpoints[scope]?.cursor.flatMap { try? ISOTimestamp(parsing: $0) }
        let isFull = full ?? (since == nil || isDue(type, lastFull: checkpoints[fullScope]?.updatedAt))
        var result = AppClassPullResult()
        result.full = isFull
        var newest = since
        var listed = Set<String>()
        var batch: [AppRecord] = []
        let perCommit = max(1, options.pageSize) * max(1, options.pagesPerCommit)
        let client = self.client
        let pages = ObjectListing.pages(scope: scope, first: ObjectPageRequest(limit: min(100, max(1, options.pageSize)))) { page in
            try await self.fetch(scope) { () async throws(WireError) in
                try await DataSyncAppRecords.page(type, since: isFull ? nil : since, cursor: page.cursor, limit: page.limit, client: client)
            }
        }
        for try await page in pages {
            result.skipped += page.skipped.count
            for row in page.data {
                // Only a full listing prunes, so only it needs every id it listed.
                if isFull { listed.insert(row.id) }
                guard let record = AppRecord(row: row, kind: type.recordKind, className: type.name) else {
                    result.skipped += 1
                    continue
                }
                if let stamp = record.updatedAt, newest.map({ stamp > $0 }) ?? true { newest = stamp }
                batch.append(record)
            }
            if batch.count >= perCommit {
                try await commit(batch, into: &result)
                batch = []
            }
        }
        try await commit(batch, into: &result)
        let now = clock.now
        let kind = type.recordKind
        result.removed += try await store.transaction { [listed, newest] tx in
            var removed = 0
            if isFull {
                removed = try tx.appRecords.prune(
                    kind, className: type.name, listed: listed, keeping: try LocalOverlay(tx: tx).recordsWithPendingOps())
                try tx.write(SyncCheckpoint(scope: fullScope, updatedAt: now))
            }
            if let newest { try tx.write(SyncCheckpoint(scope: scope, cursor: newest.description, updatedAt: now)) }
            return removed
        }
        return result
    }

    /// Writes one batch of records and adds what it did to `result`.
    private func commit(_ records: [AppRecord], into result: inout AppClassPullResult) async throws {
        guard !records.isEmpty else { return }
        // The unsent local writes of these records are laid back over them.
        let outcome = try await store.transaction { tx in try LocalOverlay(tx: tx).applyServer(records: records) }
        result.inserted += outcome.inserted
        result.updated += outcome.updated
        result.unchanged += outcome.unchanged
        result.skipped += outcome.skipped.count
    }

    /// Whether the class's full listing is due: its interval, shortened by up to a tenth by a
    /// hash of the class name, has passed since the last one (or there was none).
    func isDue(_ type: AppClass, lastFull: Date?) -> Bool {
        guard let lastFull else { return true }
        let interval = Double(type.fullListingInterval.components.seconds)
        var hash: UInt32 = 2_166_136_261
        for byte in type.name.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        let stagger = Double(hash % 100) / 1_000
        return clock.now.timeIntervalSince(lastFull) >= interval * (1 - stagger)
    }
}
