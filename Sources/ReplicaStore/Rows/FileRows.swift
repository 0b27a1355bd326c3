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

/// A file on PubNub to delete after the drain: this device's own upload that no message will
/// reference (an upload redone, a send discarded, the hard-deleted message it was uploaded for),
/// or a file named by a hard-deleted message this device did not upload it for, deleted only
/// when the server confirms that message was the first to name it (`namedBefore`; `FileOwnership`).
package struct FileOrphan: Sendable, Hashable {
    package var channelId: String
    package var fileId: String
    package var name: String
    /// Nil: this device's own upload, deleted without asking. Else the timetoken of the
    /// hard-deleted message that named it: deleted only when no older message of the channel names it.
    package var namedBefore: Timetoken?

    package init(channelId: String, fileId: String, name: String, namedBefore: Timetoken? = nil) {
        self.channelId = channelId
        self.fileId = fileId
        self.name = name
        self.namedBefore = namedBefore
    }
}

/// A downloaded (or sent) file kept in the cache, keyed by its channel, id, name and the crypto
/// configuration that produced its bytes (`docs/files.md`, "The cache").
package struct CachedFile: Sendable, Hashable {
    package var fileId: String
    package var name: String
    package var channelId: String
    /// Which configuration produced the bytes: a crypto module's `decryptionFingerprint`,
    /// ``noCrypto`` for a download without one, ``ownPlaintext`` for this device's own sent bytes.
    package var crypto: String
    package var size: Int
    package var localName: String
    /// When it was last read (eviction takes the least recently used first).
    package var lastUsed: Date?

    /// The `crypto` of bytes downloaded by a client without a cipher key (served only to such a client).
    package static let noCrypto = "none"
    /// The `crypto` of the plaintext this device sent: the true bytes, served to any configuration.
    package static let ownPlaintext = "plain"

    package init(fileId: String, name: String, channelId: String, crypto: String, size: Int, localName: String) {
        self.fileId = fileId
        self.name = name
        self.channelId = channelId
        self.crypto = crypto
        self.size = size
        self.localName = localName
    }
}

/// The first stored message of a channel naming a file id (the oldest by timetoken; pending
/// messages last): the message the file was uploaded for, as far as the store knows. The one
/// query for it, read by `files get|delete` (the file's name) and by `FileOwnership` (whether a
/// hard-deleted message was the first to name its file).
package struct FirstNaming: Sendable, Hashable {
    /// The message's id.
    package var messageId: String
    /// Its timetoken; nil while it is pending.
    package var timetoken: Timetoken?
    /// The file as that message names it.
    package var file: ChatFile

    static func fetch(_ db: Database, fileId: String, channel: String) throws -> FirstNaming? {
        guard let row = try Row.fetchOne(
            db, sql: """
                SELECT msg.id, msg.timetoken, f.value FROM messages msg, json_each(msg.files) f
                WHERE msg.channel_id = ? AND msg.files IS NOT NULL AND json_extract(f.value, '$.id') = ?
                ORDER BY msg.timetoken IS NULL, msg.timetoken LIMIT 1
                """, arguments: [channel, fileId])
        else { return nil }
        let file = try JSONDecoder().decode(ChatFile.self, from: Data((row[2] as String).utf8))
        return FirstNaming(messageId: row[0], timetoken: StoreCoding.timetoken(row[1]), file: file)
    }
}

/// The file rows of one transaction: pending uploads (`file_uploads`), orphans to delete from PubNub (`file_orphans`) and the download cache (`cached_files`).
///
/// Reached through the transaction (`tx.files`); lives only as long as it.
package struct FileTable<Custom: ChatCustomData>: TransactionTable {
    /// The transaction these rows are read and written in.
    package let tx: StoreTransaction<Custom>
}

extension FileTable {
    // MARK: Uploads

    /// The first stored message of `channel` naming the file `fileId` (``FirstNaming``).
    package func firstMessage(naming fileId: String, channel: String) throws -> FirstNaming? {
        try FirstNaming.fetch(db, fileId: fileId, channel: channel)
    }

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

    /// A send completed: its uploaded files are recorded as this device's uploads for the message
    /// `messageId` published at `timetoken` (whose hard delete may delete them: `FileOwnership`)
    /// and become cache entries of their plaintext (the sender never downloads what it sent); its
    /// rows leave.
    package func finishFileUploads(opId: String, messageId: String, timetoken: Timetoken) throws {
        let now = timetoken.date
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO uploaded_files (channel_id, file_id, message_id, message_timetoken)
                SELECT channel_id, file_id, ?, ? FROM file_uploads WHERE op_id = ? AND uploaded = 1 AND file_id IS NOT NULL
                """, arguments: [messageId, try StoreCoding.column(timetoken, field: "timetoken"), opId])
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO file_cache (channel_id, file_id, name, crypto, size, local_name, last_used)
                SELECT channel_id, file_id, coalesce(upload_name, name), ?, size, local_name, ?
                FROM file_uploads WHERE op_id = ? AND uploaded = 1 AND file_id IS NOT NULL
                """, arguments: [CachedFile.ownPlaintext, now.timeIntervalSince1970, opId])
        try db.execute(sql: "DELETE FROM file_uploads WHERE op_id = ?", arguments: [opId])
    }

    /// The message (its id and timetoken) this device uploaded the file `fileId` of `channelId`
    /// for, if it did.
    package func upload(ofFile fileId: String, channel channelId: String) throws -> (messageId: String, timetoken: Timetoken?)? {
        try Row.fetchOne(
            db, sql: "SELECT message_id, message_timetoken FROM uploaded_files WHERE channel_id = ? AND file_id = ?",
            arguments: [channelId, fileId]
        ).map { ($0[0], StoreCoding.timetoken($0[1])) }
    }

    /// The record of this device's upload of `fileId` leaves (the file was deleted from PubNub).
    package func forgetUpload(ofFile fileId: String, channel channelId: String) throws {
        try db.execute(sql: "DELETE FROM uploaded_files WHERE channel_id = ? AND file_id = ?", arguments: [channelId, fileId])
    }

    /// The records of this device's uploads for `messageId` leave (the message was deleted and
    /// its files kept: no later message can be theirs).
    package func forgetUploads(ofMessage messageId: String) throws {
        try db.execute(sql: "DELETE FROM uploaded_files WHERE message_id = ?", arguments: [messageId])
    }

    /// A send withdrawn unsent: what it may have uploaded becomes orphans to delete (this device's
    /// own: no confirmation, ``addFileOrphan(_:)``'s merge rule), its rows leave.
    package func abandonFileUploads(opId: String) throws {
        try db.execute(
            sql: """
                INSERT INTO file_orphans (channel_id, file_id, name)
                SELECT channel_id, file_id, coalesce(upload_name, name) FROM file_uploads
                WHERE op_id = ? AND file_id IS NOT NULL
                ON CONFLICT (channel_id, file_id) DO UPDATE SET named_before = NULL
                """, arguments: [opId])
        try db.execute(sql: "DELETE FROM file_uploads WHERE op_id = ?", arguments: [opId])
    }

    // MARK: Orphans

    /// Records a file to delete from PubNub. Recorded twice, it keeps the weaker condition: this
    /// device's own upload (no `namedBefore`) over one to confirm, else the oldest `namedBefore`.
    package func addFileOrphan(_ orphan: FileOrphan) throws {
        try db.execute(
            sql: """
                INSERT INTO file_orphans (channel_id, file_id, name, named_before) VALUES (?, ?, ?, ?)
                ON CONFLICT (channel_id, file_id) DO UPDATE SET named_before =
                    CASE WHEN file_orphans.named_before IS NULL OR excluded.named_before IS NULL THEN NULL
                         ELSE min(file_orphans.named_before, excluded.named_before) END
                """,
            arguments: [orphan.channelId, orphan.fileId, orphan.name, try StoreCoding.column(orphan.namedBefore, field: "namedBefore")])
    }

    /// The files to delete from PubNub.
    package func fileOrphans(limit: Int = 100) throws -> [FileOrphan] {
        try Row.fetchAll(db, sql: "SELECT channel_id, file_id, name, named_before FROM file_orphans LIMIT ?", arguments: [limit])
            .map { FileOrphan(channelId: $0[0], fileId: $0[1], name: $0[2], namedBefore: StoreCoding.timetoken($0[3])) }
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

    /// The cache entry of a file of `channel` whose bytes a reader with crypto configuration
    /// `crypto` may be served: its own configuration's, or this device's sent plaintext (a read:
    /// ``touchCachedFile(_:now:)`` records the use).
    package func cachedFile(channel: String, id: String, name: String, crypto: String) throws -> CachedFile? {
        guard let row = try Row.fetchOne(
            db, sql: """
                SELECT file_id, name, channel_id, crypto, size, local_name, last_used FROM file_cache
                WHERE channel_id = ? AND file_id = ? AND name = ? AND crypto IN (?, ?)
                ORDER BY crypto = ? DESC LIMIT 1
                """,
            arguments: [channel, id, name, crypto, CachedFile.ownPlaintext, CachedFile.ownPlaintext])
        else { return nil }
        var file = CachedFile(fileId: row[0], name: row[1], channelId: row[2], crypto: row[3], size: row[4], localName: row[5])
        file.lastUsed = (row[6] as Double?).map { Date(timeIntervalSince1970: $0) }
        return file
    }

    /// Records that a cached file was read now.
    package func touchCachedFile(_ file: CachedFile, now: Date) throws {
        try db.execute(
            sql: "UPDATE file_cache SET last_used = ? WHERE channel_id = ? AND file_id = ? AND name = ? AND crypto = ?",
            arguments: [now.timeIntervalSince1970, file.channelId, file.fileId, file.name, file.crypto])
    }

    /// Records a file written into the cache.
    package func addCachedFile(_ file: CachedFile, now: Date) throws {
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO file_cache (channel_id, file_id, name, crypto, size, local_name, last_used)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [file.channelId, file.fileId, file.name, file.crypto, file.size, file.localName, now.timeIntervalSince1970])
    }

    /// Removes cache entries, least recently used first, until the cache holds at most
    /// `maximumBytes`; returns the local names whose bytes can be removed. Entries that pending
    /// sends still upload from are never evicted (they are not cache entries yet).
    package func evictCachedFiles(toAtMost maximumBytes: Int) throws -> [String] {
        var total = try Int.fetchOne(db, sql: "SELECT coalesce(sum(size), 0) FROM file_cache") ?? 0
        var removed: [String] = []
        guard total > maximumBytes else { return removed }
        for row in try Row.fetchAll(
            db, sql: "SELECT channel_id, file_id, name, crypto, size, local_name FROM file_cache ORDER BY last_used, file_id")
        {
            guard total > maximumBytes else { break }
            try db.execute(
                sql: "DELETE FROM file_cache WHERE channel_id = ? AND file_id = ? AND name = ? AND crypto = ?",
                arguments: [row[0] as String, row[1] as String, row[2] as String, row[3] as String])
            total -= row[4] as Int
            removed.append(row[5])
        }
        return removed
    }

    /// Every file name the cache folder must keep.
    package func cachedFileNames() throws -> Set<String> {
        Set(try String.fetchAll(db, sql: "SELECT local_name FROM file_cache"))
    }

    /// Removes every cache entry of the file `id` of `channel` (the file was deleted from PubNub);
    /// returns their local names.
    package func removeCachedFile(channel: String, id: String) throws -> [String] {
        let names = try String.fetchAll(
            db, sql: "SELECT local_name FROM file_cache WHERE channel_id = ? AND file_id = ?", arguments: [channel, id])
        try db.execute(sql: "DELETE FROM file_cache WHERE channel_id = ? AND file_id = ?", arguments: [channel, id])
        return names
    }
}
