import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate mentions`: the acting user's mentions feed, from the store.
struct MentionsCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "mentions",
        abstract: "The messages that mentioned you, newest first, from the store (reads only).",
        discussion: """
            The Chat SDK's `mention` events on your channel, as `sync` and `listen` store them, \
            each with its message (events whose message the store does not hold, or that its author \
            did not publish, are left out, as the Chat SDK leaves them out).
            """)
    @OptionGroup var options: StoreOptionsGroup
    @Option(name: .long, help: "The acting user (default: $PUBNUB_USER_ID, else pnreplicate-cli).") var userId: String?
    @Option(name: .long, help: "At most this many (default 100).") var limit = 100

    func perform() async throws {
        let store = try options.openForReading()
        let user = actingUser(userId)
        let feed = try await store.fetch(store.queries.mentions(of: user, limit: limit)).compactMap(MentionOutput.init)
        if options.json { return try Output.json(feed) }
        Output.columns(
            ["CHANNEL", "MESSAGE", "BY", "TEXT"],
            feed.map { [$0.channelId, String($0.messageTimetoken), $0.mentionedBy ?? "-", Output.oneLine($0.text)] },
            empty: "no mentions of \(user) in the store")
    }
}

/// One mention as `mentions --json` prints it.
struct MentionOutput: Encodable {
    /// The channel of the message (a thread channel for a reply).
    var channelId: String
    var messageTimetoken: UInt64
    /// The thread's parent channel, for a reply.
    var parentChannelId: String?
    /// The event's own timetoken.
    var timetoken: UInt64
    var mentionedBy: String?
    /// The message's id and shown text.
    var messageId: String
    var text: String

    init?(_ item: MentionFeedItem<FlatCustom>) {
        guard case .mention(let tt, let channel, let parent) = item.event.kind else { return nil }
        channelId = channel
        messageTimetoken = tt.rawValue
        parentChannelId = parent
        timetoken = item.event.timetoken.rawValue
        mentionedBy = item.event.publisher
        messageId = item.message.id
        text = item.message.shownText
    }
}
