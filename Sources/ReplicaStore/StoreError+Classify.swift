import Foundation
import GRDB
import ReplicaModel

// What an error from SQLite or GRDB means to a caller: the store's one rule for it.
extension StoreError {
    /// Maps any error to a ``StoreError``.
    package static func wrapping(_ error: any Error) -> StoreError {
        switch error {
        case let error as StoreError: error
        case let error as ModelValidationError: .invalidInput(error.description)
        case let error as DatabaseError where isStorageFailure(error):
            .storageFailed(message: error.message ?? "\(error)")
        case let error as DatabaseError where isBusy(error):
            .busy(message: error.message ?? "\(error)")
        case let error as DatabaseError: .database(message: error.message ?? "\(error)")
        default: .database(message: "\(error)")
        }
    }

    /// Whether `error` came from the storage itself (disk full, I/O error, a read-only, unopenable
    /// or corrupt file: SQLite's FULL, IOERR, READONLY, CANTOPEN, CORRUPT, NOTADB, PERM, NOMEM)
    /// rather than from the data or a caller. A sender or puller that meets one stops instead of
    /// retrying work whose outcome it cannot record.
    public static func isStorageFailure(_ error: any Error) -> Bool {
        switch error {
        case StoreError.storageFailed: return true
        case let error as DatabaseError:
            return [.SQLITE_FULL, .SQLITE_IOERR, .SQLITE_READONLY, .SQLITE_CANTOPEN, .SQLITE_CORRUPT, .SQLITE_NOTADB,
                    .SQLITE_PERM, .SQLITE_NOMEM].contains(error.resultCode)
        default: return false
        }
    }

    /// Whether `error` says another connection held the write lock past the busy timeout
    /// (SQLite's BUSY or LOCKED): a wait, to retry later, not a failure.
    public static func isBusy(_ error: any Error) -> Bool {
        switch error {
        case StoreError.busy: return true
        case let error as DatabaseError: return [.SQLITE_BUSY, .SQLITE_LOCKED].contains(error.resultCode)
        default: return false
        }
    }
}
