import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate forward`: forward a sent message to another channel, as the Chat SDK's `forwardMessage`.
struct ForwardCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "forward",
        abstract: "Forward a sent message to another channel (a new message; works offline).",
        discussion: "Its content and meta, with originalPublisher and originalChannelId in meta; `sync` sends it.")
    @OptionGroup var options: SessionOptions
    @Option(name: .long, help: "The message's id (a sent one).") var message: String
    @Option(name: .long, help: "The channel to forward it to.") var channel: String

    func perform() async throws {
        try validateIdentifiers([channel], flag: "--channel")
        try await Session.enqueue(options, existing: true, id: { $0.value?.id }) { try await $0.messages.forward(message: message, to: channel) }
    }
}
