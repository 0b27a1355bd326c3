import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate join`: the acting user joins a channel, as the Chat SDK's `join`.
struct JoinCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "join",
        abstract: "Join a channel: your membership (status joined) with the history before now read.",
        discussion: "Stored at once and queued: `unread` lists the channel; `sync` sends the membership.")
    @OptionGroup var options: SessionOptions
    @Option(name: .long, help: "The channel.") var channel: String
    @Option(name: .long, help: "Status (default: joined).") var status: String?
    @Option(name: .long, help: "Custom data, a flat JSON object.") var custom: String?

    func perform() async throws {
        try validateIdentifiers([channel], flag: "--channel")
        let edit = MemberEdit<DefaultChatCustom>(status: status, custom: try parseCustom(custom))
        try await Session.enqueue(options) { try await $0.memberships.join(channel: channel, edit: edit) }
    }
}
