import Foundation
import PubNubReplica
import PubNubSimulator
import PubNubSimulatorTesting
import Testing

/// Access Manager through the façade (docs/access.md): a token that expires while the device is
/// away costs no message, the provider is asked once per outage, a refusal under the new token is
/// a dead letter naming the channel and permission, and a token limited to one channel reads and
/// writes nothing elsewhere.
@Suite("Replica: Access Manager tokens")
struct ReplicaAccessTests {
    /// Everything alice's chat needs on `channels` and on herself (no category: listing every
    /// user or channel is not granted, and is skipped).
    static func grants(channels: [String], user: String = "alice") -> AccessGrants {
        var channelGrants: [String: AccessPermissions] = [user: .read]
        for channel in channels { channelGrants[channel] = [.read, .write, .delete, .get, .update, .manage, .join] }
        return AccessGrants(resources: [.channel: channelGrants, .uuid: [user: [.get, .update, .join]]])
    }

    /// A world whose server enforces Access Manager (the setup runs before it does).
    static func world() async throws -> ReplicaWorld {
        let world = try await ReplicaWorld()
        _ = try await world.web.perform(try world.web.appContext.setMembershipsRequest(
            userId: "alice", set: [MembershipSet<JSONValue>(id: "side", status: "joined")], remove: []))
        await world.server.configureAccess(secretKey: "sec-c-test")
        return world
    }

    /// Counts the provider's calls and hands out tokens the server grants.
    actor Provider {
        var requests: [AccessTokenRequest] = []
        var serverMessagesAtCall: [Int] = []
        func record(_ request: AccessTokenRequest, serverMessages: Int) {
            requests.append(request)
            serverMessagesAtCall.append(serverMessages)
        }
    }

    /// A configuration starting with a token of `firstTTL` minutes on "general" and "side", whose
    /// provider records each call and grants `next` (another TTL than the first: a token carries no
    /// nonce, so the same grant in the same second would be the same token, as on PubNub).
    static func configured(
        _ world: ReplicaWorld, firstTTL: Int, next: [String]
    ) async throws -> (ReplicaConfiguration, Provider, first: String) {
        let server = world.server
        let first = try await server.grantToken(ttlMinutes: firstTTL, grants: grants(channels: ["general", "side"]), authorizedUserId: "alice")
        let provider = Provider()
        var configuration = world.configuration
        configuration.authKey = first
        configuration.tokenProvider = { request in
            await provider.record(request, serverMessages: await server.storedMessages(channel: "general").count)
            return try await server.grantToken(ttlMinutes: firstTTL + 1, grants: grants(channels: next), authorizedUserId: "alice")
        }
        return (configuration, provider, first)
    }

    @Test("50 messages and edits queued while the token expires: one provider call, all 50 exactly once and in order, the op the new token does not grant a dead letter")
    func expiredWhileAway() async throws {
        let world = try await Self.world()
        // The new token no longer grants "side".
        let (configuration, provider, _) = try await Self.configured(world, firstTTL: 10, next: ["general"])
        let replica = try Replica<DefaultChatCustom>(configuration)
        #expect(replica.access.token?.ttlMinutes == 10)
        // Away (not started): 50 sends, edits of five of them, one send to "side".
        var ids: [String] = []
        for index in 0..<50 { ids.append(try #require(try await replica.messages.send(text: "m\(index)", to: "general").value?.id)) }
        for index in stride(from: 0, to: 50, by: 10) { _ = try await replica.messages.edit(message: ids[index], text: "m\(index) edited") }
        let side = try await replica.messages.send(text: "to side", to: "side")
        world.clock.advance(by: .seconds(20 * 60))
        #expect(replica.access.token?.isExpired(at: world.clock.now) == true)

        await replica.start()
        let settled = await status(of: replica) { $0.pending == 0 && $0.sending == 0 && $0.deadLetters == 1 }
        #expect(settled.waitingForToken == nil)
        let requests = await provider.requests
        #expect(requests.map(\.reason) == [.expired])
        #expect(requests.first?.current?.ttlMinutes == 10)
        // Nothing went under the expired token: the server had nothing when the provider was asked.
        #expect(await provider.serverMessagesAtCall == [0])
        let texts = await world.serverTexts()
        #expect(texts.count == 50)
        // Edits of sends not yet sent fold into them: one publish each, in order.
        #expect(texts == (0..<50).map { "m\($0)" + ($0 % 10 == 0 ? " edited" : "") })
        #expect(await world.serverTexts("side").isEmpty)
        let dead = try #require(try await replica.fetch(replica.queries.outbox()).first { $0.state == .dead })
        #expect(dead.id == side.opId)
        #expect(dead.lastFailure?.errorClass == .accessDenied)
        #expect(dead.lastFailure?.message.contains(#"write on channel "side""#) == true)
        await replica.stop()
    }

    @Test("a token revoked while running: the next send waits, the provider is asked once (refused), and it goes under the new token")
    func revoked() async throws {
        let world = try await Self.world()
        let server = world.server
        let (configuration, provider, first) = try await Self.configured(world, firstTTL: 60, next: ["general", "side"])
        let replica = try Replica<DefaultChatCustom>(configuration)
        await replica.start()
        _ = try await replica.messages.send(text: "before", to: "general")
        await status(of: replica) { $0.pending == 0 && $0.sending == 0 }
        #expect(await server.revokeToken(first))
        let after = try await replica.messages.send(text: "after", to: "general")
        let opId = try #require(after.opId)
        let outcome = try await replica.outbox.completion(of: opId)
        #expect("\(outcome)".hasPrefix("sent"), "\(outcome)")
        #expect(await world.serverTexts() == ["before", "after"])
        #expect(await provider.requests.map(\.reason) == [.refused])
        #expect(try await replica.fetch(replica.queries.outbox()).isEmpty)
        await replica.stop()
    }

    @Test("relaunched with the same revoked token, a refused op waits again (no dead letter); a new token sends it once")
    func relaunchWithRevokedToken() async throws {
        let world = try await Self.world()
        let token = try await world.server.grantToken(ttlMinutes: 60, grants: Self.grants(channels: ["general"]), authorizedUserId: "alice")
        #expect(await world.server.revokeToken(token))
        var configuration = world.configuration
        configuration.authKey = token
        for _ in 0..<2 {
            // Each round is a process: a replica on the same store with the same token.
            let replica = try Replica<DefaultChatCustom>(configuration)
            if try await replica.fetch(replica.queries.outbox()).isEmpty { _ = try await replica.messages.send(text: "once", to: "general") }
            let report = try await replica.outbox.sendPending()
            #expect(report.deadLetters == 0 && report.waitingForToken == 1, "\(report)")
        }
        let replica = try Replica<DefaultChatCustom>(configuration)
        try replica.access.setToken(try await world.server.grantToken(ttlMinutes: 61, grants: Self.grants(channels: ["general"]), authorizedUserId: "alice"))
        let report = try await replica.outbox.sendPending()
        #expect(report.completed == 1 && report.deadLetters == 0 && report.remaining == 0, "\(report)")
        #expect(await world.serverTexts() == ["once"])
    }

    @Test("setToken refuses a token for another user and changes nothing")
    func otherUser() async throws {
        let world = try await Self.world()
        let bobs = try await world.server.grantToken(ttlMinutes: 60, grants: Self.grants(channels: ["general"], user: "bob"), authorizedUserId: "bob")
        var configuration = world.configuration
        configuration.authKey = bobs
        #expect(throws: ReplicaError.self) { try Replica<DefaultChatCustom>(configuration) }
        configuration.authKey = nil
        let replica = try Replica<DefaultChatCustom>(configuration)
        #expect(throws: AccessTokenError.otherUser(tokenUser: "bob", configuredUser: "alice")) { try replica.access.setToken(bobs) }
        #expect(replica.access.token == nil)
    }

    @Test("a peer whose token grants one channel cannot publish, react, edit App Context or read in another; its replica shows nothing from there")
    func limitedPeer() async throws {
        let world = try await ReplicaWorld()
        // Set up as an admin before Access Manager is on: "secret" has a message, alice is a member of both.
        _ = try await world.web.perform(try world.web.appContext.setMembershipsRequest(
            userId: "alice", set: [MembershipSet<JSONValue>(id: "secret", status: "joined")], remove: []))
        let secretMessage = try await world.web.publish(PublishRequest(channel: "secret", message: .string("classified")))
        await world.server.configureAccess(secretKey: "sec-c-test")
        let token = try await world.server.grantToken(ttlMinutes: 60, grants: Self.grants(channels: ["general"]), authorizedUserId: "alice")

        // On the wire: every family refused on "secret" (the simulator decides: the requests go
        // straight to it, past the client's own pre-check).
        let raw = try PubNubClient.simulated(InProcessTransport(server: world.server), userId: "alice", authToken: token)
        var edit = ChannelEdit<JSONValue>()
        edit.name = .set("mine")
        let requests: [(String, WireRequest)] = [
            ("publish", try raw.publishRequest(PublishRequest(channel: "secret", message: .string("x")))),
            ("react", try raw.messageActions.addMessageActionRequest(channel: "secret", messageTimetoken: secretMessage, type: "reaction", value: "👍")),
            ("set channel", try raw.appContext.setChannelRequest(id: "secret", fields: edit, ifMatch: nil)),
            ("list files", try raw.files.listFilesRequest(channel: "secret")),
            ("subscribe", try raw.subscribeRequest(SubscribeRequest(channels: ["secret"]))),
        ]
        for (name, request) in requests {
            #expect(request.query.contains { $0.name == "auth" }, "\(name) carries the token")
            let answer = await world.server.handle(request)
            #expect(answer.status == 403, "\(name) answered \(answer.status)")
        }
        // The same requests on "general" are allowed.
        #expect(await world.server.handle(try raw.publishRequest(PublishRequest(channel: "general", message: .string("ok")))).status == 200)

        var configuration = world.configuration
        configuration.authKey = token
        let replica = try Replica<DefaultChatCustom>(configuration)
        let report = try await replica.outbox.sendPending()
        #expect(report.remaining == 0)
        await replica.start()
        _ = try await replica.messages.send(text: "hello", to: "general")
        await status(of: replica) { $0.pending == 0 && $0.sending == 0 && $0.connection == .live }
        #expect(try await replica.fetch(replica.queries.messages(inChannel: "secret")).isEmpty)
        #expect(Set(try await replica.fetch(replica.queries.messages(inChannel: "general")).map(\.text)) == ["ok", "hello"])
        // A send to "secret" is not granted: checked on the device, never sent, and it waits for a token.
        let refused = try await replica.messages.send(text: "leak", to: "secret")
        var waiting: OutboxEntry?
        for try await ops in replica.observe(replica.queries.outbox()) {
            waiting = ops.first { $0.id == refused.opId && $0.lastFailure != nil }
            if waiting != nil { break }
        }
        let parked = try #require(waiting)
        #expect(parked.waitsForToken && parked.lastFailure?.message.contains(#"write on channel "secret""#) == true)
        #expect(await world.serverTexts("secret") == ["classified"])
        await replica.stop()
    }
}


@Suite("Replica: configuration never shows secrets")
struct ReplicaConfigurationRedactionTests {
    @Test("description, dump and interpolation show neither the token nor the cipher key")
    func redaction() {
        var configuration = ReplicaConfiguration(publishKey: "pub", subscribeKey: "sub", userId: "alice", store: .inMemory)
        configuration.authKey = "qEF2AkF0GmVT8QBDdHRsGDxDcmVz-secret-token"
        configuration.cipherKey = "my-cipher-key"
        var dumped = ""
        dump(configuration, to: &dumped)
        for text in [configuration.description, "\(configuration)", String(reflecting: configuration), dumped] {
            #expect(!text.contains("secret-token") && !text.contains("my-cipher-key"), "\(text)")
            #expect(text.contains("authKey: set"))
        }
    }
}
