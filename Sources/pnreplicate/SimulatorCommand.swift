import ArgumentParser
import Foundation
import PubNubSimulator
import SimulatorHTTP

/// `pnreplicate simulator ...`.
struct SimulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulator", abstract: "Run the embedded PubNub simulator.", subcommands: [Serve.self])

    /// `pnreplicate simulator serve`.
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve the simulator on 127.0.0.1 until SIGINT or SIGTERM.",
            discussion: "The first line printed is `listening on http://127.0.0.1:PORT`.")

        @Option(help: "Port to bind (0 picks a free one).")
        var port = 0

        @Option(help: "Seed of the fault plan; the same seed and requests give the same faults.")
        var seed: UInt64 = 0

        @Option(help: "Fault profile: none, flaky, offline, hostile.")
        var faults = "none"

        @Option(help: "The publish key the simulator accepts.")
        var publishKey = "demo"

        @Option(help: "The subscribe key the simulator accepts.")
        var subscribeKey = "demo"

        func validate() throws {
            guard FaultProfile.named(faults) != nil else {
                throw ValidationError("unknown fault profile \"\(faults)\" (none, flaky, offline, hostile)")
            }
            guard (0...65535).contains(port) else { throw ValidationError("port must be 0-65535") }
        }

        func run() async throws {
            try await runReportingErrors {
                let server = PubNubServer(publishKey: publishKey, subscribeKey: subscribeKey)
                let plan = FaultPlan(seed: seed, profile: FaultProfile.named(faults)!)
                let faults = self.faults
                let seed = self.seed
                try await SimulatorHTTPServer.run(server: server, plan: plan, port: port, handleSignals: true) { port in
                    // Unbuffered, so that a parent process reading a pipe sees it at once.
                    FileHandle.standardOutput.write(Data("listening on http://127.0.0.1:\(port)\n".utf8))
                    FileHandle.standardError.write(Data("faults: \(faults), seed: \(seed)\n".utf8))
                }
            }
        }
    }
}
