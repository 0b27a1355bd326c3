import ArgumentParser
import Foundation
import ReplicaModel
import ReplicaStore
import Replicator

/// `pnreplicate sync` (the default command): push the outbox to PubNub.
struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send the outbox to PubNub (`pnreplicate --dry-run` shows what would be sent).",
        discussion: """
            Exit status: 0 when the outbox is empty, 2 when dead letters or conflicts remain (see \
            `pnreplicate --dry-run`, then `pnreplicate outbox retry|discard OP`), 3 when ops still \
            wait at the timeout (offline or backing off).
            """)

    @OptionGroup var options: StoreOptionsGroup
    @OptionGroup var connection: ConnectionOptions
    @Flag(name: .long, help: "List every op in send order with why it waits and the exact request; send nothing, change nothing.")
    var dryRun = false
    @Option(name: .long, help: "Stop waiting for backoffs after this many seconds (default 30).")
    var timeout: Double = 30

    func run() async throws {
        try await runReportingErrors {
            if dryRun { return try await printPlan() }
            let session = try Session(store: options, connection: connection)
            let progress = isatty(STDERR_FILENO) == 1 && !options.json ? Task { await Self.showProgress(session.outbox) } : nil
            let report = try await session.outbox.drain(until: Date().addingTimeInterval(timeout))
            progress?.cancel()
            if progress != nil { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
            if options.json {
                try Output.json(report)
            } else {
                Output.table([
                    ("sent", "\(report.completed)"), ("attempts", "\(report.attempts)"), ("probes", "\(report.probes)"),
                    ("waiting", "\(report.remaining)"), ("dead letters", "\(report.deadLetters)"),
                    ("conflicts", "\(report.conflicts)"),
                ])
            }
            if report.deadLetters + report.conflicts > 0 { throw ExitCode(2) }
            if report.remaining > 0 { throw ExitCode(3) }
        }
    }

    /// One progress line on stderr, rewritten in place.
    static func showProgress(_ outbox: Outbox<DefaultChatCustom>) async {
        var sent = 0
        var retrying = 0
        var failed = 0
        for await event in await outbox.events() {
            switch event {
            case .sent: sent += 1
            case .retrying, .ambiguous: retrying += 1
            case .failed, .conflict: failed += 1
            default: continue
            }
            FileHandle.standardError.write(Data("\r\u{1B}[Ksent \(sent), retries \(retrying), failed \(failed)".utf8))
        }
    }

    func printPlan() async throws {
        let session = try Session(store: options, connection: connection, readOnly: true)
        let plan = try await session.outbox.plan()
        if options.json { return try Output.json(DryRunOutput(dryRun: true, ops: plan)) }
        print("dry run: \(plan.count) op\(plan.count == 1 ? "" : "s") in the outbox; no request made, nothing changed")
        for entry in plan {
            print("\(entry.position). \(entry.opId) \(entry.kind.rawValue) lane=\(entry.lane) state=\(entry.state.rawValue) attempts=\(entry.attempts)")
            var rows: [(String, String)] = [("   waiting", entry.waiting)]
            if let next = entry.nextAttemptAt {
                rows.append(("   next attempt", ISOTimestamp(date: next, fractionDigits: 3).description))
            }
            for note in entry.coalesced { rows.append(("   coalesced", note)) }
            if let request = entry.request {
                let query = request.query.isEmpty ? "" : "?" + request.query.joined(separator: "&")
                rows.append(("   request", "\(request.method) \(request.path)\(query)"))
                if let ifMatch = request.ifMatch { rows.append(("   If-Match", ifMatch)) }
                if let body = request.body { rows.append(("   body", body)) }
            }
            if let note = entry.requestNote { rows.append(("   request", "(\(note))")) }
            Output.table(rows)
        }
    }
}

struct DryRunOutput: Encodable {
    var dryRun: Bool
    var ops: [OutboxPlanEntry]
}

/// `pnreplicate outbox retry|discard OP`.
struct OutboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox", abstract: "Retry or discard a dead letter or conflicted op.",
        subcommands: [Retry.self, Discard.self])

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Queue a dead or conflicted op again.")
        @OptionGroup var options: StoreOptionsGroup
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The op id.") var op: String

        func run() async throws {
            try await runReportingErrors {
                try await Session(store: options, connection: connection).outbox.retry(opId: op)
                if options.json { try Output.json(["retried": op]) } else { print("queued \(op) again") }
            }
        }
    }

    struct Discard: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Withdraw an op that has not reached PubNub and revert its local change.")
        @OptionGroup var options: StoreOptionsGroup
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The op id.") var op: String

        func run() async throws {
            try await runReportingErrors {
                let removed = try await Session(store: options, connection: connection).outbox.discard(opId: op)
                if options.json { try Output.json(["discarded": removed]) } else {
                    print("discarded \(removed.joined(separator: ", "))")
                }
            }
        }
    }
}
