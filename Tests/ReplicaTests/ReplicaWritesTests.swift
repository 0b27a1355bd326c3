import Foundation
import PubNubReplica
import PubNubSimulatorTesting
import Testing

/// Every write an app makes is a `Replica` call (docs/api-changes.md): these go through the
/// façade only, are stored at once, and reach the simulator when `sendPending()` sends them.
@Suite("Replica writes")
struct ReplicaWritesTests {
    @Test("pins, restores, removals, batches and discards are Replica calls, stored at once and sent by sendPending()",
          .timeLimit(.minutes(10)))
    func messagesAndObjects() async throws {
        let world = try await ReplicaWorld()
        let replica = try Replica<DefaultChatCustom>(world.configuration)
        var named = ChannelEdit<FlatCustom>()
        named.name = .set("General")
        _ = try await replica.objects.setChannel(id: "general", edit: named)
        let many = try await replica.messages.send(many: [
            OutgoingMessage(text: "one", to: "general"), OutgoingMessage(text: "two", to: "general"),
        ])
        let dropped = try await replica.messages.send(text: "never sent", to: "general")
        let removed = try await replica.messages.discard(id: try #require(dropped.value?.id))
        #expect(removed == [dropped.opId].compactMap { $0 })
        var report = try await replica.outbox.sendPending()
        #expect(report.completed == 3 && report.remaining == 0 && report.deadLetters == 0, "\(report)")
        #expect(await world.serverTexts() == ["one", "two"])
        guard case .sent(let timetoken?) = try await replica.outbox.completion(of: try #require(many[0].opId)) else {
            Issue.record("the first of the batch did not complete as sent")
            return
        }
        #expect(try await replica.fetch(replica.queries.messages(inChannel: "general")).first { $0.id == many[0].value?.id }?.timetoken == timetoken)

        let first = try #require(many[0].value?.id)
        _ = try await replica.messages.pin(id: first)
        #expect(try await replica.fetch(replica.queries.pinnedMessage(inChannel: "general"))?.id == first, "shown before it is sent")
        _ = try await replica.messages.delete(id: first)
        _ = try await replica.messages.restore(id: first)
        report = try await replica.outbox.sendPending()
        #expect(report.deadLetters == 0 && report.remaining == 0, "\(report)")
        let channel = try await world.web.appContext.getChannel(id: "general", as: FlatCustom.self)
        let sent = try #require(try await replica.fetch(replica.queries.messages(inChannel: "general")).first { $0.id == first })
        #expect(channel.custom?["pinnedMessageTimetoken"] == .string(String(try #require(sent.timetoken).rawValue)))
        #expect(!sent.isDeleted, "restored")

        _ = try await replica.messages.unpin(in: "general")
        var bob = UserEdit<FlatCustom>()
        bob.name = .set("Bob")
        _ = try await replica.objects.setUser(id: "bob", edit: bob)
        _ = try await replica.outbox.sendPending()
        #expect(try await world.web.appContext.getUser(id: "bob", as: FlatCustom.self).name == "Bob")
        _ = try await replica.objects.removeUser(id: "bob")
        _ = try await replica.objects.removeChannel(id: "general")
        _ = try await replica.memberships.remove(channel: "general")
        report = try await replica.outbox.sendPending()
        #expect(report.deadLetters == 0 && report.remaining == 0, "\(report)")
        await #expect(throws: WireError.self) { _ = try await world.web.appContext.getUser(id: "bob", as: FlatCustom.self) }
        await #expect(throws: WireError.self) { _ = try await world.web.appContext.getChannel(id: "general", as: FlatCustom.self) }
        #expect(try await replica.fetch(replica.queries.pinnedMessage(inChannel: "general")) == nil)
    }

    @Test("a draft edited, attached to, detached from and sent through the Replica: one message, the draft gone",
          .timeLimit(.minutes(10)))
    func drafts() async throws {
        let world = try await ReplicaWorld()
        let replica = try Replica<DefaultChatCustom>(world.configuration)
        let key = DraftKey(channelId: "general")
        try await replica.drafts.edit(key) { try $0.insertText(offset: 0, text: "Hi there") }
        let attached = try await replica.drafts.attach(OutgoingFile(data: Data("bytes".utf8), name: "a.txt"), toDraft: key)
        #expect(attached.files.map(\.name) == ["a.txt"])
        let detached = try await replica.drafts.detach(fileNamed: "a.txt", fromDraft: key)
        #expect(detached.files.isEmpty && detached.text == "Hi there")
        #expect(try await replica.fetch(replica.queries.draft(key))?.text == "Hi there", "stored: a kill loses nothing")

        let receipt = try await replica.messages.send(draft: key)
        #expect(try await replica.fetch(replica.queries.draft(key)) == nil, "the draft went with the send, in one transaction")
        _ = try await replica.outbox.sendPending()
        #expect(await world.serverTexts() == ["Hi there"])
        let stored = try await replica.fetch(replica.queries.messages(inChannel: "general"))
        #expect(try await replica.outbox.completion(of: try #require(receipt.message.opId)) == .sent(timetoken: try #require(stored.first?.timetoken)))

        var other = MessageDraft()
        try other.insertText(offset: 0, text: "kept")
        try await replica.drafts.save(other, for: key)
        #expect(try await replica.drafts.remove(key))
        #expect(try await !replica.drafts.remove(key), "nothing left to remove")
    }
}

@Suite("Replica: conflicts left for a person")
struct ReplicaConflictTests {
    /// A replica (not started) whose channel "general" it created and sent, then another client
    /// renamed, with this device's later description edit queued on the old eTag: stale.
    static func staleChannelEdit(policy: ConflictPolicy) async throws -> (ReplicaWorld, Replica<DefaultChatCustom>) {
        let world = try await ReplicaWorld()
        var configuration = world.configuration
        configuration.reconciler.conflicts.channel = policy
        let replica = try Replica<DefaultChatCustom>(configuration)
        var named = ChannelEdit<FlatCustom>()
        named.name = .set("General")
        _ = try await replica.objects.setChannel(id: "general", edit: named)
        _ = try await replica.outbox.sendPending()
        var renamed = ChannelEdit<FlatCustom>()
        renamed.name = .set("Everyone")
        _ = try await world.web.appContext.setChannel(id: "general", fields: renamed)
        var described = ChannelEdit<FlatCustom>()
        described.details = .set("local words")
        _ = try await replica.objects.setChannel(id: "general", edit: described)
        return (world, replica)
    }
    @Test("a channel edit in conflict under .manual waits in the log; resolveConflict(take: .local) sends it over the server's version",
          .timeLimit(.minutes(10)))
    func resolveManually() async throws {
        let (world, replica) = try await Self.staleChannelEdit(policy: .manual)

        await replica.start()
        let conflicts = replica.observe(replica.queries.conflicts())
        var open: ConflictRecord?
        for try await records in conflicts {
            if let first = records.first(where: \.isOpen) { open = first; break }
        }
        let record = try #require(open)
        #expect(record.policy == "manual")
        #expect(try await world.web.appContext.getChannel(id: "general", as: FlatCustom.self).details == nil, "nothing sent while it waits")

        let resolved = try await replica.outbox.resolveConflict(id: record.id, take: .local)
        #expect(resolved.policy == "take:local" && !resolved.isOpen)
        await status(of: replica) { $0.pending == 0 && $0.sending == 0 && $0.conflicts == 0 }
        let server = try await world.web.appContext.getChannel(id: "general", as: FlatCustom.self)
        #expect(server.details == "local words" && server.name == "Everyone", "the local edit over the server's version: \(server)")
        await #expect(throws: ReconcilerError.self) { try await replica.outbox.resolveConflict(id: record.id, take: .remote) }
        await replica.stop()
    }

    @Test("a started replica settles a conflict with its configured policy (fieldMerge): both edits reach the server, nothing waits",
          .timeLimit(.minutes(10)))
    func settlesWhileStarted() async throws {
        let (world, replica) = try await Self.staleChannelEdit(policy: .fieldMerge(tie: .local))

        await replica.start()
        var settled: ConflictRecord?
        for try await records in replica.observe(replica.queries.conflicts()) {
            if let first = records.first { settled = first; break }
        }
        #expect(settled?.isOpen == false && settled?.automatic == true, "\(String(describing: settled))")
        await status(of: replica) { $0.pending == 0 && $0.sending == 0 && $0.conflicts == 0 }
        let server = try await world.web.appContext.getChannel(id: "general", as: FlatCustom.self)
        #expect(server.details == "local words" && server.name == "Everyone", "merged over the server's version: \(server)")
        await replica.stop()
    }
}
