import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate outbox retry|discard OP`.
struct OutboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox", abstract: "List the outbox; retry or discard a dead letter or conflicted op.",
        subcommands: [List.self, Retry.self, Discard.self])

    struct List: ReportingCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the ops waiting in the outbox, in the order they go (reads the store only, no network).",
            discussion: "Each op with its state (pending, inflight, ambiguous, dead, conflict), attempts, next attempt and last failure.")
        @OptionGroup var options: StoreOptionsGroup

        func perform() async throws {
            let store = try options.openForReading()
            let entries = try await store.fetch(store.queries.outbox())
            if options.json { return try Output.json(entries) }
            Output.columns(
                ["op", "kind", "state", "target", "attempts", "next attempt", "last failure"],
                entries.map {
                    [$0.id, $0.kind.rawValue, $0.state.rawValue, $0.target, String($0.attempts), Output.cell($0.nextAttemptAt),
                     Output.cell($0.lastFailure?.message)]
                },
                empty: "the outbox is empty")
        }
    }

    struct Retry: ReportingCommand {
        static let configuration = CommandConfiguration(abstract: "Queue a dead or conflicted op again.")
        @OptionGroup var options: SessionOptions
        @Argument(help: "The op id.") var op: String

        func perform() async throws {
            try await Session(options).replica.outbox.retry(opId: op)
            if options.json { try Output.json(["retried": op]) } else { print("queued \(op) again") }
        }
    }

    struct Discard: ReportingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Withdraw an op that has not reached PubNub and revert its local change.")
        @OptionGroup var options: SessionOptions
        @Argument(help: "The op id.") var op: String

        func perform() async throws {
            let removed = try await Session(options).replica.outbox.discard(opId: op)
            if options.json { try Output.json(["discarded": removed]) } else {
                print("discarded \(removed.joined(separator: ", "))")
            }
        }
    }
}
