import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate typing`: sends the Chat SDK's typing signal for the configured user.
struct TypingCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "typing",
        abstract: "Signal that the user is typing on a channel (or, with --stop, stopped).",
        discussion: """
            Sends {"type":"typing","value":true} (or false with --stop) as a PubNub signal on \
            the channel, as the Chat SDK does: nothing goes through the outbox or into the store, \
            and nothing retries it (a late typing indicator is worse than none). Others drop the \
            user 5 s after the last `true`. Refused on channels whose stored type is `public`.
            """)

    @OptionGroup var options: SessionOptions
    @Option(name: .long, help: "The channel.") var channel: String
    @Flag(name: .long, help: "Signal that the user stopped typing.") var stop = false

    func validate() throws { try validateIdentifiers([channel], flag: "--channel") }

    func perform() async throws {
        // The store is only read (a channel's type), and only when it exists: typing never
        // writes to it. One that cannot be read is refused first, as `show` refuses it.
        let exists = FileManager.default.fileExists(atPath: options.storePath)
        if exists { _ = try options.openForReading() }
        let replica = try await Session.network(options, readingStore: exists)
        if stop {
            try await replica.live.stopTyping(in: channel, force: true)
        } else {
            try await replica.live.startTyping(in: channel)
        }
        if options.json { return try Output.json(["channel": channel, "typing": stop ? "stopped" : "started"]) }
        Output.standardOutput("typing \(stop ? "stopped" : "started") on \(channel)\n")
    }
}
