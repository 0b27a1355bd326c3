import ArgumentParser
import Foundation
import PubNubReplica
import PubNubSimulator
import PubNubSimulatorTesting
import ReplicaModel

/// `pnreplicate demo loop`: the whole replication loop on the embedded simulator, in one screen.
///
/// Two devices of one user and a third client share an in-process simulator on a virtual clock
/// (backoffs take no real time). Device A sends and reacts offline, both devices and the third
/// client edit the same channel, the network heals into seeded flaky weather, and both devices
/// sync until they hold the same rows as the server.
struct LoopDemoCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "loop",
        abstract: "Run the whole loop on the embedded simulator: offline sends, dry run, flaky sync, a conflict, two devices converged.")

    @Option(name: .long, help: "Seed of the flaky network (the same seed replays the same faults).")
    var seed: UInt64 = 7
    @Flag(name: .long, help: "Print the final report as JSON.")
    var json = false

    func perform() async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pnreplicate-loop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        await server.remoteEditChannel(id: "general", fields: ["name": "General", "description": "Everyone"])
        let other = try PubNubClient.simulated(InProcessTransport(server: server), userId: "other")
        _ = try await other.publish(PublishRequest(channel: "general", message: ["id": "hello-1", "text": "welcome!", "createdAt": "2026-01-01T00:00:00Z"]))
        var options = ReconcilerOptions()
        options.channels = ["general"]
        let a = try SimulatedDevice<DefaultChatCustom>(
            server: server, clock: clock, storePath: folder.appendingPathComponent("a.sqlite").path, seed: seed,
            reconcilerOptions: options)
        let b = try SimulatedDevice<DefaultChatCustom>(
            server: server, clock: clock, storePath: folder.appendingPathComponent("b.sqlite").path, seed: seed &+ 1,
            reconcilerOptions: options)
        // "general" is on both devices' screens: kept complete, its reactions too.
        try await a.reconciler.markHot("general")
        try await b.reconciler.markHot("general")
        // Each round a second later, with ten minutes to push.
        func sync(_ device: SimulatedDevice<DefaultChatCustom>) async throws -> SyncReport {
            clock.advance(by: 1)
            return try await device.sync(pushingFor: 600)
        }
        say("1. both devices pull", try await sync(a).summary, "/", try await sync(b).summary)

        a.transport.use(FaultPlan(seed: seed, profile: .offline))
        b.transport.use(FaultPlan(seed: seed, profile: .offline))
        await server.remoteEditChannel(id: "general", fields: ["name": "General (web)"])
        clock.advance(by: 1)
        for text in ["on my way", "5 minutes", "here"] { _ = try await a.outbox.messages.send(text: text, to: "general") }
        let welcome = try await a.store.fetch(a.store.queries.messages(inChannel: "general"))[0]
        _ = try await a.outbox.messages.addReaction("👍", toMessage: welcome.id)
        var rename = ChannelEdit<FlatCustom>()
        rename.name = .set("General (A)")
        _ = try await a.outbox.metadata.setChannel(id: "general", edit: rename)
        var describe = ChannelEdit<FlatCustom>()
        describe.details = .set("Everyone, B says hi")
        _ = try await b.outbox.metadata.setChannel(id: "general", edit: describe)
        say("2. offline: the web renames the channel; then A sends 3 messages, reacts and renames it; B edits its description")
        say("3. pnreplicate --dry-run on A:")
        for entry in try await a.outbox.plan() {
            let request = entry.request.map { "\($0.method) \($0.path)" } ?? (entry.requestNote ?? "")
            say("   \(entry.position). \(entry.kind.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0)) \(request)")
        }

        a.transport.use(FaultPlan(seed: seed, profile: .flaky))
        b.transport.use(FaultPlan(seed: seed &+ 1, profile: .flaky))
        var rounds = 0
        for round in 1...6 {
            rounds = round
            let ra = try await sync(a), rb = try await sync(b)
            say("4. flaky sync, round \(round): A \(ra.summary) / B \(rb.summary)")
            if !ra.changedAnything, !rb.changedAnything,
               try await a.store.fetch(a.store.queries.outbox()).isEmpty,
               try await b.store.fetch(b.store.queries.outbox()).isEmpty { break }
        }
        let conflicts = try await a.store.fetch(a.store.queries.conflicts()) + (try await b.store.fetch(b.store.queries.conflicts()))
        for record in conflicts {
            say("5. conflict on \(record.entityKind) \(record.entityId): \(record.policy) → \(Self.fields(record.result))")
        }
        let sameA = try await a.snapshot(channels: ["general"]), sameB = try await b.snapshot(channels: ["general"])
        let channel = try await a.store.fetch(a.store.queries.channel(id: "general"))
        say("6. converged: \(sameA == sameB ? "yes" : "NO") after \(rounds) rounds; channel \"\(channel?.name ?? "-")\" / \"\(channel?.details ?? "-")\"; A holds \(sameA.messages["general", default: []].count) messages and \(sameA.reactions.count) reactions, B \(sameB.messages["general", default: []].count) and \(sameB.reactions.count)")
        if sameA != sameB { throw ExitCode(1) }
    }

    func say(_ parts: String...) {
        guard !json else { return }
        print(parts.joined(separator: " "))
    }

    static func fields(_ json: String?) -> String {
        guard let json, let value = try? JSONValue(jsonData: Data(json.utf8)), case .object(let object) = value else {
            return json ?? "open"
        }
        return object.filter { ["name", "description", "status"].contains($0.key) && $0.value != .null }
            .sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.stringValue ?? "null")" }.joined(separator: ", ")
    }
}

extension SyncReport {
    var summary: String {
        let messages = history.reduce(0) { $0 + $1.inserted }
        return "sent \(push.completed) (\(push.attempts) attempts, \(push.probes) probes), \(conflicts.resolved) conflicts settled, \(messages) messages pulled"
    }
}
