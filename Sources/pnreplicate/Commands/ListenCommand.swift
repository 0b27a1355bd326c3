import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `pnreplicate listen`: keep the store live with ``PubNubReplica/Replica/listen()`` until SIGINT or
/// SIGTERM, printing one line per event received.
///
/// The store and the connection are opened as `sync` opens them; the long poll carries its own
/// 310 s deadline (``PubNubReplica/LiveSyncOptions/pollTimeout``), every other request the usual
/// one. Events go to stdout, one line each (JSON lines with `--json`), as soon as they are
/// applied; state changes go to stderr (`state: live`), catch-up progress and gap fills too with
/// `--verbose`, or all of them to stdout as JSON lines with `--json`. Lines carry ids, never message text. On SIGINT or SIGTERM the live sync
/// is cancelled and awaited, the last line (`stopped`) is written, the store is closed and the
/// exit status is 0. The outbox is left alone: `sync` sends it.
struct ListenCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "listen",
        abstract: "Subscribe and apply live events to the store until SIGINT or SIGTERM, one line per event.",
        discussion: """
            Follows the channels the user is a member of or has messages in and each --channel, \
            and the App Context events of the user and of each --user. Prints each event as it is \
            applied: `CHANNEL TIMETOKEN KIND SUBJECT OUTCOME (from PUBLISHER)`, or with --json one \
            JSON object per line (`"type":"event"`, and `"state"`, `"catch-up-progress"`, \
            `"gap-filled"` and `"presence-refreshed"` lines too). State changes (`state: live`) \
            go to stderr; --verbose adds catch-up progress and gap fills. Message text is never printed. Typing signals \
            print as `typing started`/`typing stopped`; with --presence, presence events as \
            `presence-join USER present` and so on (on CHANNEL-pnpres).

            The gap rule: PubNub delivers live events at most once (a connection's buffer keeps \
            100 events for 20 minutes and drops the oldest silently), so the store never trusts \
            the stream alone. Each channel has a live checkpoint up to which the store holds \
            everything; it moves only in the transaction that applied the events before it. \
            Whenever the stream may have lost something (the first connect of a run, a failed \
            request, an answer as full as the buffer, a reset or far-jumping cursor, an event that \
            cannot be read, a new channel) the channel is filled from history before it is called \
            live again. So messages sent while nothing listened arrive through that fill, and a \
            listen killed at any moment loses nothing on its next run.

            Access Manager: on SIGHUP the token is read again from --auth-token-file and used for \
            the next request (while it waits for a token the state says `offline: waiting for a \
            token`).

            Stops on SIGINT or SIGTERM with exit status 0; exits 1 when the store fails. Network \
            failures never end it: they are retried with backoff (`state: offline: REASON`).
            """)

    @OptionGroup var options: SessionOptions
    @Option(name: .customLong("channel"), help: "Also follow this channel (repeatable).")
    var channels: [String] = []
    @Option(name: .customLong("user"), help: "Also follow this user's App Context events (repeatable).")
    var users: [String] = []
    @Option(name: .customLong("channel-group"), help: "A channel group your app's server keeps equal to your memberships: subscribed by name instead of naming each membership (repeatable; docs/live.md, \"Channel groups\").")
    var channelGroups: [String] = []
    @Flag(name: .customLong("presence"), help: "Follow presence: be present (heartbeats), print join, leave, timeout and state-change events, keep members' presence in the store, leave on stop.")
    var presence = false
    @Option(name: .customLong("presence-timeout"), help: "With --presence: the presence timeout in seconds (20 or more).")
    var presenceTimeout: Int = 300

    func validate() throws {
        guard presenceTimeout >= 20 else { throw ValidationError("--presence-timeout must be 20 seconds or more") }
        try validateIdentifiers(channels, flag: "--channel")
        try validateIdentifiers(users, flag: "--user")
        try validateIdentifiers(channelGroups, flag: "--channel-group")
    }

    func perform() async throws {
        // Before anything else, so that a signal during the store's opening is not lost.
        let stop = StopSwitch()
        let trap = await SignalTrap([SIGINT, SIGTERM]) { _ in
            stop.pull()
            // A stop is clean within moments (every event is committed as it is applied). One
            // that does not come (stdout is a pipe nobody reads, and the printer is blocked in
            // its write) ends the process anyway: a signal is never ignored.
            DispatchQueue.global().asyncAfter(deadline: .now() + 5) { _exit(0) }
        }
        defer { trap.cancel() }
        try await listen(until: stop)
    }

    /// Runs the live sync until `stop` is pulled; the session (and with it the store) is released
    /// when this returns.
    private func listen(until stop: StopSwitch) async throws {
        var liveOptions = LiveSyncOptions()
        liveOptions.channels = channels
        liveOptions.users = users
        liveOptions.channelGroups = channelGroups
        if presence { liveOptions.presence = PresenceOptions(timeout: presenceTimeout) }
        let replica = try await Session(options, live: liveOptions).replica
        // SIGHUP reads --auth-token-file again: a new token without a restart (docs/access.md).
        // Held weakly: a signal source outlives its cancel for a moment, and the replica (with it
        // the store, closed when released, its WAL with it) must go when this function returns.
        let tokenFile = options.connection.authTokenFile
        let reload = await SignalTrap([SIGHUP]) { [weak replica] _ in
            if let replica { Self.reloadToken(from: tokenFile, into: replica) }
        }
        defer { reload.cancel() }
        let printer = ActivityPrinter(json: options.json, verbose: options.verbose)
        // Subscribed before the run starts, so that nothing is missed.
        let activity = try await replica.live.activity()
        _ = printer.print(.state(try await replica.live.state))
        let running = Task { try await replica.live.listen() }
        stop.attach(running)
        // The sequence finishes when the run returns (``LiveState/stopped`` is its last element).
        // A reader that went away (`listen | head -2`) ends the run, as SIGPIPE would.
        var warned = Set<ExpiringObject>()
        for await item in activity {
            if !printer.print(item) { stop.pull() }
            // Once live (and after each gap fill): the followed objects DataSync deletes soon.
            switch item {
            case .state(.live), .gapFilled:
                for object in (try? await replica.expiryWarnings()) ?? [] where warned.insert(object).inserted {
                    Output.standardError(SyncCommand.expiryLine(object) + "\n")
                }
            default: break
            }
        }
        // A stop that interrupts a store access is a clean stop: `Replica.listen()` owns that rule.
        let ended = await running.result
        // Closed here, not when the last reference goes: a background task (the search indexer
        // in the middle of a batch) may hold the store past this function, and a process that
        // exits before it lets go leaves the -wal behind.
        await replica.closeStore()
        try ended.get()
    }
}

extension ListenCommand {
    /// On SIGHUP: the token in `file` replaces the current one; a line on stderr says what happened
    /// (never the token).
    @Sendable static func reloadToken(from file: String?, into replica: Replica<DefaultChatCustom>) {
        guard let file else {
            Output.standardError("SIGHUP: no --auth-token-file to read a new token from; the token is unchanged\n")
            return
        }
        do {
            try replica.access.setToken(try ConnectionOptions.readToken(file: file))
            let expiry = replica.access.token.map { ", expires \(ISOTimestamp(date: $0.expires))" } ?? ""
            Output.standardError("token: replaced from \(file)\(expiry)\n")
        } catch {
            Output.standardError("SIGHUP: the token in \(file) was not used: \(error)\n")
        }
    }
}

/// Writes a live sync's activity: events on stdout, states on stderr (progress and gap fills with `--verbose`)
/// or, with `--json`, everything on stdout as JSON lines. Each line is one `write`, unbuffered.
struct ActivityPrinter {
    var json: Bool
    var verbose: Bool

    /// Prints one item; false when stdout could not be written (its reader went away).
    func print(_ item: LiveActivity) -> Bool {
        if json {
            if let line = try? Output.jsonLine(ActivityLine(item)) { return Output.standardOutput(line + "\n") }
            return true
        }
        switch item {
        case .event(let record):
            // Channels, ids and publishers are other users' words: escaped for the terminal.
            return Output.standardOutput(Output.terminalSafe(Self.text(record)) + "\n")
        case .state(let state):
            // Always: without it a quiet channel looks like a hung command.
            Output.standardError("state: \(state)\n")
        case .catchUpProgress(let progress):
            if verbose { Output.standardError("catching up: \(progress)\n") }
        case .gapFilled(let report):
            if verbose { Output.standardError(Self.text(report) + "\n") }
        case .presenceRefreshed(let counts):
            if verbose { Output.standardError(Self.text(presence: counts) + "\n") }
        }
        return true
    }

    /// `presence read: c1 (2 here), c2 (0 here)`.
    static func text(presence counts: [String: Int]) -> String {
        "presence read: " + counts.sorted { $0.key < $1.key }.map { "\($0.key) (\($0.value) here)" }.joined(separator: ", ")
    }

    /// `c1 17900000000000001 message m-1 inserted (from u1)`.
    static func text(_ record: LiveEventRecord) -> String {
        let timetoken = record.timetoken?.description ?? "-"
        let from = record.publisher.map { " (from \($0))" } ?? ""
        return "\(record.channel) \(timetoken) \(record.kind) \(record.subject) \(record.outcome)\(from)"
    }

    /// `gap filled through T: c1 (first-connect), c2 (reconnect); 3 messages recovered, 0 reaction changes`.
    static func text(_ report: GapFillReport) -> String {
        let channels = report.channels.sorted { $0.key < $1.key }.map { "\($0.key) (\($0.value.rawValue))" }
        return "gap filled through \(report.through): \(channels.joined(separator: ", ")); "
            + "\(report.recoveredMessages) message\(report.recoveredMessages == 1 ? "" : "s") recovered, "
            + "\(report.reactionChanges) reaction change\(report.reactionChanges == 1 ? "" : "s")"
    }
}

/// One JSON line of `listen --json`: an event (the ``PubNubReplica/LiveEventRecord``'s fields), a
/// state or a gap fill, told apart by `type`.
struct ActivityLine: Encodable {
    var item: LiveActivity

    init(_ item: LiveActivity) { self.item = item }

    enum Keys: String, CodingKey {
        case type, state, channels, reason, through, recoveredMessages, reactionChanges, objects, occupancy
        case channelCount, pages, messages
    }

    func encode(to encoder: any Encoder) throws {
        switch item {
        case .event(let record):
            try record.encode(to: encoder)
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode("event", forKey: .type)
        case .state(let state):
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode("state", forKey: .type)
            switch state {
            case .connecting: try container.encode("connecting", forKey: .state)
            case .catchingUp(let channels):
                try container.encode("catching-up", forKey: .state)
                try container.encode(channels, forKey: .channels)
            case .live: try container.encode("live", forKey: .state)
            case .offline(let reason):
                try container.encode("offline", forKey: .state)
                try container.encode(reason, forKey: .reason)
            case .stopped: try container.encode("stopped", forKey: .state)
            }
        case .catchUpProgress(let progress):
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode("catch-up-progress", forKey: .type)
            try container.encode(progress.channels, forKey: .channelCount)
            try container.encode(progress.pages, forKey: .pages)
            try container.encode(progress.messages, forKey: .messages)
        case .gapFilled(let report):
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode("gap-filled", forKey: .type)
            try container.encode(report.channels.mapValues(\.rawValue), forKey: .channels)
            try container.encode(report.through, forKey: .through)
            try container.encode(report.recoveredMessages, forKey: .recoveredMessages)
            try container.encode(report.reactionChanges, forKey: .reactionChanges)
            try container.encode(report.objects, forKey: .objects)
        case .presenceRefreshed(let counts):
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode("presence-refreshed", forKey: .type)
            try container.encode(counts, forKey: .occupancy)
        }
    }
}

/// Cancels the task attached to it when pulled; pulled before a task is attached, it cancels
/// that task as soon as it is attached.
final class StopSwitch: @unchecked Sendable {
    private let lock = NSLock()
    private var pulled = false
    private var task: Task<Void, any Error>?

    /// Whether ``pull()`` was called.
    var isPulled: Bool { lock.withLock { pulled } }

    /// Cancels the attached task, now or when it is attached.
    func pull() {
        let task = lock.withLock {
            pulled = true
            return self.task
        }
        task?.cancel()
    }

    /// Attaches `task`; cancels it at once if the switch was already pulled.
    func attach(_ task: Task<Void, any Error>) {
        let pulled = lock.withLock {
            self.task = task
            return self.pulled
        }
        if pulled { task.cancel() }
    }
}

/// Turns signals into calls of a handler instead of their default action (ending the process at
/// once), through Dispatch signal sources.
///
/// Each signal is ignored first (on Darwin the kqueue source sees it only then; on Linux Dispatch
/// installs its own handler when the source registers, in place of the ignore), and the
/// initializer returns only once every source is registered, so that no signal from then on is
/// missed.
final class SignalTrap: @unchecked Sendable {
    /// Set once in `init`; Dispatch sources are thread-safe.
    private let sources: [any DispatchSourceSignal]

    init(_ signals: [Int32], handler: @escaping @Sendable (Int32) -> Void) async {
        let queue = DispatchQueue(label: "pnreplicate.signals")
        var sources: [any DispatchSourceSignal] = []
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            await withCheckedContinuation { (registered: CheckedContinuation<Void, Never>) in
                source.setRegistrationHandler { registered.resume() }
                source.resume()
            }
            sources.append(source)
        }
        self.sources = sources
    }

    /// Stops listening; the signals stay ignored.
    func cancel() {
        for source in sources { source.cancel() }
    }
}
