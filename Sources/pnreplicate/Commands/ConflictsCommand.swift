import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate conflicts list|resolve`: the conflict log, and a person's decision on a conflict
/// its policy left open.
struct ConflictsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conflicts", abstract: "Show the conflict log or resolve a conflict by hand.",
        subcommands: [List.self, Resolve.self])

    /// `pnreplicate conflicts list`.
    struct List: ReportingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every conflict logged, oldest first (reads the store only).",
            discussion: """
                One line per decision: id, time, entity kind and id, the policy that decided (or \
                take:local|remote|merged for a person's), whether it was automatic, open (waiting \
                for `pnreplicate conflicts resolve ID`) or resolved, and the outbox op. --json \
                adds the base, local, remote and result versions as wire JSON text.
                """)

        @OptionGroup var options: StoreOptionsGroup

        func perform() async throws {
            let store = try options.openForReading()
            let records = try await store.fetch(store.queries.conflicts())
            if options.json { return try Output.json(records.map(ConflictOutput.init)) }
            Output.columns(
                ["id", "time", "kind", "entity", "policy", "decided", "state", "op"],
                records.map { r in
                    [
                        String(r.id), Output.time(r.createdAt), r.entityKind, r.entityId, r.policy,
                        r.automatic ? "automatic" : "by hand", r.isOpen ? "open" : "resolved", Output.cell(r.opId),
                    ]
                },
                empty: "no conflicts logged")
        }
    }

    /// `pnreplicate conflicts resolve ID --take local|remote|merged`.
    struct Resolve: ReportingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Resolve a conflict by taking the local edit, the server's version or their merge.",
            discussion: """
                Fetches the server's current version first, so the decision is made against what it \
                holds now, and logs the decision. Taking the local edit or a merge that differs from \
                the server queues the edit again: `pnreplicate sync` sends it.
                """)

        @OptionGroup var options: SessionOptions
        @Argument(help: "The conflict's id (from `pnreplicate conflicts list`).") var id: Int64
        @Option(name: .long, help: "local, remote or merged.") var take: String

        func perform() async throws {
            guard let take = ConflictTake(rawValue: take) else {
                throw ValidationError("--take must be local, remote or merged, not \"\(take)\"")
            }
            let session = try await Session(options)
            let record = try await session.replica.outbox.resolveConflict(id: id, take: take)
            var queued: String?
            if let opId = record.opId, let entry = try await session.replica.fetch(session.replica.queries.outboxEntry(id: opId)) {
                queued = entry.state.rawValue
            }
            if options.json { return try Output.json(ResolveOutput(conflict: ConflictOutput(record), opState: queued)) }
            Output.table([
                ("conflict", String(record.id)), ("time", Output.time(record.createdAt)),
                ("entity", "\(record.entityKind) \(record.entityId)"), ("policy", record.policy),
                ("result", Output.cell(record.result)), ("remote", Output.cell(record.remote)),
                ("op", Output.cell(record.opId)),
                ("outbox", queued.map { "queued again (\($0)): `pnreplicate sync` sends it" } ?? "nothing to send"),
            ])
        }
    }
}

/// A conflict log entry as `conflicts --json` prints it (times in ISO 8601).
struct ConflictOutput: Encodable {
    var id: Int64
    var createdAt: String
    var entityKind: String
    var entityId: String
    var policy: String
    var automatic: Bool
    var state: String
    var opId: String?
    var base: String?
    var local: String?
    var remote: String?
    var result: String?

    init(_ record: ConflictRecord) {
        id = record.id
        createdAt = Output.time(record.createdAt)
        entityKind = record.entityKind
        entityId = record.entityId
        policy = record.policy
        automatic = record.automatic
        state = record.isOpen ? "open" : "resolved"
        opId = record.opId
        base = record.base
        local = record.local
        remote = record.remote
        result = record.result
    }

    enum CodingKeys: String, CodingKey {
        case id, createdAt, entityKind, entityId, policy, automatic, state, opId, base, local, remote, result
    }

    /// Every key, with `null` for an absent version.
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(entityKind, forKey: .entityKind)
        try c.encode(entityId, forKey: .entityId)
        try c.encode(policy, forKey: .policy)
        try c.encode(automatic, forKey: .automatic)
        try c.encode(state, forKey: .state)
        try c.encode(opId, forKey: .opId)
        try c.encode(base, forKey: .base)
        try c.encode(local, forKey: .local)
        try c.encode(remote, forKey: .remote)
        try c.encode(result, forKey: .result)
    }
}

/// What `conflicts resolve --json` prints: the logged decision and the state of its op, if it
/// went back to the outbox.
struct ResolveOutput: Encodable {
    var conflict: ConflictOutput
    var opState: String?
}
