import Foundation
import MetricsTestKit
import PubNubReplica
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import Replicator
import Testing

/// The metrics (docs/metrics.md): a replica reports to the factory it was given, and what it
/// counts is what happened.
@Suite("Replica: metrics")
struct MetricsTests {
    @Test("after a scripted flaky sync (a 503, a lost answer, a stale eTag, a 403) and live: the counters say what happened", .timeLimit(.minutes(10)))
    func countAFlakySync() async throws {
        let world = try await ReplicaWorld()
        await world.server.remoteEditChannel(id: "general", fields: ["name": "General"])
        _ = await world.server.seedMessages(channel: "general", [["text": "one"], ["text": "two"]], publisher: "web")
        let metrics = TestMetrics()
        var configuration = world.configuration
        configuration.metrics = metrics
        let replica = try Replica<DefaultChatCustom>(configuration)
        func total(_ label: String, _ dimensions: [(String, String)] = []) -> Int64 {
            metrics.counterTotal(label: label, dimensions: dimensions)
        }

        // A clean first sync: the channel and its two messages.
        _ = try await replica.sync()
        #expect(total(ReplicatorMetrics.catchUpPages, [("part", "history")]) >= 1)
        #expect(total(ReplicatorMetrics.catchUpPages, [("part", "objects")]) >= 1)
        #expect(total(ReplicatorMetrics.opsSent) == 0)

        // Two sends, one lane, on a flaky network: a 503 (a publish after a 5xx is probed before
        // it goes again), the probe's answer lost (probed again: not there), then both go.
        _ = try await replica.messages.send(text: "first", to: "general")
        _ = try await replica.messages.send(text: "second", to: "general")
        world.transport.script(.serverError(status: 503), .dropResponse)
        var report = try await replica.sync()
        #expect(report.push.completed == 2, "\(report.push)")
        #expect(total(ReplicatorMetrics.opsEnqueued, [("kind", "send")]) == 2)
        #expect(total(ReplicatorMetrics.opsSent) == 2)
        #expect(total(ReplicatorMetrics.opsRetried, [("reason", "server")]) == 1, "\(metrics.counters(label: ReplicatorMetrics.opsRetried).map { ($0.dimensions, $0.totalValue) })")
        #expect(total(WireMetrics.requests, [("operation", "publish"), ("status", "503")]) == 1)
        #expect(total(WireMetrics.requests, [("operation", "fetchHistory"), ("status", "failed")]) == 1, "the probe whose answer was lost")
        #expect(total(WireMetrics.requests, [("operation", "publish"), ("status", "200")]) == 2)
        #expect(await world.serverTexts() == ["one", "two", "first", "second"])

        // Another device renames the channel; the local edit meets a 412 and the default policy
        // (a field merge) settles it.
        await world.server.remoteEditChannel(id: "general", fields: ["name": "Everyone"])
        var edit = ChannelEdit<FlatCustom>()
        edit.details = .set("for all")
        _ = try await replica.objects.setChannel(id: "general", edit: edit)
        report = try await replica.sync()
        #expect(total(ReplicatorMetrics.opsConflicted) == 1)
        #expect(total(ReplicatorMetrics.conflictsSettled, [("policy", "fieldMerge(lastWriter)"), ("entity", "channel"), ("automatic", "true")]) == 1)
        #expect(total(ReplicatorMetrics.opsSent) == 3)

        // Refused for good: a dead letter.
        _ = try await replica.messages.send(text: "refused", to: "general")
        world.transport.script(.forbidden)
        report = try await replica.sync()
        #expect(report.push.deadLetters == 1, "\(report.push)")
        #expect(total(ReplicatorMetrics.opsDead) == 1)
        #expect(total(WireMetrics.requests, [("status", "403")]) == 1)

        // Every request the transport saw is counted once, by operation and status.
        #expect(total(WireMetrics.requests) == Int64(world.transport.records.count))
        #expect(metrics.timers(label: WireMetrics.requestDuration).reduce(0) { $0 + $1.values.count } == world.transport.records.count)

        // Live: a peer's message is stored, and its lag recorded.
        await replica.start()
        await status(of: replica) { $0.connection == .live }
        _ = try await world.web.publish(PublishRequest(channel: "general", message: ["id": "web-9", "text": "live one"]))
        for try await page in replica.observe(replica.queries.messages(inChannel: "general")) where page.contains(where: { $0.text == "live one" }) {
            break
        }
        await replica.stop()
        let lags = metrics.timers(label: ReplicatorMetrics.liveLag).flatMap(\.values)
        #expect(!lags.isEmpty && lags.allSatisfy { $0 >= 0 }, "\(lags)")
    }
}
