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
            dependencies: [
                .product(name: "ReplicaModel", package: "pnreplicate"),
                .product(name: "ReplicaStore", package: "pnreplicate"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // Every benchmark figure in one table (docs/performance.md): runs the benchmarks below and the CLI.
        .executableTarget(name: "pnreplicate-bench"),
        // load(messages:) against a raw SQLite insert of the same rows.
        .executableTarget(
            name: "StoreBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "ReplicaStore", package: "pnreplicate"),
                .product(name: "ReplicaModel", package: "pnreplicate"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        // Unread counts on a large store against a raw index count.
        .executableTarget(
            name: "ChatBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "ReplicaStore", package: "pnreplicate"),
                .product(name: "ReplicaModel", package: "pnreplicate"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        // Loopback requests/s of each transport against the simulator.
        .executableTarget(
            name: "WireBenchmarks",
            dependencies: [
                .product(name: "PubNubWire", package: "pnreplicate"),
                .product(name: "PubNubWireNIO", package: "pnreplicate"),
                .product(name: "PubNubSimulator", package: "pnreplicate"),
                .product(name: "SimulatorHTTP", package: "pnreplicate"),
                .product(name: "ReplicaModel", package: "pnreplicate"),
            ]
        ),
        // Durable enqueue and drain rates against raw baselines.
        .executableTarget(
            name: "OutboxBenchmarks",
            dependencies: [
                .product(name: "Replicator", package: "pnreplicate"),
                .product(name: "ReplicaStore", package: "pnreplicate"),
                .product(name: "ReplicaModel", package: "pnreplicate"),
                .product(name: "PubNubWire", package: "pnreplicate"),
                .product(name: "PubNubWireNIO", package: "pnreplicate"),
                .product(name: "PubNubSimulator", package: "pnreplicate"),
                .product(name: "SimulatorHTTP", package: "pnreplicate"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // History ingest rate against a raw insert, and peak RSS.
        .executableTarget(
            name: "ReconcilerBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Replicator", package: "pnreplicate"),
                .product(name: "ReplicaStore", package: "pnreplicate"),
                .product(name: "ReplicaModel", package: "pnreplicate"),
                .product(name: "PubNubWire", package: "pnreplicate"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        // Publish-to-observation latency and live vs history ingest.
        .executableTarget(
            name: "LiveBenchmarks",
            dependencies: [
                .product(name: "Replicator", package: "pnreplicate"),
                .product(name: "ReplicaStore", package: "pnreplicate"),
                .product(name: "ReplicaModel", package: "pnreplicate"),
                .product(name: "PubNubWire", package: "pnreplicate"),
                .product(name: "PubNubWireNIO", package: "pnreplicate"),
                .product(name: "PubNubSimulator", package: "pnreplicate"),
                .product(name: "SimulatorHTTP", package: "pnreplicate"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
