import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate thread`: a channel's threads and a thread's replies, from the store.
struct ThreadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thread",
        abstract: "A channel's threads and a thread's replies, from the store (reads only).",
        discussion: "Reply with `draft set --channel C --thread TT` then `draft send`.",
        subcommands: [List.self, Replies.self])

    struct List: ReportingCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "The messages of a channel that have a thread, with their reply counts.")
        @OptionGroup var options: StoreOptionsGroup
        @Option(name: .long, help: "The channel.") var channel: String

        func perform() async throws {
            let store = try options.openForReading()
            let threads = try await store.fetch(store.queries.threads(inChannel: channel)).map(ThreadOutput.init)
            if options.json { return try Output.json(threads) }
            Output.columns(
                ["MESSAGE", "REPLIES", "NEWEST", "TEXT"],
                threads.map { [String($0.rootTimetoken), String($0.replyCount), $0.newestReply.map(String.init) ?? "-", Output.oneLine($0.text)] },
                empty: "no threads in \(channel) in the store")
        }
    }

    struct Replies: ReportingCommand {
        static let configuration = CommandConfiguration(
            commandName: "replies", abstract: "The replies in the thread of a message, oldest first.")
        @OptionGroup var options: StoreOptionsGroup
        @Option(name: .long, help: "The parent channel.") var channel: String
        @Option(name: .long, help: "The parent message's timetoken.") var message: String

        func perform() async throws {
            guard let root = try HistoryCommand.timetoken(message, flag: "--message") else { return }
            let store = try options.openForReading()
            let replies = try await store.fetch(store.queries.replies(inChannel: channel, root: root))
            let thread = ChatSDKFormat.threadChannel(of: channel, root: root)
            if options.json { return try Output.json(HistoryOutput(channel: thread, source: "local", messages: replies)) }
            ShowCommand.printMessages(replies, empty: "no replies to \(root.rawValue) of \(channel) in the store")
        }
    }
}

/// One thread as `thread list --json` prints it.
struct ThreadOutput: Encodable {
    var channelId: String
    var rootMessageId: String
    var rootTimetoken: UInt64
    var text: String
    var replyCount: Int
    var newestReply: UInt64?

    init(_ thread: ChatThread<FlatCustom>) {
        channelId = thread.channelId
        rootMessageId = thread.root.id
        rootTimetoken = thread.root.timetoken?.rawValue ?? 0
        text = thread.root.shownText
        replyCount = thread.replyCount
        newestReply = thread.newestReply?.rawValue
    }
}
