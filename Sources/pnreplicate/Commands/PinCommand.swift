import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate pin` / `unpin`: the channel's pinned message.
struct PinCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin", abstract: "Pin a sent message in its channel (or --channel), in the channel's custom data.")
    @OptionGroup var options: SessionOptions
    @Option(name: .long, help: "The message's id.") var message: String
    @Option(name: .long, help: "The channel to pin it in (default: the message's).") var channel: String?

    func perform() async throws {
        try await Session.enqueue(options, existing: true) { try await $0.messages.pin(id: message, in: channel) }
    }
}
