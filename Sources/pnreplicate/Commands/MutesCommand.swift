import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate mutes`: the acting user's mute list, from the store.
struct MutesCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "mutes",
        abstract: "The users you muted, as the app sees them: the synced mute list with unsent mutes and unmutes over it (reads only).")
    @OptionGroup var options: StoreOptionsGroup
    @Option(name: .long, help: "The acting user (default: $PUBNUB_USER_ID, else pnreplicate-cli).") var userId: String?

    func perform() async throws {
        let store = try options.openForReading()
        let user = actingUser(userId)
        let muted = try await store.fetch(store.queries.mutedUsers(by: user))
        if options.json { return try Output.json(muted) }
        if muted.isEmpty { Output.standardOutput("\(user) has muted nobody\n"); return }
        Output.standardOutput(muted.map { Output.terminalSafe($0) + "\n" }.joined())
    }
}
