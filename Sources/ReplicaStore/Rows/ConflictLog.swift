import Foundation
import GRDB
import ReplicaModel

/// One conflict: an edit the app made locally met a different version on the server.
///
/// Each side is kept as wire JSON text (the object as PubNub spells it), so the log reads the
/// same whatever custom types the app uses.
public struct ConflictRecord: Sendable, Hashable, Codable, Identifiable {
    /// The log entry's id (increasing).
    public var id: Int64
    /// `user`, `channel` or `membership`.
    public var entityKind: String
    /// The object's id (`channel/user` for a membership).
    public var entityId: String
    /// The outbox op whose edit conflicted.
    public var opId: String?
    /// The object as stored before the local edit (the common ancestor), or nil when it was new.
    public var base: String?
    /// The object as the local edit wanted it.
    public var local: String?
    /// The object as the server held it (nil: deleted on the server).
    public var remote: String?
    /// The object as resolved, or nil while the conflict waits for a person.
    public var result: String?
    /// The policy that decided (`serverWins`, `clientWins`, `lastWriterWins`, `fieldMerge`,
    /// `custom`, `manual`), or for a person's decision what they took (`take:local`, ...).
    public var policy: String
    /// Whether a policy decided without a person.
    public var automatic: Bool
    /// When it was logged.
    public var createdAt: Date

    /// Whether the conflict is still waiting for a person.
    public var isOpen: Bool { result == nil }

    static let columns = "id, entity_kind, entity_id, op_id, base, local, remote, result, policy, automatic, created_at"

    init(row: Row) {
        id = row[0]
        entityKind = row[1]
        entityId = row[2]
        opId = row[3]
        base = row[4]
        local = row[5]
        remote = row[6]
        result = row[7]
        policy = row[8]
        automatic = row[9]
        createdAt = Date(milliseconds: row[10])
    }
}

/// A conflict to log (the store assigns the id).
public struct NewConflictRecord: Sendable, Hashable {
    /// `user`, `channel` or `membership`.
    public var entityKind: String
    /// The object's id.
    public var entityId: String
    /// The conflicting op.
    public var opId: String?
    /// Wire JSON of the base, local and remote versions and of the result.
    public var base: String?, local: String?, remote: String?, result: String?
    /// The deciding policy.
    public var policy: String
    /// Whether a policy decided without a person.
    public var automatic: Bool
    /// When.
    public var createdAt: Date

    /// A record.
    public init(
        entityKind: String, entityId: String, opId: String?, base: String?, local: String?, remote: String?,
        result: String?, policy: String, automatic: Bool, createdAt: Date
    ) {
        self.entityKind = entityKind
        self.entityId = entityId
        self.opId = opId
        self.base = base
        self.local = local
        self.remote = remote
        self.result = result
        self.policy = policy
        self.automatic = automatic
        self.createdAt = createdAt
    }

    func insert(_ db: Database) throws -> Int64 {
        try db.execute(
            sql: """
                INSERT INTO conflict_log (entity_kind, entity_id, op_id, base, local, remote, result, policy, automatic, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [entityKind, entityId, opId, base, local, remote, result, policy, automatic, createdAt.milliseconds])
        return db.lastInsertedRowID
    }
}

extension ChatQueries {
    /// The conflict log, oldest first.
    public func conflicts() -> StoreQuery<[ConflictRecord]> {
        StoreQuery { db in
            try Row.fetchAll(db, sql: "SELECT \(ConflictRecord.columns) FROM conflict_log ORDER BY id")
                .map(ConflictRecord.init(row:))
        }
    }

    /// One log entry, or nil.
    public func conflict(id: Int64) -> StoreQuery<ConflictRecord?> {
        StoreQuery { db in
            try Row.fetchOne(db, sql: "SELECT \(ConflictRecord.columns) FROM conflict_log WHERE id = ?", arguments: [id])
                .map(ConflictRecord.init(row:))
        }
    }

    /// The log entries of one op, oldest first.
    public func conflicts(ofOp opId: String) -> StoreQuery<[ConflictRecord]> {
        StoreQuery { db in
            try Row.fetchAll(
                db, sql: "SELECT \(ConflictRecord.columns) FROM conflict_log WHERE op_id = ? ORDER BY id",
                arguments: [opId]
            ).map(ConflictRecord.init(row:))
        }
    }
}
