import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate status`.
struct StatusCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show row counts per table, the schema version and the pending outbox count.")

    @OptionGroup var options: StoreOptionsGroup

    func perform() async throws {
        let path = options.storePath
        // Read only, pending migrations included (reported, not refused).
        let status: StoreStatus
        do {
            status = try await Replica<DefaultChatCustom>.storeStatus(at: path, options: options.storeOptions(migration: .manual))
        } catch {
            throw options.readingError(error)
        }
        if options.json {
            try Output.json(StatusOutput(store: path, status: status))
        } else {
            Self.printText(status, path: path)
        }
    }

    static func printText(_ status: StoreStatus, path: String) {
        var rows: [(String, String)] = [
            ("store", path),
            ("schema", "\(status.schemaVersion ?? "empty") (\(status.appliedMigrations.count) applied, "
                + "\(status.pendingMigrations.count) pending)"),
            ("outbox", "\(status.pendingOutbox) to send, \(status.deadLetters) dead, \(status.conflicts) in conflict"),
            ("size", "\(megabytes(status.storage.databaseBytes)) (\(megabytes(status.storage.usedBytes)) in use)"),
            ("budget", status.storage.retention.map(\.summary) ?? "none (everything is kept; sync --max-store-mb, --keep-days, --keep-messages)"),
            ("evicted", "\(status.storage.evictedMessages) message\(status.storage.evictedMessages == 1 ? "" : "s") from \(status.storage.evictedChannels) channel\(status.storage.evictedChannels == 1 ? "" : "s") (scroll-back and search say from when each is complete)"),
        ]
        // Row counts by table; the outbox table's is labelled apart from the summary above.
        for table in StoreStatus.countedTables {
            if let count = status.rowCounts[table] { rows.append((table == "outbox" ? "outbox rows" : table, String(count))) }
        }
        Output.table(rows)
    }

    static func megabytes(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1_048_576) }
}

/// The JSON `status --json` prints.
struct StatusOutput: Encodable {
    let store: String
    let status: StoreStatus

    enum CodingKeys: String, CodingKey {
        case store, rowCounts, schemaVersion, appliedMigrations, pendingMigrations, pendingOutbox, deadLetters, conflicts, storage
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(store, forKey: .store)
        try c.encode(status.rowCounts, forKey: .rowCounts)
        try c.encodeIfPresent(status.schemaVersion, forKey: .schemaVersion)
        try c.encode(status.appliedMigrations, forKey: .appliedMigrations)
        try c.encode(status.pendingMigrations, forKey: .pendingMigrations)
        try c.encode(status.pendingOutbox, forKey: .pendingOutbox)
        try c.encode(status.deadLetters, forKey: .deadLetters)
        try c.encode(status.conflicts, forKey: .conflicts)
        try c.encode(status.storage, forKey: .storage)
    }
}
