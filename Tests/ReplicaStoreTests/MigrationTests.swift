import Foundation
import GRDB
import Testing
import ReplicaModel
@testable import ReplicaStore

@Suite("Schema migrations")
struct MigrationTests {
    static func options(_ migrations: [Migration]? = nil, mode: StoreOptions.MigrationMode = .automatic) -> StoreOptions {
        var options = StoreOptions()
        options.migrations = migrations
        options.migration = mode
        return options
    }

    static func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    /// Moves everything from the WAL into the main file, so that the file's bytes are the store's state.
    static func settle(_ store: Store) throws {
        try store.writer.writeWithoutTransaction { _ = try $0.checkpoint(.truncate) }
    }

    static let extra = try! Migration(name: "9002_nickname", sql: "ALTER TABLE users ADD COLUMN nickname TEXT;\n")

    @Test("the bundled migrations are numbered files with SHA-256 checksums")
    func bundledFiles() throws {
        let migrations = try Migration.bundled()
        #expect(migrations.first?.name == "0001_initial")
        #expect(migrations.map(\.version) == migrations.map(\.version).sorted())
        #expect(migrations.allSatisfy { $0.checksum.count == 64 })
        #expect(try Migration(name: "0000_abc", sql: "abc").checksum == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(try Migration(name: "0000_empty", sql: "").checksum == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        // The checksums stores already hold (written by the earlier hand-written SHA-256, read
        // back from a store it migrated) must not change with the hash's implementation.
        let recorded = [
            "0001_initial": "91ea6adde9b5b1a4fb7d664f0332951a193567cd25feff48226d21de6a5c6f13",
            "0002_outbox": "83418069f0d4bc7092e899664269e0a81597f9a8621596910384c1a0d4138910",
            "0003_drop_unused_drafts": "798eda7f0754b307257c62bae915d9852928da3a8f206799d9180e9cac893e19",
            "0004_drafts": "6e7b291798d67ecb1a2cd4c15e8d648d8439f5af9acc2487ec0dfbbc209705bd",
            "0005_chat_semantics": "da9fb624ad768a8d97ea4c81c2568a4ca3b7924f2c324cf7f8c40901f02be1c2",
        ]
        for migration in migrations where recorded[migration.name] != nil {
            #expect(migration.checksum == recorded[migration.name], "\(migration.name)")
        }
        #expect(throws: StoreError.invalidMigrationName("initial")) { try Migration(name: "initial", sql: "") }
    }

    @Test("a fresh store gets every migration, recorded with name and checksum")
    func freshStore() throws {
        let path = Fixture.temporaryPath()
        let store = try Store.open(at: path)
        let recorded = try store.fetchNow(StoreQuery { db in
            try Row.fetchAll(db, sql: "SELECT name, checksum FROM pnreplicate_migrations ORDER BY name")
                .map { [$0["name"] as String, $0["checksum"] as String] }
        })
        let bundled = try Migration.bundled()
        #expect(recorded == bundled.map { [$0.name, $0.checksum] })
        #expect(try store.fetchNow(StoreQuery { try $0.tableExists("outbox") }))
    }

    @Test("re-opening an up-to-date store applies nothing")
    func reopenIsNoOp() throws {
        let path = Fixture.temporaryPath()
        _ = try Store.open(at: path)
        let store = try Store.open(at: path, options: Self.options(mode: .requireCurrent))
        let report = try store.maintenance.migrate()
        #expect(report.pending.isEmpty && report.performed.isEmpty)
        #expect(report.applied.map(\.name) == (try Migration.bundled()).map(\.name))
    }

    @Test("a store whose applied migration text changed is refused and left unchanged")
    func tamperedChecksumRefused() throws {
        let path = Fixture.temporaryPath()
        do {
            let store = try Store.open(at: path)
            try store.writer.write { try $0.execute(sql: "UPDATE pnreplicate_migrations SET checksum = 'abc'") }
            try Self.settle(store)
        }
        let before = try Self.bytes(path)
        #expect {
            try Store.open(at: path)
        } throws: { error in
            guard case StoreError.migrationChecksumMismatch(let name, let recorded, _) = error else { return false }
            return name == "0001_initial" && recorded == "abc"
        }
        #expect(try Self.bytes(path) == before)
    }

    @Test("a store written by a newer version is refused and left unchanged")
    func newerStoreRefused() throws {
        let path = Fixture.temporaryPath()
        do {
            let store = try Store.open(at: path)
            try store.writer.write {
                try $0.execute(
                    sql: "INSERT INTO pnreplicate_migrations VALUES ('0099_future', 'f00d', '2030-01-01T00:00:00Z')")
            }
            try Self.settle(store)
        }
        let before = try Self.bytes(path)
        #expect(throws: StoreError.unknownMigrations(["0099_future"])) { try Store.open(at: path) }
        #expect(throws: StoreError.unknownMigrations(["0099_future"])) { try Store.migrationPlan(forStoreAt: path) }
        #expect(try Self.bytes(path) == before)
    }

    @Test("a dry run lists pending migrations and changes nothing; then migrating applies them")
    func dryRunThenMigrate() throws {
        let path = Fixture.temporaryPath()
        let bundled = try Migration.bundled()
        try Self.settle(try Store.open(at: path, options: Self.options(bundled)))
        let before = try Self.bytes(path)

        let plan = try Store.migrationPlan(forStoreAt: path, options: Self.options(bundled + [Self.extra]))
        #expect(plan.pending == ["9002_nickname"] && plan.dryRun)
        let store = try Store.open(at: path, options: Self.options(bundled + [Self.extra], mode: .manual))
        let dry = try store.maintenance.migrate(dryRun: true)
        #expect(dry.pending == ["9002_nickname"] && dry.performed.isEmpty)
        #expect(try store.fetchNow(StoreQuery { try $0.columns(in: "users").map(\.name) }).contains("nickname") == false)
        #expect(try Self.bytes(path) == before)

        let report = try store.maintenance.migrate()
        #expect(report.performed == ["9002_nickname"] && report.schemaVersion == "9002_nickname")
        #expect(try store.fetchNow(StoreQuery { try $0.columns(in: "users").map(\.name) }).contains("nickname"))
    }

    @Test("requireCurrent refuses a store with pending migrations")
    func requireCurrent() throws {
        let path = Fixture.temporaryPath()
        let bundled = try Migration.bundled()
        _ = try Store.open(at: path, options: Self.options(bundled))
        #expect(throws: StoreError.migrationsPending(["9002_nickname"])) {
            try Store.open(at: path, options: Self.options(bundled + [Self.extra], mode: .requireCurrent))
        }
    }

    @Test("a dry run on a missing store reports every migration and creates no file")
    func dryRunOnMissingStore() throws {
        let path = Fixture.temporaryPath()
        let plan = try Store.migrationPlan(forStoreAt: path)
        #expect(plan.pending == (try Migration.bundled()).map(\.name))
        #expect(FileManager.default.fileExists(atPath: path) == false)
    }

    @Test("a failing migration is rolled back whole and not recorded")
    func failingMigrationRolledBack() throws {
        let path = Fixture.temporaryPath()
        let bundled = try Migration.bundled()
        let broken = try Migration(name: "9002_broken", sql: "CREATE TABLE half (a);\nINSERT INTO missing VALUES (1);\n")
        #expect {
            try Store.open(at: path, options: Self.options(bundled + [broken]))
        } throws: { error in
            if case StoreError.migrationFailed(let name, _) = error { return name == "9002_broken" }
            return false
        }
        let store = try Store.open(at: path, options: Self.options(bundled))
        #expect(try store.fetchNow(StoreQuery { try $0.tableExists("half") }) == false)
        #expect(try store.maintenance.migrate(dryRun: true).applied.map(\.name) == (try Migration.bundled()).map(\.name))
    }

    @Test("a store that skipped a migration is refused")
    func gapRefused() throws {
        let path = Fixture.temporaryPath()
        let bundled = try Migration.bundled()
        let third = try Migration(name: "9003_more", sql: "CREATE TABLE more (a);\n")
        _ = try Store.open(at: path, options: Self.options(bundled + [third]))
        #expect(throws: StoreError.migrationGap(missing: "9002_nickname")) {
            try Store.open(at: path, options: Self.options(bundled + [Self.extra, third]))
        }
    }

    @Test("migrating with a backup first copies the store as it was")
    func backupBeforeMigrating() throws {
        let path = Fixture.temporaryPath()
        let bundled = try Migration.bundled()
        do {
            let store = try Store.open(at: path, options: Self.options(bundled))
            try store.writer.write { try $0.execute(sql: "INSERT INTO users (id) VALUES ('kept')") }
        }
        let backupPath = path + ".bak"
        let store = try Store.open(at: path, options: Self.options(bundled + [Self.extra], mode: .manual))
        let report = try store.maintenance.migrate(backupTo: backupPath)
        #expect(report.backupPath == backupPath && report.performed == ["9002_nickname"])
        let backup = try Store.open(at: backupPath, options: Self.options(bundled + [Self.extra], mode: .manual))
        #expect(try backup.maintenance.migrate(dryRun: true).pending == ["9002_nickname"])
        #expect(try backup.fetchNow(backup.queries.user(id: "kept")) != nil)
        #expect(throws: StoreError.self) { try store.maintenance.backup(to: backupPath) }  // never overwrites
    }
}
