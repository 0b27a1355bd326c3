import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate unpin`.
struct UnpinCommand: ReportingCommand {
    static let configuration = CommandConfiguration(commandName: "unpin", abstract: "Unpin a channel's pinned message.")
    @OptionGroup var options: StoreOptionsGroup
    @OptionGroup var connection: ConnectionOptions
    @Option(name: .long, help: "The channel.") var channel: String

    func perform() async throws {
        try await Session.enqueue(options, connection, existing: true) { try await $0.messages.unpin(in: channel) }
    }
}
