import Foundation
import GRDB
import Logging
import ReplicaModel

/// Applies `Migrations/*.sql` in order, one transaction each, recording name and checksum.
///
/// Before anything is written the runner checks what the store already holds: a changed
/// migration, an unknown (newer) one or a gap is refused with a ``StoreError`` and nothing changes.
struct MigrationRunner: Sendable {
    static let table = "pnreplicate_migrations"

    let migrations: [Migration]

    /// Reads what the store has applied and validates it against this build's migrations.
    func inspect(_ db: Database) throws -> (applied: [AppliedMigration], pending: [Migration]) {
        var applied: [AppliedMigration] = []
        if try db.tableExists(Self.table) {
            let rows = try Row.fetchAll(
                db, sql: "SELECT name, checksum, applied_at FROM \(Self.table) ORDER BY name")
            applied = rows.map { AppliedMigration(name: $0[0], checksum: $0[1], appliedAt: $0[2]) }
        }
        let known = Dictionary(migrations.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let versions = migrations.map(\.version)
        if Set(versions).count != versions.count || migrations.map(\.name) != migrations.map(\.name).sorted() {
            throw StoreError.invalidMigrationName(
                "migrations must have distinct numbers in name order: \(migrations.map(\.name).joined(separator: ", "))")
        }
        let unknown = applied.map(\.name).filter { known[$0] == nil }
        if !unknown.isEmpty { throw StoreError.unknownMigrations(unknown) }
        for record in applied {
            let bundled = known[record.name]!
            if bundled.checksum != record.checksum {
                throw StoreError.migrationChecksumMismatch(
                    migration: record.name, recorded: record.checksum, bundled: bundled.checksum)
            }
        }
        let appliedNames = Set(applied.map(\.name))
        let pending = migrations.filter { !appliedNames.contains($0.name) }
        if let firstPending = pending.first, let lastApplied = applied.last, firstPending.name < lastApplied.name {
            throw StoreError.migrationGap(missing: firstPending.name)
        }
        return (applied, pending)
    }

    /// Applies `pending` in order, each in its own transaction.
    func apply(_ pending: [Migration], to writer: any DatabaseWriter, logger: Logger) throws -> [String] {
        var performed: [String] = []
        for migration in pending {
            do {
                try writer.writeWithoutTransaction { db in
                    try db.inTransaction(.immediate) {
                        try db.execute(
                            sql: """
                                CREATE TABLE IF NOT EXISTS \(Self.table) (
                                    name TEXT PRIMARY KEY NOT NULL,
                                    checksum TEXT NOT NULL,
                                    applied_at TEXT NOT NULL)
                                """)
                        try db.execute(sql: migration.sql)
                        try db.execute(
                            sql: "INSERT INTO \(Self.table) (name, checksum, applied_at) VALUES (?, ?, ?)",
                            arguments: [
                                migration.name, migration.checksum, ISOTimestamp(date: Date()).description,
                            ])
                        return .commit
                    }
                }
            } catch let error as DatabaseError {
                throw StoreError.migrationFailed(migration: migration.name, message: error.message ?? "\(error)")
            }
            logger.debug("applied migration", metadata: ["migration": "\(migration.name)"])
            performed.append(migration.name)
        }
        return performed
    }
}
