import ArgumentParser
import Foundation
import Logging
import PubNubReplica
import ReplicaModel

/// `pnreplicate`: the command-line face of the library.
@main
struct PNReplicate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pnreplicate",
        abstract: "Offline-first replication of PubNub chat data into a local SQLite store.",
        subcommands: [
            SyncCommand.self, ListenCommand.self, PresenceCommand.self, TypingCommand.self, SendCommand.self, DraftCommand.self, ReactCommand.self, EditCommand.self, DeleteCommand.self, RestoreCommand.self,
            ReadCommand.self, UnreadCommand.self, JoinCommand.self, PinCommand.self, UnpinCommand.self, ReportCommand.self, MuteCommand.self, UnmuteCommand.self, MutesCommand.self,
            RestrictionsCommand.self, ConversationCommand.self, InviteCommand.self, InvitesCommand.self, MentionsCommand.self,
            ThreadCommand.self, ForwardCommand.self, PushCommand.self, DecryptPendingCommand.self, FilesCommand.self, MemberCommand.self, ObjectCommand<UserObject>.self, ObjectCommand<ChannelObject>.self, OutboxCommand.self,
            ConflictsCommand.self, HistoryCommand.self, ShowCommand.self, SearchCommand.self, CheckpointsCommand.self, DemoCommand.self, MigrateCommand.self, StatusCommand.self, DoctorCommand.self, WipeCommand.self,
            TokenCommand.self, SimulatorCommand.self, AppRecordCommand<EntityRecords>.self, AppRecordCommand<RelationshipRecords>.self,
        ],
        defaultSubcommand: SyncCommand.self
    )

    /// The entry point: makes the standard streams safe to write, makes every logger quiet
    /// unless `--verbose` is given, then parses and runs.
    static func main() async {
        Output.prepareStandardStreams()
        // One level for every logger the libraries make (the store's, the outbox's, a simulated
        // device's): warnings and errors on stderr; `--verbose` shows debug lines too.
        let verbose = CommandLine.arguments.dropFirst().contains("--verbose")
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = verbose ? .debug : .warning
            return handler
        }
        await main(nil)
    }
}

/// Options every command takes.
struct StoreOptionsGroup: ParsableArguments {
    @Option(name: .long, help: "Path of the store (default: $PNREPLICATE_STORE or ./pnreplicate.sqlite).")
    var store: String?

    @Flag(name: .long, help: "Print machine-readable JSON on stdout.")
    var json = false

    @Flag(name: .long, help: "Log progress to stderr.")
    var verbose = false

    @Option(name: .long, help: "Storage budget: the store's pages at most this many MB; each sync evicts the coldest channels' oldest history past it (docs/store.md).")
    var maxStoreMb: Double?

    @Option(name: .long, help: "Storage budget: keep the messages of the last N days of each channel.")
    var keepDays: Int?

    @Option(name: .long, help: "Storage budget: keep the newest N messages of each channel.")
    var keepMessages: Int?

    /// Refuses contradictory or out-of-range budget flags before anything is opened.
    func validate() throws { _ = try retention() }

    /// The retention policy the flags ask for, or nil.
    func retention() throws -> RetentionPolicy? {
        if keepDays != nil, keepMessages != nil { throw ValidationError("--keep-days and --keep-messages: give one") }
        if let days = keepDays, days < 1 { throw ValidationError("--keep-days must be 1 or more, got \(days)") }
        if let count = keepMessages, count < 1 { throw ValidationError("--keep-messages must be 1 or more, got \(count)") }
        if let mb = maxStoreMb, !(mb > 0) { throw ValidationError("--max-store-mb must be more than 0") }
        let rule: RetentionPolicy.ChannelRule? = keepDays.map { .days($0) } ?? keepMessages.map { .messages($0) }
        guard rule != nil || maxStoreMb != nil else { return nil }
        return RetentionPolicy(perChannel: rule, maxBytes: maxStoreMb.map { Int($0 * 1_048_576) })
    }

    /// The store path the user chose.
    var storePath: String {
        store ?? ProcessInfo.processInfo.environment["PNREPLICATE_STORE"] ?? "./pnreplicate.sqlite"
    }

    /// Refuses a store path where no file is: for commands that change what a store already
    /// holds, so that a mistyped path is an error, not a new empty store.
    func requireExistingStore() throws {
        // An empty file is no store yet (`StoreError.isUncreatedStore`): refused the same way.
        if FileManager.default.fileExists(atPath: storePath), try StoreError.isUncreatedStore(at: storePath) {
            throw ValidationError("no store at \(storePath) yet: the file is empty (`pnreplicate sync` or `migrate` creates one in it)")
        }
        guard FileManager.default.fileExists(atPath: storePath) else {
            throw ValidationError(
                "no store at \(storePath) (check --store or $PNREPLICATE_STORE; `pnreplicate sync` or `migrate` creates one)")
        }
    }

    /// Store options with logging at the chosen level.
    func storeOptions(migration: StoreOptions.MigrationMode) -> StoreOptions {
        var options = StoreOptions()
        options.migration = migration
        var logger = Logger(label: "pnreplicate")
        logger.logLevel = verbose ? .debug : .warning
        options.logger = logger
        options.retention = try? retention()
        return options
    }

    /// Opens an existing store read-only, for commands that only show what it holds: nothing is
    /// created, migrated, locked, written or sent. A store with pending migrations is refused; a
    /// path that is not a regular file, an empty file or a file that is not a store is refused
    /// with a `StoreError`.
    func openForReading() throws -> Replica<DefaultChatCustom> {
        do {
            return try Replica<DefaultChatCustom>(readingStoreAt: storePath, options: storeOptions(migration: .requireCurrent))
        } catch {
            throw readingError(error)
        }
    }

    /// An error of opening the store to read it, as the command reports it: a `StoreError` as it
    /// is; SQLite's own refusal (`file is not a database`, ...) as a `StoreError` naming the file.
    func readingError(_ error: any Error) -> any Error {
        error is StoreError ? error : StoreError.database(message: "cannot read \(storePath): \(error)")
    }
}

/// The options of a command that opens a replica to talk to PubNub (``Session``): the store's
/// (``StoreOptionsGroup``) and the connection's (``ConnectionOptions``), in one group, so that a
/// command declares one line and passes one value. The store's flags read as its own
/// (`options.json`, `options.storePath`).
@dynamicMemberLookup
struct SessionOptions: ParsableArguments {
    @OptionGroup var storage: StoreOptionsGroup
    @OptionGroup var connection: ConnectionOptions

    /// A flag of the store's group (`json`, `verbose`, `storePath`).
    subscript<Value>(dynamicMember flag: KeyPath<StoreOptionsGroup, Value>) -> Value { storage[keyPath: flag] }

    /// Opens the store read-only: ``StoreOptionsGroup/openForReading()``.
    func openForReading() throws -> Replica<DefaultChatCustom> { try storage.openForReading() }
}

/// A command whose failures are reported as every command reports them (``runReportingErrors(_:)``:
/// one line on stderr, exit status 1): it implements ``perform()``, and its `run()` is that.
///
/// ```swift
/// struct PingCommand: ReportingCommand {
///     func perform() async throws { print("pong") }
/// }
/// ```
protocol ReportingCommand: AsyncParsableCommand {
    /// The command's work; a thrown error is reported and ends the process with status 1.
    func perform() async throws
}

extension ReportingCommand {
    /// Runs ``perform()``, reporting its failure.
    func run() async throws { try await runReportingErrors { try await perform() } }
}

/// Runs a command body; any error becomes one line on stderr and exit status 1.
/// Either way, the stores the command opened are closed first (``Session/closeAll()``).
func runReportingErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as ExitCode {
        await Session.closeAll()
        throw error
    } catch {
        await Session.closeAll()
        Output.error(error)
        throw ExitCode(1)
    }
    await Session.closeAll()
}
