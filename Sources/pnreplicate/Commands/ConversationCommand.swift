import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate conversation`: open a direct conversation, create a group or public one, as the
/// Chat SDK's `create…Conversation` (`docs/conversations.md`).
struct ConversationCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conversation",
        abstract: "Open a direct conversation or create a group or public one (works offline).",
        subcommands: [Direct.self, Group.self, Public.self])

    struct Direct: ReportingCommand {
        static let configuration = CommandConfiguration(
            commandName: "direct",
            abstract: "Open the direct conversation with a user: the channel both compute, your membership, their invitation.",
            discussion: """
                The channel id is the Chat SDK's `direct.<cyrb53a of the two ids>`, so a Chat SDK \
                client opening the same conversation finds the same channel. Made only where none \
                exists; `sync` sends it.
                """)
        @OptionGroup var options: SessionOptions
        @Option(name: .long, help: "The other user.") var user: String
        @Option(name: .long, help: "The channel's name (default: its id).") var name: String?

        func perform() async throws {
            try validateIdentifiers([user], flag: "--user")
            let session = try await Session(options)
            try ConversationOutput(try await session.replica.conversations.openDirect(with: user, name: name)).print(json: options.json)
        }
    }

    struct Group: ReportingCommand {
        static let configuration = CommandConfiguration(
            commandName: "group", abstract: "Create a group conversation and invite users to it.")
        @OptionGroup var options: SessionOptions
        @Option(name: .long, help: "A user to invite (repeat the flag for more).") var user: [String] = []
        @Option(name: .long, help: "The channel id (default: a new UUID).") var id: String?
        @Option(name: .long, help: "The channel's name (default: its id).") var name: String?

        func perform() async throws {
            try validateIdentifiers(user, flag: "--user")
            if let id { try validateIdentifiers([id], flag: "--id") }
            let session = try await Session(options)
            let receipt = try await session.replica.conversations.createGroup(with: user, channelId: id, name: name)
            try ConversationOutput(receipt).print(json: options.json)
        }
    }

    struct Public: ReportingCommand {
        static let configuration = CommandConfiguration(
            commandName: "public", abstract: "Create a public conversation (anyone may join; no membership is made).")
        @OptionGroup var options: SessionOptions
        @Option(name: .long, help: "The channel id (default: a new UUID).") var id: String?
        @Option(name: .long, help: "The channel's name (default: its id).") var name: String?

        func perform() async throws {
            if let id { try validateIdentifiers([id], flag: "--id") }
            let session = try await Session(options)
            try ConversationOutput(try await session.replica.conversations.createPublic(channelId: id, name: name)).print(json: options.json)
        }
    }
}

/// What `conversation … --json` prints: the channel id, its type, the memberships as stored
/// (user and status) and the ops queued.
struct ConversationOutput: Encodable {
    struct Membership: Encodable {
        var userId: String
        var status: String?
    }
    var channelId: String
    var type: String?
    var memberships: [Membership]
    var opIds: [String]

    init(_ receipt: ConversationReceipt<DefaultChatCustom>) {
        channelId = receipt.channelId
        type = receipt.channel?.type
        memberships = ([receipt.membership].compactMap { $0 } + receipt.invitations).map {
            Membership(userId: $0.userId, status: $0.status)
        }
        opIds = receipt.opIds
    }

    func print(json: Bool) throws {
        if json { return try Output.json(self) }
        var rows = [("channel", Output.terminalSafe(channelId)), ("type", type ?? "-")]
        rows += memberships.map { ("member", Output.terminalSafe($0.userId) + ($0.status.map { " (\(Output.terminalSafe($0)))" } ?? "")) }
        rows.append(("outbox", opIds.isEmpty ? "nothing to send: the store holds it already" : "\(opIds.count) op(s) queued"))
        Output.table(rows)
    }
}
