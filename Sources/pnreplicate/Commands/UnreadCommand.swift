import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate unread`: unread counts from the store.
struct UnreadCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "unread", abstract: "Unread counts of the user's channels, from the store (reads only).")
    @OptionGroup var options: StoreOptionsGroup
    @Option(name: .long, help: "The user (default: $PUBNUB_USER_ID, else pnreplicate-cli).") var user: String?
    @Option(name: .long, help: "Only this channel.") var channel: String?

    func perform() async throws {
        let store = try options.openForReading()
        let user = actingUser(self.user)
        var counts = try await store.fetch(store.queries.unreadCounts(for: user))
        if let channel { counts = counts.filter { $0.key == channel } }
        if options.json { return try Output.json(counts) }
        if counts.isEmpty { Output.standardOutput("no memberships of \(user) in the store\n"); return }
        Output.table(counts.sorted { $0.key < $1.key }.map { ($0.key, String($0.value)) })
    }
}
