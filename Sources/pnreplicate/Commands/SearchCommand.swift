import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate search TEXT`: the stored messages whose text matches, from the store.
struct SearchCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Search the stored messages' text (reads only; PubNub has no message search).",
        discussion: """
            Every word must occur in a message's shown text (its newest edit), in any case, with or \
            without accents; the last word is also a prefix (`reco` finds `reconnect`). Chinese, \
            Japanese, Korean and Thai words are found inside unspaced text. Deleted messages and \
            those of muted users are left out. Only what the store holds is searched: run `sync` \
            (or `listen`) first. docs/search.md.
            """)
    @OptionGroup var options: StoreOptionsGroup
    @Argument(help: "What to find.") var text: String
    @Option(name: .long, help: "Only in this channel (repeat for several).") var channel: [String] = []
    @Option(name: .long, help: "Only messages by this user (repeat for several).") var author: [String] = []
    @Flag(name: .long, help: "Newest first instead of best match first.") var newest = false
    @Option(name: .long, help: "At most this many, 1-100 (default 20).") var limit = 20
    @Option(name: .long, help: "Skip this many (the next page: --offset 20).") var offset = 0

    func perform() async throws {
        var store = try options.openForReading()
        var search = MessageSearch(text, channels: channel.isEmpty ? nil : channel, authors: author.isEmpty ? nil : author)
        search.order = newest ? .newest : .relevance
        search.limit = limit
        search.offset = offset
        var page = try await store.fetch(store.queries.search(search))
        if page.unindexed > 0, let writable = try? indexingReplica() {
            // What the last command wrote (a process that ended before its store indexed it), or a
            // store upgraded to search: a writable replica's search lets the index catch up first.
            store = writable
            page = try await store.fetch(store.queries.search(search))
        }
        if page.unindexed > 0 {
            Output.standardError("warning: \(page.unindexed) stored messages are not indexed yet (the store cannot be written here): they are not searched\n")
        }
        if options.json { return try Output.json(SearchOutput(page)) }
        ShowCommand.printMessages(page.messages, empty: "no stored message matches \(Output.oneLine(text))")
        if page.hasMore { _ = Output.standardOutput("more: --offset \(offset + limit)\n") }
    }

    /// The store opened for writing, without a connection: its search indexes what is waiting.
    private func indexingReplica() throws -> Replica<DefaultChatCustom> {
        var configuration = ReplicaConfiguration(publishKey: "demo", subscribeKey: "demo", userId: "reader", store: .file(options.storePath))
        configuration.storeOptions = options.storeOptions(migration: .requireCurrent)
        return try Replica<DefaultChatCustom>(configuration)
    }
}

/// `search --json`: the page's messages and whether there are more.
struct SearchOutput: Encodable {
    var messages: [ChatMessage<FlatCustom>]
    var hasMore: Bool
    var unindexed: Int

    init(_ page: MessageSearchResults<FlatCustom>) {
        messages = page.messages
        hasMore = page.hasMore
        unindexed = page.unindexed
    }
}
