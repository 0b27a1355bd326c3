import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

/// What settling the outbox's conflicts did.
public struct ConflictReport: Sendable, Hashable {
    /// Conflicts settled by a policy (log entries written with a result).
    public var resolved = 0
    /// Conflicts left for a person (policy `manual`, a custom resolver's `.manual`, or too many attempts).
    public var waiting = 0
    /// Conflicts that could not be settled this time (the server's version could not be read):
    /// they stay in `conflict` and are tried again by the next call.
    public var errors: [String] = []

    /// An empty report.
    public init() {}
}

/// What a person takes when resolving a conflict by hand.
public enum ConflictTake: String, Sendable, Hashable, CaseIterable {
    /// The local edit (sent again over the server's version).
    case local
    /// The server's version (the local edit is dropped).
    case remote
    /// The three-way merge (ties go to the local edit).
    case merged
}

/// Settles conflicted ops with the app's policies, and one conflict as the app decides it,
/// logging each one (`docs/conflicts.md`).
struct ConflictResolver<Custom: ChatCustomData>: ReconcilerPart {
    let context: PullContext<Custom>

    /// What ``Reconciler/resolveConflicts`` does (its doc says how).
    @discardableResult
    func resolveConflicts() async throws -> ConflictReport {
        var report = ConflictReport()
        // Only the conflicted rows: a started replica settles on every conflict it meets, and the
        // outbox may hold thousands of unsent ops.
        let conflicted = try await store.reading { try $0.outbox.ops(states: [.conflict]) }
        for entry in conflicted {
            do {
                try await settleAutomatically(entry, report: &report)
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                report.errors.append("op \(entry.id): \(error)")
            }
        }
        return report
    }

    private func settleAutomatically(_ entry: OutboxEntry, report: inout ConflictReport) async throws {
        guard let entity = entry.kind.traits.conflictEntity else { return }
        let history = try await store.fetch(store.queries.conflicts(ofOp: entry.id))
        if history.contains(where: \.isOpen) {
            report.waiting += 1
            return
        }
        let context = try await context(of: entry, entity: entity)
        let policies = options.conflicts
        if history.filter(\.automatic).count >= max(0, policies.maxAutomaticAttempts) {
            _ = try await settle(entry, context: context, decision: .manual, policy: "attempts exhausted", automatic: false)
            report.waiting += 1
            return
        }
        let policy = entry.operation.appRecord.map { policies.policy(forClass: $0.className) } ?? policies.policy(for: entity)
        let decision = await Self.decide(policy, context)
        _ = try await settle(entry, context: context, decision: decision, policy: policy.name, automatic: decision != .manual)
        if decision == .manual { report.waiting += 1 } else { report.resolved += 1 }
    }

    /// What ``Reconciler/resolve`` does (its doc says how).
    @discardableResult
    func resolve(conflictId: Int64, take: ConflictTake) async throws -> ConflictRecord {
        guard let record = try await store.fetch(store.queries.conflict(id: conflictId)) else {
            throw ReconcilerError.conflictNotFound(conflictId)
        }
        guard let opId = record.opId,
              let entry = try await store.fetch(store.queries.outboxEntry(id: opId)), entry.state == .conflict,
              let entity = entry.kind.traits.conflictEntity
        else {
            if !record.isOpen { throw ReconcilerError.conflictClosed(conflictId) }
            throw ReconcilerError.conflictOpGone(conflictId, opId: record.opId)
        }
        let context = try await context(of: entry, entity: entity)
        let decision: ConflictDecision =
            switch take {
            case .local: .takeLocal
            case .remote: .takeRemote
            case .merged: await Self.decide(.fieldMerge(tie: .local), context)
            }
        let id = try await settle(
            entry, context: context, decision: decision, policy: "take:\(take.rawValue)", automatic: false,
            closing: record.isOpen ? record.id : nil)
        guard let written = try await store.fetch(store.queries.conflict(id: id)) else {
            throw ReconcilerError.conflictNotFound(id)
        }
        return written
    }

    /// What a policy decides.
    static func decide(_ policy: ConflictPolicy, _ context: ConflictContext) async -> ConflictDecision {
        let localIsLater = context.remoteUpdated.map { context.localEditedAt > $0.date } ?? true
        switch policy {
        case .serverWins: return .takeRemote
        case .clientWins: return .takeLocal
        case .lastWriterWins: return localIsLater ? .takeLocal : .takeRemote
        case .manual: return .manual
        case .custom(let resolver): return await resolver(context)
        case .fieldMerge(let tie):
            guard let remote = context.remote, !context.isRemoval else {
                // A removal on one side and an edit on the other have no fields to merge: the tie rule decides.
                let preferLocal =
                    switch tie {
                    case .local: true
                    case .remote: false
                    case .lastWriter: localIsLater
                    }
                return preferLocal ? .takeLocal : .takeRemote
            }
            return .merged(
                ThreeWayMerge.merge(base: context.base, local: context.local, remote: remote, tie: tie, localIsLater: localIsLater))
        }
    }

    /// Applies a decision to the op and the store and logs it.
    private func settle(
        _ entry: OutboxEntry, context: ConflictContext, decision: ConflictDecision, policy: String, automatic: Bool,
        closing: Int64? = nil
    ) async throws -> Int64 {
        let settlement: ConflictSettlement
        var result: [String: JSONValue]?
        switch decision {
        case .manual:
            settlement = .wait
        case .takeRemote:
            settlement = .takeRemote
            result = context.remote
        case .takeLocal:
            settlement = .resend(fields: Self.sendable(context.edit, context: context))
            result = (context.remote ?? [:]).merging(context.edit) { _, local in local }
        case .merged(let merged):
            result = merged
            let changes = ThreeWayMerge.changes(from: context.remote, to: merged)
            settlement = changes.isEmpty && context.remote != nil ? .takeRemote : .resend(fields: Self.sendable(changes, context: context, merged: merged))
        }
        let remoteObject = try remoteJSON(context)
        let record = NewConflictRecord(
            entityKind: context.entity.rawValue, entityId: context.id, opId: entry.id,
            base: try context.base.map { try JSONValue.object($0).jsonString() },
            local: try JSONValue.object(context.local).jsonString(),
            remote: try remoteObject?.jsonString(),
            result: decision == .manual ? nil : try result.map { try JSONValue.object($0).jsonString() } ?? "null",
            policy: policy, automatic: automatic, createdAt: clock.now)
        let opId = entry.id, now = clock.now
        let id = try await ops.commit {
            try $0.settle(opId, remote: remoteObject, settlement: settlement, record: record, closing: closing, now: now)
        }
        ReplicatorMetrics.settled(policy: policy, entity: context.entity.rawValue, automatic: automatic, to: client.metrics)
        logger.debug(
            "conflict settled",
            metadata: ["op": "\(entry.id)", "entity": "\(context.entity.rawValue)", "policy": "\(policy)", "log": "\(id)"])
        return id
    }

    /// The fields a resend carries. A membership PATCH replaces status, type and custom together,
    /// so all three go, taken from the intended result.
    static func sendable(
        _ fields: [String: JSONValue], context: ConflictContext, merged: [String: JSONValue]? = nil
    ) -> [String: JSONValue] {
        // An app record's op holds its whole wanted state.
        guard context.entity == .membership || context.entity == .record else { return fields }
        let intended = merged ?? (context.remote ?? context.base ?? [:]).merging(context.edit) { _, local in local }
        return intended
    }

    /// The server's version as the store reads it (wire JSON with `id`, `updated`, `eTag`).
    private func remoteJSON(_ context: ConflictContext) throws -> JSONValue? {
        guard var fields = context.remote else { return nil }
        if context.entity == .user || context.entity == .channel { fields["id"] = .string(context.id) }
        if let updated = context.remoteUpdated { fields["updated"] = .string(updated.description) }
        if let eTag = context.remoteETag { fields["eTag"] = .string(eTag) }
        if context.entity != .membership, fields["type"] == .string(FieldSchema.defaultType) { fields["type"] = nil }
        return .object(fields.filter { $0.value != .null })
    }

    /// Gathers base, local and remote for a conflicted op (fetching the server's current version).
    private func context(of entry: OutboxEntry, entity: ConflictEntity) async throws -> ConflictContext {
        let p = entry.operation
        let edit = p.fields ?? [:]
        let base = try entry.baseSnapshot.map { try JSONValue(jsonData: Data($0.utf8)) }
        let baseFields = ThreeWayMerge.normalize(base, entity: entity)
        // With no base, only the edit's fields are the local side (absent fields are not changes).
        var local = baseFields ?? [:]
        for (key, value) in edit { local[key] = value }
        let id: String
        let remote: (fields: JSONValue?, updated: ISOTimestamp?, eTag: String?)
        switch entity {
        case .user:
            id = p.user ?? ""
            remote = try await fetch("user:\(id)") { [objects] () async throws(WireError) in
                let user = try await objects.user(id: id, as: JSONValue.self)
                return (user.flatMap { try? JSONValue(encoding: $0) }, user?.updated, user?.eTag)
            }
        case .channel:
            id = p.channel ?? ""
            remote = try await fetch("channel:\(id)") { [objects] () async throws(WireError) in
                let channel = try await objects.channel(id: id, as: JSONValue.self)
                return (channel.flatMap { try? JSONValue(encoding: $0) }, channel?.updated, channel?.eTag)
            }
        case .membership:
            id = "\(p.channel ?? "")/\(p.user ?? "")"
            let found = try await remoteMembership(channel: p.channel ?? "", user: p.user ?? "")
            remote = (found?.fields, found?.updated, found?.eTag)
        case .record:
            let target = p.appRecord ?? AppRecordTarget(kind: .entity, className: "", id: "")
            id = "\(target.className)/\(target.id)"
            remote = try await fetch("record:\(id)") { [client] () async throws(WireError) in
                let record = try await DataSyncAppRecordWrites.fetch(target, client: client)
                return (record.map { .object(AppRecordWrite.state(of: $0)) }, record?.updatedAt, record?.eTag)
            }
        }
        return ConflictContext(
            entity: entity, id: id, opId: entry.id, base: baseFields, local: local,
            remote: ThreeWayMerge.normalize(remote.fields, entity: entity), edit: edit,
            isRemoval: entry.kind.traits.isRemoval,
            localEditedAt: entry.createdAt,
            remoteUpdated: remote.updated, remoteETag: remote.eTag)
    }

    /// A membership as the server holds it now (`status`, `type`, `custom`), or nil.
    func remoteMembership(channel: String, user: String) async throws
        -> (fields: JSONValue, updated: ISOTimestamp?, eTag: String?)?
    {
        let found = try await objects.memberships(user: user, channels: [channel]) { scope, body in
            try await self.fetch(scope, body)
        }[channel]
        return try found.map { (.object(try $0.wireFields), $0.updated, $0.eTag) }
    }
}
