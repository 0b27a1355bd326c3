import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate delete`: a soft delete (the Chat SDK's `deleted` action).
struct DeleteCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Soft-delete a stored message (hidden from queries, restorable), or with --hard delete it from history; an unsent message is withdrawn.")
    @OptionGroup var options: SessionOptions
    @Option(name: .long, help: "The message's id.") var message: String
    @Flag(name: .long, help: ArgumentHelp(
        "Delete it from PubNub's history and the store (needs Delete-From-History on the keyset), and its files.",
        discussion: "Only the message's own files are deleted: uploaded by this device for it, or first named by it in the channel's history within an hour of the upload, as the server confirms; a file that cannot be confirmed stays. A copy or forward of another message does not delete the original's files (docs/files.md)."))
    var hard = false
    @Flag(name: .customLong("preserve-files"), help: "With --hard: leave the message's files on PubNub (the Chat SDK's preserveFiles).")
    var preserveFiles = false

    func validate() throws {
        if preserveFiles && !hard { throw ValidationError("--preserve-files goes with --hard (a soft delete never deletes files)") }
    }

    func perform() async throws {
        try await Session.enqueue(options, existing: true, id: { _ in message }) {
            try await $0.messages.delete(id: message, hard: hard, preserveFiles: preserveFiles)
        }
    }
}
