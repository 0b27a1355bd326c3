import Foundation
import PubNubReplica
import PubNubSimulator
import PubNubSimulatorTesting
import ReplicaStore
import Testing

/// Signing out (docs/ios.md, "Signing out"): refused while ops are unsent, then with the discard
/// flag the device's push registrations go and nothing of the user is left in the store's folder;
/// the next user of the device starts empty.
@Suite("Replica: sign-out")
struct SignOutTests {
    /// A replica of `user` whose store is the only thing in a new folder.
    static func configuration(_ world: ReplicaWorld, folder: String, user: String = "alice") -> ReplicaConfiguration {
        var configuration = world.configuration
        configuration.store = .file(folder + "/\(user).sqlite")
        configuration.userId = user
        return configuration
    }

    static func folder() throws -> String {
        let folder = NSTemporaryDirectory() + "signout-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test("refused with unsent ops (named, nothing changed), then with discardUnsent: push registrations removed, the folder empty, the replica done, a new user starts empty")
    func signOutLeavesNothing() async throws {
        let world = try await ReplicaWorld()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let replica = try Replica<DefaultChatCustom>(Self.configuration(world, folder: folder))
        let device = try PushDevice.apns2(deviceToken: Data(repeating: 0xab, count: 32), topic: "com.example.chat")
        try await replica.push.register(device, channels: ["general"])
        let sent = try await replica.messages.send(text: "before", to: "general")

        // Unsent: the push registration and the message, named; the replica goes on.
        await #expect(throws: ReplicaError.unsentOps(count: 2, kinds: ["push", "send"], opIds: [
            try #require(try await replica.fetch(replica.queries.outbox()).first?.id), try #require(sent.opId),
        ])) { try await replica.signOut() }
        #expect(try await replica.fetch(replica.queries.outbox()).count == 2)

        await replica.start()
        await status(of: replica) { $0.pending == 0 && $0.sending == 0 }
        #expect(try await world.web.push.channels(device: device) == ["general"])
        await replica.stop()
        _ = try await replica.messages.send(text: "never sent", to: "general")
        var observation = replica.observe(replica.queries.messages(inChannel: "general")).makeAsyncIterator()
        #expect(try await observation.next()?.map(\.text) == ["before", "never sent"])
        // A started replica refused stays started; here it was stopped, and stays stopped.
        await #expect(throws: ReplicaError.self) { try await replica.signOut() }
        #expect(FileManager.default.fileExists(atPath: folder + "/alice.sqlite"))

        let report = try await replica.signOut(discardingUnsent: true)
        #expect(report.discardedOps == 1 && report.pushDevicesRemoved == 1)
        #expect(report.removedFiles.contains(folder + "/alice.sqlite"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == [])
        #expect(try await world.web.push.channels(device: device) == [])
        #expect(await world.serverTexts() == ["before"])
        // Done: every call says so, observations ended.
        await #expect(throws: ReplicaError.signedOut) { try await replica.fetch(replica.queries.outbox()) }
        await #expect(throws: ReplicaError.signedOut) { try await replica.messages.send(text: "after", to: "general") }
        await #expect(throws: ReplicaError.signedOut) { try await replica.resume() }
        // The observation ends (without an error) rather than waiting for a store that is gone.
        while try await observation.next() != nil {}

        // The next user of the device: a new store, empty.
        let next = try Replica<DefaultChatCustom>(Self.configuration(world, folder: folder, user: "bob"))
        #expect(try await next.fetch(next.queries.messages(inChannel: "general")).isEmpty)
        #expect(try await next.fetch(next.queries.outbox()).isEmpty)
        #expect(try await next.fetch(next.queries.pushDevices()).isEmpty)
    }

    @Test("refused while another process holds the store's lock, and offline while a push registration cannot be removed; keepPushRegistrations goes on")
    func signOutRefusals() async throws {
        let world = try await ReplicaWorld()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let configuration = Self.configuration(world, folder: folder)
        let replica = try Replica<DefaultChatCustom>(configuration)
        let device = try PushDevice(token: "fcm-token-1", type: .fcm)
        try await replica.push.register(device, channels: ["general"])
        try await replica.push.removeDevice(device)
        #expect(try await replica.fetch(replica.queries.pushDevices()).isEmpty, "a removed device is forgotten")
        try await replica.push.register(device, channels: ["general"])
        await replica.start()
        await status(of: replica) { $0.pending == 0 && $0.sending == 0 }
        await replica.stop()

        // Another holder of the lock (a `listen` in another process, say).
        let other = try ChatStore<DefaultChatCustom>.open(at: folder + "/alice.sqlite")
        let lease = try #require(try other.maintenance.tryAcquireDrainLease())
        await #expect(throws: ReplicaError.self) {
            do { try await replica.signOut() } catch ReplicaError.storeInUse(let message) {
                #expect(message.contains("holds its lock"))
                throw ReplicaError.storeInUse(message)
            }
        }
        lease.release()
        try other.close()

        // Offline: the push registration cannot be removed; nothing is.
        world.transport.script(.offline)
        await #expect(throws: ReplicaError.self) {
            do { try await replica.signOut() } catch ReplicaError.pushRemovalFailed(let device, _) {
                #expect(device.hasPrefix("fcm device "))
                throw ReplicaError.signedOut
            }
        }
        #expect(try await replica.fetch(replica.queries.pushDevices()).count == 1)
        let report = try await replica.signOut(keepingPushRegistrations: true)
        #expect(report.pushDevicesRemoved == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == [])
    }
}
