import Foundation
import PubNubReplica
import PubNubSimulatorTesting
import Testing

/// The storage budget through the façade (docs/store.md, "Storage budget"): a store filled past
/// its budget by a sync is back under it after the next sync; scroll-back brings evicted history
/// again; search says from when a channel is complete.
@Suite("Replica retention")
struct ReplicaRetentionTests {
    @Test("filled past its budget by a sync, under it after the next; loadOlder brings evicted messages back", .timeLimit(.minutes(10)))
    func budgetAndScrollBack() async throws {
        let world = try await ReplicaWorld()
        let timetokens = await world.server.seedMessages(
            channel: "general", (0..<600).map { ["type": "text", "text": .string("history line \($0) " + String(repeating: "filler ", count: 30))] },
            publisher: "bob")
        // First, no budget: the sync stores the whole history.
        var size = 0
        do {
            let replica = try Replica<DefaultChatCustom>(world.configuration)
            _ = try await replica.sync()
            #expect(try await replica.fetch(replica.queries.messages(inChannel: "general")).count == 600)
            size = try await Replica<DefaultChatCustom>.storeStatus(at: world.path).storage.usedBytes
        }
        // Then the app sets a budget of half that. Everything is unread, so nothing may go yet.
        var configuration = world.configuration
        configuration.storeOptions.retention = RetentionPolicy(maxBytes: size / 2)
        let replica = try Replica<DefaultChatCustom>(configuration)
        var report = try await replica.sync()
        #expect(report.retention?.evicted == 0 && report.retention?.withinBudget == false, "\(String(describing: report.retention))")
        // Read, the history may go: the next sync brings the store under its budget.
        _ = try await replica.memberships.markRead(channel: "general", upTo: Timetoken(rawValue: try #require(timetokens.last)))
        report = try await replica.sync()
        let retention = try #require(report.retention)
        #expect(retention.withinBudget && retention.evicted > 0, "\(retention)")
        let status = try await Replica<DefaultChatCustom>.storeStatus(at: world.path)
        #expect(status.storage.usedBytes <= size / 2 && status.storage.evictedMessages == retention.evicted, "\(status.storage)")
        let stored = try await replica.fetch(replica.queries.messages(inChannel: "general"))
        #expect(stored.count == 600 - retention.evicted && stored.last?.timetoken?.rawValue == timetokens.last)

        // Search says from when the channel is complete; scroll-back brings the evicted page again.
        let oldestKept = try #require(stored.first?.timetoken)
        let search = try await replica.fetch(replica.queries.search(MessageSearch("history")))
        #expect(search.completeFrom["general"] == oldestKept)
        let older = try await replica.loadOlder(channel: "general", limit: 50)
        #expect(older.count == 50 && older.last.flatMap(\.timetoken).map { $0 < oldestKept } == true)
        let after = try await replica.fetch(replica.queries.messages(inChannel: "general"))
        #expect(after.count == stored.count + 50)
        #expect(try await replica.fetch(replica.queries.search(MessageSearch("history"))).completeFrom["general"] == older.first?.timetoken)
        // An idle sync keeps it within budget (the page just loaded may go again: it is read).
        report = try await replica.sync()
        #expect(report.retention?.withinBudget == true)
    }

    @Test("a started replica brings its store within the budget once live sync has caught up, without a sync call", .timeLimit(.minutes(10)))
    func liveEnforces() async throws {
        let world = try await ReplicaWorld()
        let timetokens = await world.server.seedMessages(
            channel: "general", (0..<300).map { ["type": "text", "text": .string("line \($0)")] }, publisher: "bob")
        // Alice read everything on another device: her membership carries the read position.
        _ = try await world.web.perform(try world.web.appContext.setMembershipsRequest(
            userId: "alice",
            set: [MembershipSet<JSONValue>(id: "general", status: "joined", custom: ["lastReadMessageTimetoken": .string(String(timetokens.last!))])],
            remove: []))
        var configuration = world.configuration
        configuration.storeOptions.retention = RetentionPolicy(perChannel: .messages(50))
        let replica = try Replica<DefaultChatCustom>(configuration)
        await replica.start()
        for try await messages in replica.observe(replica.queries.messages(inChannel: "general")) where messages.count == 50 {
            #expect(messages.last?.timetoken?.rawValue == timetokens.last)
            break
        }
        await replica.stop()
        #expect(try await Replica<DefaultChatCustom>.storeStatus(at: world.path).storage.evictedMessages == 250)
    }
}
