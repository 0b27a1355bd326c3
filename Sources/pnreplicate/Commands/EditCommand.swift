import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate edit`: a message's new text (the Chat SDK's `edited` action).
struct EditCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit",
        abstract: "Edit a stored message's text (works offline; an unsent message is rewritten, a sent one gets an `edited` action).")
    @OptionGroup var options: SessionOptions
    @Option(name: .long, help: "The message's id.") var message: String
    @Option(name: .long, help: "The new text.") var text: String

    func perform() async throws {
        try await Session.enqueue(options, existing: true, id: { _ in message }) { try await $0.messages.edit(message: message, text: text) }
    }
}
