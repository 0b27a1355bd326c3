import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// What `pnreplicate user` and `pnreplicate channel` differ in: the noun, the one field only that
/// kind has (a user's email, a channel's description) and the replica's two writes. The commands
/// themselves are one (``ObjectCommand``).
protocol ObjectKind {
    /// The entity the commands edit.
    associatedtype Entity: ReplicatedEntity where Entity.CustomFields == FlatCustom
    /// The command's name and the noun of its help ("user", "channel").
    static var noun: String { get }
    /// The field only this kind has: its flag, its wire name (``FieldChanges/init(wireFields:)``) and its help.
    static var ownField: (flag: String, wireName: String, help: String) { get }
    /// Queues an edit of the object `id`.
    static func set(id: String, edit: FieldChanges<Entity>, on replica: Replica<DefaultChatCustom>) async throws
        -> OutboxReceipt<Entity>
    /// Queues the removal of the object `id`.
    static func remove(id: String, on replica: Replica<DefaultChatCustom>) async throws -> OutboxReceipt<Entity>
}

/// A user's metadata: `pnreplicate user set|remove`.
enum UserObject: ObjectKind {
    static let noun = "user"
    static let ownField = (flag: "email", wireName: "email", help: "Email.")
    static func set(id: String, edit: UserEdit<FlatCustom>, on replica: Replica<DefaultChatCustom>) async throws
        -> OutboxReceipt<ChatUser<FlatCustom>>
    {
        try await replica.objects.setUser(id: id, edit: edit)
    }
    static func remove(id: String, on replica: Replica<DefaultChatCustom>) async throws -> OutboxReceipt<ChatUser<FlatCustom>> {
        try await replica.objects.removeUser(id: id)
    }
}

/// A channel's metadata: `pnreplicate channel set|remove`.
enum ChannelObject: ObjectKind {
    static let noun = "channel"
    static let ownField = (flag: "description", wireName: "description", help: "Description (an empty string clears it).")
    static func set(id: String, edit: ChannelEdit<FlatCustom>, on replica: Replica<DefaultChatCustom>) async throws
        -> OutboxReceipt<ChatChannel<FlatCustom>>
    {
        try await replica.objects.setChannel(id: id, edit: edit)
    }
    static func remove(id: String, on replica: Replica<DefaultChatCustom>) async throws -> OutboxReceipt<ChatChannel<FlatCustom>> {
        try await replica.objects.removeChannel(id: id)
    }
}

/// `pnreplicate user|channel set|remove`: an object's metadata, edited (with the stored eTag) or removed.
struct ObjectCommand<Kind: ObjectKind>: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: Kind.noun, abstract: "Edit or remove a \(Kind.noun)'s metadata.", subcommands: [Set.self, Remove.self])
    }

    struct Set: ReportingCommand {
        static var configuration: CommandConfiguration {
            CommandConfiguration(abstract: "Edit a \(Kind.noun) (sent with the stored eTag as If-Match).")
        }
        @OptionGroup var options: SessionOptions
        @OptionGroup var fields: ObjectFieldOptions
        @Option(name: .customLong(Kind.ownField.flag), help: ArgumentHelp(Kind.ownField.help)) var ownField: String?

        func perform() async throws {
            let edit = try fields.edit(of: Kind.Entity.self, adding: [Kind.ownField.wireName: ownField])
            try await Session.enqueue(options, id: { _ in fields.id }) { try await Kind.set(id: fields.id, edit: edit, on: $0) }
        }
    }

    struct Remove: ReportingCommand {
        static var configuration: CommandConfiguration { CommandConfiguration(abstract: "Remove a \(Kind.noun)'s metadata.") }
        @OptionGroup var options: SessionOptions
        @Option(name: .long, help: ArgumentHelp("The \(Kind.noun)'s id.")) var id: String

        func perform() async throws {
            try await Session.enqueue(options, id: { _ in id }) { try await Kind.remove(id: id, on: $0) }
        }
    }
}
