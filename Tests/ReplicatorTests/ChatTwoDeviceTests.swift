import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator
import Testing

/// What a chat screen shows of channel "c": each message's shown text and deletion, the pinned
/// message, every member's read position and the user's unread count.
struct ChatScreen: Equatable, CustomStringConvertible {
    var shown: [String: String] = [:]           // message id → shown text
    var deleted: Set<String> = []
    var pinned: String?
    var receipts: [String: Timetoken] = [:]     // user → read position
    var unread: Int?

    var description: String {
        "shown \(shown.sorted { $0.key < $1.key }.map { "\($0.key.prefix(8))=\($0.value)" }) deleted \(deleted.map { $0.prefix(8) }.sorted()) "
            + "pinned \(pinned.map { String($0.prefix(8)) } ?? "-") receipts \(receipts) unread \(unread.map(String.init) ?? "-")"
    }

    /// What `device`'s store shows.
    init(device: World) async throws {
        let queries = device.store.queries
        for message in try await device.store.fetch(queries.messages(inChannel: "c", includeDeleted: true)) {
            shown[message.id] = message.shownText
            if message.isDeleted { deleted.insert(message.id) }
        }
        pinned = try await device.store.fetch(queries.pinnedMessage(inChannel: "c"))?.id
        for receipt in try await device.store.fetch(queries.readReceipts(inChannel: "c")) {
            if let lastRead = receipt.lastRead { receipts[receipt.userId] = lastRead }
        }
        unread = try await device.store.fetch(queries.unreadCount(inChannel: "c", for: "me"))
    }

    /// What the server holds, read by hand with the Chat SDK's rules: the newest `edited` action
    /// by action timetoken, any `deleted` action, the channel's pin keys, the members'
    /// `lastReadMessageTimetoken`, and "me"'s unread count counted message by message.
    init(server: PubNubServer, observer: PubNubClient) async throws {
        let stored = await server.storedMessages(channel: "c")
        let actions = await server.storedActions(channel: "c")
        var ids: [UInt64: String] = [:]
        for message in stored {
            guard let id = message.message.objectValue?["id"]?.stringValue else { continue }
            ids[message.timetoken] = id
            let edits = actions.filter { $0.messageTimetoken == message.timetoken && $0.type == "edited" }
            shown[id] = edits.max { $0.actionTimetoken < $1.actionTimetoken }?.value
                ?? message.message.objectValue?["text"]?.stringValue ?? ""
            if actions.contains(where: { $0.messageTimetoken == message.timetoken && $0.type == "deleted" && $0.value == "deleted" }) {
                deleted.insert(id)
            }
        }
        let channel = try await observer.appContext.getChannel(id: "c", as: FlatCustom.self)
        if case .string(let raw)? = channel.custom?.values["pinnedMessageTimetoken"], let tt = UInt64(raw) { pinned = ids[tt] }
        var mine: Timetoken?
        for member in try await observer.appContext.getMembers(channelId: "c", as: DefaultChatCustom.self).data {
            if case .string(let raw)? = member.custom?.values["lastReadMessageTimetoken"], let tt = UInt64(raw) {
                receipts[member.uuid.id] = Timetoken(rawValue: tt)
                if member.uuid.id == "me" { mine = Timetoken(rawValue: tt) }
            }
        }
        let read = mine?.rawValue ?? 0
        unread = stored.filter { message in
            message.timetoken > read && message.publisher != "me"
                && !actions.contains { $0.messageTimetoken == message.timetoken && $0.type == "deleted" && $0.value == "deleted" }
        }.count
    }
}

@Suite("Two devices: edits, deletes, restores, read marks and pins")
struct ChatTwoDeviceTests {
    static var seeds: ClosedRange<UInt64> { SoakSeeds.range("PNREPLICATE_CHAT_SEEDS", default: 20) }

    @Test("concurrent offline chat writes on two devices: both stores equal the server, shown text is the newest edit, unread counts match a count by hand",
          arguments: seeds)
    func converge(seed: UInt64) async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        let dice = Dice(seed: seed)
        await server.remoteEditChannel(id: "c", fields: ["name": "C", "type": "group", "custom": ["topic": "t"]])
        let other = try World.client(InProcessTransport(server: server), userId: "other")
        _ = try await other.perform(try other.appContext.setMembershipsRequest(
            userId: "me", set: [MembershipSet<JSONValue>(id: "c", status: "joined", custom: ["role": "mod"])], remove: []))
        _ = try await other.perform(try other.appContext.setMembershipsRequest(
            userId: "other", set: [MembershipSet<JSONValue>(id: "c", status: "joined")], remove: []))
        _ = await server.seedMessages(channel: "c", (0..<3).map { chatPayload("o\($0)") }, publisher: "other")
        _ = await server.seedMessages(channel: "c", (0..<2).map { chatPayload("me\($0)") }, publisher: "me")

        let a = try World(seed: seed, clock: clock, server: server, policy: .fieldMerge(tie: .lastWriter))
        let b = try World(seed: seed &+ 1000, clock: clock, server: server, policy: .fieldMerge(tie: .lastWriter))
        // The channel on screen: kept complete (edits, deletions and reactions are message actions).
        try await a.reconciler.markHot("c")
        try await b.reconciler.markHot("c")
        // Both devices edit and delete each other's messages: the Chat SDK's rule (EditAuthority).
        try await a.store.setEditAuthority(.anyone)
        try await b.store.setEditAuthority(.anyone)
        _ = try await a.sync()
        _ = try await b.sync()

        // Offline: each device edits, deletes, restores, marks read and pins at random.
        a.transport.use(FaultPlan(seed: seed, profile: .offline))
        b.transport.use(FaultPlan(seed: seed, profile: .offline))
        for (name, device) in [("A", a), ("B", b)] {
            for step in 0..<(2 + dice.pick(4)) {
                clock.advance(by: 1)
                let messages = try await device.store.fetch(device.store.queries.messages(inChannel: "c", includeDeleted: true))
                let message = messages[dice.pick(messages.count)]
                switch dice.pick(5) {
                case 0, 1: _ = try await device.outbox.messages.edit(message: message.id, text: "\(name)\(step) \(message.text)")
                case 2:
                    if message.isDeleted {
                        do { _ = try await device.outbox.messages.restoreMessage(id: message.id) } catch OutboxError.deletedByOthers {}
                    } else {
                        _ = try await device.outbox.messages.deleteMessage(id: message.id)
                    }
                case 3:
                    if let timetoken = message.timetoken { _ = try await device.outbox.memberships.markRead(channel: "c", upTo: timetoken) }
                default:
                    if message.timetoken != nil { _ = try await device.outbox.messages.pinMessage(id: message.id) }
                }
            }
        }
        // Meanwhile the Chat SDK elsewhere edits a message and another user writes.
        clock.advance(by: 1)
        let seeded = await server.storedMessages(channel: "c")
        _ = try await other.messageActions.addMessageAction(
            channel: "c", messageTimetoken: Timetoken(rawValue: seeded[dice.pick(seeded.count)].timetoken), type: "edited", value: "sdk edit")
        _ = try await other.publish(PublishRequest(channel: "c", message: chatPayload("late")))

        try await World.healAndSyncUntilQuiet(a, b, clock: clock, seed: seed)
        let truth = try await ChatScreen(server: server, observer: try a.observer())
        let screenA = try await ChatScreen(device: a), screenB = try await ChatScreen(device: b)
        #expect(screenA == truth, "seed \(seed): device A\nA:      \(screenA)\nserver: \(truth)")
        #expect(screenB == truth, "seed \(seed): device B\nB:      \(screenB)\nserver: \(truth)")
    }
}
