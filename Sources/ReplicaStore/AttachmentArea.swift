import Foundation

/// The store's folder for file bytes (`docs/files.md`): `<store path>.files/`, beside the SQLite
/// file (a store in memory gets a temporary folder of its own).
///
/// - `outgoing/`: the bytes of each file a pending send uploads, copied in when the send is
///   queued (so that the app may delete or change its own copy at once), kept until the send
///   completes (then they serve as the cache's copy) or is discarded.
/// - `cache/`: downloaded files, decrypted, bounded (`FileCache` in the replicator).
///
/// Files are written to a temporary name, flushed to disk and renamed, so a kill leaves either
/// the whole file or none; a file no row names (a kill between the copy and the transaction that
/// queues the send) is removed by ``sweep(keeping:)``. On iOS the folder is created with
/// `FileProtectionType.completeUntilFirstUserAuthentication`, the class the SQLite files use, so
/// a send can go on in the background after the first unlock (docs/ios.md).
public struct AttachmentArea: Sendable, Hashable {
    /// The folder.
    public let root: URL

    /// The area at `root`.
    public init(root: URL) { self.root = root }

    /// The area of the store at `path` (`<path>.files`), or a fresh temporary folder for a store in memory.
    static func forStore(at path: String?) -> AttachmentArea {
        if let path { return AttachmentArea(root: URL(fileURLWithPath: StoreFiles.filesArea(of: path))) }
        return AttachmentArea(root: FileManager.default.temporaryDirectory
            .appendingPathComponent("pnreplicate-memory-\(UUID().uuidString).files"))
    }

    /// The folder of a kind of file (`outgoing`, `cache`).
    public func folder(_ kind: Kind) -> URL { root.appendingPathComponent(kind.rawValue, isDirectory: true) }

    /// The two folders of the area.
    public enum Kind: String, Sendable, CaseIterable {
        /// Files being sent.
        case outgoing
        /// Downloaded files.
        case cache
    }

    /// The file `name` of `kind` (a name the area gave: no `/`, no `..`).
    public func url(_ kind: Kind, _ name: String) throws(StoreError) -> URL {
        guard !name.isEmpty, !name.contains("/"), name != ".", name != "..", !name.hasPrefix(".") else {
            throw .invalidInput("not an attachment file name: \(name)")
        }
        return folder(kind).appendingPathComponent(name)
    }

    /// Writes `data` as `name` of `kind` durably: a temporary file, flushed to disk, renamed.
    public func write(_ data: Data, as name: String, in kind: Kind) throws(StoreError) {
        let target = try url(kind, name)
        let temporary = folder(kind).appendingPathComponent(".\(name).\(UUID().uuidString).tmp")
        do {
            try createFolder(kind)
            guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
                throw StoreError.storageFailed(message: "cannot create \(temporary.lastPathComponent) in \(folder(kind).path)")
            }
            let handle = try FileHandle(forWritingTo: temporary)
            defer { try? handle.close() }
            try handle.write(contentsOf: data)
            try handle.synchronize()
            if FileManager.default.fileExists(atPath: target.path) { try FileManager.default.removeItem(at: target) }
            try FileManager.default.moveItem(at: temporary, to: target)
        } catch let error as StoreError {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw .storageFailed(message: "cannot write \(name) into the attachment area: \(error.localizedDescription)")
        }
    }

    /// The bytes of `name` of `kind`, or nil when the file is not there.
    public func read(_ name: String, in kind: Kind) throws(StoreError) -> Data? {
        let file = try url(kind, name)
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        do {
            return try Data(contentsOf: file)
        } catch {
            throw .storageFailed(message: "cannot read \(name) from the attachment area: \(error.localizedDescription)")
        }
    }

    /// Removes `name` of `kind` if it is there.
    public func remove(_ name: String, in kind: Kind) {
        guard let file = try? url(kind, name) else { return }
        try? FileManager.default.removeItem(at: file)
    }

    /// Removes every file of the area that `keeping` does not name (by kind), and leftover
    /// temporary files; returns how many were removed.
    @discardableResult
    public func sweep(keeping: [Kind: Set<String>]) -> Int {
        var removed = 0
        for kind in Kind.allCases {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder(kind).path)) ?? []
            for name in names where !(keeping[kind]?.contains(name) ?? false) {
                if (try? FileManager.default.removeItem(at: folder(kind).appendingPathComponent(name))) != nil { removed += 1 }
            }
        }
        return removed
    }

    /// Removes the whole area (a store in memory that is done with it, or a deleted store).
    public func removeAll() { try? FileManager.default.removeItem(at: root) }

    private func createFolder(_ kind: Kind) throws {
        var attributes: [FileAttributeKey: Any] = [:]
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        attributes[.protectionKey] = FileProtectionType.completeUntilFirstUserAuthentication
        #endif
        try FileManager.default.createDirectory(at: folder(kind), withIntermediateDirectories: true, attributes: attributes)
    }
}
