import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate wipe`: signs the store's user out of this machine (`Replica.signOut`).
struct WipeCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "wipe",
        abstract: "Sign out: remove the device's push registrations, then the store and every file of it.",
        discussion: """
            Refused while ops are not sent yet (they are named; --discard-unsent goes on anyway), \
            while another process holds the store's lock (a listen, a sync), or when a push \
            registration cannot be removed (--keep-push goes on without). Removes the store, its \
            -wal and -shm, its .lock, its .files area and its migration backups.
            """)

    @OptionGroup var options: SessionOptions
    @Flag(name: .long, help: "Sign out even though ops are not sent yet: they are lost.") var discardUnsent = false
    @Flag(name: .long, help: "Leave the device's push registrations on the server (sign out offline).") var keepPush = false

    func perform() async throws {
        let replica = try await Session(options, existing: true).replica
        let report = try await replica.signOut(discardingUnsent: discardUnsent, keepingPushRegistrations: keepPush)
        if options.json { return try Output.json(report) }
        Output.table([
            ("removed", "\(report.removedFiles.count) file(s) of \(options.storePath)"),
            ("discarded", "\(report.discardedOps) unsent op(s)"),
            ("push", "\(report.pushDevicesRemoved) device(s) removed"),
        ])
    }
}
