import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
@testable import Replicator
import Testing

/// Mark all read as one op (`Outbox.markAllRead()`): one membership PATCH for the channels that
/// move, as the Chat SDK's `markAllMessagesAsRead`, coalesced offline and laid over pulls.
@Suite("Mark all read: one coalesced op, the Chat SDK's receipts")
struct MarkAllReadTests {
    /// A device that is a member of `channels` (synced), each with `messages` messages from alice.
    static func world(_ channels: [String], messages: Int = 1) async throws -> (World, ChatSDKConversations, [String: Timetoken]) {
        let world = try await World.joined(channels)
        let alice = try ChatSDKConversations(world.server, userId: "alice")
        var newest: [String: Timetoken] = [:]
        for channel in channels {
            for index in 0..<messages { newest[channel] = try await alice.send("\(channel) \(index)", to: channel) }
        }
        _ = try await world.sync()
        return (world, alice, newest)
    }

    /// The server's memberships of `user`, by channel.
    static func serverMemberships(_ world: World, user: String = "me") async throws -> [String: WireMembership<WireChat>] {
        let data = try await world.observer().appContext.getMemberships(userId: user, as: WireChat.self).data
        return Dictionary(uniqueKeysWithValues: data.map { ($0.channel.id, $0) })
    }

    /// A pull of objects and history, without sending the outbox.
    static func pull(_ world: World) async throws {
        _ = try await world.reconciler.pullObjects(full: true)
        _ = try await world.reconciler.pullHistory(channels: ["general", "lobby", "quiet"])
    }

    static func position(_ membership: WireMembership<WireChat>?) -> String? {
        membership?.custom?.objectValue?[ChatSDKFormat.lastReadKey]?.stringValue
    }

    @Test("one op for every channel that moves, one read and one PATCH when sent, a receipt per channel (none on public ones); the status, the other custom keys and the eTags are the server's")
    func oneOp() async throws {
        let (world, alice, newest) = try await Self.world(["general", "lobby", "quiet"], messages: 2)
        _ = try await alice.client.appContext.setChannel(id: "lobby", fields: ChannelEdit<JSONValue>(wireFields: ["type": "public"]), ifMatch: nil)
        _ = try await world.sync()
        #expect(try await world.store.fetch(world.store.queries.unreadCounts(for: "me")) == ["general": 2, "lobby": 2, "quiet": 2])

        let moved = try await world.outbox.memberships.markAllRead()
        #expect(Set(moved.keys) == ["general", "lobby", "quiet"])
        #expect(Set(moved.values.compactMap(\.opId)).count == 1, "every channel's position is in one op")
        #expect(try await world.store.fetch(world.store.queries.unreadCounts(for: "me")) == ["general": 0, "lobby": 0, "quiet": 0])
        let kinds = try await world.entries().map(\.kind)
        #expect(kinds.filter { $0 == .readPositions }.count == 1 && kinds.filter { $0 == .receipt }.count == 2, "\(kinds)")
        #expect(!kinds.contains(.setMembership))

        // Meanwhile the Chat SDK on another device gives general's membership another custom key.
        let before = try await Self.serverMemberships(world)
        let general = try #require(before["general"]?.custom?.objectValue)
        _ = try await alice.client.appContext.setMemberships(
            userId: "me", set: [MembershipSet<JSONValue>(id: "general", custom: .object(general.merging(["color": "blue"]) { $1 }))],
            as: WireChat.self)

        let sent = world.transport.requests.count
        let report = try await world.outbox.drain()
        #expect(report.deadLetters == 0 && report.conflicts == 0 && report.remaining == 0)
        let operations = world.transport.requests.dropFirst(sent).map(\.operation)
        #expect(operations.sorted() == ["getMemberships", "setMemberships", "signal", "signal"], "\(operations)")

        let after = try await Self.serverMemberships(world)
        for channel in ["general", "lobby", "quiet"] {
            #expect(Self.position(after[channel]) == String(try #require(newest[channel]).rawValue), "\(channel)")
            #expect(after[channel]?.status == ChatSDKFormat.joinedStatus, "the status is kept")
        }
        #expect(after["general"]?.custom?.objectValue?["color"] == "blue", "a key another device wrote is kept")
        let stored = try await world.store.fetch(world.store.queries.memberships(ofUser: "me"))
        for member in stored { #expect(member.eTag == after[member.channelId]?.eTag, "\(member.channelId): the answer's eTag is stored") }

        // The next edit of one membership is based on the batch's answer: no conflict.
        _ = try await world.outbox.memberships.setMembership(channel: "general", edit: MemberEdit(status: "away"))
        let next = try await world.outbox.drain()
        #expect(next.conflicts == 0 && next.remaining == 0)
        #expect(try await Self.serverMemberships(world)["general"]?.status == "away")
        #expect(try await world.outbox.memberships.markAllRead().isEmpty, "nothing moves again")
    }

    @Test("offline, a second mark all read and a mark read of a channel in the batch raise the positions in the same op; one PATCH sends the newest")
    func coalesces() async throws {
        let (world, alice, _) = try await Self.world(["general", "lobby"])
        let first = try await world.outbox.memberships.markAllRead()
        let batch = try #require(first["general"]?.opId)
        let newer = try await alice.send("later", to: "general")
        try await Self.pull(world)
        #expect(try await world.store.fetch(world.store.queries.unreadCounts(for: "me"))["general"] == 1)
        let second = try await world.outbox.memberships.markAllRead()
        #expect(Set(second.keys) == ["general"] && second["general"]?.disposition == .merged(into: batch))
        let newest = try await alice.send("newest", to: "lobby")
        try await Self.pull(world)
        let single = try await world.outbox.memberships.markRead(channel: "lobby", upTo: newest)
        #expect(single.opId == batch && single.disposition == .merged(into: batch))

        let entries = try await world.entries()
        #expect(entries.filter { $0.kind == .readPositions }.count == 1 && !entries.contains { $0.kind == .setMembership })
        #expect(entries.filter { $0.kind == .receipt }.count == 2, "one receipt per channel, at its newest position")
        let marks = try #require(entries.first { $0.kind == .readPositions }?.readPositions?.marks)
        #expect(marks.first { $0.channel == "general" }?.timetoken == newer && marks.first { $0.channel == "lobby" }?.timetoken == newest)

        let sent = world.transport.requests.count
        _ = try await world.outbox.drain()
        #expect(world.transport.requests.dropFirst(sent).filter { $0.operation == "setMemberships" }.count == 1)
        let server = try await Self.serverMemberships(world)
        #expect(Self.position(server["general"]) == String(newer.rawValue) && Self.position(server["lobby"]) == String(newest.rawValue))
    }

    @Test("until it is sent, each membership shows its new position over what a pull brings; what another device changed shows too")
    func laidOverPulls() async throws {
        let (world, alice, newest) = try await Self.world(["general", "lobby"])
        _ = try await world.outbox.memberships.markAllRead()
        _ = try await alice.client.appContext.setMemberships(
            userId: "me", set: [MembershipSet<JSONValue>(id: "general", status: "away", custom: ["color": "blue"])], as: WireChat.self)
        try await Self.pull(world)
        let general = try #require(try await world.store.fetch(world.store.queries.memberships(ofUser: "me")).first { $0.channelId == "general" })
        let custom = try JSONValue(encoding: general.custom)
        #expect(general.status == "away" && ReadPosition.timetoken(in: custom) == newest["general"])
        #expect(try await world.store.fetch(world.store.queries.unreadCounts(for: "me"))["general"] == 0)

        _ = try await world.outbox.drain()
        let server = try await Self.serverMemberships(world)
        #expect(server["general"]?.status == "away" && server["general"]?.custom?.objectValue?["color"] == "blue")
        #expect(Self.position(server["general"]) == String(try #require(newest["general"]).rawValue))
    }

    @Test("a channel with an unsent edit of its membership takes its position in that edit; an edit made after the batch waits for it and does not conflict")
    func membershipEdits() async throws {
        let (world, _, newest) = try await Self.world(["general", "lobby", "quiet"])
        _ = try await world.outbox.memberships.setMembership(channel: "general", edit: MemberEdit(status: "away"))
        let moved = try await world.outbox.memberships.markAllRead()
        let entries = try await world.entries()
        let edit = try #require(entries.first { $0.kind == .setMembership })
        #expect(moved["general"]?.opId == edit.id, "merged into the unsent edit")
        let batch = try #require(entries.first { $0.kind == .readPositions })
        #expect(batch.readPositions?.channels.sorted() == ["lobby", "quiet"])

        let later = try await world.outbox.memberships.setMembership(channel: "lobby", edit: MemberEdit(status: "away"))
        let waiting = try #require(try await world.entries().first { $0.id == later.opId })
        #expect(waiting.dependsOn == batch.id, "waits for the batch that writes the same membership")

        let report = try await world.outbox.drain()
        #expect(report.conflicts == 0 && report.deadLetters == 0 && report.remaining == 0)
        let server = try await Self.serverMemberships(world)
        for channel in ["general", "lobby"] {
            let expected = String(try #require(newest[channel]).rawValue)
            #expect(server[channel]?.status == "away" && Self.position(server[channel]) == expected)
        }
    }

    @Test("sent after the server moved on: a later position is not written back, a membership removed elsewhere is not made again; nothing to write, no PATCH")
    func serverAhead() async throws {
        let (world, alice, newest) = try await Self.world(["general", "lobby"])
        _ = try await world.outbox.memberships.markAllRead()
        let later = try await alice.send("read elsewhere", to: "general")
        _ = try await alice.client.appContext.setMemberships(
            userId: "me", set: [MembershipSet<JSONValue>(id: "general", custom: [ChatSDKFormat.lastReadKey: .string(String(later.rawValue))])],
            as: WireChat.self)
        _ = try await alice.client.appContext.setMemberships(userId: "me", set: [MembershipSet<JSONValue>](), remove: ["lobby"], as: WireChat.self)

        let sent = world.transport.requests.count
        let report = try await world.outbox.drain()
        #expect(report.deadLetters == 0 && report.remaining == 0)
        #expect(!world.transport.requests.dropFirst(sent).contains { $0.operation == "setMemberships" }, "nothing moves on the server")
        let server = try await Self.serverMemberships(world)
        #expect(Self.position(server["general"]) == String(later.rawValue) && server["lobby"] == nil)
        _ = newest
        let stored = try #require(try await world.store.fetch(world.store.queries.memberships(ofUser: "me")).first { $0.channelId == "general" })
        #expect(stored.eTag == server["general"]?.eTag, "the server's version is stored")
    }

    @Test("more than 100 channels: ops of at most 100, one PATCH each")
    func chunks() async throws {
        let channels = (0..<101).map { String(format: "room-%03d", $0) }
        let (world, _, _) = try await Self.world(channels)
        let moved = try await world.outbox.memberships.markAllRead()
        #expect(moved.count == 101)
        let batches = try await world.entries().compactMap(\.readPositions)
        #expect(batches.map(\.marks.count).sorted() == [1, 100])
        let sent = world.transport.requests.count
        let report = try await world.outbox.drain()
        let dead = try await world.entries().filter { $0.state == .dead }.map { $0.lastFailure }
        #expect(world.transport.requests.dropFirst(sent).filter { $0.operation == "setMemberships" }.count == 2,
                "\(report) \(world.transport.requests.dropFirst(sent).map(\.operation)) \(dead)")
        #expect(try await world.store.fetch(world.store.queries.unreadCounts(for: "me")).values.allSatisfy { $0 == 0 })
    }

    @Test("discarded before it is sent: each membership shows the position it had, with its receipts gone and later edits kept")
    func discard() async throws {
        let (world, _, _) = try await Self.world(["general", "lobby"])
        let before = try await world.store.fetch(world.store.queries.unreadCounts(for: "me"))
        let batch = try #require(try await world.outbox.memberships.markAllRead()["general"]?.opId)
        let edit = try await world.outbox.memberships.setMembership(channel: "lobby", edit: MemberEdit(status: "away"))
        let removed = try await world.outbox.discard(opId: batch)
        #expect(removed.count == 3, "the batch and its two receipts: \(removed)")
        #expect(try await world.store.fetch(world.store.queries.unreadCounts(for: "me")) == before)
        let kept = try #require(try await world.entries().first { $0.id == edit.opId })
        #expect(kept.dependsOn == nil, "the edit no longer waits")
        let lobby = try #require(try await world.store.fetch(world.store.queries.memberships(ofUser: "me")).first { $0.channelId == "lobby" })
        #expect(lobby.status == "away")
    }

    @Test("the PATCH's answer lost: the op turns ambiguous and its next attempt reads the server, finds the positions there and writes nothing again")
    func lostAnswer() async throws {
        let (world, _, newest) = try await Self.world(["general", "lobby"])
        _ = try await world.outbox.memberships.markAllRead()
        world.transport.script(.none, .dropResponse)
        let sent = world.transport.requests.count
        let report = try await world.outbox.drain()
        #expect(report.remaining == 0 && report.deadLetters == 0, "\(report)")
        let operations = world.transport.requests.dropFirst(sent).map(\.operation)
        #expect(operations.filter { $0 == "setMemberships" }.count == 1, "\(operations)")
        #expect(operations.filter { $0 == "getMemberships" }.count == 2, "the second attempt reads first: \(operations)")
        let server = try await Self.serverMemberships(world)
        #expect(Self.position(server["general"]) == String(try #require(newest["general"]).rawValue))
        let stored = try #require(try await world.store.fetch(world.store.queries.memberships(ofUser: "me")).first { $0.channelId == "general" })
        #expect(stored.eTag == server["general"]?.eTag)
    }

    @Test("refused by the server: a dead letter, visible; the receipts wait for it, a membership edit that waited for it goes, and the positions keep showing until it is discarded; then each shows what the server holds")
    func refused() async throws {
        let (world, _, _) = try await Self.world(["general", "lobby"])
        let batch = try #require(try await world.outbox.memberships.markAllRead()["general"]?.opId)
        let edit = try await world.outbox.memberships.setMembership(channel: "general", edit: MemberEdit(status: "away"))
        world.transport.script(.none, .forbidden)
        let report = try await world.outbox.drain()
        #expect(report.deadLetters == 1 && report.remaining == 2, "the two receipts wait: \(report)")
        #expect(try await world.entries().first { $0.id == edit.opId } == nil, "the edit that waited for it went")
        #expect(try await Self.serverMemberships(world)["general"]?.status == "away")
        #expect(try await world.entries().first { $0.id == batch }?.state == .dead)
        #expect(try await world.store.fetch(world.store.queries.unreadCounts(for: "me")).values.allSatisfy { $0 == 0 })
        _ = try await world.outbox.discard(opId: batch)
        #expect(try await world.entries().isEmpty)
        // lobby's membership is the version the batch was laid over: its position comes back.
        #expect(try await world.store.fetch(world.store.queries.unreadCounts(for: "me"))["lobby"] == 1)
        // general's edit carried the position it showed (its base) to the server: the next pull
        // stores what the server holds, which the overlay had hidden.
        try await Self.pull(world)
        let server = try await Self.serverMemberships(world)
        let general = try #require(try await world.store.fetch(world.store.queries.memberships(ofUser: "me")).first { $0.channelId == "general" })
        let custom = try JSONValue(encoding: general.custom)
        #expect(general.eTag == server["general"]?.eTag && ReadPosition.timetoken(in: custom).map { String($0.rawValue) } == Self.position(server["general"]))
        #expect(try await world.store.fetch(world.store.queries.unreadCounts(for: "me")) == ["general": 0, "lobby": 1])
    }

    @Test("a channel the user is banned from is left as it is; the others are marked read (mark all read does not fail on it)")
    func bannedChannel() async throws {
        let (world, _, _) = try await Self.world(["general", "lobby"])
        try await ChatSDKClient(world.server, userId: "admin").restrict("me", in: "general", ban: true, mute: false)
        _ = try await world.sync()
        let moved = try await world.outbox.memberships.markAllRead()
        #expect(Set(moved.keys) == ["lobby"])
        #expect(try await world.store.fetch(world.store.queries.unreadCounts(for: "me")) == ["general": 1, "lobby": 0])
        #expect(try await world.entries().compactMap(\.readPositions).flatMap(\.channels) == ["lobby"])
    }
}
