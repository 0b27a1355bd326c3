import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate doctor`: the diagnostics report and the checks, with an exit status.
struct DoctorCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Say what stops messages from arriving: the diagnostics report and checks with a verdict each.",
        discussion: """
            Checks the store's integrity (SQLite's quick check), who holds its lock (a process that died \
            holding it), the server reachable and its clock against this machine's, the token valid and \
            granting what the followed channels need, and ops stuck longer than --stuck-after, dead \
            letters and conflicts. Reads the store without changing it; sends one /time request. Prints \
            the report (--json: {"report": …, "checks": […]}, no key, token, cipher key or message text, \
            --hash-ids to hash user and channel ids too). Exit status 0 when nothing needs attention, 3 \
            when something does, 1 when the doctor itself failed.
            """)

    @OptionGroup var options: SessionOptions

    @Option(help: ArgumentHelp("An op waiting longer than this many seconds needs attention.", valueName: "seconds"))
    var stuckAfter: Double = 3600

    @Flag(help: "Hash user and channel ids in the report (for a report that leaves the machine).")
    var hashIds = false

    /// The exit status when a check needs attention.
    static let attentionStatus: Int32 = 3

    func validate() throws {
        guard stuckAfter > 0 else { throw ValidationError("--stuck-after must be positive") }
    }

    func perform() async throws {
        // Read only: a writable open would recover a dead holder's ops before the lock is looked at.
        let replica = try await Session(options, readOnly: true, existing: true).replica
        let checks = try await replica.diagnostics.checkup(stuckAfter: stuckAfter)
        let report = try await replica.diagnostics.report(hashingIdentifiers: hashIds)
        if options.json {
            let reportJSON = try JSONSerialization.jsonObject(with: report.json())
            let checksJSON = checks.map { ["name": $0.name, "needsAttention": $0.needsAttention, "detail": $0.detail] as [String: Any] }
            let data = try JSONSerialization.data(withJSONObject: ["report": reportJSON, "checks": checksJSON], options: [.sortedKeys])
            FileHandle.standardOutput.write(data + Data("\n".utf8))
        } else {
            print(report.summary)
            Output.table(checks.map { ($0.needsAttention ? "ATTENTION" : "ok", "\($0.name): \($0.detail)") })
        }
        if checks.contains(where: \.needsAttention) { throw ExitCode(Self.attentionStatus) }
    }
}
