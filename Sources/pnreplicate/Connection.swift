import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// Keys, user id and origin, from flags or the environment.
struct ConnectionOptions: ParsableArguments {
    @Option(name: .long, help: "Publish key (default: $PUBNUB_PUBLISH_KEY, else demo).")
    var publishKey: String?

    @Option(name: .long, help: "Subscribe key (default: $PUBNUB_SUBSCRIBE_KEY; required unless the origin is this machine's, where demo is the default).")
    var subscribeKey: String?

    @Option(name: .long, help: "The user id acting (default: $PUBNUB_USER_ID, else pnreplicate-cli).")
    var userId: String?

    @Option(name: .long, help: "host[:port] over https, or a full http://host:port URL (default: $PUBNUB_ORIGIN, else PubNub's ps.pndsn.com).")
    var origin: String?

    @Option(name: .long, help: "Encrypt and decrypt message payloads with this cipher key, as PubNub's SDKs do (default: $PUBNUB_CIPHER_KEY; never logged or stored).")
    var cipherKey: String?

    @Flag(name: .long, help: "Encrypt with the legacy cryptor instead of the AES-CBC header cryptor (both always decrypt).")
    var legacyCryptor = false

    @Flag(name: .long, help: "With the legacy cryptor: the static IV instead of a random one (the mode is not on the wire).")
    var staticIv = false

    @Option(
        name: [.customLong("auth-token"), .customLong("auth-key")],
        help: ArgumentHelp(
            "The Access Manager token (or legacy auth key) sent with every request (default: $PUBNUB_AUTH_TOKEN, else $PUBNUB_AUTH_KEY; never logged or stored).",
            valueName: "token"))
    var authToken: String?

    @Option(help: ArgumentHelp(
        "Read the token from this file instead (surrounding whitespace ignored); `listen` reads it again on SIGHUP.", valueName: "path"))
    var authTokenFile: String?

    @Option(help: ArgumentHelp(
        "Where users, channels and memberships live: app-context (the Chat SDK's) or datasync, which needs a token (default: $PNREPLICATE_OBJECTS, else app-context). A store keeps the backend it was first filled from.",
        valueName: "backend"))
    var objects: String?

    @Option(help: ArgumentHelp(
        "With --objects datasync: the class users are created in, NAME[:VERSION[:subkey|global]] (a User subclass with the app's time to live; default: $PNREPLICATE_DATASYNC_USER_CLASS, else PubNub's User, 30 days).",
        valueName: "class"))
    var datasyncUserClass: String?

    @Option(help: ArgumentHelp(
        "With --objects datasync: the class channels are created in, as --datasync-user-class (default: $PNREPLICATE_DATASYNC_CHANNEL_CLASS, else PubNub's Channel).",
        valueName: "class"))
    var datasyncChannelClass: String?

    @Option(help: ArgumentHelp(
        "With --objects datasync: the Membership subclass memberships are created in, NAME[:VERSION] (default: $PNREPLICATE_DATASYNC_MEMBERSHIP_CLASS, else PubNub's Membership; whether PubNub accepts one is unconfirmed).",
        valueName: "class"))
    var datasyncMembershipClass: String?

    @Option(help: ArgumentHelp(
        "The app's own DataSync classes to replicate, from a JSON file (default: $PNREPLICATE_APP_CLASSES): [{\"entity\":\"Poll\",\"properties\":{\"closed\":\"boolean\"},\"wildcard\":\"poll\"}, {\"relationship\":\"Vote\",\"from\":\"Poll\",\"to\":\"User\"}] (docs/app-data.md).",
        valueName: "path"))
    var appClasses: String?

    /// Refuses, before anything is opened or sent, what would quietly go where the user did not
    /// mean: PubNub's real service (any origin but this machine's) without a subscribe key from a
    /// flag or the environment, where the public `demo` keyset would publish for anyone to read;
    /// and a loopback origin without a scheme, which would be reached over https (the simulator
    /// speaks http). ArgumentParser calls it for every command with these options; exit status 64.
    func validate() throws {
        let origin = resolvedOrigin
        let host = Self.host(of: origin)
        if !origin.contains("://"), Self.isLoopback(host) {
            throw ValidationError(
                "--origin \(origin) has no scheme, so it would be reached over https; the simulator speaks http: use --origin http://\(origin)")
        }
        if authToken != nil, authTokenFile != nil {
            throw ValidationError("give the token with --auth-token or --auth-token-file, not both")
        }
        guard ["app-context", "datasync"].contains(resolvedObjects) else {
            throw ValidationError("--objects (or PNREPLICATE_OBJECTS) is \(resolvedObjects); give app-context or datasync")
        }
        _ = try dataSyncOptions()
        if let file = appClasses ?? environmentValue("PNREPLICATE_APP_CLASSES") { _ = try AppClassesFile.read(file) }
        if authToken?.isEmpty == true {
            throw ValidationError("--auth-token is empty (an unset variable?); give the token, or leave the option out")
        }
        if resolvedSubscribeKey == nil, !Self.isLoopback(host) {
            throw ValidationError(
                "no subscribe key for \(host): give --subscribe-key or PUBNUB_SUBSCRIBE_KEY (and --publish-key or PUBNUB_PUBLISH_KEY to send). "
                    + "Only an origin on this machine (the simulator: --origin http://127.0.0.1:PORT) uses the demo keys by default.")
        }
    }

    /// `--origin`, else `PUBNUB_ORIGIN`, else PubNub's.
    private var resolvedOrigin: String { origin ?? environmentValue("PUBNUB_ORIGIN") ?? "ps.pndsn.com" }

    /// `--objects`, else `PNREPLICATE_OBJECTS`, else `app-context`.
    private var resolvedObjects: String { objects ?? environmentValue("PNREPLICATE_OBJECTS") ?? "app-context" }

    /// The DataSync options of `--objects datasync` and the `--datasync-*-class` flags (each
    /// else its variable); nil on App Context, where a class flag is refused.
    func dataSyncOptions() throws -> DataSyncOptions? {
        let user = datasyncUserClass ?? environmentValue("PNREPLICATE_DATASYNC_USER_CLASS")
        let channel = datasyncChannelClass ?? environmentValue("PNREPLICATE_DATASYNC_CHANNEL_CLASS")
        let membership = datasyncMembershipClass ?? environmentValue("PNREPLICATE_DATASYNC_MEMBERSHIP_CLASS")
        guard resolvedObjects == "datasync" else {
            if datasyncUserClass != nil || datasyncChannelClass != nil || datasyncMembershipClass != nil {
                throw ValidationError("the --datasync-*-class options need --objects datasync (or PNREPLICATE_OBJECTS=datasync)")
            }
            return nil
        }
        var options = DataSyncOptions()
        if let user { options.userClass = try Self.objectClass(user, flag: "--datasync-user-class", builtIn: "User") }
        if let channel { options.channelClass = try Self.objectClass(channel, flag: "--datasync-channel-class", builtIn: "Channel") }
        if let membership {
            let parsed = try Self.objectClass(membership, flag: "--datasync-membership-class", builtIn: "Membership")
            guard membership.split(separator: ":", omittingEmptySubsequences: false).count <= 2 else {
                throw ValidationError("--datasync-membership-class \(membership): a membership class takes NAME[:VERSION], no level")
            }
            options.membershipClass = parsed.name == "Membership" ? nil : parsed.name
            options.membershipClassVersion = parsed.version
        }
        return options
    }

    /// `NAME[:VERSION[:subkey|global]]` as a class: the level is global for PubNub's own class
    /// (`builtIn`), else SubKey, unless given.
    static func objectClass(_ text: String, flag: String, builtIn: String) throws -> DataSyncOptions.ObjectClass {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let usage = "\(flag) \(text): give NAME[:VERSION[:subkey|global]], e.g. ChatUser:1:subkey"
        guard (1...3).contains(parts.count), let name = parts.first, !name.isEmpty,
              name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") })
        else { throw ValidationError(usage) }
        var version = 1
        if parts.count >= 2 {
            guard let given = Int(parts[1]), given > 0 else { throw ValidationError(usage) }
            version = given
        }
        var level: DataSyncClassLevel = name == builtIn ? .global : .subKey
        if parts.count == 3 {
            switch parts[2].lowercased() {
            case "subkey": level = .subKey
            case "global": level = .global
            default: throw ValidationError(usage)
            }
        }
        return DataSyncOptions.ObjectClass(name: name, version: version, level: level)
    }

    /// `--subscribe-key`, else `PUBNUB_SUBSCRIBE_KEY`, else none.
    private var resolvedSubscribeKey: String? { subscribeKey ?? environmentValue("PUBNUB_SUBSCRIBE_KEY") }


    /// The host of an origin written `host[:port]` or `scheme://host[:port][/...]`.
    static func host(of origin: String) -> String {
        var rest = Substring(origin)
        if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
        rest = rest.prefix { $0 != "/" }
        if rest.hasPrefix("["), let end = rest.firstIndex(of: "]") { return String(rest[rest.index(after: rest.startIndex)..<end]) }
        return String(rest.prefix { $0 != ":" })
    }

    /// Whether `host` names this machine: `localhost`, `127.x.x.x` or `::1`.
    static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased()
        return host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// Whether a cipher key is given (flag, else `PUBNUB_CIPHER_KEY`); throws for an empty one.
    func hasCipherKey() throws -> Bool { try cipher() != nil }

    /// The token: `--auth-token` (alias `--auth-key`), else `--auth-token-file`'s content, else
    /// `PUBNUB_AUTH_TOKEN`, else `PUBNUB_AUTH_KEY`; nil when none is given. A flag wins over the environment.
    func token() throws -> String? {
        if let authToken { return authToken }
        if let authTokenFile { return try Self.readToken(file: authTokenFile) }
        return environmentValue("PUBNUB_AUTH_TOKEN") ?? environmentValue("PUBNUB_AUTH_KEY")
    }

    /// The token in `path`, whitespace trimmed; an unreadable or empty file is a validation error.
    static func readToken(file path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("--auth-token-file \(path): cannot read the file")
        }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else { throw ValidationError("--auth-token-file \(path) is empty") }
        return token
    }

    /// A replica's configuration of these keys, user, origin, cipher and token, for the store at `path`.
    func replicaConfiguration(store path: String) throws -> ReplicaConfiguration {
        var configuration = ReplicaConfiguration(
            publishKey: publishKey ?? environmentValue("PUBNUB_PUBLISH_KEY") ?? "demo", subscribeKey: resolvedSubscribeKey ?? "demo",
            userId: actingUser(userId), store: .file(path))
        configuration.origin = resolvedOrigin
        configuration.authKey = try token()
        configuration.objectBackend = try dataSyncOptions().map(ObjectBackendChoice.dataSync) ?? .appContext
        if let file = appClasses ?? environmentValue("PNREPLICATE_APP_CLASSES") {
            configuration.reconciler.appData = AppDataDeclaration(classes: try AppClassesFile.read(file))
        }
        if let cipher = try cipher() {
            configuration.cipherKey = cipher.key
            configuration.cryptor = cipher.cryptor
        }
        return configuration
    }

    /// The cipher key and the cryptor new payloads are encrypted with, when a key is given.
    private func cipher() throws -> (key: String, cryptor: Cryptor)? {
        // An empty key given on purpose (an unset variable: `--cipher-key "$KEY"`) must not quietly
        // publish plaintext: refused, as an empty `PUBNUB_CIPHER_KEY` is.
        if cipherKey?.isEmpty == true {
            throw ValidationError("--cipher-key is empty (an unset variable?); give the key, or leave the option out to send unencrypted")
        }
        if cipherKey == nil, ProcessInfo.processInfo.environment["PUBNUB_CIPHER_KEY"]?.isEmpty == true {
            throw ValidationError("PUBNUB_CIPHER_KEY is set but empty; give the key, or unset it to send unencrypted")
        }
        guard let key = cipherKey ?? ProcessInfo.processInfo.environment["PUBNUB_CIPHER_KEY"], !key.isEmpty else {
            if legacyCryptor || staticIv { throw ValidationError("--legacy-cryptor and --static-iv need a cipher key") }
            return nil
        }
        if staticIv && !legacyCryptor { throw ValidationError("--static-iv applies to --legacy-cryptor") }
        return (key, legacyCryptor ? .legacy(randomIV: !staticIv) : .aesCbc)
    }
}

/// An environment variable; an empty one counts as unset (`PUBNUB_ORIGIN=` in a shell).
func environmentValue(_ name: String) -> String? {
    ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
}

/// The user a command acts as: the flag given, else `PUBNUB_USER_ID`, else `pnreplicate-cli`.
func actingUser(_ flag: String?) -> String {
    flag ?? environmentValue("PUBNUB_USER_ID") ?? "pnreplicate-cli"
}

/// Refuses, as a usage error, an id flag the model cannot store (`--channel "a,b"`), before
/// anything is opened or sent. `flag` names it in the message.
func validateIdentifiers(_ ids: [String], flag: String) throws {
    for id in ids {
        do {
            try Validation.validateIdentifier(id, field: "\(flag) \"\(id)\"")
        } catch {
            throw ValidationError("\(error)")
        }
    }
}

/// One command's replica, on the store and the connection the options name: every command that
/// talks to PubNub or writes does it through ``replica``, as an app does; a command makes one
/// call (one write, one sync, one live run) instead of starting the replica.
struct Session {
    /// The replica: each read, write, sync or live run of a command is one of its calls.
    let replica: Replica<DefaultChatCustom>

    /// Opens the store (migrating it) and makes the replica on the command's transport
    /// (``CommandTransport``), whose requests each end within `requestTimeout` seconds (a long poll within its own timeout);
    /// nothing is sent or fetched until a command drains, syncs, listens or reads.
    ///
    /// - Parameters:
    ///   - readOnly: the store is only read: nothing is created, migrated or written.
    ///   - inMemory: no store file at all (a command that only talks to PubNub).
    ///   - existing: the command works on what a store already holds (an edit, a pin, a read
    ///     position, `decrypt-pending`): a missing file is refused rather than created empty at a
    ///     mistyped path.
    ///   - live: what ``Replica/listen()`` follows.
    init(
        _ options: SessionOptions, readOnly: Bool = false, inMemory: Bool = false,
        requestTimeout: TimeInterval = 15, existing: Bool = false, live: LiveSyncOptions = LiveSyncOptions()
    ) async throws {
        if existing { try options.storage.requireExistingStore() }
        var configuration = try options.connection.replicaConfiguration(store: options.storePath)
        if inMemory { configuration.store = .inMemory }
        configuration.storeOptions = options.storage.storeOptions(migration: .automatic)
        configuration.storeOptions.readOnly = readOnly && !inMemory
        configuration.transport = CommandTransport.make(timeout: requestTimeout)
        configuration.live = live
        replica = try Replica<DefaultChatCustom>(configuration)
        Self.opened.append(replica)
    }

    /// The replicas this process opened, closed by ``closeAll()`` before it exits.
    private static let opened = OpenedReplicas()

    /// A locked list (the CLI builds on macOS 14 too, without `Mutex`).
    private final class OpenedReplicas: @unchecked Sendable {
        private let lock = NSLock()
        private var replicas: [Replica<DefaultChatCustom>] = []

        func append(_ replica: Replica<DefaultChatCustom>) { lock.withLock { replicas.append(replica) } }

        func takeAll() -> [Replica<DefaultChatCustom>] {
            lock.withLock {
                defer { replicas = [] }
                return replicas
            }
        }
    }

    /// Closes the store of every replica the command opened (`runReportingErrors` calls it when
    /// the command ends, however it ends). A store left to close when its last reference goes may
    /// still be held by a background task (the search indexer's batch) when the process exits,
    /// and then its -wal stays behind; closed here, its writer closes last and takes the -wal
    /// with it.
    static func closeAll() async {
        for replica in opened.takeAll() { await replica.closeStore() }
    }
}

extension Session {
    /// The replica of a command that asks PubNub directly (`presence`, `typing`): on the store
    /// read-only when `readingStore`, else on none. A token that cannot be used is refused as
    /// the other flags' mistakes are.
    static func network(
        _ options: SessionOptions, readingStore: Bool = false
    ) async throws -> Replica<DefaultChatCustom> {
        do {
            return try await Session(options, readOnly: readingStore, inMemory: !readingStore).replica
        } catch ReplicaError.unusableToken(let error) {
            throw ValidationError("the token cannot be used: \(error)")
        }
    }
}

/// Parses a `--custom` JSON object into flat custom data.
func parseCustom(_ text: String?) throws -> FlatCustom? {
    guard let text else { return nil }
    do {
        return try JSONDecoder().decode(FlatCustom.self, from: Data(text.utf8))
    } catch {
        throw ValidationError("--custom must be a flat JSON object of scalars: \(error)")
    }
}

extension Session {
    /// What every enqueue command does: opens the store (refusing a missing one when `existing`),
    /// makes one write on the replica and prints its receipt (`id` names the object, when it has one).
    ///
    /// ```swift
    /// try await Session.enqueue(options, existing: true) { try await $0.messages.pin(id: message, in: channel) }
    /// ```
    ///
    /// With `dryRun` the write is rehearsed (`ReplicaOutbox.rehearsing`): checked as it would be,
    /// nothing kept, and the request of each op it would queue printed as `sync --dry-run`
    /// prints it.
    static func enqueue<Value: Sendable>(
        _ options: SessionOptions, existing: Bool = false, dryRun: Bool = false,
        id: (OutboxReceipt<Value>) -> String? = { _ in nil },
        _ write: (Replica<DefaultChatCustom>) async throws -> OutboxReceipt<Value>
    ) async throws {
        let replica = try await Session(options, existing: existing).replica
        guard dryRun else {
            let receipt = try await write(replica)
            return try EnqueueOutput(receipt, id: id(receipt)).print(json: options.json)
        }
        let rehearsal = try await replica.outbox.rehearsing { try await write(replica) }
        let output = RehearsalOutput(write: EnqueueOutput(rehearsal.value, id: id(rehearsal.value)), ops: rehearsal.plan)
        try output.print(json: options.json)
    }
}

/// What an enqueue command prints with `--dry-run`: its receipt as it would have been, and the
/// ops it would have queued, each with its request.
struct RehearsalOutput: Encodable {
    var dryRun = true
    var write: EnqueueOutput
    var ops: [OutboxPlanEntry]

    func print(json: Bool) throws {
        if json { return try Output.json(self) }
        Swift.print("dry run: nothing stored, nothing sent")
        var shown = write
        shown.disposition = "not kept (would be \(write.disposition))"
        shown.print()
        for entry in ops { Swift.print(SyncCommand.planText(entry), terminator: "") }
    }
}

/// What every enqueue command prints.
struct EnqueueOutput: Encodable {
    var opId: String?
    var disposition: String
    var id: String?

    init<V>(_ receipt: OutboxReceipt<V>, id: String?) {
        opId = receipt.opId
        self.id = id
        switch receipt.disposition {
        case .enqueued: disposition = "enqueued"
        case .merged(let into): disposition = "merged into \(into)"
        case .cancelled(let ids): disposition = "cancelled \(ids.joined(separator: ", ")): nothing to send"
        case .unchanged: disposition = "unchanged: nothing to send"
        }
    }

    func print(json: Bool) throws {
        if json { return try Output.json(self) }
        print()
    }

    /// The receipt as a table.
    func print() {
        var rows = [("op", opId ?? "-"), ("outbox", disposition)]
        if let id { rows.insert(("id", id), at: 0) }
        Output.table(rows)
    }
}
