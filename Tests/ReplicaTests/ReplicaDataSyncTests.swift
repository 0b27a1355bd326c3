import Foundation
import PubNubReplica
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import Testing

/// A replica configured for DataSync (`ReplicaConfiguration.objectBackend`): it syncs users,
/// channels and memberships from DataSync records, writes there, and a store keeps the backend
/// it was filled from.
@Suite("Replica: DataSync as the object backend")
struct ReplicaDataSyncTests {
    /// Turns Access Manager on (DataSync needs it) and creates `objects` as an admin would.
    static func seed(_ world: ReplicaWorld, _ objects: [(DataSyncResource, DataSyncObject)]) async throws {
        await world.server.configureAccess(secretKey: "sec-c-test")
        let admin = try PubNubClient.simulated(InProcessTransport(server: world.server), userId: "admin", clock: world.clock).dataSync
        for (resource, object) in objects {
            #expect(await world.server.dataSyncAsAdmin(try admin.createRequest(resource, object)).status == 201)
        }
    }

    /// A token of alice granting what a chat member needs, for `minutes`.
    static func token(_ world: ReplicaWorld, minutes: Int = 60) async throws -> String {
        let all = AccessPermissions(rawValue: 255)
        return try await world.server.grantToken(
            ttlMinutes: minutes,
            grants: AccessGrants(patterns: [.user: ["^.*$": all], .channel: ["^.*$": all], .dataSyncMembership: ["^.*$": all]]),
            authorizedUserId: "alice")
    }

    @Test("objectBackend .dataSync syncs alice's user, channel and membership from DataSync and sends her edit there; the store then refuses App Context")
    func dataSyncReplica() async throws {
        let world = try await ReplicaWorld()
        try await Self.seed(world, [
            (.users, DataSyncObject(id: "alice", payload: ["name": "Alice", "theirs": 1])),
            (.channels, DataSyncObject(id: "general", payload: ["name": "General"])),
            (.memberships, DataSyncObject(id: "pnm.5.7.alice.general", channelId: "general", userId: "alice", status: "joined")),
        ])
        var configuration = world.configuration
        configuration.authKey = try await Self.token(world)
        configuration.objectBackend = .dataSync(DataSyncOptions())
        let replica = try Replica<DefaultChatCustom>(configuration)
        _ = try await replica.sync()
        let queries = replica.queries
        #expect(try await replica.fetch(queries.user(id: "alice"))?.name == "Alice")
        #expect(try await replica.fetch(queries.channel(id: "general"))?.name == "General")
        #expect(try await replica.fetch(queries.member(channelId: "general", userId: "alice"))?.status == "joined")
        var edit = UserEdit<FlatCustom>()
        edit.name = .set("Alice B.")
        _ = try await replica.objects.setUser(id: "alice", edit: edit)
        _ = try await replica.sync()
        let record = try #require(await world.server.dataSyncRecord(.users, id: "alice")?.objectValue?["payload"])
        #expect(record == ["name": "Alice B.", "theirs": 1])
        await replica.stop()
        var appContext = world.configuration
        appContext.authKey = configuration.authKey
        #expect(throws: StoreError.objectBackendMismatch(stored: "datasync", configured: "app-context")) {
            try Replica<DefaultChatCustom>(appContext)
        }
    }

    @Test("a keyset without Access Manager answers DataSync DS-0201: the status names it, the write waits pending, and goes once the keyset is fixed")
    func configurationErrorShows() async throws {
        let world = try await ReplicaWorld()
        var configuration = world.configuration
        configuration.objectBackend = .dataSync(DataSyncOptions())
        let replica = try Replica<DefaultChatCustom>(configuration)
        var edit = UserEdit<FlatCustom>()
        edit.name = .set("Alice")
        _ = try await replica.objects.setUser(id: "alice", edit: edit)
        _ = try? await replica.sync()
        var status = await replica.status
        #expect(status.pending == 1 && status.deadLetters == 0, "\(status)")
        let problem = try #require(status.configurationError, "\(status)")
        #expect(problem.contains("DS-0201"), "\(problem)")
        #expect(status.description.contains("waiting on the keyset's configuration"))

        await world.server.configureAccess(secretKey: "sec-c-test")
        try replica.access.setToken(try await Self.token(world))
        world.clock.advance(by: 301)
        _ = try await replica.sync()
        status = await replica.status
        #expect(status.configurationError == nil && status.pending == 0, "\(status)")
        #expect(await world.server.dataSyncRecord(.users, id: "alice")?.objectValue?["payload"] == ["name": "Alice"])
        await replica.stop()
    }

    @Test("the status and expiryWarnings() name the followed objects DataSync deletes within the configured warning, and only those")
    func expiryWarnings() async throws {
        let world = try await ReplicaWorld()
        try await Self.seed(world, [
            (.users, DataSyncObject(id: "alice", payload: ["name": "Alice"])),
            (.users, DataSyncObject(id: "bob", payload: ["name": "Bob"])),
            (.channels, DataSyncObject(id: "general", payload: ["name": "General"])),
            (.memberships, DataSyncObject(id: "pnm.5.7.alice.general", channelId: "general", userId: "alice", status: "joined")),
        ])
        var configuration = world.configuration
        configuration.authKey = try await Self.token(world, minutes: 43_200)
        var options = DataSyncOptions()
        options.expiryWarning = 2 * 86_400
        configuration.objectBackend = .dataSync(options)
        let replica = try Replica<DefaultChatCustom>(configuration)
        _ = try await replica.sync()
        #expect(await replica.status.expiring.isEmpty, "30 days away")
        let expiresAt = try #require(
            (await world.server.dataSyncRecord(.users, id: "alice"))?.objectValue?["expiresAt"]?.stringValue.flatMap { try? ISOTimestamp(parsing: $0) })
        // Two and a half days before: outside the configured two days (inside the default three).
        world.clock.advance(by: expiresAt.date.timeIntervalSince(world.clock.now) - 2.5 * 86_400)
        _ = try await replica.sync()
        #expect(try await replica.expiryWarnings().isEmpty, "the configured warning, not the default")
        #expect(await replica.status.expiring.isEmpty)
        // A day later: inside it.
        world.clock.advance(by: 86_400)
        _ = try await replica.sync()
        let status = await replica.status
        let kinds = status.expiring.map { "\($0.kind.rawValue) \($0.id)" }.sorted()
        #expect(kinds == ["channel general", "membership general", "user alice"], "bob is not followed: \(kinds)")
        #expect(status.description.contains("3 followed objects expiring"), "\(status)")
        #expect(try await replica.expiryWarnings() == status.expiring)
        await replica.stop()
    }
}
