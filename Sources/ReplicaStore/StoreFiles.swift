import Foundation

/// The files a store on disk is made of, and their removal: the first step of signing a user out
/// of a device (issue 52), so that nothing of the user is left behind.
///
/// A store at `path` is `path` itself, its WAL (`-wal`) and shared memory (`-shm`), a rollback
/// journal (`-journal`) if one was left, the drain lease's lock file (`.lock`), the files area
/// (`.files/`: files being sent and the download cache) and the backups migrations made beside it
/// (`.backup-<UTC time>`).
package enum StoreFiles {
    /// The suffixes of the files that belong to the store at a path, besides the backups.
    static let suffixes = ["", "-wal", "-shm", "-journal", lockSuffix, filesSuffix]
    private static let lockSuffix = ".lock", filesSuffix = ".files", backupInfix = ".backup-"

    /// The drain lease's lock file of the store at `path` (``StoreMaintenance/drainLeasePath``).
    static func lock(of path: String) -> String { path + lockSuffix }

    /// The files area of the store at `path` (``AttachmentArea``).
    static func filesArea(of path: String) -> String { path + filesSuffix }

    /// A backup of the store at `path` made at `stamp` (``StoreMaintenance/defaultBackupPath()``).
    static func backup(of path: String, stamp: String) -> String { path + backupInfix + stamp }

    /// Every file and folder of the store at `path` that exists, the store's own file first.
    package static func existing(at path: String) -> [String] {
        let manager = FileManager.default
        var paths = suffixes.map { path + $0 }.filter { manager.fileExists(atPath: $0) }
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path, backup = url.lastPathComponent + backupInfix
        let backups = (try? manager.contentsOfDirectory(atPath: folder))?.filter { $0.hasPrefix(backup) }.sorted() ?? []
        paths += backups.map { url.deletingLastPathComponent().appendingPathComponent($0).path }
        return paths
    }

    /// Takes the store's drain lease, so that no other process starts sending or syncing it while
    /// it is being removed; give it to ``remove(at:holding:)``.
    ///
    /// Throws ``StoreError/busy(message:)`` naming the holder while another process (or a lease in
    /// this one) holds it: a `listen`, a sync, a notification service extension sending. A process
    /// that only reads the store holds no lease: close the store everywhere first.
    package static func claim(at path: String) throws -> DrainLease {
        guard let lease = try DrainLease.acquire(lockPath: lock(of: path)) else {
            let holder = DrainLease.holder(lockPath: lock(of: path)).map { "process \($0)" } ?? "another holder"
            throw StoreError.busy(message: "the store at \(path) is in use: \(holder) holds its lock")
        }
        return lease
    }

    /// Removes every file and folder of the store at `path` (``existing(at:)``) and returns what
    /// it removed. The store must be closed in this process.
    ///
    /// Throws what ``claim(at:)`` throws, and removes nothing, while another process holds the
    /// store's lease. Throws ``StoreError/storageFailed(message:)`` naming a file that could not
    /// be removed; the ones before it are gone.
    @discardableResult
    package static func remove(at path: String) throws -> [String] {
        try remove(at: path, holding: claim(at: path))
    }

    /// ``remove(at:)`` with the lease already claimed (``claim(at:)``): held while the files go,
    /// so that no drain starts on them meanwhile, then released. The lock file goes last.
    @discardableResult
    package static func remove(at path: String, holding lease: DrainLease) throws -> [String] {
        defer { lease.release() }
        let paths = existing(at: path)
        for file in paths.filter({ $0 != lock(of: path) }) + paths.filter({ $0 == lock(of: path) }) {
            do {
                try FileManager.default.removeItem(atPath: file)
            } catch {
                throw StoreError.storageFailed(message: "cannot remove \(file): \(error.localizedDescription)")
            }
        }
        return paths
    }
}
