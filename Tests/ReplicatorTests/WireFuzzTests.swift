import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import Testing

/// A transport that answers every request with one hostile case (over a fresh, empty simulator
/// when the case reaches the server), and remembers what it answered.
final class HostileCaseTransport: Transport, @unchecked Sendable {
    let hostile: HostileCase
    let server: PubNubServer
    private let lock = NSLock()
    private var answers: [(request: String, status: Int, bytes: Int)] = []

    init(_ hostile: HostileCase) {
        self.hostile = hostile
        server = PubNubServer(clock: VirtualClock())
    }

    var log: String { lock.withLock { answers.map { "\($0.request) -> \($0.status), \($0.bytes) bytes" }.joined(separator: "; ") } }

    func send(_ request: WireRequest, to origin: Origin) async throws(TransportFailure) -> WireResponse {
        let real = hostile.mutation.reachesServer ? await server.handle(request) : nil
        let response = hostile.answer(to: request, real: real)
        lock.withLock { answers.append((request.operation, response.status, response.body.count)) }
        return response
    }
}

/// Every decoding method of ``PubNubClient`` against mangled answers: each returns a value or
/// throws ``WireError`` (the signatures guarantee the type; the run proves there is no trap), and
/// what it returns can be used (models built, dates read) without a trap either.
@Suite("Fuzz: wire decoders against hostile answers")
struct WireFuzzTests {
    /// The calls, each touching what it decoded the way the replicator does.
    static let calls: [(name: String, run: @Sendable (PubNubClient) async throws(WireError) -> Void)] = [
        ("publish", { c throws(WireError) in touch(try await c.publish(PublishRequest(channel: "general", message: ["id": "m"]))) }),
        ("time", { c throws(WireError) in touch(try await c.time()) }),
        ("fetchHistory", { c throws(WireError) in touch(try await c.history.fetchHistory(HistoryQuery(channels: ["general", "side"]))) }),
        ("fetchHistoryWithActions", { c throws(WireError) in
            touch(try await c.history.fetchHistoryWithActions(HistoryQuery(channels: ["general"], start: 17_900_000_000_000_500)))
        }),
        ("fetchLegacyHistory", { c throws(WireError) in
            let page = try await c.history.fetchLegacyHistory(LegacyHistoryQuery(channel: "general"))
            for entry in page.messages { touch(entry.timetoken) }
            touch(page.first)
            touch(page.last)
        }),
        ("messageCounts", { c throws(WireError) in _ = try await c.history.messageCounts(channels: ["general", "side"], since: [1, 2]) }),
        ("deleteMessages", { c throws(WireError) in try await c.history.deleteMessages(channel: "general", start: 2, end: 1) }),
        ("addMessageAction", { c throws(WireError) in
            let action = try await c.messageActions.addMessageAction(channel: "general", messageTimetoken: 17, type: "reaction", value: "👍")
            touch(action)
        }),
        ("removeMessageAction", { c throws(WireError) in
            try await c.messageActions.removeMessageAction(channel: "general", messageTimetoken: 17, actionTimetoken: 18)
        }),
        ("listMessageActions", { c throws(WireError) in
            let page = try await c.messageActions.listMessageActions(channel: "general", limit: 100)
            for action in page.data { touch(action) }
            _ = (page.more?.start.map(touch), page.more?.end.map(touch))
        }),
        ("getUser", { c throws(WireError) in touch(try await c.appContext.getUser(id: "me")) }),
        ("listUsers", { c throws(WireError) in for user in try await c.appContext.listUsers().data { touch(user) } }),
        ("setUser", { c throws(WireError) in
            var fields = UserEdit<FlatCustom>()
            fields.name = .set("Me")
            touch(try await c.appContext.setUser(id: "me", fields: fields, ifMatch: "e1"))
        }),
        ("removeUser", { c throws(WireError) in try await c.appContext.removeUser(id: "me") }),
        ("getChannel", { c throws(WireError) in touch(try await c.appContext.getChannel(id: "general")) }),
        ("listChannels", { c throws(WireError) in for channel in try await c.appContext.listChannels().data { touch(channel) } }),
        ("setChannel", { c throws(WireError) in
            var fields = ChannelEdit<FlatCustom>()
            fields.name = .set("General")
            touch(try await c.appContext.setChannel(id: "general", fields: fields))
        }),
        ("removeChannel", { c throws(WireError) in try await c.appContext.removeChannel(id: "general") }),
        ("getMemberships", { c throws(WireError) in
            for m in try await c.appContext.getMemberships(userId: "me", as: DefaultChatCustom.self).data { touch(m, user: "me") }
        }),
        ("setMemberships", { c throws(WireError) in
            let page = try await c.appContext.setMemberships(
                userId: "me", set: [MembershipSet<FlatCustom>(id: "general", status: "joined")], as: DefaultChatCustom.self)
            for m in page.data { touch(m, user: "me") }
        }),
        ("getMembers", { c throws(WireError) in
            for m in try await c.appContext.getMembers(channelId: "general", as: DefaultChatCustom.self).data { touch(m, channel: "general") }
        }),
        ("setMembers", { c throws(WireError) in
            let page = try await c.appContext.setMembers(
                channelId: "general", set: [MembershipSet<FlatCustom>(id: "me")], remove: ["you"], as: DefaultChatCustom.self)
            for m in page.data { touch(m, channel: "general") }
        }),
    ]

    @Test("every client call returns or throws WireError on a mangled answer", .timeLimit(.minutes(10)))
    func decodersSurviveHostileAnswers() async throws {
        var mutations: Set<HostileMutation> = []
        var decoded = 0, refused = 0
        for index in FuzzConfig.wireIndices {
            let hostile = HostileCase(seed: FuzzConfig.seed ^ 0x3A11, index: UInt64(index))
            mutations.insert(hostile.mutation)
            let call = Self.calls[index % Self.calls.count]
            let transport = HostileCaseTransport(hostile)
            let client = try World.client(transport)
            do {
                try await call.run(client)
                decoded += 1
            } catch {
                refused += 1
                // Typed by the signature; a service error must still carry its status.
                if case .service(let service) = error {
                    #expect(!(200..<300).contains(service.status), "\(FuzzConfig.replay(index)) \(call.name): \(transport.log)")
                }
            }
        }
        if FuzzConfig.wireIndices.count >= 200 {
            // Both outcomes occur: some mangled answers still decode (and their values are read),
            // others are refused; a client that threw on everything would not be tested at all.
            #expect(decoded > 0 && refused > 0, "decoded \(decoded), refused \(refused)")
            #expect(mutations.count == HostileMutation.allCases.count, "not every mutation ran: \(mutations.map(\.rawValue).sorted())")
        }
    }

    // Reading every value the replicator reads, so that a decoded but absurd value traps here
    // rather than in a later layer.
    static func touch(_ timetoken: Timetoken) { _ = (timetoken.date, timetoken.description, ISOTimestamp(date: timetoken.date)) }
    static func touch(_ page: HistoryPage) {
        _ = page.oldestTimetoken
        _ = page.more?.start.map(touch)
        for message in page.channels.values.joined() {
            touch(message.timetoken)
            _ = MessagePayload<JSONValue>(json: message.message)?.createdAt.date
            for entries in message.actions?.values.flatMap(\.values) ?? [] { for entry in entries { touch(entry.actionTimetoken) } }
        }
    }
    static func touch(_ action: WireMessageAction) {
        touch(action.actionTimetoken)
        touch(action.messageTimetoken)
        _ = try? action.model(channel: "general")
    }
    static func touch<C: CustomData>(_ user: ChatUser<C>) { _ = (user.updated?.date, user.updated?.description) }
    static func touch<C: CustomData>(_ channel: ChatChannel<C>) { _ = (channel.updated?.date, channel.updated?.description) }
    static func touch(_ m: WireMembership<DefaultChatCustom>, user: String) {
        touch(m.channel)
        _ = (m.updated?.date, try? m.model(userId: user))
    }
    static func touch(_ m: WireChannelMember<DefaultChatCustom>, channel: String) {
        touch(m.uuid)
        _ = (m.updated?.date, try? m.model(channelId: channel))
    }
}
