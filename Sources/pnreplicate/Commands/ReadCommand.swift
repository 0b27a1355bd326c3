import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate read`: the user's read position in a channel.
struct ReadCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "read",
        abstract: "Mark a channel read up to a timetoken (default: its newest stored message); sent with a receipt signal.")
    @OptionGroup var options: SessionOptions
    @Option(name: .long, help: "The channel.") var channel: String?
    @Flag(name: .long, help: "Every channel you are a member of, up to its newest stored message: one op per 100 channels, then a receipt each (as the Chat SDK's markAllMessagesAsRead).") var all = false
    @Option(name: .customLong("up-to"), help: "The newest message read, a timetoken (at most the present plus 10 minutes).") var upTo: String?
    @Flag(name: .long, help: "Move the read position even backwards (repairs one set too far).") var force = false

    func perform() async throws {
        if all {
            guard channel == nil, upTo == nil, !force else { throw ValidationError("--all takes no --channel, --up-to or --force") }
            let session = try await Session(options, existing: true)
            let moved = try await session.replica.memberships.markAllRead()
            if options.json { return try Output.json(MarkAllReadOutput(channels: moved.keys.sorted(), opIds: Set(moved.values.compactMap(\.opId)).sorted())) }
            Output.standardOutput(moved.isEmpty ? "every channel was read already: nothing to send\n" : moved.keys.sorted().map { "read " + Output.terminalSafe($0) + "\n" }.joined())
            return
        }
        guard let channel else { throw ValidationError("give --channel C, or --all") }
        try await Session.enqueue(options, existing: true) { replica in
            let timetoken: Timetoken
            if let upTo {
                guard let parsed = try? Timetoken(parsing: upTo) else { throw ValidationError("--up-to must be a timetoken") }
                timetoken = parsed
            } else {
                let messages = try await replica.fetch(replica.queries.messages(inChannel: channel))
                guard let newest = messages.compactMap(\.timetoken).max() else {
                    throw ValidationError("no sent message of \(channel) in the store; give --up-to")
                }
                timetoken = newest
            }
            return try await replica.memberships.markRead(channel: channel, upTo: timetoken, force: force)
        }
    }
}

/// What `read --all --json` prints: the channels whose read position moved and the ops that
/// carry them (a batch per 100 channels, or a channel's own membership edit).
struct MarkAllReadOutput: Encodable {
    var channels: [String]
    var opIds: [String]
}
