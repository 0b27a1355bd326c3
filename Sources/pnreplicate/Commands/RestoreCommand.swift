import ArgumentParser
import Foundation
import ReplicaModel
import ReplicaStore
import Replicator

/// `pnreplicate restore`: undoes the user's soft delete.
struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore", abstract: "Restore a message this user soft-deleted.")
    @OptionGroup var options: StoreOptionsGroup
    @OptionGroup var connection: ConnectionOptions
    @Option(name: .long, help: "The message's id.") var message: String

    func run() async throws {
        try await runReportingErrors {
            let receipt = try await Session(store: options, connection: connection, existing: true).outbox.restoreMessage(id: message)
            try EnqueueOutput(receipt, id: message).print(json: options.json)
        }
    }
}
