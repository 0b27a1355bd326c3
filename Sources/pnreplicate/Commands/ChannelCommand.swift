import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate channel set|remove`.
struct ChannelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "channel", abstract: "Edit or remove a channel's metadata.", subcommands: [Set.self, Remove.self])

    struct Set: ReportingCommand {
        static let configuration = CommandConfiguration(abstract: "Edit a channel (sent with the stored eTag as If-Match).")
        @OptionGroup var options: SessionOptions
        @OptionGroup var fields: ObjectFieldOptions
        @Option(name: .long, help: "Description (an empty string clears it).") var description: String?

        func perform() async throws {
            var edit = try fields.edit(of: ChatChannel<FlatCustom>.self)
            edit.details = ObjectFieldOptions.update(description)
            try await Session.enqueue(options, id: { _ in fields.id }) { try await $0.objects.setChannel(id: fields.id, edit: edit) }
        }
    }

    struct Remove: ReportingCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a channel's metadata.")
        @OptionGroup var options: SessionOptions
        @Option(name: .long, help: "The channel's id.") var id: String

        func perform() async throws {
            try await Session.enqueue(options, id: { _ in id }) { try await $0.objects.removeChannel(id: id) }
        }
    }
}
