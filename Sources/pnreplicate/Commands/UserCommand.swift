import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate user set|remove`.
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user", abstract: "Edit or remove a user's metadata.", subcommands: [Set.self, Remove.self])

    struct Set: ReportingCommand {
        static let configuration = CommandConfiguration(abstract: "Edit a user (sent with the stored eTag as If-Match).")
        @OptionGroup var options: SessionOptions
        @OptionGroup var fields: ObjectFieldOptions
        @Option(name: .long, help: "Email.") var email: String?

        func perform() async throws {
            var edit = try fields.edit(of: ChatUser<FlatCustom>.self)
            edit.email = ObjectFieldOptions.update(email)
            try await Session.enqueue(options, id: { _ in fields.id }) { try await $0.objects.setUser(id: fields.id, edit: edit) }
        }
    }

    struct Remove: ReportingCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a user's metadata.")
        @OptionGroup var options: SessionOptions
        @Option(name: .long, help: "The user's id.") var id: String

        func perform() async throws {
            try await Session.enqueue(options, id: { _ in id }) { try await $0.objects.removeUser(id: id) }
        }
    }
}
