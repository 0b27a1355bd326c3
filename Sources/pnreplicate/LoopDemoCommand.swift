import ArgumentParser
import Foundation
import PubNubSimulator
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

/// `pnreplicate demo loop`: the whole replication loop on the embedded simulator, in one screen.
///
/// Two devices of one user and a third client share an in-process simulator on a virtual clock
/// (backoffs take no real time). Device A sends and reacts offline, both devices and the third
/// client edit the same channel, the network heals into seeded flaky weather, and both devices
/// sync until they hold the same rows as the server.
struct LoopDemo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loop",
        abstract: "Run the whole loop on the embedded simulator: offline sends, dry run, flaky sync, a conflict, two devices converged.")

    @Option(name: .long, help: "Seed of the flaky network (the same seed replays the same faults).")
    var seed: UInt64 = 7
    @Flag(name: .long, help: "Print the final report as JSON.")
    var json = false

    func run() async throws {
        try await runReportingErrors {
            let clock = VirtualClock()
            let server = PubNubServer(time: VirtualTime(clock: clock))
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pnreplicate-loop-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            await server.remoteEditChannel(id: "general", fields: ["name": "General", "description": "Everyone"])
            let other = try DemoDevice.client(InProcessTransport(server: server), user: "other")
            _ = try await other.publish(PublishRequest(channel: "general", message: ["id": "hello-1", "text": "welcome!", "createdAt": "2026-01-01T00:00:00Z"]))
            let a = try DemoDevice(name: "A", path: folder.appendingPathComponent("a.sqlite").path, server: server, clock: clock, seed: seed)
            let b = try DemoDevice(name: "B", path: folder.appendingPathComponent("b.sqlite").path, server: server, clock: clock, seed: seed &+ 1)
            say("1. both devices pull", try await a.sync().summary, "/", try await b.sync().summary)

            a.transport.switchTo(FaultPlan(seed: seed, profile: .offline))
            b.transport.switchTo(FaultPlan(seed: seed, profile: .offline))
            await server.remoteEditChannel(id: "general", fields: ["name": "General (web)"])
            clock.advance(by: 1)
            for text in ["on my way", "5 minutes", "here"] { _ = try await a.outbox.send(text: text, to: "general") }
            let welcome = try await a.store.fetch(a.store.queries.messages(inChannel: "general"))[0]
            _ = try await a.outbox.addReaction("👍", toMessage: welcome.id)
            var rename = ChannelEdit<FlatCustom>()
            rename.name = .set("General (A)")
            _ = try await a.outbox.setChannel(id: "general", edit: rename)
            var describe = ChannelEdit<FlatCustom>()
            describe.details = .set("Everyone, B says hi")
            _ = try await b.outbox.setChannel(id: "general", edit: describe)
            say("2. offline: the web renames the channel; then A sends 3 messages, reacts and renames it; B edits its description")
            say("3. pnreplicate --dry-run on A:")
            for entry in try await a.outbox.plan() {
                let request = entry.request.map { "\($0.method) \($0.path)" } ?? (entry.requestNote ?? "")
                say("   \(entry.position). \(entry.kind.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0)) \(request)")
            }

            a.transport.switchTo(FaultPlan(seed: seed, profile: .flaky))
            b.transport.switchTo(FaultPlan(seed: seed &+ 1, profile: .flaky))
            var rounds = 0
            for round in 1...6 {
                rounds = round
                let ra = try await a.sync(), rb = try await b.sync()
                say("4. flaky sync, round \(round): A \(ra.summary) / B \(rb.summary)")
                if !ra.changedAnything, !rb.changedAnything,
                   try await a.store.fetch(a.store.queries.outbox()).isEmpty,
                   try await b.store.fetch(b.store.queries.outbox()).isEmpty { break }
            }
            let conflicts = try await a.store.fetch(a.store.queries.conflicts()) + (try await b.store.fetch(b.store.queries.conflicts()))
            for record in conflicts {
                say("5. conflict on \(record.entityKind) \(record.entityId): \(record.policy) → \(Self.fields(record.result))")
            }
            let sameA = try await a.rows(), sameB = try await b.rows()
            let channel = try await a.store.fetch(a.store.queries.channel(id: "general"))
            say("6. converged: \(sameA == sameB ? "yes" : "NO") after \(rounds) rounds; channel \"\(channel?.name ?? "-")\" / \"\(channel?.details ?? "-")\"; A holds \(sameA.messages) messages and \(sameA.reactions) reactions, B \(sameB.messages) and \(sameB.reactions)")
            if sameA != sameB { throw ExitCode(1) }
        }
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

/// One device of the loop demo.
struct DemoDevice {
    let store: ChatStore<DefaultChatCustom>
    let outbox: Outbox<DefaultChatCustom>
    let reconciler: Reconciler<DefaultChatCustom>
    let transport: SwitchableTransport
    let clock: VirtualClock

    init(name: String, path: String, server: PubNubServer, clock: VirtualClock, seed: UInt64) throws {
        store = try ChatStore.open(at: path)
        transport = SwitchableTransport(server: server)
        let client = try Self.client(transport, user: "me")
        self.clock = clock
        outbox = Outbox(store: store, client: client, clock: clock, random: SplitMix64(seed: seed))
        var options = ReconcilerOptions()
        options.channels = ["general"]
        reconciler = Reconciler(
            store: store, client: client, outbox: outbox, options: options, clock: clock, random: SplitMix64(seed: seed ^ 1))
    }

    static func client(_ transport: any Transport, user: String) throws -> PubNubClient {
        PubNubClient(
            configuration: try PubNubConfiguration(publishKey: "demo", subscribeKey: "demo", userId: user, origin: "http://embedded.invalid"),
            transport: transport)
    }

    func sync() async throws -> SyncReport {
        clock.advance(by: 1)
        return try await reconciler.sync(pushDeadline: clock.now.addingTimeInterval(600))
    }

    struct Rows: Equatable {
        var channel: String
        var messages: Int
        var ids: [String]
        var reactions: Int
    }

    func rows() async throws -> Rows {
        let channel = try await store.fetch(store.queries.channel(id: "general"))
        let messages = try await store.fetch(store.queries.messages(inChannel: "general"))
        var reactions = 0
        for message in messages { reactions += try await store.fetch(store.queries.actions(ofMessage: message.id)).count }
        return Rows(
            channel: "\(channel?.name ?? "")|\(channel?.details ?? "")|\(channel?.eTag ?? "")", messages: messages.count,
            ids: messages.map { "\($0.id)@\($0.timetoken?.description ?? "-")" }, reactions: reactions)
    }
}

extension SyncReport {
    var summary: String {
        let messages = history.reduce(0) { $0 + $1.inserted }
        return "sent \(push.completed) (\(push.attempts) attempts, \(push.probes) probes), \(conflicts.resolved) conflicts settled, \(messages) messages pulled"
    }
}

/// The simulator's clock is the demo's virtual clock.
struct VirtualTime: TimeSource {
    let clock: VirtualClock
    func now() -> UInt64 { UInt64(clock.now.timeIntervalSince1970 * 10_000_000) }
}

/// An in-process transport whose fault plan can change (offline, then flaky).
final class SwitchableTransport: Transport, @unchecked Sendable {
    private let lock = NSLock()
    private var current: InProcessTransport
    private let server: PubNubServer

    init(server: PubNubServer) {
        self.server = server
        current = InProcessTransport(server: server)
    }

    func switchTo(_ plan: FaultPlan) { lock.withLock { current = InProcessTransport(server: server, plan: plan) } }

    func send(_ request: WireRequest, to origin: Origin) async throws(TransportFailure) -> WireResponse {
        let transport = lock.withLock { current }
        return try await transport.send(request, to: origin)
    }
}
