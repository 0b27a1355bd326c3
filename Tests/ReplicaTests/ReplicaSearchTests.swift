import Foundation
import PubNubReplica
import PubNubSimulatorTesting
import Testing

/// Search through the façade (docs/search.md): each way a message reaches or changes in the
/// store keeps the index true, with nothing but `Replica` calls and a peer on the simulator.
@Suite("Replica search")
struct ReplicaSearchTests {
    private func found(_ replica: Replica<DefaultChatCustom>, _ text: String) async throws -> [String] {
        try await replica.fetch(replica.queries.search(MessageSearch(text))).messages.map(\.shownText)
    }

    @Test("pulled, sent, edited, soft-deleted and restored, hard-deleted and live messages are found as they are shown",
          .timeLimit(.minutes(10)))
    func everyWritePath() async throws {
        let world = try await ReplicaWorld()
        _ = try await world.web.publish(PublishRequest(channel: "general", message: ["type": "text", "text": "pulled invoice from march"]))
        let replica = try Replica<DefaultChatCustom>(world.configuration)
        _ = try await replica.sync()
        #expect(try await found(replica, "invoice") == ["pulled invoice from march"], "pulled")

        let sent = try #require(try await replica.messages.send(text: "quarterly report attached", to: "general").value)
        #expect(try await found(replica, "quarterly") == ["quarterly report attached"], "pending")
        _ = try await replica.outbox.sendPending()
        #expect(try await found(replica, "quarter") == ["quarterly report attached"], "sent")

        _ = try await replica.messages.edit(message: sent.id, text: "annual report attached")
        #expect(try await found(replica, "annual") == ["annual report attached"], "edited")
        #expect(try await found(replica, "quarterly").isEmpty, "the text before the edit is not shown, so not found")

        _ = try await replica.messages.delete(id: sent.id)
        #expect(try await found(replica, "annual").isEmpty, "soft-deleted")
        _ = try await replica.messages.restore(id: sent.id)
        #expect(try await found(replica, "annual") == ["annual report attached"], "restored")
        _ = try await replica.outbox.sendPending()

        _ = try await replica.messages.delete(id: sent.id, hard: true)
        #expect(try await found(replica, "annual").isEmpty, "hard-deleted")
        let report = try await replica.outbox.sendPending()
        #expect(report.deadLetters == 0 && report.remaining == 0, "\(report)")

        await replica.start()
        await status(of: replica) { $0.connection == .live }
        _ = try await world.web.publish(PublishRequest(channel: "general", message: ["type": "text", "text": "live breaking news"]))
        for try await page in replica.observe(replica.queries.search(MessageSearch("breaking"))) where !page.messages.isEmpty {
            #expect(page.messages.map(\.shownText) == ["live breaking news"], "live")
            break
        }
        await replica.stop()
    }
}
