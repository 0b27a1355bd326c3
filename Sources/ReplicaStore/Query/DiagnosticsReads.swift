import Foundation
import GRDB

/// What a diagnostics report reads of the store besides its status and queries: the SQLite
/// version, every channel id the store knows (to hash them in a report), and the WAL's size.
package enum DiagnosticsReads {
    /// The SQLite library's version and the channel ids of the channels and memberships stored.
    package static func facts() -> StoreQuery<(sqliteVersion: String?, channelIds: [String])> {
        StoreQuery { db in
            let version = try String.fetchOne(db, sql: "SELECT sqlite_version()")
            let channels = try String.fetchAll(db, sql: "SELECT id FROM channels UNION SELECT channel_id FROM members")
            return (version, channels)
        }
    }

    /// Bytes of the store's write-ahead log now (0 when there is none, or for an in-memory store).
    package static func walBytes(ofStoreAt path: String?) -> Int {
        guard let path else { return 0 }
        return ((try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int) ?? 0
    }
}
