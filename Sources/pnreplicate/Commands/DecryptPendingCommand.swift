import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate decrypt-pending`: reads again the messages stored undecryptable.
struct DecryptPendingCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "decrypt-pending",
        abstract: "Decrypt the stored messages that could not be decrypted before (give the right --cipher-key).")
    @OptionGroup var options: SessionOptions

    func perform() async throws {
        guard try options.connection.hasCipherKey() else { throw ValidationError("decrypt-pending needs --cipher-key or $PUBNUB_CIPHER_KEY") }
        let report = try await Session(options, existing: true).replica.decryptPending()
        if options.json { return try Output.json(report) }
        Output.table([("decrypted", String(report.decrypted)), ("still undecryptable", String(report.stillUndecryptable))])
    }
}
