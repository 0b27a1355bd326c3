import ArgumentParser
import Foundation
import ReplicaModel
import ReplicaStore
import Replicator

/// `pnreplicate forward`: forward a sent message to another channel, as the Chat SDK's `forwardMessage`.
struct ForwardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forward",
        abstract: "Forward a sent message to another channel (a new message; works offline).",
        discussion: "Its content and meta, with originalPublisher and originalChannelId in meta; `sync` sends it.")
    @OptionGroup var options: StoreOptionsGroup
    @OptionGroup var connection: ConnectionOptions
    @Option(name: .long, help: "The message's id (a sent one).") var message: String
    @Option(name: .long, help: "The channel to forward it to.") var channel: String

    func run() async throws {
        try await runReportingErrors {
            try validateIdentifiers([channel], flag: "--channel")
            let session = try await Session(store: options, connection: connection, existing: true)
            let receipt = try await session.outbox.forward(message: message, to: channel)
            try EnqueueOutput(receipt, id: receipt.value?.id).print(json: options.json)
        }
    }
}
