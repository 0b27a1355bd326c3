import ArgumentParser
import Foundation
import ReplicaModel
import ReplicaStore
import Replicator

/// `pnreplicate channel set|remove`.
struct ChannelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "channel", abstract: "Edit or remove a channel's metadata.", subcommands: [Set.self, Remove.self])

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Edit a channel (sent with the stored eTag as If-Match).")
        @OptionGroup var options: StoreOptionsGroup
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var fields: ObjectFieldOptions
        @Option(name: .long, help: "Description (an empty string clears it).") var description: String?

        func run() async throws {
            try await runReportingErrors {
                let session = try await Session(store: options, connection: connection)
                var edit = try fields.edit(of: ChatChannel<FlatCustom>.self)
                edit.details = ObjectFieldOptions.update(description)
                let receipt = try await session.outbox.setChannel(id: fields.id, edit: edit)
                try EnqueueOutput(receipt, id: fields.id).print(json: options.json)
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a channel's metadata.")
        @OptionGroup var options: StoreOptionsGroup
        @OptionGroup var connection: ConnectionOptions
        @Option(name: .long, help: "The channel's id.") var id: String

        func run() async throws {
            try await runReportingErrors {
                let session = try await Session(store: options, connection: connection)
                try EnqueueOutput(try await session.outbox.removeChannel(id: id), id: id).print(json: options.json)
            }
        }
    }
}
