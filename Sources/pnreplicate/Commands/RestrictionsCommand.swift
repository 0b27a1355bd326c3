import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate restrictions`: what moderators decided about the acting user, from the store.
struct RestrictionsCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "restrictions",
        abstract: "The acting user's bans and mutes by channel, from the store (reads only).",
        discussion: """
            A Chat SDK moderator's restrictions, as the last sync or listen read them: banned (no \
            write to the channel), muted (no message sent to it), with the moderator's reason. \
            Writes they forbid are refused before anything is queued.
            """)
    @OptionGroup var options: StoreOptionsGroup
    @Option(name: .long, help: "The acting user (default: $PUBNUB_USER_ID, else pnreplicate-cli).") var userId: String?
    @Option(name: .long, help: "Only this channel.") var channel: String?

    func perform() async throws {
        let store = try options.openForReading()
        let user = actingUser(userId)
        let restrictions: [ChannelRestriction]
        if let channel {
            restrictions = try await store.fetch(store.queries.restriction(inChannel: channel, for: user)).map { [$0] } ?? []
        } else {
            restrictions = try await store.fetch(store.queries.restrictions(of: user))
        }
        if options.json { return try Output.json(restrictions.map(RestrictionOutput.init)) }
        guard !restrictions.isEmpty else {
            Output.standardOutput("no restrictions of \(user)\(channel.map { " in \($0)" } ?? "") in the store\n")
            return
        }
        Output.table(restrictions.map { r in
            (Output.terminalSafe(r.channelId), Self.words(r) + (r.reason.map { "  (\(Output.oneLine($0)))" } ?? ""))
        })
    }

    /// `banned`, `muted` or `banned, muted`.
    static func words(_ restriction: ChannelRestriction) -> String {
        [restriction.ban ? "banned" : nil, restriction.mute ? "muted" : nil].compactMap { $0 }.joined(separator: ", ")
    }
}

/// One restriction as `restrictions --json` prints it; `reason` is `null` when none was given.
struct RestrictionOutput: Encodable {
    var channelId: String
    var ban: Bool
    var mute: Bool
    var reason: String?

    init(_ restriction: ChannelRestriction) {
        (channelId, ban, mute, reason) = (restriction.channelId, restriction.ban, restriction.mute, restriction.reason)
    }

    enum CodingKeys: String, CodingKey { case channelId, ban, mute, reason }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(channelId, forKey: .channelId)
        try c.encode(ban, forKey: .ban)
        try c.encode(mute, forKey: .mute)
        try c.encode(reason, forKey: .reason)
    }
}
