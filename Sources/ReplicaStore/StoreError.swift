import Foundation

/// Everything the store can fail with. Each case says what and where, in one line.
public enum StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// An applied migration's SQL differs from the file this build ships: the file was edited
    /// after it was released, or the store was tampered with. Nothing was changed.
    case migrationChecksumMismatch(migration: String, recorded: String, bundled: String)
    /// The store has migrations this build does not know: it was written by a newer version.
    /// Nothing was changed.
    case unknownMigrations([String])
    /// The store applied a later migration but not this earlier one.
    case migrationGap(missing: String)
    /// A bundled migration file name is not `NNNN_name.sql`.
    case invalidMigrationName(String)
    /// A migration's SQL failed; its transaction was rolled back and later ones were not tried.
    case migrationFailed(migration: String, message: String)
    /// The store was opened without migrating and has pending migrations.
    case migrationsPending([String])
    /// `VACUUM INTO` the backup path failed; no migration was applied.
    case backupFailed(path: String, message: String)
    /// No store file at this path.
    case storeNotFound(path: String)
    /// A stored value could not be read back (corrupt JSON, out-of-range number, ...).
    case corruptValue(table: String, column: String, key: String, message: String)
    /// A value cannot be stored (e.g. a timetoken above 2^63 - 1).
    case valueOutOfRange(field: String, value: String)
    /// A write was refused by a model rule; the message names the field.
    case invalidInput(String)
    /// SQLite reported an error.
    case database(message: String)

    /// A one-line explanation, suitable for a CLI's stderr.
    public var description: String {
        switch self {
        case .migrationChecksumMismatch(let migration, let recorded, let bundled):
            "migration \(migration) was changed after it was applied (recorded sha256 \(recorded.prefix(12))…, "
                + "this build has \(bundled.prefix(12))…); refusing to open the store"
        case .unknownMigrations(let names):
            "store was written by a newer pnreplicate: unknown migrations \(names.joined(separator: ", "))"
        case .migrationGap(let missing):
            "store skipped migration \(missing) but applied later ones; refusing to open it"
        case .invalidMigrationName(let name):
            "migration file name \"\(name)\" is not NNNN_name.sql"
        case .migrationFailed(let migration, let message):
            "migration \(migration) failed and was rolled back: \(message)"
        case .migrationsPending(let names):
            "store needs migrating first (pending: \(names.joined(separator: ", "))); run `pnreplicate migrate`"
        case .backupFailed(let path, let message):
            "backup to \(path) failed: \(message); nothing was migrated"
        case .storeNotFound(let path):
            "no store at \(path)"
        case .corruptValue(let table, let column, let key, let message):
            "stored \(table).\(column) for \(key) cannot be read: \(message)"
        case .valueOutOfRange(let field, let value):
            "\(field): \(value) is out of the range the store can hold"
        case .invalidInput(let message):
            message
        case .database(let message):
            "database error: \(message)"
        }
    }
}
