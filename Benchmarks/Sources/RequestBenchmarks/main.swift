// Request budget benchmark: `.build/release/RequestBenchmarks [channels...]` (default 20 200 2000).
//
// What a sync or a reconnect costs in PubNub requests (PubNub bills per request), counted on the
// in-process simulator's request log, on a keyset of N channels x 50 messages (a reaction on every
// 5th), 500 users, the device's user a member of every channel (`ChatKeyset`). Per N, with no
// channel hot (the default) and with `everyChannelHot` (every channel listed in full, as every
// channel was before hot and cold channels):
//
// - `idle`: a sync when nothing changed;
// - `reconnect`: a live sync from its handshake to ready-to-poll (the fill), nothing changed;
// - `changed-3`: a sync after one new message in each of 3 channels;
// - `first-sync`: the first sync of an empty store, the channels' histories interleaved in time
//   (and `first-sync-one-after-another`: each channel's after the previous one's);
// - `hot-refresh`: a sync with one channel marked hot (`pnreplicate sync --channel C`), after a
//   reaction was added to an old message of it.
//
// Request counts do not depend on the machine: one run is enough. Prints `bench: requests.<mode>.<N>.<case> <count>`.
// Run by hand; never part of `swift test`.
import Foundation
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

let sizes = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let channelCounts = sizes.isEmpty ? [20, 200, 2000] : sizes

func measure(channels: Int, everyChannelHot: Bool, history: ChatKeyset.History = .interleaved) async throws -> [(String, Int)] {
    let clock = VirtualClock()
    let server = PubNubServer(clock: clock)
    var keyset = ChatKeyset(channels: channels)
    keyset.history = history
    try await keyset.seed(server)
    var options = ReconcilerOptions()
    options.everyChannelHot = everyChannelHot
    let device = try SimulatedDevice<DefaultChatCustom>(server: server, clock: clock, userId: keyset.member, reconcilerOptions: options)
    func count(_ body: () async throws -> Void) async throws -> Int {
        let before = device.transport.records.count
        try await body()
        return device.transport.records.count - before
    }
    func sync() async throws {
        let report = try await device.sync()
        if !report.errors.isEmpty { throw BenchError(text: report.errors.joined(separator: "; ")) }
    }
    var rows: [(String, Int)] = []
    rows.append(("first-sync", try await count { try await sync() }))
    // The same keyset with the channels' histories one after another in time: no shared request
    // serves them past each one's newest 25 (docs/reconciler.md, "Shared rounds").
    if history == .oneAfterAnother { return rows }
    rows.append(("idle", try await count { try await sync() }))
    let live = LiveSync(reconciler: device.reconciler, clock: clock, random: SplitMix64(seed: 1))
    rows.append(("reconnect", try await count { for _ in 0..<50 where await !live.isReadyToPoll { try await live.step() } }))
    for index in [3, channels / 2, channels - 1] {
        let channel = ChatKeyset.channelId(index)
        await server.seedMessages(channel: channel, [["type": "text", "text": "new", "files": []]], publisher: ChatKeyset.userId(1))
    }
    rows.append(("changed-3", try await count { try await sync() }))
    let hot = ChatKeyset.channelId(channels / 3)
    if let oldest = await server.storedMessages(channel: hot).first {
        let web = try PubNubClient.simulated(InProcessTransport(server: server), userId: ChatKeyset.userId(7))
        _ = try await web.messageActions.addMessageAction(channel: hot, messageTimetoken: Timetoken(rawValue: oldest.timetoken), type: "reaction", value: "❤️")
    }
    try await device.reconciler.markHot(hot)
    rows.append(("hot-refresh", try await count { try await sync() }))
    return rows
}

struct BenchError: Error, CustomStringConvertible {
    var text: String
    var description: String { text }
}

for channels in channelCounts {
    for (mode, everyHot) in [("cold", false), ("all-hot", true)] {
        for (name, value) in try await measure(channels: channels, everyChannelHot: everyHot) {
            print("bench: requests.\(mode).\(channels).\(name) \(value)")
        }
        for (name, value) in try await measure(channels: channels, everyChannelHot: everyHot, history: .oneAfterAnother) {
            print("bench: requests.\(mode).\(channels).\(name)-one-after-another \(value)")
        }
    }
}
