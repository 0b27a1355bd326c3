import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate mute`: hide users' messages, and write the mute list for the user's other devices.
struct MuteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mute",
        abstract: "Mute users: their messages leave `show messages` at once; the mute list is written when synced.",
        discussion: "The Chat SDK's mute list (a user object the Chat SDK hides), so other devices of the user hide them too.")
    @OptionGroup var options: SessionOptions
    @Option(name: .long, help: "A user to mute (repeatable).") var user: [String]

    func validate() throws { try validateIdentifiers(user, flag: "--user") }

    func run() async throws {
        try await MuteListOutput.run(options) { try await $0.moderation.mute(users: user) }
    }
}

/// `pnreplicate unmute`.
struct UnmuteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unmute", abstract: "Unmute users: their messages show again at once; the mute list is written when synced.")
    @OptionGroup var options: SessionOptions
    @Option(name: .long, help: "A user to unmute (repeatable).") var user: [String]

    func validate() throws { try validateIdentifiers(user, flag: "--user") }

    func run() async throws {
        try await MuteListOutput.run(options) { try await $0.moderation.unmute(users: user) }
    }
}

/// What `mute` and `unmute` print: the op, as every enqueue command does, and the new list.
struct MuteListOutput: Encodable {
    var opId: String?
    var disposition: String
    var muted: [String]

    init(_ receipt: OutboxReceipt<[String]>) {
        let queued = EnqueueOutput(receipt, id: nil)
        (opId, disposition, muted) = (queued.opId, queued.disposition, receipt.value ?? [])
    }

    /// Queues a mute list change on the session's replica and prints the result.
    static func run(
        _ options: SessionOptions,
        _ change: (Replica<DefaultChatCustom>) async throws -> OutboxReceipt<[String]>
    ) async throws {
        try await runReportingErrors {
            try MuteListOutput(try await change(try await Session(options).replica)).print(json: options.json)
        }
    }

    func print(json: Bool) throws {
        if json { return try Output.json(self) }
        Output.table([("op", opId ?? "-"), ("outbox", disposition), ("muted", muted.isEmpty ? "nobody" : muted.joined(separator: ", "))])
    }
}
