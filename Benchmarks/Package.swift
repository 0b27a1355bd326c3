// swift-tools-version: 6.1
import PackageDescription

// The benchmarks, a package of their own beside the library: they see pnreplicate only as an app
// does, through its products' public API (or a raw SQLite connection for the baselines), never its
// `package` members. Run by hand in release mode; never part of `swift test` or CI
// (docs/performance.md):
//
//     swift build -c release --product pnreplicate
//     swift build -c release --package-path Benchmarks --scratch-path .build
//     .build/release/pnreplicate-bench
//
// The shared scratch path puts the benchmarks beside the `pnreplicate` command (which
// `pnreplicate-bench` also times) and reuses the dependencies already built.

/// pnreplicate's products by name, and GRDB (with its SQLite module) for the raw baselines.
func uses(_ products: String..., grdb: Bool = false, sqlite: Bool = false) -> [Target.Dependency] {
    products.map { .product(name: $0, package: "pnreplicate") }
        + (grdb ? [.product(name: "GRDB", package: "GRDB.swift")] : [])
        + (sqlite ? [.product(name: "GRDBSQLite", package: "GRDB.swift")] : [])
}

let package = Package(
    name: "pnreplicate-benchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "pnreplicate", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // What the benchmarks share: a raw connection to a store's file.
        .target(
            name: "BenchmarkSupport",
            dependencies: uses("ReplicaModel", "ReplicaStore", grdb: true)
        ),
        // Every benchmark figure in one table (docs/performance.md): runs the benchmarks below and the CLI.
        .executableTarget(name: "pnreplicate-bench"),
        // load(messages:) against a raw SQLite insert of the same rows.
        .executableTarget(
            name: "StoreBenchmarks",
            dependencies: ["BenchmarkSupport"] + uses("ReplicaStore", "ReplicaModel", grdb: true, sqlite: true)
        ),
        // Message search on a large store (issue 52): the first page's time against a raw FTS5 match.
        .executableTarget(
            name: "SearchBenchmarks",
            dependencies: ["BenchmarkSupport"] + uses("ReplicaStore", "ReplicaModel", grdb: true)
        ),
        // The diagnostics report (issue 53) on 100,000 messages and 1,000 ops against its raw reads.
        .executableTarget(
            name: "DiagnosticsBenchmarks",
            dependencies: ["BenchmarkSupport"] + uses("PubNubReplica", "ReplicaStore", grdb: true)
        ),
        // Unread counts on a large store against a raw index count.
        .executableTarget(
            name: "ChatBenchmarks",
            dependencies: ["BenchmarkSupport"] + uses("ReplicaStore", "ReplicaModel", grdb: true, sqlite: true)
        ),
        // Loopback requests/s of each transport against the simulator.
        .executableTarget(
            name: "WireBenchmarks",
            dependencies: uses("PubNubWire", "PubNubWireNIO", "PubNubSimulator", "SimulatorHTTP", "ReplicaModel")
        ),
        // File upload and download throughput against raw requests of the same bytes; cache reads.
        .executableTarget(
            name: "FileBenchmarks",
            dependencies: uses("Replicator", "ReplicaStore", "ReplicaModel", "PubNubWire", "PubNubWireNIO", "PubNubSimulator", "SimulatorHTTP")
        ),
        // Durable enqueue and drain rates against raw baselines.
        .executableTarget(
            name: "OutboxBenchmarks",
            dependencies: uses("Replicator", "ReplicaStore", "ReplicaModel", "PubNubWire", "PubNubWireNIO", "PubNubSimulator", "SimulatorHTTP", grdb: true)
        ),
        // History ingest rate against a raw insert, and peak RSS.
        .executableTarget(
            name: "ReconcilerBenchmarks",
            dependencies: ["BenchmarkSupport"] + uses("Replicator", "ReplicaStore", "ReplicaModel", "PubNubWire", grdb: true, sqlite: true)
        ),
        // Requests per idle sync, reconnect, changed channels and hot refresh, on 20 to 2,000 channels.
        .executableTarget(
            name: "RequestBenchmarks",
            dependencies: uses("PubNubSimulatorTesting", "Replicator", "ReplicaStore", "ReplicaModel", "PubNubWire")
        ),
        // Publish-to-observation latency and live vs history ingest.
        .executableTarget(
            name: "LiveBenchmarks",
            dependencies: uses("Replicator", "ReplicaStore", "ReplicaModel", "PubNubWire", "PubNubWireNIO", "PubNubSimulator", "SimulatorHTTP", grdb: true)
        ),
    ],
    swiftLanguageModes: [.v6]
)
