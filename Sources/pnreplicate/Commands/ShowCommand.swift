import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate show users|channels|members|messages|reactions`: what the local store holds.
struct ShowCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show what the local store holds (reads the store only, no network).",
        discussion: """
            users and channels list everything stored; members lists a channel's members with \
            --channel, else the acting user's memberships; messages and reactions need --channel. \
            Messages are oldest first, pending sends last; reactions are grouped by \
            message, then by type and value.
            """)

    /// What to show.
    enum Kind: String, CaseIterable, ExpressibleByArgument {
        case users, channels, members, messages, reactions
    }

    @OptionGroup var options: StoreOptionsGroup
    @Argument(help: "users, channels, members, messages or reactions.") var kind: Kind
    @Option(name: .long, help: "The channel (members, messages, reactions).") var channel: String?
    @Option(name: .long, help: "The acting user: whose memberships `members` lists without --channel, whose reactions are marked as mine (default: $PUBNUB_USER_ID, else pnreplicate-cli).")
    var userId: String?

    func perform() async throws {
        let needsChannel: Set<Kind> = [.messages, .reactions]
        if needsChannel.contains(kind), channel == nil { throw ShowError.channelRequired(kind.rawValue) }
        let store = try options.openForReading()
        let q = store.queries
        switch kind {
        case .users:
            let users = try await store.fetch(q.users())
            if options.json { return try Output.json(users) }
            Output.columns(
                ["id", "name", "type", "status", "email", "updated"],
                users.map { [$0.id, Output.cell($0.name), $0.type, Output.cell($0.status), Output.cell($0.email), Output.cell($0.updated)] },
                empty: "no users stored")
        case .channels:
            let channels = try await store.fetch(q.channels())
            if options.json { return try Output.json(channels) }
            Output.columns(
                ["id", "name", "type", "status", "members", "updated"],
                channels.map {
                    [$0.id, Output.cell($0.name), $0.type, Output.cell($0.status), Output.cell($0.memberCount), Output.cell($0.updated)]
                },
                empty: "no channels stored")
        case .members where channel == nil:
            let memberships = try await store.fetch(q.memberships(ofUser: me))
            if options.json { return try Output.json(memberships) }
            Output.columns(
                ["channel", "name", "status", "type", "updated"],
                memberships.map {
                    [$0.channelId, Output.cell($0.channel.name), Output.cell($0.status), Output.cell($0.type), Output.cell($0.updated)]
                },
                empty: "\(me) has no memberships stored (`pnreplicate join --channel C` joins one)")
        case .members:
            let members = try await store.fetch(q.members(ofChannel: channel ?? ""))
            if options.json { return try Output.json(members) }
            Output.columns(
                ["user", "name", "status", "type", "present", "updated"],
                members.map {
                    [$0.userId, Output.cell($0.user.name), Output.cell($0.status), Output.cell($0.type),
                     Output.cell($0.isPresent), Output.cell($0.updated)]
                },
                empty: "no members of \(channel ?? "") stored")
        case .messages:
            let messages = try await store.fetch(q.messages(inChannel: channel ?? ""))
            if options.json { return try Output.json(messages) }
            Self.printMessages(messages, empty: "no messages in \(channel ?? "") stored")
        case .reactions:
            try await showReactions(store, channel: channel ?? "")
        }
    }

    /// The acting user: `--user-id`, else `PUBNUB_USER_ID`, else `pnreplicate-cli`.
    private var me: String { actingUser(userId) }

    private func showReactions(_ store: Replica<DefaultChatCustom>, channel: String) async throws {
        var reacted: [(message: ChatMessage<FlatCustom>, reactions: [ReactionSummary])] = []
        for message in try await store.fetch(store.queries.messages(inChannel: channel)) {
            let reactions = try await store.fetch(store.queries.reactions(ofMessage: message.id, currentUserId: me))
            if !reactions.isEmpty { reacted.append((message, reactions)) }
        }
        if options.json {
            return try Output.json(reacted.map { ReactionsOutput(message: $0.message, reactions: $0.reactions) })
        }
        Output.columns(
            ["message", "timetoken", "type", "value", "count", "users"],
            reacted.flatMap { entry in
                entry.reactions.map { r in
                    [
                        entry.message.id, Output.cell(entry.message.timetoken), r.type, r.value, String(r.count),
                        r.userIds.joined(separator: ",") + (r.reactedByCurrentUser ? " (mine)" : ""),
                    ]
                }
            },
            empty: "no reactions in \(channel) stored")
    }

    /// Messages as columns: timetoken (or `pending`), id, user, delivery, text on one line. The
    /// text is the shown one (the newest edit, marked `(edited)`); a soft-deleted message is
    /// marked `[deleted]`, one by a user the current user muted (when listed) `[muted]`.
    static func printMessages(_ messages: [ChatMessage<FlatCustom>], empty: String) {
        Output.columns(
            ["timetoken", "id", "user", "delivery", "text"],
            messages.map { message in
                var text = Output.oneLine(message.shownText)
                if message.isUndecryptable {
                    text = "[undecryptable: wrong or missing --cipher-key; pnreplicate decrypt-pending]"
                }
                if message.editedText != nil { text += " (edited)" }
                if message.isDeleted { text = "[deleted] " + text }
                if message.isFromMutedUser { text = "[muted] " + text }
                return [message.timetoken?.description ?? "pending", message.id, message.userId, message.delivery.rawValue, text]
            },
            empty: empty)
    }
}

/// Why `show` refused to run.
enum ShowError: Error, CustomStringConvertible {
    /// `members`, `messages` and `reactions` are per channel.
    case channelRequired(String)

    /// A one-line explanation.
    var description: String {
        switch self {
        case .channelRequired(let kind): "show \(kind) needs --channel C"
        }
    }
}

/// One message's reactions as `show reactions --json` prints them.
struct ReactionsOutput: Encodable {
    /// One (type, value) group.
    struct Group: Encodable {
        var type: String
        var value: String
        var count: Int
        var userIds: [String]
        var mine: Bool
    }

    var messageId: String
    var timetoken: Timetoken?
    var reactions: [Group]

    init(message: ChatMessage<FlatCustom>, reactions: [ReactionSummary]) {
        messageId = message.id
        timetoken = message.timetoken
        self.reactions = reactions.map {
            Group(type: $0.type, value: $0.value, count: $0.count, userIds: $0.userIds, mine: $0.reactedByCurrentUser)
        }
    }
}
