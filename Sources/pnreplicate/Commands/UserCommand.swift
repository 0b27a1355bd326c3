import ArgumentParser
import Foundation
import ReplicaModel
import ReplicaStore
import Replicator

/// `pnreplicate user set|remove`.
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user", abstract: "Edit or remove a user's metadata.", subcommands: [Set.self, Remove.self])

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Edit a user (sent with the stored eTag as If-Match).")
        @OptionGroup var options: StoreOptionsGroup
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var fields: ObjectFieldOptions
        @Option(name: .long, help: "Email.") var email: String?

        func run() async throws {
            try await runReportingErrors {
                let session = try await Session(store: options, connection: connection)
                var edit = try fields.edit(of: ChatUser<FlatCustom>.self)
                edit.email = ObjectFieldOptions.update(email)
                let receipt = try await session.outbox.setUser(id: fields.id, edit: edit)
                try EnqueueOutput(receipt, id: fields.id).print(json: options.json)
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a user's metadata.")
        @OptionGroup var options: StoreOptionsGroup
        @OptionGroup var connection: ConnectionOptions
        @Option(name: .long, help: "The user's id.") var id: String

        func run() async throws {
            try await runReportingErrors {
                let session = try await Session(store: options, connection: connection)
                try EnqueueOutput(try await session.outbox.removeUser(id: id), id: id).print(json: options.json)
            }
        }
    }
}
