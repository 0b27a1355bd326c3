import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import PubNubWireNIO
import ReplicaModel
import Testing

/// Where a client's requests travel: over the in-process wire of bytes, or a real socket.
enum Route: String, CaseIterable, Sendable {
    case inProcess, asyncHTTPClient, urlSession
}

/// Names that a URL must carry escaped: path and query delimiters, the escape character itself,
/// `+` (a space in forms), a space, and non-ASCII text. App Context ids cannot hold `/` (PubNub
/// forbids it, and the model refuses it), so the object ids carry the rest.
enum AwkwardNames {
    static let channel = "room/a?b#c%d+e f-é日本🎉"
    static let userId = "me/?#%+ é日本🎉"
    static let objectChannel = "room?a#b%c+d e-é日本🎉"
    static let otherUser = "u?#%+ ü中文🙂"
    static let text = "a/b?c#d%25e+f g&h=i é日本🎉"
    static let reaction = "👍/?#%+ é"
    static let meta: JSONValue = ["tag": "x/y?z#w%20v+u t&s=r é日本🎉"]
    static let custom: FlatCustom = ["note": "q/?#%+ é日本🎉", "plus": "1+1=2"]
}

@Suite("Names with /, ?, #, %, +, spaces and non-ASCII text survive the trip in process and over HTTP")
struct PercentEncodingTests {
    @Test("publish, history, message actions, users, channels and memberships read back identical", arguments: Route.allCases)
    func roundTrip(route: Route) async throws {
        switch route {
        case .inProcess:
            let server = PubNubServer(clock: VirtualClock())
            try await Self.exercise(try PubNubClient.simulated(InProcessTransport(server: server), userId: AwkwardNames.userId), server)
        case .asyncHTTPClient, .urlSession:
            try await withHTTPSimulator { port, server in
                let (transport, shutdown) = (route == .asyncHTTPClient ? TransportKind.asyncHTTPClient : .urlSession).make()
                defer { Task { await shutdown() } }
                let configuration = try PubNubConfiguration(
                    publishKey: "demo", subscribeKey: "demo", userId: AwkwardNames.userId, origin: "http://127.0.0.1:\(port)")
                try await Self.exercise(PubNubClient(configuration: configuration, transport: transport), server)
            }
        }
    }

    static func exercise(_ pubnub: PubNubClient, _ server: PubNubServer) async throws {
        let channel = AwkwardNames.channel, objectChannel = AwkwardNames.objectChannel
        let me = AwkwardNames.userId, other = AwkwardNames.otherUser
        let message: JSONValue = ["id": .string(AwkwardNames.text), "text": .string(AwkwardNames.text)]

        // Publish: the message travels in the path (GET) or the body (POST), meta in the query.
        let t1 = try await pubnub.publish(PublishRequest(channel: channel, message: message, method: .get, meta: AwkwardNames.meta))
        let t2 = try await pubnub.publish(PublishRequest(channel: channel, message: .string(AwkwardNames.text), method: .post))
        let stored = await server.storedMessages(channel: channel)
        #expect(stored.map(\.message) == [message, .string(AwkwardNames.text)], "the server stored the channel under another name")
        #expect(stored.map(\.publisher) == [me, me])

        // History: the channel in the path, and as a key of the answer.
        let history = try await pubnub.history.fetchHistory(HistoryQuery(channels: [channel]))
        #expect(Array(history.channels.keys) == [channel])
        let entries = try #require(history.channels[channel])
        #expect(entries.map(\.timetoken) == [t1, t2])
        #expect(entries.map(\.message) == [message, .string(AwkwardNames.text)])
        #expect(entries[0].meta == AwkwardNames.meta && entries[0].uuid == me)
        let several = try await pubnub.history.fetchHistory(HistoryQuery(channels: [channel, "plain"]))
        #expect(several.channels[channel]?.map(\.timetoken) == [t1, t2])
        let legacy = try await pubnub.history.fetchLegacyHistory(LegacyHistoryQuery(channel: channel, count: 10, reverse: true))
        #expect(legacy.messages.map(\.timetoken) == [t1, t2])
        #expect(try await pubnub.history.messageCounts(channels: [channel], since: [t1]) == [channel: 1])

        // Message actions: the channel in the path, the value in the body.
        let action = try await pubnub.messageActions.addMessageAction(channel: channel, messageTimetoken: t1, type: "reaction", value: AwkwardNames.reaction)
        #expect(action.value == AwkwardNames.reaction && action.uuid == me)
        #expect(await server.storedActions(channel: channel).map(\.value) == [AwkwardNames.reaction])
        #expect(try await pubnub.messageActions.listMessageActions(channel: channel).data == [action])
        let withActions = try await pubnub.history.fetchHistoryWithActions(HistoryQuery(channels: [channel]))
        #expect(withActions.channels[channel]?[0].actions?["reaction"]?[AwkwardNames.reaction]?.map(\.uuid) == [me])
        try await pubnub.messageActions.removeMessageAction(channel: channel, messageTimetoken: t1, actionTimetoken: action.actionTimetoken)
        #expect(await server.storedActions(channel: channel).isEmpty)

        // Users and channels: ids in the path, a filter and custom data with the same characters.
        var user = UserEdit<FlatCustom>()
        user.name = .set(AwkwardNames.text)
        user.custom = .set(AwkwardNames.custom)
        let created = try await pubnub.appContext.setUser(id: other, fields: user)
        #expect(created.id == other && created.name == AwkwardNames.text && created.custom == AwkwardNames.custom)
        #expect(try await pubnub.appContext.getUser(id: other) == created)
        #expect(try await pubnub.appContext.listUsers().data.map(\.id) == [other], "the server stored the user under another id")
        let filtered = try await pubnub.appContext.listUsers(ObjectListQuery(filter: "name == \"\(AwkwardNames.text)\""))
        #expect(filtered.data.map(\.id) == [other])
        user.name = .set("renamed")
        let renamed = try await pubnub.appContext.setUser(id: other, fields: user, ifMatch: created.eTag)
        #expect(renamed.name == "renamed" && renamed.eTag != created.eTag)

        var fields = ChannelEdit<FlatCustom>()
        fields.name = .set(AwkwardNames.text)
        fields.details = .set(AwkwardNames.text)
        fields.custom = .set(AwkwardNames.custom)
        let room = try await pubnub.appContext.setChannel(id: objectChannel, fields: fields, ifMatch: nil)
        #expect(room.id == objectChannel && room.details == AwkwardNames.text && room.custom == AwkwardNames.custom)
        #expect(try await pubnub.appContext.getChannel(id: objectChannel) == room)
        #expect(try await pubnub.appContext.listChannels().data.map(\.id) == [objectChannel])

        // Memberships: a user id and a channel id in the path, the other in the body.
        var membership = MembershipSet<FlatCustom>(id: objectChannel, status: AwkwardNames.reaction)
        membership.custom = AwkwardNames.custom
        let joined = try await pubnub.appContext.setMemberships(userId: other, set: [membership], as: DefaultChatCustom.self)
        #expect(joined.data.map(\.channel.id) == [objectChannel] && joined.data[0].status == AwkwardNames.reaction)
        #expect(joined.data[0].channel.name == AwkwardNames.text)
        let memberships = try await pubnub.appContext.getMemberships(userId: other, as: DefaultChatCustom.self)
        #expect(memberships.data.map(\.channel.id) == [objectChannel] && memberships.data[0].custom == AwkwardNames.custom)
        let members = try await pubnub.appContext.getMembers(channelId: objectChannel, as: DefaultChatCustom.self)
        #expect(members.data.map(\.uuid.id) == [other] && members.data[0].uuid.name == "renamed")
        _ = try await pubnub.appContext.setMembers(channelId: objectChannel, set: [], remove: [other], as: DefaultChatCustom.self)
        #expect(try await pubnub.appContext.getMemberships(userId: other, as: DefaultChatCustom.self).data.isEmpty)

        // Deletes: the ids in the path once more.
        try await pubnub.appContext.removeUser(id: other)
        #expect(try await pubnub.appContext.listUsers().data.isEmpty)
        try await pubnub.appContext.removeChannel(id: objectChannel)
        #expect(try await pubnub.appContext.listChannels().data.isEmpty)
        try await pubnub.history.deleteMessages(channel: channel)
        #expect(await server.storedMessages(channel: channel).isEmpty)
    }

    @Test("the simulator reads a request from the bytes an HTTP transport sends, and refuses what a URL cannot carry")
    func parser() throws {
        let request = WireRequest(
            method: .patch, pathSegments: ["v2", "objects", "demo", "uuids", AwkwardNames.userId],
            query: [QueryItem("include", "custom"), QueryItem("filter", "name == \"a&b=c+d\""), QueryItem("ee", nil)],
            headers: ["If-Match": "e/1"], body: Data("{}".utf8), operation: "setUser")
        let raw = RawRequest(encoding: request, for: try Origin(parsing: "http://127.0.0.1:8080"))
        #expect(raw.target.hasPrefix("/v2/objects/demo/uuids/me%2F%3F%23%25+%20%C3%A9"))
        #expect(raw.target.utf8.allSatisfy { $0 < 0x80 })
        let decoded = try #require(raw.decoded())
        #expect(decoded.pathSegments == request.pathSegments && decoded.query == request.query)
        #expect(decoded.headers == ["if-match": "e/1"] && decoded.body == request.body && decoded.method == .patch)

        // Bytes no HTTP client sends: unescaped non-ASCII, a space, a fragment, a bad escape, no leading slash.
        for target in ["/v2/objects/demo/uuids/é", "/time/0 1", "/time/0#x", "/time/%ZZ", "/time/%C3", "time/0"] {
            #expect(RawRequest(method: "GET", target: target).decoded() == nil, "\(target)")
        }
        #expect(RawRequest(method: "TRACE", target: "/time/0").decoded() == nil)
        #expect(RawRequest(method: "GET", target: "/time/0?a=1&&b&c=%2B+").decoded()?.query
            == [QueryItem("a", "1"), QueryItem("b", nil), QueryItem("c", "++")])
    }
}
