import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate restore`: undoes the user's soft delete.
struct RestoreCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore", abstract: "Restore a message this user soft-deleted.")
    @OptionGroup var options: SessionOptions
    @Option(name: .long, help: "The message's id.") var message: String

    func perform() async throws {
        try await Session.enqueue(options, existing: true, id: { _ in message }) { try await $0.messages.restore(id: message) }
    }
}
