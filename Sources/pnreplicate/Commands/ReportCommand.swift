import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate report`: report a message to its channel's moderators (the Chat SDK's `Message.report`).
struct ReportCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Report a sent message to its channel's moderators (works offline; sent exactly once).",
        discussion: """
            Queued as a publish of the Chat SDK's report to PUBNUB_INTERNAL_MODERATION_<channel>; \
            `pnreplicate --dry-run` shows the request, `sync` sends it.
            """)
    @OptionGroup var options: SessionOptions
    @Option(name: .long, help: "The message's id (a sent one: the report names its timetoken).") var message: String
    @Option(name: .long, help: "Why it is reported.") var reason: String

    func perform() async throws {
        try await Session.enqueue(options, existing: true, id: { _ in message }) { try await $0.moderation.report(message: message, reason: reason) }
    }
}
