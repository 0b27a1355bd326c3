import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate react`.
struct ReactCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "react",
        abstract: "Add (or with --remove, remove) the user's reaction on a stored message, also one still pending.")

    @OptionGroup var options: SessionOptions
    @Option(name: .long, help: "The message's id.") var message: String
    @Option(name: .long, help: "The reaction value, e.g. an emoji.") var value: String
    @Option(name: .long, help: "The action type (default reactions, as the PubNub Chat SDK writes emoji reactions).") var type = ChatSDKFormat.reactionType
    @Flag(name: .long, help: "Remove the reaction instead.") var remove = false

    func perform() async throws {
        try await Session.enqueue(options) { replica in
            remove
                ? try await replica.messages.removeReaction(value, type: type, fromMessage: message)
                : try await replica.messages.addReaction(value, type: type, toMessage: message)
        }
    }
}
