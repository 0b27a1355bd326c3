import ArgumentParser
import Foundation
import ReplicaModel
import ReplicaStore
import Replicator

/// `pnreplicate send`.
struct Send: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Store a message and queue its publish (works offline; `pnreplicate sync` sends it).")

    @OptionGroup var options: StoreOptionsGroup
    @OptionGroup var connection: ConnectionOptions
    @Option(name: .long, help: "The channel.") var channel: String
    @Option(name: .long, help: "The message text.") var text: String
    @Option(name: .long, help: "Publish meta, a JSON object.") var meta: String?
    @Option(name: .customLong("custom-message-type"), help: "PubNub's custom_message_type: 3-50 characters of A-Z a-z 0-9 - _.")
    var customMessageType: String?
    @Option(name: .long, help: "Queue this many copies, numbered \"TEXT 1\", \"TEXT 2\", ... (one transaction per 10,000).") var count: Int?
    /// Copies of `--count` queued per transaction: larger batches write each touched index page
    /// fewer times (the message and op ids are random, so a batch touches pages all over the
    /// indexes); 10,000 copies hold about 10 MB. Hidden: tests make batches small.
    @Option(name: .long, help: .hidden) var batchSize = 10_000

    func run() async throws {
        try await runReportingErrors {
            let session = try await Session(store: options, connection: connection)
            let meta = try self.meta.map { try JSONValue(jsonData: Data($0.utf8)) }
            guard (count ?? 1) > 0 else { throw ValidationError("--count must be positive") }
            guard batchSize > 0 else { throw ValidationError("--batch-size must be positive") }
            var outputs: [EnqueueOutput] = []
            if let count {
                // One transaction per 10,000 (`Outbox.send(many:)`): a kill keeps whole batches.
                for start in stride(from: 1, through: count, by: batchSize) {
                    let batch = (start...min(count, start + batchSize - 1)).map {
                        OutgoingMessage<FlatCustom>(text: "\(text) \($0)", to: channel, meta: meta, customMessageType: customMessageType)
                    }
                    outputs += try await session.outbox.send(many: batch).map { EnqueueOutput($0, id: $0.value?.id) }
                }
            } else {
                let receipt = try await session.outbox.send(text: text, to: channel, meta: meta, customMessageType: customMessageType)
                outputs.append(EnqueueOutput(receipt, id: receipt.value?.id))
            }
            if options.json, count != nil { return try Output.json(outputs) }
            for output in outputs { try output.print(json: options.json) }
        }
    }
}

/// `pnreplicate react`.
struct React: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add (or with --remove, remove) the user's reaction on a stored message, also one still pending.")

    @OptionGroup var options: StoreOptionsGroup
    @OptionGroup var connection: ConnectionOptions
    @Option(name: .long, help: "The message's id.") var message: String
    @Option(name: .long, help: "The reaction value, e.g. an emoji.") var value: String
    @Option(name: .long, help: "The action type (default reactions, as the PubNub Chat SDK writes emoji reactions).") var type = ChatSDKFormat.reactionType
    @Flag(name: .long, help: "Remove the reaction instead.") var remove = false

    func run() async throws {
        try await runReportingErrors {
            let session = try await Session(store: options, connection: connection)
            let receipt = remove
                ? try await session.outbox.removeReaction(value, type: type, fromMessage: message)
                : try await session.outbox.addReaction(value, type: type, toMessage: message)
            try EnqueueOutput(receipt, id: nil).print(json: options.json)
        }
    }
}

/// `pnreplicate member set|remove`.
struct Member: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Set or remove a membership.", subcommands: [Set.self, Remove.self])

    struct Target: ParsableArguments {
        @Option(name: .long, help: "The channel.") var channel: String
        @Option(name: .long, help: "The member (default: the acting user).") var user: String?
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set a membership's status, type or custom data.",
            discussion: "With no field, the acting user joins the channel (as `pnreplicate join`).")
        @OptionGroup var options: StoreOptionsGroup
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var target: Target
        @Option(name: .long, help: "Status.") var status: String?
        @Option(name: .long, help: "Type.") var type: String?
        @Option(name: .long, help: "Custom data, a flat JSON object.") var custom: String?

        func run() async throws {
            try await runReportingErrors {
                let session = try await Session(store: options, connection: connection)
                let receipt = try await session.outbox.setMembership(
                    channel: target.channel, user: target.user,
                    edit: MemberEdit(status: status, type: type, custom: try parseCustom(custom)))
                try EnqueueOutput(receipt, id: nil).print(json: options.json)
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a membership.")
        @OptionGroup var options: StoreOptionsGroup
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var target: Target

        func run() async throws {
            try await runReportingErrors {
                let session = try await Session(store: options, connection: connection)
                let receipt = try await session.outbox.removeMembership(channel: target.channel, user: target.user)
                try EnqueueOutput(receipt, id: nil).print(json: options.json)
            }
        }
    }
}

/// `pnreplicate join`: the acting user joins a channel, as the Chat SDK's `join`.
struct JoinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "join",
        abstract: "Join a channel: your membership (status joined) with the history before now read.",
        discussion: "Stored at once and queued: `unread` lists the channel; `sync` sends the membership.")
    @OptionGroup var options: StoreOptionsGroup
    @OptionGroup var connection: ConnectionOptions
    @Option(name: .long, help: "The channel.") var channel: String
    @Option(name: .long, help: "Status (default: joined).") var status: String?
    @Option(name: .long, help: "Custom data, a flat JSON object.") var custom: String?

    func run() async throws {
        try await runReportingErrors {
            try validateIdentifiers([channel], flag: "--channel")
            let session = try await Session(store: options, connection: connection)
            let receipt = try await session.outbox.join(channel: channel, edit: MemberEdit(status: status, custom: try parseCustom(custom)))
            try EnqueueOutput(receipt, id: nil).print(json: options.json)
        }
    }
}

/// Fields `user set` and `channel set` share.
struct ObjectFieldOptions: ParsableArguments {
    @Option(name: .long, help: "The object's id.") var id: String
    @Option(name: .long, help: "Name (an empty string clears it).") var name: String?
    @Option(name: .long, help: "Status (an empty string clears it).") var status: String?
    @Option(name: .long, help: "Type.") var type: String?
    @Option(name: .long, help: "Custom data, a flat JSON object (replaces the whole object).") var custom: String?

    static func update(_ value: String?) -> FieldUpdate<String> {
        guard let value else { return .unchanged }
        return .set(value.isEmpty ? nil : value)
    }
}

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
                var edit = UserEdit<FlatCustom>()
                edit.name = ObjectFieldOptions.update(fields.name)
                edit.status = ObjectFieldOptions.update(fields.status)
                edit.type = ObjectFieldOptions.update(fields.type)
                edit.email = ObjectFieldOptions.update(email)
                if let custom = try parseCustom(fields.custom) { edit.custom = .set(custom) }
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
                var edit = ChannelEdit<FlatCustom>()
                edit.name = ObjectFieldOptions.update(fields.name)
                edit.status = ObjectFieldOptions.update(fields.status)
                edit.type = ObjectFieldOptions.update(fields.type)
                edit.details = ObjectFieldOptions.update(description)
                if let custom = try parseCustom(fields.custom) { edit.custom = .set(custom) }
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
