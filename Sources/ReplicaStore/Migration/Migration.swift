import Crypto
import Foundation
import ReplicaMigrations

/// One schema migration: a numbered SQL file from `Migrations/`.
public struct Migration: Sendable, Hashable {
    /// The file name without `.sql`, e.g. `0001_initial`.
    public let name: String
    /// The migration's number, from its name.
    public let version: Int
    /// The SQL, exactly as bundled.
    public let sql: String
    /// Lowercase hex SHA-256 of the SQL's UTF-8 bytes.
    public let checksum: String

    /// A migration from a name (`NNNN_name`) and its SQL.
    public init(name: String, sql: String) throws(StoreError) {
        let parts = name.split(separator: "_", maxSplits: 1)
        guard parts.count == 2, parts[0].count == 4, parts[0].allSatisfy(\.isASCIIDigit), let version = Int(parts[0]),
            !parts[1].isEmpty
        else {
            throw .invalidMigrationName(name)
        }
        self.name = name
        self.version = version
        self.sql = sql
        self.checksum = SHA256.hash(data: Data(sql.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// The migrations bundled with this build, in order.
    public static func bundled() throws -> [Migration] {
        try ReplicaMigrations.files().map { try Migration(name: $0.name, sql: $0.sql) }
    }
}

/// A migration recorded in a store as applied.
public struct AppliedMigration: Sendable, Hashable, Codable {
    /// The migration's name.
    public let name: String
    /// The checksum recorded when it was applied.
    public let checksum: String
    /// When it was applied (ISO-8601).
    public let appliedAt: String
}

/// What `migrate` found and did.
public struct MigrationReport: Sendable, Hashable, Codable {
    /// Migrations the store had before this call.
    public var applied: [AppliedMigration]
    /// Migrations that were pending before this call, in order.
    public var pending: [String]
    /// Migrations this call applied (empty on a dry run).
    public var performed: [String]
    /// Whether this was a dry run.
    public var dryRun: Bool
    /// Where a backup was written, if one was.
    public var backupPath: String?

    /// The name of the newest migration the store holds after this call, or nil for an empty store.
    public var schemaVersion: String? {
        (performed.last ?? applied.last?.name)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
