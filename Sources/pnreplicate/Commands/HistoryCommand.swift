import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate history`: a page of a channel's history, from the store or from PubNub, read with
/// the same semantics either way.
struct HistoryCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Show a page of a channel's history from the store, or with --remote from PubNub.",
        discussion: """
            PubNub's rules, locally too: --start is exclusive and --end inclusive (end ≤ timetoken \
            < start); at most --limit messages (1-100, default 100), the newest in the window, or \
            with --reverse the oldest; --reverse is ignored when both --start and --end are given. \
            Output is oldest first. The local read shows only messages with a timetoken (no \
            pending sends); --remote stores nothing.
            """)

    @OptionGroup var options: SessionOptions
    @Option(name: .long, help: "The channel.") var channel: String
    @Option(name: .long, help: "Exclusive upper bound, a timetoken.") var start: String?
    @Option(name: .long, help: "Inclusive lower bound, a timetoken.") var end: String?
    @Flag(name: .long, help: "Take the oldest messages of the window instead of the newest.") var reverse = false
    @Option(name: .long, help: "At most this many messages, 1-100.") var limit = 100
    @Flag(name: .long, help: "Ask PubNub instead of the store.") var remote = false

    func perform() async throws {
        let start = try Self.timetoken(self.start, flag: "--start")
        let end = try Self.timetoken(self.end, flag: "--end")
        let messages: [ChatMessage<FlatCustom>]
        if remote {
            let replica = try await Session(options).replica
            messages = try await replica.remoteHistory(
                channel: channel, start: start, end: end, reverse: reverse, limit: limit)
        } else {
            let store = try options.openForReading()
            messages = try await store.fetch(
                store.queries.history(channel: channel, start: start, end: end, reverse: reverse, limit: limit))
        }
        if options.json {
            return try Output.json(HistoryOutput(channel: channel, source: remote ? "remote" : "local", messages: messages))
        }
        ShowCommand.printMessages(messages, empty: "no messages in that window of \(channel)\(remote ? "" : " stored")")
    }

    /// Parses a timetoken flag, naming the flag on failure.
    static func timetoken(_ text: String?, flag: String) throws -> Timetoken? {
        guard let text else { return nil }
        do {
            return try Timetoken(parsing: text)
        } catch {
            throw ValidationError("\(flag): \(error.description)")
        }
    }
}

/// What `history --json` prints.
struct HistoryOutput: Encodable {
    var channel: String
    /// `local` or `remote`.
    var source: String
    var messages: [ChatMessage<FlatCustom>]
}
