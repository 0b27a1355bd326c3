import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate unpin`.
struct UnpinCommand: ReportingCommand {
    static let configuration = CommandConfiguration(commandName: "unpin", abstract: "Unpin a channel's pinned message.")
    @OptionGroup var options: SessionOptions
    @Option(name: .long, help: "The channel.") var channel: String

    func perform() async throws {
        try await Session.enqueue(options, existing: true) { try await $0.messages.unpin(in: channel) }
    }
}
