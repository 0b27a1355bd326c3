import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel

/// A server with virtual time and a client talking to it in process.
struct InProcess {
    /// Virtual time, starting at 2024-01-01T00:00:00Z.
    let clock = VirtualClock(start: Date(timeIntervalSince1970: 1_704_067_200))
    let server: PubNubServer
    let plan: FaultPlan
    let client: PubNubClient

    init(profile: FaultProfile = .none, seed: UInt64 = 1, userId: String = "me") throws {
        server = PubNubServer(clock: clock)
        plan = FaultPlan(seed: seed, profile: profile)
        client = try PubNubClient.simulated(InProcessTransport(server: server, plan: plan), userId: userId)
    }

    /// Another client on the same server (another user or device).
    func client(userId: String) throws -> PubNubClient {
        try PubNubClient.simulated(InProcessTransport(server: server), userId: userId)
    }

    /// Publishes `count` messages `m0`... to `channel`, 1 ms apart, returning their timetokens.
    func publish(_ count: Int, to channel: String, prefix: String = "m") async throws -> [Timetoken] {
        var timetokens: [Timetoken] = []
        for i in 0..<count {
            clock.advance(by: .milliseconds(1))
            timetokens.append(try await client.publish(PublishRequest(channel: channel, message: .string("\(prefix)\(i)"))))
        }
        return timetokens
    }
}

extension HistoryPage {
    func texts(_ channel: String) -> [String] { (channels[channel] ?? []).compactMap { $0.message.stringValue } }
}
