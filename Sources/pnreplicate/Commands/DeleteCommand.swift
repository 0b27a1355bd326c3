import ArgumentParser
import Foundation
import ReplicaModel
import ReplicaStore
import Replicator

/// `pnreplicate delete`: a soft delete (the Chat SDK's `deleted` action).
struct DeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Soft-delete a stored message (hidden from queries, restorable), or with --hard delete it from history; an unsent message is withdrawn.")
    @OptionGroup var options: StoreOptionsGroup
    @OptionGroup var connection: ConnectionOptions
    @Option(name: .long, help: "The message's id.") var message: String
    @Flag(name: .long, help: "Delete it from PubNub's history and the store (needs Delete-From-History on the keyset).") var hard = false

    func run() async throws {
        try await runReportingErrors {
            let receipt = try await Session(store: options, connection: connection, existing: true).outbox.deleteMessage(id: message, hard: hard)
            try EnqueueOutput(receipt, id: message).print(json: options.json)
        }
    }
}
