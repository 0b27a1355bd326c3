import PubNubSimulator
import PubNubSimulatorTesting
import ReplicaModel
import Testing

/// The examples of docs/testing.md and the README, as they are written there.
@Suite("docs/testing.md examples")
struct TestingGuideTests {
    @Test("a message sent offline arrives once when the network comes back, however flaky")
    func offlineSend() async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)                 // timetokens on the test's clock
        let phone = try SimulatedDevice<DefaultChatCustom>(
            server: server, clock: clock, plan: FaultPlan(seed: 7, profile: .offline))

        let sent = try await phone.outbox.messages.send(text: "on my way", to: "general")    // stored and queued
        phone.transport.use(FaultPlan(seed: 7, profile: .flaky))                    // back online, badly
        let report = try await phone.sync()                                          // push, settle, pull
        #expect(report.errors.isEmpty)

        let mine = try await phone.snapshot(channels: ["general"])
        let truth = try await ReplicaSnapshot(server: server, userId: "me", channels: ["general"])
        #expect(mine == truth, "\(mine)\n\(truth)")
        #expect(truth.messages["general"]?.count == 1 && mine.messages["general"]?[0].hasPrefix(sent.value!.id) == true)
    }

    @Test("VirtualClock is a Swift Clock whose sleeps jump, on the same timeline as its dates")
    func clockIsAClock() async throws {
        let clock = VirtualClock()
        let start = clock.date
        func waitGenerically(_ clock: some Clock<Duration>) async throws { try await clock.sleep(for: .seconds(90)) }
        try await waitGenerically(clock)
        #expect(clock.date.timeIntervalSince(start) == 90)
        let instant = clock.instant
        try await clock.sleep(until: start)                                          // the past: nothing moves
        #expect(clock.instant == instant)
        clock.advance(by: .milliseconds(250))
        clock.advance(by: -5)                                                        // time never goes back
        #expect(clock.instant == instant.advanced(by: .milliseconds(250)))
        let later = clock.now.addingTimeInterval(0.000_000_1)                        // 100 ns: below a Date's step here
        try await clock.sleep(until: later)
        #expect(clock.now >= later && clock.instant > instant.advanced(by: .milliseconds(250)))
    }
}
