// swift-tools-version: 6.1
import Foundation
import PackageDescription

// Every numbered SQL file in Migrations/ (0019_app_data.sql the newest) is bundled as a resource of the ReplicaMigrations target.
// Listing them here (instead of by hand) means a new migration is picked up by just adding its file
// (SwiftPM caches the evaluated manifest by its text: a local build may need a manifest edit to see it;
// see docs/migrations.md, "The manifest cache").
let migrationFiles = ((try? FileManager.default.contentsOfDirectory(
    atPath: Context.packageDirectory + "/Migrations")) ?? [])
    .filter { $0.hasSuffix(".sql") }
    .sorted()

// The traits that bring each heavy dependency (test targets need none: a package's tests are never
// resolved for the apps that depend on it).
let nio = TargetDependencyCondition.when(traits: ["NIOTransport"])
let httpSimulator = TargetDependencyCondition.when(traits: ["HTTPSimulator"])
let tools = TargetDependencyCondition.when(traits: ["Tools"])

let package = Package(
    name: "pnreplicate",
    platforms: [.macOS(.v14), .iOS(.v17)],
    // What an app adopts: every library product below except PubNubWireNIO and SimulatorHTTP needs
    // only GRDB, swift-log, swift-crypto and swift-metrics. The rest (NIO, Hummingbird, ArgumentParser, ...) hangs on
    // traits, so that an app that passes `traits: []` resolves none of it (docs/architecture.md,
    // "Products and traits"). This repository's own commands get every trait by default.
    products: [
        // The one product most apps need: `Replica` and everything it shows (docs/installation.md).
        .library(name: "PubNubReplica", targets: ["PubNubReplica"]),
        .library(name: "ReplicaModel", targets: ["ReplicaModel"]),
        .library(name: "ReplicaStore", targets: ["ReplicaStore"]),
        .library(name: "PubNubWire", targets: ["PubNubWire"]),
        // The outbox, the reconciler and live sync: what an app adopts pnreplicate for.
        .library(name: "Replicator", targets: ["Replicator"]),
        // The in-memory PubNub (in process; docs/simulator.md).
        .library(name: "PubNubSimulator", targets: ["PubNubSimulator"]),
        // Testing an app against the simulator: virtual clock, in-process transport (docs/testing.md).
        .library(name: "PubNubSimulatorTesting", targets: ["PubNubSimulatorTesting"]),
        // The AsyncHTTPClient transport: needs the NIOTransport trait.
        .library(name: "PubNubWireNIO", targets: ["PubNubWireNIO"]),
        // The simulator over HTTP (Hummingbird): needs the HTTPSimulator trait.
        .library(name: "SimulatorHTTP", targets: ["SimulatorHTTP"]),
        .executable(name: "pnreplicate", targets: ["pnreplicate"]),
    ],
    traits: [
        .trait(name: "NIOTransport", description: "PubNubWireNIO, the AsyncHTTPClient transport (brings swift-nio and async-http-client)."),
        .trait(name: "HTTPSimulator", description: "SimulatorHTTP, the simulator over HTTP (brings Hummingbird and swift-nio)."),
        .trait(
            name: "Tools",
            description: "The pnreplicate command-line tool (brings swift-argument-parser).",
            enabledTraits: ["NIOTransport", "HTTPSimulator"]
        ),
        .default(enabledTraits: ["Tools"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // SHA-256 (migration checksums, cipher keys) and AES-CBC (PubNub's crypto module).
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        // Counters and timers an app wires to its own backend (docs/metrics.md); no dependencies of its own.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    ],
    targets: [
        // Value types only: no I/O, Foundation alone. Also the clock protocol that the replicator
        // and the simulator share (`ReplicaClock`, `SystemClock`).
        .target(name: "ReplicaModel"),
        // The SQL migration files, bundled as resources.
        .target(
            name: "ReplicaMigrations",
            path: "Migrations",
            resources: migrationFiles.map { .copy($0) }
        ),
        // The SQLite store on GRDB: opening, migrations, writes, queries, observation.
        .target(
            name: "ReplicaStore",
            dependencies: [
                "ReplicaModel",
                "ReplicaMigrations",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // zlib from the system, for gzip publish bodies.
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // PubNub's REST protocol: request builders, decoders, errors, the Transport protocol and a
        // URLSession transport. No NIO, no Hummingbird.
        .target(
            name: "PubNubWire",
            dependencies: [
                "ReplicaModel", "CZlib", .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        // The AsyncHTTPClient transport, apart so that the core library stays free of NIO.
        .target(
            name: "PubNubWireNIO",
            dependencies: [
                "PubNubWire",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: nio),
                .product(name: "NIOCore", package: "swift-nio", condition: nio),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: nio),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio", condition: nio),
            ]
        ),
        // The simulator: an in-memory PubNub answering the same REST surface.
        .target(
            name: "PubNubSimulator",
            // Crypto: Access Manager's signatures and token MACs (HMAC-SHA256).
            dependencies: ["PubNubWire", "ReplicaModel", .product(name: "Crypto", package: "swift-crypto")],
            path: "Simulator/PubNubSimulator"),
        // The simulator's HTTP front end (Hummingbird; never a dependency of the core library).
        .target(
            name: "SimulatorHTTP",
            dependencies: [
                "PubNubSimulator", "PubNubWire", "ReplicaModel",
                .product(name: "Hummingbird", package: "hummingbird", condition: httpSimulator),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: httpSimulator),
                .product(name: "NIOCore", package: "swift-nio", condition: httpSimulator),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: httpSimulator),
            ],
            path: "Simulator/SimulatorHTTP"
        ),
        // Testing an app against the simulator, as HummingbirdTesting does for Hummingbird: a virtual
        // clock, an in-process transport over real request bytes with scripted faults, and a device
        // harness (store + outbox + reconciler). Used by this repository's tests and `demo loop`.
        .target(
            name: "PubNubSimulatorTesting",
            dependencies: ["PubNubReplica", "PubNubSimulator", "PubNubWire", "ReplicaModel", "ReplicaStore", "Replicator"],
            path: "Simulator/PubNubSimulatorTesting"
        ),
        // The replicator: the outbox drain engine (and, later, the reconciler) between store and wire.
        .target(
            name: "Replicator",
            dependencies: [
                "ReplicaModel", "ReplicaStore", "PubNubWire", .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        // The façade: `Replica` owns the store, the client, the outbox, the reconciler and live sync.
        .target(
            name: "PubNubReplica",
            dependencies: [
                "ReplicaModel", "ReplicaStore", "PubNubWire", "Replicator", .product(name: "Logging", package: "swift-log"),
                // SHA-256: ids hashed in a diagnostics report.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        // The command-line tool.
        .executableTarget(
            name: "pnreplicate",
            // An app of the package: the front door, the chat model's helpers and the simulator for its
            // simulator commands; no engine module (Replicator, ReplicaStore, PubNubWire) is a dependency
            // of its own (scripts/api-surface also checks its import lines).
            dependencies: [
                "PubNubReplica",
                "ReplicaModel",
                "PubNubSimulator",
                "PubNubSimulatorTesting",
                "SimulatorHTTP",
                // The commands' transport on Linux (Sources/pnreplicate/CommandTransport.swift).
                "PubNubWireNIO",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: tools),
                .product(name: "Logging", package: "swift-log"),
            ],
            // A member of a type is found only where its module is imported. It does not fence the
            // engine off: a type PubNubReplica re-exports one by one (`SyncReport`) makes its whole
            // module count as imported (docs/api-changes.md, "The CLI is an app").
            swiftSettings: [.enableUpcomingFeature("MemberImportVisibility")]
        ),
        .testTarget(name: "ReplicaModelTests", dependencies: ["ReplicaModel", "PubNubSimulator"]),
        .testTarget(
            name: "ReplicaStoreTests",
            dependencies: ["ReplicaStore", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(
            name: "CLITests",
            dependencies: [
                "pnreplicate", "ReplicaStore", "ReplicaModel", "PubNubWire", "PubNubSimulator",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "ReplicatorTests",
            dependencies: [
                "Replicator", "ReplicaStore", "PubNubSimulator", "PubNubSimulatorTesting", "PubNubWire", "ReplicaModel",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .testTarget(
            name: "ReplicaTests",
            dependencies: [
                "PubNubReplica", "PubNubSimulator", "PubNubSimulatorTesting",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        .testTarget(
            name: "PubNubWireTests",
            dependencies: [
                "PubNubWire", "ReplicaModel", "PubNubSimulator", "PubNubSimulatorTesting",
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        .testTarget(
            name: "SimulatorTests",
            dependencies: [
                "PubNubSimulator", "PubNubSimulatorTesting", "SimulatorHTTP", "PubNubWire", "PubNubWireNIO", "ReplicaModel",
                // The hostile HTTP servers of HostileServerTests.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
