import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate invite`: invite a user to a channel, as the Chat SDK's `Channel.invite`.
struct InviteCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "invite",
        abstract: "Invite a user to a channel: their pending membership and an invite event on their channel (works offline).",
        discussion: "Nothing is queued when the store holds a membership of theirs; `sync` sends it.")
    @OptionGroup var options: SessionOptions
    @Option(name: .long, help: "The channel (in the store).") var channel: String
    @Option(name: .long, help: "The user to invite.") var user: String

    func perform() async throws {
        try validateIdentifiers([channel], flag: "--channel")
        try validateIdentifiers([user], flag: "--user")
        try await Session.enqueue(options, existing: true) { try await $0.conversations.invite(user, to: channel) }
    }
}

/// `pnreplicate invites`: the acting user's open invitations, from the store.
struct InvitesCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "invites",
        abstract: "Your open invitations (pending memberships) and who sent them, from the store (reads only).",
        discussion: "`join --channel C` accepts one.")
    @OptionGroup var options: StoreOptionsGroup
    @Option(name: .long, help: "The acting user (default: $PUBNUB_USER_ID, else pnreplicate-cli).") var userId: String?

    func perform() async throws {
        let store = try options.openForReading()
        let user = actingUser(userId)
        let invitations = try await store.fetch(store.queries.invitations(for: user)).map(InvitationOutput.init)
        if options.json { return try Output.json(invitations) }
        Output.columns(
            ["CHANNEL", "TYPE", "INVITED BY", "AT"],
            invitations.map { [$0.channelId, $0.channelType ?? "-", $0.invitedBy ?? "-", $0.timetoken.map(String.init) ?? "-"] },
            empty: "no open invitations of \(user) in the store")
    }
}

/// One invitation as `invites --json` prints it.
struct InvitationOutput: Encodable {
    var channelId: String
    var channelName: String?
    var channelType: String?
    var status: String?
    var invitedBy: String?
    /// The invite event's timetoken (nil when the store holds no event).
    var timetoken: UInt64?

    init(_ invitation: ChatInvitation<DefaultChatCustom>) {
        channelId = invitation.channelId
        channelName = invitation.membership.channel.name
        status = invitation.membership.status
        invitedBy = invitation.event?.publisher
        timetoken = invitation.event?.timetoken.rawValue
        if case .invite(let type, _)? = invitation.event?.kind { channelType = type } else { channelType = invitation.membership.channel.type }
    }
}
