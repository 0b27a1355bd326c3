import Foundation
import PubNubReplica
import PubNubSimulator
import PubNubSimulatorTesting
import Testing

/// Files through the façade (docs/files.md): `send(files:)` shows the pending message with its
/// file at once, the running replica uploads and publishes it, `data(of:)` reads it back, also
/// after `suspend()` and `resume()`, and another client downloads the same bytes.
@Suite("Replica: files")
struct ReplicaFileTests {
    @Test("send(files:) while stopped, then started: one file message, the same bytes through data(of:) before and after a suspend")
    func sendAndRead() async throws {
        let world = try await ReplicaWorld()
        let replica = try Replica<DefaultChatCustom>(world.configuration)
        let photo = Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let receipt = try await replica.messages.send(files: [OutgoingFile(data: photo, name: "p.png")], text: "look", to: "general")
        let id = try #require(receipt.value?.id)
        let pending = try #require(try await replica.fetch(replica.queries.message(id: id)))
        #expect(pending.delivery == .pending && pending.files.map(\.name) == ["p.png"] && pending.files[0].id == nil)

        await replica.start()
        await status(of: replica) { $0.pending == 0 && $0.sending == 0 }
        let sent = try #require(try await replica.fetch(replica.queries.message(id: id)))
        let file = try #require(sent.files.first)
        #expect(sent.delivery == .sent && file.id != nil && file.mimeType == "image/png")
        #expect(try await replica.files.data(of: file, channel: "general") == photo)
        let listed = try await replica.files.list(channel: "general")
        #expect(listed.files.map(\.id) == [file.id!])
        #expect(try await world.web.files.downloadFile(channel: "general", id: file.id!, name: file.name) == photo)

        await replica.suspend()
        await #expect(throws: (any Error).self) { try await replica.files.data(of: file, channel: "general") }
        try await replica.resume()
        #expect(try await replica.files.data(of: file, channel: "general") == photo)
        await replica.stop()
    }
}
