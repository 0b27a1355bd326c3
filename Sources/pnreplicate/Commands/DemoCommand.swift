import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate demo`: `demo loop` runs the whole replication loop on the embedded simulator;
/// `demo samples` (the default, so plain `demo` keeps working) creates a store with sample data.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Demos: the whole loop on the embedded simulator (`demo loop`), or a store with sample data (`demo`).",
        subcommands: [DemoSamplesCommand.self, LoopDemoCommand.self], defaultSubcommand: DemoSamplesCommand.self)
}
