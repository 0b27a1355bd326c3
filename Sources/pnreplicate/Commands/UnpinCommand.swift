import ArgumentParser
import Foundation
import ReplicaModel
import ReplicaStore
import Replicator

/// `pnreplicate unpin`.
struct UnpinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "unpin", abstract: "Unpin a channel's pinned message.")
    @OptionGroup var options: StoreOptionsGroup
    @OptionGroup var connection: ConnectionOptions
    @Option(name: .long, help: "The channel.") var channel: String

    func run() async throws {
        try await runReportingErrors {
            let receipt = try await Session(store: options, connection: connection, existing: true).outbox.unpinMessage(in: channel)
            try EnqueueOutput(receipt, id: nil).print(json: options.json)
        }
    }
}
