import Foundation
import Logging
import PubNubWire
import ReplicaModel
import ReplicaStore

/// Live events of an app's own classes (`docs/app-data.md`, "Live"), and which channels bring
/// them: the one owner of app-data routing.
///
/// DataSync publishes a record's `create`, `update` and `delete` on its id's channel (a
/// relationship's on both its ends'); its metadata names the class and version. A create or
/// update carries the whole record and is written under the version rule (so the second copy of
/// a relationship's event changes nothing); a delete removes the record and leaves its
/// tombstone. An event of a class this replica does not declare is ignored, as before.
enum AppDataLive {
    /// Whether `event` is an entity's or relationship's (not a user's, channel's or membership's).
    static func concerns(_ event: DataSyncEvent) -> Bool { event.type == "entity" || event.type == "relationship" }

    /// Applies one event in the live transaction.
    static func apply<Custom: ChatCustomData>(
        _ event: DataSyncEvent, envelope: SubscribeEnvelope, tx: StoreTransaction<Custom>, into result: inout LiveApplyResult
    ) throws {
        let kind: AppRecord.Kind = event.type == "relationship" ? .relationship : .entity
        let subject = "\(event.className ?? "?")/\(event.row.id)"
        func ignored(_ why: String = "ignored") {
            result.ignored += 1
            result.applied.append(envelope.record(kind: "record", subject: subject, outcome: why))
        }
        // The ingest checks the class (bound, this kind, this version) as it writes: an undeclared
        // one comes back skipped. A delete checks only that the class is bound (no tombstone for
        // a class this replica does not hold).
        guard let name = event.className else { return ignored() }
        let outcome: String
        switch event.verb {
        case .create, .update:
            guard let record = AppRecord(row: event.row, kind: kind, className: name, classVersion: event.classVersion) else {
                throw LiveEventError(reason: "\(subject): a \(event.type) event without its class version")
            }
            let applied = try LocalOverlay(tx: tx).applyServer(records: [record])
            guard applied.skipped.isEmpty else { return ignored() }
            outcome = applied.inserted > 0 ? "inserted" : applied.updated > 0 ? "updated" : "unchanged"
        case .delete:
            guard try tx.appRecords.isBound(name) else { return ignored() }
            let at = event.row.deletedAt ?? event.row.updatedAt ?? envelope.timetoken.map { ISOTimestamp(date: $0.date) }
            guard let at else { throw LiveEventError(reason: "\(subject): a delete without a time") }
            outcome = try tx.appRecords.remove(kind, id: event.row.id, className: name, deletedAt: at) ? "removed" : "unchanged"
            // A local write still queued on it shows until it is sent (and meets the deletion).
            try LocalOverlay(tx: tx).reapplyPending(target: OutboxKeys.appRecord(kind, event.row.id))
        case .other(let verb):
            return ignored("ignored: \(verb)")
        }
        if outcome == "inserted" || outcome == "updated" || outcome == "removed" { result.objectsChanged += 1 }
        result.applied.append(envelope.record(kind: "record", subject: subject, outcome: outcome))
    }

    /// The channels the declared classes' events arrive on: each stored record's id for
    /// ``ReplicaModel/AppEventRouting/idChannels``, `prefix.*` for a wildcard, none for
    /// ``ReplicaModel/AppEventRouting/ends`` (the ends' own channels bring them). The stored ids
    /// are read at most every ``AppChannelCache/interval`` (live asks at every step), so a record
    /// another client creates is followed within that time of its being stored (its create event
    /// itself comes through a pull: nobody followed its channel yet). A class with more than
    /// 1,000 id channels is logged at each read: a wildcard would serve it better.
    static func channels<Custom: ChatCustomData>(
        _ declaration: AppDataDeclaration, context: PullContext<Custom>
    ) async throws -> [String] {
        let wildcards = declaration.classes.compactMap { type -> String? in
            if case .wildcard(let prefix) = type.routing { return prefix + ".*" }
            return nil
        }
        let byId = declaration.classes.filter { $0.routing == .idChannels }
        guard !byId.isEmpty else { return wildcards }
        let now = context.clock.now
        if let cached = context.appChannels.fresh(at: now) { return wildcards + cached }
        let logger = context.logger
        let ids = try await context.store.reading { tx in
            var channels: [String] = []
            for type in byId {
                let ids = try tx.appRecords.ids(ofClass: type.name)
                if ids.count > 1_000 {
                    logger.warning("many id channels for one app-data class: routing by a wildcard prefix costs one", metadata: [
                        "class": "\(type.name)", "channels": "\(ids.count)",
                    ])
                }
                channels += ids
            }
            return channels
        }
        context.appChannels.store(ids, at: now)
        return wildcards + ids
    }

    /// Whether `channel` is one of `names` or under one of its wildcards (`poll.*` covers
    /// `poll.1`; never a presence channel).
    static func covers(_ names: Set<String>, _ channel: String) -> Bool {
        if names.contains(channel) { return true }
        guard !channel.hasSuffix("-pnpres"), let dot = channel.firstIndex(of: ".") else { return false }
        return names.contains(channel[...dot] + "*")
    }
}

/// The id channels of the app-data classes routed by id, as last read, and when
/// (``AppDataLive/channels(_:context:)``).
final class AppChannelCache: @unchecked Sendable {
    // An NSLock guards `channels` and `readAt`.
    private let lock = NSLock()
    private var channels: [String] = []
    private var readAt: Date?

    /// How long a read of the stored ids serves (seconds on the injected clock).
    static let interval: TimeInterval = 30

    /// The ids read less than ``interval`` before `now`, or nil.
    func fresh(at now: Date) -> [String]? {
        lock.withLock { readAt.map { now.timeIntervalSince($0) < Self.interval && now >= $0 } == true ? channels : nil }
    }

    /// Keeps `ids`, read at `now`.
    func store(_ ids: [String], at now: Date) {
        lock.withLock { (channels, readAt) = (ids, now) }
    }
}
