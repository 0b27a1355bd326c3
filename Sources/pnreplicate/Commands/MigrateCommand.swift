import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate migrate [--dry-run] [--backup]`.
struct MigrateCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply pending schema migrations (creating the store if needed).")

    @OptionGroup var options: StoreOptionsGroup

    @Flag(name: .long, help: "List pending migrations without applying them; changes nothing.")
    var dryRun = false

    @Flag(name: .long, help: "Copy the store with VACUUM INTO before migrating.")
    var backup = false

    func validate() throws {
        if dryRun && backup { throw ValidationError("--backup does nothing with --dry-run (a dry run writes nothing)") }
    }

    func perform() async throws {
        let path = options.storePath
        let report: MigrationReport
        if dryRun {
            report = try Replica<DefaultChatCustom>.migrationPlan(
                forStoreAt: path, options: options.storeOptions(migration: .manual))
        } else {
            report = try Replica<DefaultChatCustom>.migrateStore(
                at: path, options: options.storeOptions(migration: .manual), backup: backup)
        }
        if options.json {
            try Output.json(MigrateOutput(store: path, report: report))
        } else {
            Self.printText(report, path: path)
        }
    }

    static func printText(_ report: MigrationReport, path: String) {
        var rows: [(String, String)] = [("store", path)]
        rows.append(("applied", report.applied.isEmpty ? "none" : report.applied.map(\.name).joined(separator: ", ")))
        if report.dryRun {
            rows.append(("pending", report.pending.isEmpty ? "none" : report.pending.joined(separator: ", ")))
            rows.append(("result", report.pending.isEmpty ? "up to date" : "dry run: nothing was changed"))
        } else {
            rows.append(("migrated", report.performed.isEmpty ? "nothing to do" : report.performed.joined(separator: ", ")))
            if let backup = report.backupPath { rows.append(("backup", backup)) }
        }
        rows.append(("schema", report.schemaVersion ?? "empty"))
        Output.table(rows)
    }
}

/// The JSON `migrate --json` prints.
struct MigrateOutput: Encodable {
    let store: String
    let report: MigrationReport

    enum CodingKeys: String, CodingKey {
        case store, applied, pending, performed, dryRun, backupPath, schemaVersion
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(store, forKey: .store)
        try c.encode(report.applied, forKey: .applied)
        try c.encode(report.pending, forKey: .pending)
        try c.encode(report.performed, forKey: .performed)
        try c.encode(report.dryRun, forKey: .dryRun)
        try c.encodeIfPresent(report.backupPath, forKey: .backupPath)
        try c.encodeIfPresent(report.schemaVersion, forKey: .schemaVersion)
    }
}
