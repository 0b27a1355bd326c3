import Foundation
import PubNubSimulator
import PubNubWire
import ReplicaModel

/// A server with virtual time and a client talking to it in process.
struct InProcess {
    let time = ManualTimeSource()
    let server: PubNubServer
    let plan: FaultPlan
    let client: PubNubClient

    init(profile: FaultProfile = .none, seed: UInt64 = 1, userId: String = "me") throws {
        server = PubNubServer(time: time)
        plan = FaultPlan(seed: seed, profile: profile)
        let configuration = try PubNubConfiguration(
            publishKey: "demo", subscribeKey: "demo", userId: userId, origin: "http://sim.invalid")
        client = PubNubClient(configuration: configuration, transport: InProcessTransport(server: server, plan: plan))
    }

    /// Another client on the same server (another user or device).
    func client(userId: String) throws -> PubNubClient {
        let configuration = try PubNubConfiguration(
            publishKey: "demo", subscribeKey: "demo", userId: userId, origin: "http://sim.invalid")
        return PubNubClient(configuration: configuration, transport: InProcessTransport(server: server))
    }

    /// Publishes `count` messages `m0`... to `channel`, 1 ms apart, returning their timetokens.
    func publish(_ count: Int, to channel: String, prefix: String = "m") async throws -> [Timetoken] {
        var timetokens: [Timetoken] = []
        for i in 0..<count {
            time.advance(by: 10_000)
            timetokens.append(try await client.publish(PublishRequest(channel: channel, message: .string("\(prefix)\(i)"))))
        }
        return timetokens
    }
}

extension HistoryPage {
    func texts(_ channel: String) -> [String] { (channels[channel] ?? []).compactMap { $0.message.stringValue } }
}
