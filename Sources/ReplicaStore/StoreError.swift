import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
    /// The file at this path is empty (0 bytes, no WAL content): no store was created in it yet.
    /// Read-only opens say so and leave it as it is; an open that may write creates the store in
    /// it (`StoreError.isUncreatedStore(at:)`, the one rule for both).
    case emptyStoreFile(path: String)
    /// The folder the store would be created in does not exist (a store is created, its folder
    /// is not: a mistyped path must not make directories).
    case folderNotFound(folder: String, path: String)
    /// The path exists but is not a regular file (a FIFO, directory, socket or device): opening
    /// it could block forever or fail obscurely, so nothing was opened.
    case notARegularFile(path: String, kind: String)
    /// The file is not a pnreplicate store (empty, not SQLite, or without the store's schema) and
    /// was opened read-only, so it was left exactly as it was.
    case notAStore(path: String, reason: String)
    /// A stored value could not be read back (corrupt JSON, out-of-range number, ...).
    case corruptValue(table: String, column: String, key: String, message: String)
    /// A value cannot be stored (e.g. a timetoken above 2^63 - 1).
    case valueOutOfRange(field: String, value: String)
    /// A write was refused by a model rule; the message names the field.
    case invalidInput(String)
    /// SQLite reported an error.
    case database(message: String)
    /// The storage itself failed: the disk is full, the file became read-only or unreadable, an
    /// I/O error. Work whose outcome cannot be recorded stops on it (a drain, a sync).
    case storageFailed(message: String)
    /// Another connection or process held the store's write lock for longer than
    /// ``StoreOptions/busyTimeout``: a wait, not a failure. Retry later (the live sync does, with
    /// its backoff); nothing was written.
    case busy(message: String)
    /// The store's users, channels and memberships came from one object backend (`stored`:
    /// `app-context`, `datasync`) and the replica is configured with another (`configured`):
    /// refused before anything is read or written (`docs/datasync.md`, "Binding a store to a
    /// backend"). Open it with the backend it was filled with, or start a new store.
    case objectBackendMismatch(stored: String, configured: String)

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
        case .emptyStoreFile(let path):
            "\(path) is empty: no store was created in it yet (opening it to write creates one); it was left unchanged"
        case .folderNotFound(let folder, let path):
            "cannot create the store \(path): its folder \(folder) does not exist (create it, or choose another path)"
        case .notARegularFile(let path, let kind):
            "\(path) is a \(kind), not a store file; refusing to open it"
        case .notAStore(let path, let reason):
            "\(path) is not a pnreplicate store (\(reason)); it was left unchanged"
        case .corruptValue(let table, let column, let key, let message):
            "stored \(table).\(column) for \(key) cannot be read: \(message)"
        case .valueOutOfRange(let field, let value):
            "\(field): \(value) is out of the range the store can hold"
        case .invalidInput(let message):
            message
        case .database(let message):
            "database error: \(message)"
        case .storageFailed(let message):
            "the store cannot be written: \(message)"
        case .busy(let message):
            "the store is busy (another process holds its write lock): \(message)"
        case .objectBackendMismatch(let stored, let configured):
            "the store's users, channels and memberships came from \(stored); this replica is configured for \(configured) "
                + "(moving a store between object backends is not supported: use \(stored), or a new store)"
        }
    }
}

extension StoreError {
    /// Throws ``notARegularFile(path:kind:)`` when `path`, or the `-wal` or `-shm` file SQLite
    /// keeps next to it, exists and is not a regular file (symbolic links are followed). A
    /// missing file passes: creating it is the caller's decision.
    ///
    /// This is the one check every open goes through (``ChatStore/open(at:options:)`` and
    /// ``ChatStore/migrationPlan(forStoreAt:options:)`` call it first): SQLite opening a FIFO
    /// blocks until a writer appears, so without it a FIFO as the store path hangs every command.
    public static func refuseIrregularFile(at path: String) throws(StoreError) {
        for candidate in [path, path + "-wal", path + "-shm"] {
            if let kind = irregularKind(at: candidate) { throw .notARegularFile(path: candidate, kind: kind) }
        }
    }

    /// What `path` is when it exists and is not a regular file (symbolic links followed): "FIFO",
    /// "directory", "socket", "character device", "block device" or "special file"; nil for a
    /// regular or missing file. The one test of a file's kind, for the store's files and for the
    /// files a send reads (reading a FIFO blocks until a writer appears; `/dev/zero` never ends).
    public static func irregularKind(at path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }  // missing (or unreadable: the caller's read reports it)
        switch info.st_mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFIFO: return "FIFO"
        case S_IFDIR: return "directory"
        case S_IFSOCK: return "socket"
        case S_IFCHR: return "character device"
        case S_IFBLK: return "block device"
        default: return "special file"
        }
    }

    /// Whether `path` is a store never created: an empty (0-byte) file with no WAL content, as a
    /// process killed between creating the file and writing its header leaves it. The one rule of
    /// the empty file, for every open: a read-only open throws ``emptyStoreFile(path:)`` (and
    /// ``ChatStore/migrationPlan(forStoreAt:options:)`` reports every migration pending, as for a
    /// missing file); an open that may write creates the store in it. An empty file beside a
    /// non-empty `-wal` is not a store never created but a damaged one: refused by every open
    /// (``notAStore(path:reason:)``), nothing touched.
    public static func isUncreatedStore(at path: String) throws(StoreError) -> Bool {
        guard let size = fileSize(path), size == 0 else { return false }
        if let wal = fileSize(path + "-wal"), wal > 0 {
            throw .notAStore(path: path, reason: "its main file is empty but its -wal holds \(wal) bytes")
        }
        return true
    }

    private static func fileSize(_ path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int(info.st_size)
    }

    /// ``notAStore(path:reason:)`` for a file that SQLite reads but that records no migration:
    /// another program's database (an empty file is ``emptyStoreFile(path:)``).
    static func noSchema(at path: String) -> StoreError {
        .notAStore(path: path, reason: "no pnreplicate schema in it")
    }
}
