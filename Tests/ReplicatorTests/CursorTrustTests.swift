import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
@testable import Replicator
import Testing

/// A server that lies about subscribe cursors (or fails every subscribe), in front of the
/// simulator: requests carrying a lied cursor reach the simulator with the true one.
final class LyingTransport: Transport, @unchecked Sendable {
    enum Mode: Equatable {
        case truthful
        /// Every subscribe answer runs this many seconds further ahead than the one before.
        case aheadEachAnswer(TimeInterval)
        /// Handshakes answer this far ahead.
        case handshakeAhead(TimeInterval)
        /// Every long poll answers a cursor behind the one it was asked from.
        case behind
        /// The next long poll leaps this far ahead.
        case jump(TimeInterval)
        /// Every subscribe fails with a 500.
        case fail500
        /// Every subscribe answers 200 with an HTML page.
        case html
    }

    let inner: InProcessTransport
    let clock: VirtualClock
    private let lock = NSLock()
    private var currentMode = Mode.truthful
    private var offset: UInt64 = 0
    private var trueCursor: [String: String] = [:]
    private var newestTime: UInt64 = 0
    private var subscribeTimes: [Date] = []
    private var historyTimes: [Date] = []

    init(inner: InProcessTransport, clock: VirtualClock) {
        self.inner = inner
        self.clock = clock
    }

    var mode: Mode {
        get { lock.withLock { currentMode } }
        set { lock.withLock { currentMode = newValue; if newValue == .truthful { offset = 0 } } }
    }

    /// The newest `/time` answer the device received.
    var newestTimeAnswer: UInt64 { lock.withLock { newestTime } }
    /// When each subscribe and history request was sent (virtual time).
    var subscribes: [Date] { lock.withLock { subscribeTimes } }
    var histories: [Date] { lock.withLock { historyTimes } }

    func send(_ request: WireRequest, to origin: Origin) async throws(TransportFailure) -> WireResponse {
        let isSubscribe = request.pathSegments.starts(with: ["v2", "subscribe"])
        var request = request
        let mode = self.mode
        lock.withLock {
            if isSubscribe { subscribeTimes.append(clock.now) }
            if request.pathSegments.contains("history") || request.pathSegments.contains("history-with-actions") {
                historyTimes.append(clock.now)
            }
        }
        if isSubscribe {
            switch mode {
            case .fail500: return WireResponse(status: 500, body: Data("{\"error\":true}".utf8))
            case .html: return WireResponse(status: 200, headers: ["content-type": "text/html"], body: Data("<html>hi</html>".utf8))
            default: break
            }
            request.query = request.query.map { item in
                guard item.name == "tt", let value = item.value else { return item }
                return QueryItem("tt", lock.withLock { trueCursor[value] } ?? value)
            }
        }
        var response = try await inner.send(request, to: origin)
        if request.pathSegments.starts(with: ["time"]), let text = String(data: response.body, encoding: .utf8),
           let value = UInt64(text.trimmingCharacters(in: CharacterSet(charactersIn: "[] \n")))
        {
            lock.withLock { newestTime = max(newestTime, value) }
        }
        guard isSubscribe, response.status == 200,
              var body = try? JSONValue(jsonData: response.body), case .object(var top) = body,
              case .object(var cursor)? = top["t"], case .string(let t)? = cursor["t"], let truth = UInt64(t)
        else { return response }
        let asked = request.query.first { $0.name == "tt" }?.value.flatMap(UInt64.init) ?? 0
        let lie: UInt64? = lock.withLock {
            switch mode {
            case .aheadEachAnswer(let seconds):
                offset += UInt64(seconds * 10_000_000)
                return truth + offset
            case .handshakeAhead(let seconds):
                return asked == 0 ? truth + UInt64(seconds * 10_000_000) : nil
            case .behind:
                return asked > 10_000_000 ? asked - 10_000_000 : nil
            case .jump(let seconds):
                currentMode = .truthful
                return truth + UInt64(seconds * 10_000_000)
            default:
                return nil
            }
        }
        guard let lie else { return response }
        lock.withLock { trueCursor[String(lie)] = t }
        cursor["t"] = .string(String(lie))
        top["t"] = .object(cursor)
        body = .object(top)
        response.body = (try? body.jsonData()) ?? response.body
        return response
    }
}

@Suite("Integrity: cursors are not trusted, listen backs off")
struct CursorTrustTests {
    struct Device {
        let store: ChatStore<DefaultChatCustom>
        let reconciler: Reconciler<DefaultChatCustom>
        let live: LiveSync<DefaultChatCustom>
        let transport: LyingTransport
    }

    static func device(_ world: LiveWorld, seed: UInt64) throws -> Device {
        let transport = LyingTransport(inner: InProcessTransport(server: world.server), clock: world.clock)
        let client = try PubNubClient.simulated(transport, userId: "me")
        let store = try ChatStore<DefaultChatCustom>.open(at: SimulatedDevice<DefaultChatCustom>.temporaryStorePath())
        let reconciler = Reconciler(store: store, client: client, clock: world.clock, random: SplitMix64(seed: seed))
        let live = LiveSync(reconciler: reconciler, clock: world.clock, random: SplitMix64(seed: seed ^ 7))
        return Device(store: store, reconciler: reconciler, live: live, transport: transport)
    }

    /// Every history and live checkpoint is at or before the newest `/time` answer the device
    /// received or the newest message it stores.
    static func expectNoCheckpointAhead(_ device: Device, step: Int) async throws {
        let stored = try await device.store.fetch(device.store.queries.messages(inChannel: "c", includeDeleted: true))
        let newestMessage = stored.compactMap(\.timetoken?.rawValue).max() ?? 0
        let verified = max(device.transport.newestTimeAnswer, newestMessage)
        for checkpoint in try await device.store.fetch(device.store.queries.checkpoints())
        where checkpoint.scope.hasPrefix("history:") || checkpoint.scope.hasPrefix("live:") {
            guard let applied = checkpoint.applied else { continue }
            #expect(applied.rawValue <= verified, "step \(step): \(checkpoint.scope) at \(applied) is ahead of \(verified)")
        }
    }

    @Test("no checkpoint is ever ahead of the verified server time; every message published after a lie is stored once the server tells the truth",
          arguments: IntegritySeeds.seeds)
    func lyingServer(seed: UInt64) async throws {
        let world = try await LiveWorld()
        try await world.join(["me"], ["c"])
        let device = try Self.device(world, seed: seed)
        var dice = SplitMix64(seed: seed)
        var published = 0
        for step in 0..<60 {
            switch dice.next() % 10 {
            case 0: device.transport.mode = .aheadEachAnswer(540)
            case 1: device.transport.mode = .handshakeAhead(23 * 3600)
            case 2: device.transport.mode = .behind
            case 3: device.transport.mode = .jump(Double(1 + dice.next() % 48) * 3600)
            case 4: device.transport.mode = .truthful
            case 5, 6:
                published += 1
                _ = try await world.web.publish(PublishRequest(channel: "c", message: chatPayload("m\(published)", "message \(published)")))
            case 7: world.clock.advance(by: .seconds(Int(1 + dice.next() % 300)))
            default: _ = try? await device.reconciler.pullHistory(channels: ["c"])
            }
            try await device.live.step()
            try await Self.expectNoCheckpointAhead(device, step: step)
        }
        // The server tells the truth again; more messages come while nobody listens.
        device.transport.mode = .truthful
        for _ in 0..<3 {
            published += 1
            _ = try await world.web.publish(PublishRequest(channel: "c", message: chatPayload("m\(published)", "message \(published)")))
        }
        _ = try await device.reconciler.pullHistory(channels: ["c"])
        try await LiveWorld.settle(device.live)
        try await Self.expectNoCheckpointAhead(device, step: 60)
        let ids = Set(try await device.store.fetch(device.store.queries.messages(inChannel: "c")).map(\.id))
        #expect(ids == Set((1...published).map { "m\($0)" }), "every published message is stored")
    }

    @Test("a handshake a day (less a little) ahead is refused against /time, and no checkpoint follows it",
          arguments: [LyingTransport.Mode.handshakeAhead(23 * 3600), .aheadEachAnswer(540)])
    func futureHandshake(mode: LyingTransport.Mode) async throws {
        let world = try await LiveWorld()
        try await world.join(["me"], ["c"])
        let device = try Self.device(world, seed: 1)
        device.transport.mode = mode
        for step in 0..<12 {
            try await device.live.step()
            try await Self.expectNoCheckpointAhead(device, step: step)
        }
        device.transport.mode = .truthful
        _ = try await world.web.publish(PublishRequest(channel: "c", message: chatPayload("after", "after the lie")))
        _ = try await device.reconciler.pullHistory(channels: ["c"])
        #expect(try await device.store.fetch(device.store.queries.message(id: "after")) != nil)
    }

    @Test("listen against a server that fails every subscribe: at most 12 subscribes and 6 gap fills of each followed channel in 20 s",
          arguments: [LyingTransport.Mode.fail500, .html, .behind])
    func backoff(mode: LyingTransport.Mode) async throws {
        let world = try await LiveWorld()
        try await world.join(["me"], ["c"])
        let device = try Self.device(world, seed: 3)
        try await LiveWorld.settle(device.live)
        let start = world.clock.now
        let subscribesBefore = device.transport.subscribes.count
        let fillsBefore = await device.live.statistics.fills.values.reduce(0, +)
        device.transport.mode = mode
        var steps = 0
        while world.clock.now < start.addingTimeInterval(20) && steps < 1000 {
            try await device.live.step()
            steps += 1
        }
        let subscribes = device.transport.subscribes.dropFirst(subscribesBefore).filter { $0 < start.addingTimeInterval(20) }
        let fills = await device.live.statistics.fills.values.reduce(0, +) - fillsBefore
        // Fills count once per channel: "c", the user's channel, their moderation event channel
        // and their mute list.
        let followed = await device.live.subscribed.count
        #expect(followed == 4)
        #expect(subscribes.count <= 12, "\(subscribes.count) subscribes in 20 s")
        #expect(fills <= 6 * followed, "\(fills) fills of \(followed) channels in 20 s")
        #expect(subscribes.count >= 3, "it keeps trying")
    }
}
