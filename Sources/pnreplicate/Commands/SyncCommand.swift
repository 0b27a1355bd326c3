import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate sync` (the default command): push the outbox to PubNub, then pull.
struct SyncCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Send the outbox to PubNub, then pull history, reactions and objects (`pnreplicate --dry-run` shows what would be sent).",
        discussion: """
            Pushes first: the outbox is drained until it is empty or --timeout passes; conflicted \
            edits are settled with the default policies (each decision goes to the conflict log, \
            see `pnreplicate conflicts list`). Then pulls: users, channels and memberships, and the \
            new messages of every channel the user is a member of or has messages in, each from its \
            checkpoint (`pnreplicate checkpoints`). Reactions and members are listed only for the \
            channels named with --channel (a one-off full refresh of each); the others' lag, and \
            `pnreplicate checkpoints` shows since when (docs/reconciler.md, "Hot and cold \
            channels"). A part that fails is reported and the others still run.

            Exit status: 0 when everything was pushed and pulled; 2 when dead letters or conflicts \
            remain (see `pnreplicate --dry-run` and `pnreplicate conflicts list`, then \
            `pnreplicate outbox retry|discard OP` or `pnreplicate conflicts resolve ID`); 3 when \
            ops still wait at the timeout (offline or backing off), or wait for an Access Manager \
            token (a line `waiting for a token` on stderr says why: give a new one with \
            --auth-token; nothing is dead-lettered for it); 4 when the push is done but a pull \
            failed (the errors are listed; the next sync resumes from the checkpoints).
            """)

    @OptionGroup var options: SessionOptions
    @Flag(name: .long, help: "List every op in send order with why it waits and the exact request; send nothing, change nothing.")
    var dryRun = false
    @Option(name: .long, help: ArgumentHelp(
        "Also list this channel's reactions and members (repeatable): a one-off full refresh of it.", valueName: "channel"))
    var channel: [String] = []
    @Option(name: .long, help: "Bound the whole sync (push and pull, waiting for another process's lease included) to this many seconds (default 30, at most 86400).")
    var timeout: Double = 30

    func validate() throws {
        try validateIdentifiers(channel, flag: "--channel")
        guard timeout.isFinite, timeout > 0, timeout <= 86_400 else {
            throw ValidationError("--timeout must be a number of seconds greater than 0 and at most 86400, got \(timeout)")
        }
    }

    func perform() async throws {
        if dryRun { return try await printPlan() }
        // Each request gets at most the whole budget; the sync stops starting work at the
        // deadline, and a watchdog ends a request that overruns it anyway.
        let replica = try await Session(options, requestTimeout: min(15, timeout)).replica
        let deadline = Date().addingTimeInterval(timeout)
        let showProgress = isatty(STDERR_FILENO) == 1 && !options.json
        let pushProgress = showProgress ? Task { try await Self.showProgress(replica.outbox.events()) } : nil
        // The progress line goes on success and failure alike (an error is printed after it).
        defer {
            pushProgress?.cancel()
            if showProgress { Output.standardError("\r\u{1B}[K") }
        }
        for channel in self.channel { try await replica.live.markHot(channel) }
        let report = try await Self.bounded(by: timeout) {
            try await replica.sync(pushDeadline: deadline, deadline: deadline, progress: showProgress ? Self.showPull : nil)
        }
        if options.json {
            try Output.json(SyncOutput(report))
        } else {
            Self.printText(report)
        }
        if report.waitsForToken { Output.standardError(Self.tokenLine(report, replica: replica) + "\n") }
        for object in await replica.status.expiring { Output.standardError(Self.expiryLine(object) + "\n") }
        if let status = Self.exitStatus(report) { throw ExitCode(status) }
    }

    /// Runs `body`, cancelling it when it is still running `grace` seconds after `seconds` (real
    /// time: this is the command's own wall-clock bound, not library logic), and then throws
    /// ``SyncTimeout``.
    static func bounded<T: Sendable>(
        by seconds: Double, grace: Double = 2, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let work = Task { try await body() }
        let watchdog = Task {
            try await Task.sleep(nanoseconds: UInt64((seconds + grace) * 1_000_000_000))
            work.cancel()
            return true
        }
        do {
            let value = try await withTaskCancellationHandler { try await work.value } onCancel: { work.cancel() }
            watchdog.cancel()
            return value
        } catch {
            watchdog.cancel()
            if (try? await watchdog.value) == true { throw SyncTimeout(seconds: seconds) }
            throw error
        }
    }

    /// 2: dead letters or conflicts remain; 3: ops still wait; 4: only a pull failed; nil: all done.
    static func exitStatus(_ report: SyncReport) -> Int32? {
        if report.push.deadLetters + report.push.conflicts + report.conflicts.waiting > 0 { return 2 }
        if report.push.remaining > 0 || report.waitsForToken { return 3 }
        if !report.errors.isEmpty { return 4 }
        return nil
    }

    /// `warning: membership general/alice expires 2026-12-01T00:00:00.000000Z (DataSync removes it then)`.
    static func expiryLine(_ object: ExpiringObject) -> String {
        "warning: \(Output.terminalSafe(object.description)) (DataSync removes it then; docs/datasync.md, \"Expiry\")"
    }

    /// `waiting for a token: …`: why, and how many ops wait.
    static func tokenLine(_ report: SyncReport, replica: Replica<DefaultChatCustom>) -> String {
        var why: String
        switch report.waitingForToken {
        case .expired?:
            let expiry = replica.access.token.map { " at \(ISOTimestamp(date: $0.expires))" } ?? ""
            why = "the token expired\(expiry)"
        case .refused?:
            why = "Access Manager refused the token" + (replica.access.refusal.map { " (\(Output.terminalSafe($0)))" } ?? "")
        case .missing?: why = "no token was given"
        case .expiring?, nil: why = "the token does not grant what they need"
        }
        let ops = report.push.waitingForToken
        return "waiting for a token: \(why); \(ops) op\(ops == 1 ? " waits" : "s wait") (give a new one with --auth-token)"
    }

    static func printText(_ report: SyncReport) {
        let push = report.push
        var rows: [(String, String)] = [
            ("sent", "\(push.completed)"), ("attempts", "\(push.attempts)"), ("probes", "\(push.probes)"),
            ("waiting", "\(push.remaining)"), ("dead letters", "\(push.deadLetters)"),
            ("conflicts", "\(push.conflicts) in the outbox, \(report.conflicts.resolved) resolved, \(report.conflicts.waiting) waiting"),
        ]
        if let objects = report.objects {
            func counts(_ r: ObjectSyncResult) -> String { "\(r.inserted) new, \(r.updated) updated, \(r.removed) removed" }
            rows += [
                ("users", counts(objects.users)), ("channels", counts(objects.channels)),
                ("memberships", counts(objects.memberships)), ("members", counts(objects.members)),
            ]
        }
        let history = Dictionary(report.history.map { ($0.channel, $0) }, uniquingKeysWith: { a, _ in a })
        for channel in Set(history.keys).union(report.reactions.keys).sorted() {
            var parts: [String] = []
            if let h = history[channel] {
                parts.append("\(h.pages) page\(h.pages == 1 ? "" : "s"), \(h.inserted) new message\(h.inserted == 1 ? "" : "s")")
            }
            if let r = report.reactions[channel] { parts.append("reactions \(r.added) added, \(r.removed) removed") }
            rows.append(("channel \(channel)", parts.joined(separator: "; ")))
        }
        if report.coldChannels > 0 {
            rows.append((
                "not listed", "reactions and members of \(report.coldChannels) channel\(report.coldChannels == 1 ? "" : "s") (sync --channel C lists one)"))
        }
        if let decrypted = report.decrypted {
            rows.append(("decrypted", "\(decrypted.decrypted) stored message\(decrypted.decrypted == 1 ? "" : "s"), \(decrypted.stillUndecryptable) still undecryptable"))
        }
        if let retention = report.retention {
            let mb = { (bytes: Int) in String(format: "%.1f MB", Double(bytes) / 1_048_576) }
            rows.append((
                "budget", "\(retention.evicted) message\(retention.evicted == 1 ? "" : "s") evicted from \(retention.channels.count) channel\(retention.channels.count == 1 ? "" : "s"), "
                    + "\(mb(retention.bytesBefore)) → \(mb(retention.bytesAfter))" + (retention.withinBudget ? "" : " (over budget: the rest is kept: unsent, pinned, unread, hot)")))
        }
        for error in report.errors { rows.append(("error", error)) }
        Output.table(rows)
    }

    /// One progress line on stderr, rewritten in place.
    static func showProgress(_ events: AsyncStream<OutboxEvent>) async {
        var sent = 0
        var retrying = 0
        var failed = 0
        for await event in events {
            switch event {
            case .sent: sent += 1
            case .retrying, .ambiguous: retrying += 1
            case .failed, .conflict: failed += 1
            default: continue
            }
            Output.standardError("\r\u{1B}[Ksent \(sent), retries \(retrying), failed \(failed)")
        }
    }

    /// The pull's progress line: the channel being pulled, its pages and messages so far.
    @Sendable static func showPull(_ progress: PullProgress) {
        let line = "pulling \(progress.scope): \(progress.pages) page\(progress.pages == 1 ? "" : "s"), \(progress.items) messages"
        Output.standardError("\r\u{1B}[K\(line)")
    }

    /// Prints the plan as the outbox is read, page by page (`replica.outbox.planned(pageSize:)`):
    /// the first ops show at once and memory stays bounded, however many ops wait.
    func printPlan() async throws {
        let replica = try await Session(options, readOnly: true).replica
        let entries = try await replica.outbox.planned()
        if options.json {
            // The pretty-printed `{"dryRun": true, "ops": [...]}` of `Output.json`, written op by op.
            print("{\n  \"dryRun\" : true,\n  \"ops\" : [", terminator: "")
            var first = true
            for try await entry in entries {
                let text = try Output.prettyJSON(entry).replacingOccurrences(of: "\n", with: "\n    ")
                print((first ? "\n    " : ",\n    ") + text, terminator: "")
                first = false
            }
            print(first ? "\n\n  ]\n}" : "\n  ]\n}")
            return
        }
        let count = try await replica.fetch(replica.queries.outboxCount())
        print("dry run: \(count) op\(count == 1 ? "" : "s") in the outbox; no request made, nothing changed")
        for try await entry in entries { print(Self.planText(entry), terminator: "") }
    }

    /// One op of a dry run as text: its place, state, why it waits and its exact request.
    static func planText(_ entry: OutboxPlanEntry) -> String {
        var text = "\(entry.position). \(entry.opId) \(entry.kind.rawValue) lane=\(entry.lane) "
            + "state=\(entry.state.rawValue) attempts=\(entry.attempts)\n"
        var rows: [(String, String)] = [("   waiting", entry.waiting)]
        if let next = entry.nextAttemptAt {
            rows.append(("   next attempt", ISOTimestamp(date: next, fractionDigits: 3).description))
        }
        for note in entry.coalesced { rows.append(("   coalesced", note)) }
        for (index, step) in (entry.steps ?? []).enumerated() {
            rows.append(("   step \(index + 1)", (step.done ? "done: " : "") + step.step))
            if let request = step.request, !step.done {
                let query = request.query.isEmpty ? "" : "?" + request.query.joined(separator: "&")
                rows.append(("     request", "\(request.method) \(request.path)\(query)"))
            }
        }
        if let request = entry.request {
            let query = request.query.isEmpty ? "" : "?" + request.query.joined(separator: "&")
            rows.append(("   request", "\(request.method) \(request.path)\(query)"))
            if let ifMatch = request.ifMatch { rows.append(("   If-Match", ifMatch)) }
            if let body = request.body { rows.append(("   body", body)) }
            if let encryption = entry.encryption { rows.append(("   encrypted", "the payload, with \(encryption)")) }
        }
        if let note = entry.requestNote { rows.append(("   request", "(\(note))")) }
        text += Output.tableText(rows)
        return text
    }
}

/// `sync` did not finish within `--timeout` (plus a short grace) and was stopped; what it had
/// applied stays applied, and the outbox and checkpoints resume from there next time.
struct SyncTimeout: Error, CustomStringConvertible {
    var seconds: Double
    var description: String {
        "sync did not finish within --timeout \(seconds) s and was stopped; what was sent and pulled is kept, run sync again to continue"
    }
}

/// The JSON `sync --json` prints: each part of the ``PubNubReplica/SyncReport``.
struct SyncOutput: Encodable {
    /// Object pull counts of one scope.
    struct Objects: Encodable {
        var inserted, updated, unchanged, removed, overlaid: Int

        init(_ r: ObjectSyncResult) {
            (inserted, updated, unchanged, removed, overlaid) = (r.inserted, r.updated, r.unchanged, r.removed, r.overlaid)
        }
    }

    /// The object pull.
    struct ObjectPull: Encodable {
        var full: Bool
        var users, channels, memberships, members: Objects
        /// Objects removed because their DataSync `expiresAt` had passed.
        var expired: Int
    }

    /// One channel's reaction pull.
    struct Reactions: Encodable {
        var added, removed, keptPending: Int
    }

    /// Settled and waiting conflicts.
    struct Conflicts: Encodable {
        var resolved, waiting: Int
    }

    var push: DrainReport
    var conflicts: Conflicts
    var objects: ObjectPull?
    var history: [ChannelPullReport]
    var reactions: [String: Reactions]
    /// Channels whose reactions and members were not listed (cold).
    var coldChannels: Int
    /// Undecryptable messages read again (absent without a cipher key or marked messages).
    var decrypted: DecryptPendingReport?
    /// What the storage budget evicted (absent without `--max-store-mb`, `--keep-days` or `--keep-messages`).
    var retention: RetentionReport?
    var errors: [String]
    /// Why requests wait for a new token (`expired`, `refused`, `missing`), absent when they do not.
    var waitingForToken: String?

    init(_ report: SyncReport) {
        push = report.push
        conflicts = Conflicts(resolved: report.conflicts.resolved, waiting: report.conflicts.waiting)
        objects = report.objects.map { o in
            ObjectPull(
                full: o.full, users: Objects(o.users), channels: Objects(o.channels), memberships: Objects(o.memberships),
                members: Objects(o.members), expired: o.expired)
        }
        history = report.history
        reactions = report.reactions.mapValues { Reactions(added: $0.added, removed: $0.removed, keptPending: $0.keptPending) }
        coldChannels = report.coldChannels
        decrypted = report.decrypted
        retention = report.retention
        errors = report.errors
        waitingForToken = report.waitingForToken?.rawValue ?? (report.push.waitingForToken > 0 ? "notGranted" : nil)
    }
}
