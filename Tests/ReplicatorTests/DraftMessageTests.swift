import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
@testable import Replicator
import Testing

@Suite("Messages in the Chat SDK's format")
struct DraftMessageTests {
    /// A message as the PubNub Chat SDK publishes a draft (hand-written in its shape).
    static let fixture = #"""
    {"type":"text","text":"Hi [Alice](pn-user://alice), see [#random](pn-channel://random) and [docs](https://example.com/a\\)b) [Al](pn-user://alice2)","files":[]}
    """#

    @Test("a pulled Chat SDK message exposes the draft's elements, and the mention query finds it by exact user id")
    func pulledElements() async throws {
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        let web = try PubNubClient.simulated(InProcessTransport(server: server), userId: "bob")
        let message = try JSONValue(jsonData: Data(Self.fixture.utf8))
        _ = try await web.publish(PublishRequest(channel: "c", message: message))
        _ = try await web.publish(PublishRequest(channel: "c", message: ["type": "text", "text": "no mention of [alice](https://x)", "files": []]))
        var options = ReconcilerOptions()
        options.channels = ["c"]
        let device = try SimulatedDevice<DefaultChatCustom>(
            server: server, clock: clock, userId: "me", plan: FaultPlan(seed: 1, profile: .none), seed: 1, reconcilerOptions: options)
        _ = try await device.reconciler.pullHistory(channels: ["c"])
        let stored = try await device.store.fetch(device.store.queries.messages(inChannel: "c"))
        try #require(stored.count == 2)

        var draft = MessageDraft()
        try draft.insertText(offset: 0, text: "Hi Alice, see #random and docs Al")
        try draft.addMention(offset: 3, length: 5, target: .user("alice"))
        try draft.addMention(offset: 14, length: 7, target: .channel("random"))
        try draft.addMention(offset: 26, length: 4, target: .url("https://example.com/a)b"))
        try draft.addMention(offset: 31, length: 2, target: .user("alice2"))
        #expect(stored[0].elements == draft.elements)
        #expect(stored[0].contentType == Reconciler<DefaultChatCustom>.chatSDKTextContentType)
        #expect(draft.render() == (message.objectValue?["text"]?.stringValue ?? ""))
        #expect(stored[0].mentionedUserIds == ["alice", "alice2"])

        let mentioning = try await device.store.fetch(device.store.queries.messages(mentioning: "alice"))
        #expect(mentioning.map(\.id) == [stored[0].id])
        #expect(try await device.store.fetch(device.store.queries.messages(mentioning: "ali")).isEmpty)
        #expect(try await device.store.fetch(device.store.queries.messages(mentioning: "alice2")).map(\.id) == [stored[0].id])
    }
}
