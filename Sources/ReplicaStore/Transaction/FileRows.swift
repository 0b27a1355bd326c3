import Foundation
import GRDB
import ReplicaModel

/// One file of a pending send (a `file_uploads` row): what was copied in at enqueue and how far
/// its upload got (`docs/files.md`, "The send's steps").
package struct FileUploadRow: Sendable, Hashable {
    package var opId: String
    package var position: Int
    package var channelId: String
    package var name: String
    package var mimeType: String
    /// The plaintext size.
    package var size: Int
    /// The bytes' name in the attachment area's `outgoing` folder.
    package var localName: String
    /// The server's id and name of the current upload, once `generate-upload-url` answered.
    package var fileId: String?
    package var uploadName: String?
    /// When the current upload form expires.
    package var expiresAt: Date?
    /// Storage accepted the bytes.
    package var uploaded = false
    /// The `store=0` file event of the Chat SDK's shape was attempted (never twice).
    package var eventSent = false

    package init(opId: String, position: Int, channelId: String, name: String, mimeType: String, size: Int, localName: String) {
        self.opId = opId
        self.position = position
        self.channelId = channelId
        self.name = name
        self.mimeType = mimeType
        self.size = size
        self.localName = localName
    }

    /// The file as the message shows it: with its server id once uploaded.
    package func chatFile(url: String?) -> ChatFile {
        ChatFile(id: uploaded ? fileId : nil, name: uploaded ? (uploadName ?? name) : name, size: size, mimeType: mimeType,
                 url: uploaded ? url : nil)
    }
}

/// A file on PubNub that no message references (an upload redone, a send discarded): deleted by the next drain.
package struct FileOrphan: Sendable, Hashable {
    package var channelId: String
    package var fileId: String
    package var name: String

    package init(channelId: String, fileId: String, name: String) {
        self.channelId = channelId
        self.fileId = fileId
        self.name = name
    }
}

/// A downloaded (or sent) file kept in the cache.
package struct CachedFile: Sendable, Hashable {
    package var fileId: String
    package var name: String
    package var channelId: String
    package var size: Int
    package var localName: String
    /// When it was last read (eviction takes the least recently used first).
    package var lastUsed: Date?

    package init(fileId: String, name: String, channelId: String, size: Int, localName: String) {
        self.fileId = fileId
        self.name = name
        self.channelId = channelId
        self.size = size
        self.localName = localName
    }
}

extension StoreTransaction {
    // MARK: Uploads

    /// Inserts the file rows of a send being queued.
    package func insertFileUploads(_ rows: [FileUploadRow]) throws {
        for row in rows {
            try db.execute(
                sql: """
                    INSERT INTO file_uploads (op_id, position, channel_id, name, mime_type, size, local_name)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [row.opId, row.position, row.channelId, row.name, row.mimeType, row.size, row.localName])
        }
    }

    /// The file rows of a send, in order.
    package func fileUploads(opId: String) throws -> [FileUploadRow] {
        try Row.fetchAll(
            db, sql: """
                SELECT op_id, position, channel_id, name, mime_type, size, local_name, file_id, upload_name, expires_at,
                       uploaded, event_sent
                FROM file_uploads WHERE op_id = ? ORDER BY position
                """, arguments: [opId]
        ).map { r in
            var row = FileUploadRow(
                opId: r[0], position: r[1], channelId: r[2], name: r[3], mimeType: r[4], size: r[5], localName: r[6])
            row.fileId = r[7]
            row.uploadName = r[8]
            row.expiresAt = (r[9] as Double?).map { Date(timeIntervalSince1970: $0) }
            row.uploaded = r[10]
            row.eventSent = r[11]
            return row
        }
    }

    /// Records an upload's progress (its server id, expiry, whether storage took it, the event).
    package func updateFileUpload(_ row: FileUploadRow) throws {
        try db.execute(
            sql: """
                UPDATE file_uploads SET file_id = ?, upload_name = ?, expires_at = ?, uploaded = ?, event_sent = ?
                WHERE op_id = ? AND position = ?
                """,
            arguments: [row.fileId, row.uploadName, row.expiresAt?.timeIntervalSince1970, row.uploaded, row.eventSent,
                        row.opId, row.position])
    }

    /// Every file name the outgoing folder must keep (the rows of pending sends).
    package func outgoingFileNames() throws -> Set<String> {
        Set(try String.fetchAll(db, sql: "SELECT local_name FROM file_uploads"))
    }

    /// A send completed: its uploaded files become cache entries (the sender never downloads what
    /// it sent), its rows leave.
    package func finishFileUploads(opId: String, now: Date) throws {
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO file_cache (file_id, name, channel_id, size, local_name, last_used)
                SELECT file_id, coalesce(upload_name, name), channel_id, size, local_name, ?
                FROM file_uploads WHERE op_id = ? AND uploaded = 1 AND file_id IS NOT NULL
                """, arguments: [now.timeIntervalSince1970, opId])
        try db.execute(sql: "DELETE FROM file_uploads WHERE op_id = ?", arguments: [opId])
    }

    /// A send withdrawn unsent: what it may have uploaded becomes orphans to delete, its rows leave.
    package func abandonFileUploads(opId: String) throws {
        try db.execute(
            sql: """
                INSERT OR IGNORE INTO file_orphans (channel_id, file_id, name)
                SELECT channel_id, file_id, coalesce(upload_name, name) FROM file_uploads
                WHERE op_id = ? AND file_id IS NOT NULL
                """, arguments: [opId])
        try db.execute(sql: "DELETE FROM file_uploads WHERE op_id = ?", arguments: [opId])
    }

    // MARK: Orphans

    /// Records a file to delete from PubNub.
    package func addFileOrphan(_ orphan: FileOrphan) throws {
        try db.execute(
            sql: "INSERT OR IGNORE INTO file_orphans (channel_id, file_id, name) VALUES (?, ?, ?)",
            arguments: [orphan.channelId, orphan.fileId, orphan.name])
    }

    /// The files to delete from PubNub.
    package func fileOrphans(limit: Int = 100) throws -> [FileOrphan] {
        try Row.fetchAll(db, sql: "SELECT channel_id, file_id, name FROM file_orphans LIMIT ?", arguments: [limit])
            .map { FileOrphan(channelId: $0[0], fileId: $0[1], name: $0[2]) }
    }

    /// An orphan is gone from PubNub.
    package func removeFileOrphan(_ orphan: FileOrphan) throws {
        try db.execute(sql: "DELETE FROM file_orphans WHERE channel_id = ? AND file_id = ?", arguments: [orphan.channelId, orphan.fileId])
    }

    /// Sets the files a message shows (a pending send's, once uploaded).
    package func setMessageFiles(messageId: String, _ files: [ChatFile]) throws {
        try db.execute(
            sql: "UPDATE messages SET files = ? WHERE id = ?",
            arguments: [try coding.json(files.isEmpty ? nil : files), messageId])
    }

    // MARK: Cache

    /// The cache entry of a file (a read: ``touchCachedFile(id:name:now:)`` records the use).
    package func cachedFile(id: String, name: String) throws -> CachedFile? {
        guard let row = try Row.fetchOne(
            db, sql: "SELECT file_id, name, channel_id, size, local_name, last_used FROM file_cache WHERE file_id = ? AND name = ?",
            arguments: [id, name])
        else { return nil }
        var file = CachedFile(fileId: row[0], name: row[1], channelId: row[2], size: row[3], localName: row[4])
        file.lastUsed = (row[5] as Double?).map { Date(timeIntervalSince1970: $0) }
        return file
    }

    /// Records that a cached file was read now.
    package func touchCachedFile(id: String, name: String, now: Date) throws {
        try db.execute(sql: "UPDATE file_cache SET last_used = ? WHERE file_id = ? AND name = ?", arguments: [now.timeIntervalSince1970, id, name])
    }

    /// Records a file written into the cache.
    package func addCachedFile(_ file: CachedFile, now: Date) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO file_cache (file_id, name, channel_id, size, local_name, last_used) VALUES (?, ?, ?, ?, ?, ?)",
            arguments: [file.fileId, file.name, file.channelId, file.size, file.localName, now.timeIntervalSince1970])
    }

    /// Removes cache entries, least recently used first, until the cache holds at most
    /// `maximumBytes`; returns the local names whose bytes can be removed. Entries that pending
    /// sends still upload from are never evicted (they are not cache entries yet).
    package func evictCachedFiles(toAtMost maximumBytes: Int) throws -> [String] {
        var total = try Int.fetchOne(db, sql: "SELECT coalesce(sum(size), 0) FROM file_cache") ?? 0
        var removed: [String] = []
        guard total > maximumBytes else { return removed }
        for row in try Row.fetchAll(db, sql: "SELECT file_id, name, size, local_name FROM file_cache ORDER BY last_used, file_id") {
            guard total > maximumBytes else { break }
            try db.execute(sql: "DELETE FROM file_cache WHERE file_id = ? AND name = ?", arguments: [row[0] as String, row[1] as String])
            total -= row[2] as Int
            removed.append(row[3])
        }
        return removed
    }

    /// Every file name the cache folder must keep.
    package func cachedFileNames() throws -> Set<String> {
        Set(try String.fetchAll(db, sql: "SELECT local_name FROM file_cache"))
    }

    /// Removes a file's cache entry (its message was deleted); returns its local name.
    package func removeCachedFile(id: String) throws -> [String] {
        let names = try String.fetchAll(db, sql: "SELECT local_name FROM file_cache WHERE file_id = ?", arguments: [id])
        try db.execute(sql: "DELETE FROM file_cache WHERE file_id = ?", arguments: [id])
        return names
    }
}
