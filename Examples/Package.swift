// swift-tools-version: 6.1
import Foundation
import PackageDescription

// An app package as README's "Installation" describes it: pnreplicate by path (the repository
// root), with no traits, and only the products an app and its tests need. CI builds and tests it
// (`swift test --package-path Examples`), and a root test checks that its QuickStart.swift is
// README's "Quick start" word for word.
//
// A package depended on by path is known by its folder's name, whatever the clone is called.
let root = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent()
let pnreplicate = root.lastPathComponent

let package = Package(
    name: "ChatExample",
    platforms: [.macOS(.v14), .iOS(.v17)],
    dependencies: [
        .package(path: root.path, traits: []),
    ],
    targets: [
        .target(name: "ChatExample", dependencies: [.product(name: "PubNubReplica", package: pnreplicate)]),
        .testTarget(name: "ChatExampleTests", dependencies: [
            "ChatExample",
            .product(name: "PubNubSimulatorTesting", package: pnreplicate),
        ]),
    ]
)
