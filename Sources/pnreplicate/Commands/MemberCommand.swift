import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate member set|remove`.
struct MemberCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "member",
        abstract: "Set or remove a membership.", subcommands: [Set.self, Remove.self])

    struct Target: ParsableArguments {
        @Option(name: .long, help: "The channel.") var channel: String
        @Option(name: .long, help: "The member (default: the acting user).") var user: String?
    }

    struct Set: ReportingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set a membership's status, type or custom data.",
            discussion: "With no field, the acting user joins the channel (as `pnreplicate join`).")
        @OptionGroup var options: SessionOptions
        @OptionGroup var target: Target
        @Option(name: .long, help: "Status.") var status: String?
        @Option(name: .long, help: "Type.") var type: String?
        @Option(name: .long, help: "Custom data, a flat JSON object.") var custom: String?

        func perform() async throws {
            let edit = MemberEdit<DefaultChatCustom>(status: status, type: type, custom: try parseCustom(custom))
            try await Session.enqueue(options) { try await $0.memberships.set(channel: target.channel, user: target.user, edit: edit) }
        }
    }

    struct Remove: ReportingCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a membership.")
        @OptionGroup var options: SessionOptions
        @OptionGroup var target: Target

        func perform() async throws {
            try await Session.enqueue(options) { try await $0.memberships.remove(channel: target.channel, user: target.user) }
        }
    }
}
