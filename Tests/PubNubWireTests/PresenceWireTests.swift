import Foundation
import PubNubWire
import ReplicaModel
import Testing

@Suite("Presence and signals on the wire")
struct PresenceWireTests {
    static func answer(_ body: String, single: String? = nil) throws -> HereNowAnswer {
        try PubNubPresence.hereNowAnswer(from: WireResponse(status: 200, body: Data(body.utf8)), singleChannel: single)
    }

    @Test("here-now answers of the references (one channel, with state, occupancy only, several channels) decode to one shape")
    func hereNowShapes() throws {
        let one = try Self.answer(#"{"status":200,"message":"OK","service":"Presence","uuids":["u1"],"occupancy":1}"#, single: "ch")
        #expect(one.channels == ["ch": ChannelOccupancy(occupancy: 1, occupants: [PresentUser(userId: "u1")])])
        let state = try Self.answer(
            #"{"status":200,"message":"OK","service":"Presence","uuids":[{"uuid":"u1","state":{"mood":"ok"}},{"uuid":"u2"}],"occupancy":2}"#,
            single: "ch")
        #expect(state.channels["ch"]?.occupants == [PresentUser(userId: "u1", state: ["mood": "ok"]), PresentUser(userId: "u2")])
        let count = try Self.answer(#"{"status":200,"message":"OK","service":"Presence","occupancy":3}"#, single: "ch")
        #expect(count.channels["ch"] == ChannelOccupancy(occupancy: 3, occupants: []) && count.totalOccupancy == 3)
        let many = try Self.answer(#"""
            {"status":200,"message":"OK","payload":{"channels":{"ch2":{"uuids":["u1"],"occupancy":1},"ch1":{"uuids":["u2","u3"],"occupancy":2}},"total_channels":2,"total_occupancy":3},"service":"Presence"}
            """#)
        #expect(many.totalOccupancy == 3 && many.channels["ch1"]?.occupants.map(\.userId) == ["u2", "u3"])
    }

    @Test("odd here-now answers: bad occupants are skipped, a missing occupancy is counted, no known shape is a decoding error")
    func hereNowOdd() throws {
        let odd = try Self.answer(#"{"uuids":["u1",7,null,{"state":{}},{"uuid":""},""]}"#, single: "ch")
        #expect(odd.channels["ch"] == ChannelOccupancy(occupancy: 1, occupants: [PresentUser(userId: "u1")]))
        #expect(throws: WireError.self) { try Self.answer(#"{"status":200}"#, single: "ch") }
        #expect(throws: WireError.self) { try Self.answer(#"{"uuids":["u1"]}"#) }   // the single shape for several channels
        #expect(throws: WireError.self) { try Self.answer("[1,2]", single: "ch") }
        let negative = try Self.answer(#"{"uuids":[],"occupancy":-4}"#, single: "ch")
        #expect(negative.channels["ch"]?.occupancy == 0)
    }

    @Test("presence requests: paths, sorted channel lists, heartbeat with timeout and state, here-now flags")
    func requestShapes() async throws {
        let transport = RecordingTransport(body: #"{"status":200,"message":"OK","service":"Presence","payload":{"channels":{}}}"#)
        let client = try client(transport)
        var query = HereNowRequest(channels: ["b", "a"], includeState: true)
        query.limit = 5000
        query.offset = 10
        let hereNow = try client.presence.hereNowRequest(query)
        #expect(hereNow.encodedPath == "/v2/presence/sub-key/sub-c-test/channel/a,b")
        #expect(hereNow.queryValue("state") == "1" && hereNow.queryValue("disable_uuids") == "0")
        #expect(hereNow.queryValue("limit") == "1000" && hereNow.queryValue("offset") == "10")
        #expect(try client.presence.hereNowRequest(HereNowRequest(channels: [])).encodedPath == "/v2/presence/sub-key/sub-c-test")
        let heartbeat = try client.presence.heartbeatRequest(channels: ["b", "a"], timeout: 60, state: ["a": ["k": 1]])
        #expect(heartbeat.encodedPath == "/v2/presence/sub-key/sub-c-test/channel/a,b/heartbeat")
        #expect(heartbeat.queryValue("heartbeat") == "60" && heartbeat.queryValue("state") == #"{"a":{"k":1}}"#)
        #expect(throws: WireError.self) { try client.presence.heartbeatRequest(channels: ["a,b"]) }
        #expect(throws: WireError.self) { try client.presence.heartbeatRequest(channels: []) }
        try await client.presence.leave(channels: ["x"])
        #expect(transport.requests.last?.encodedPath == "/v2/presence/sub-key/sub-c-test/channel/x/leave")
        _ = try await client.presence.setPresenceState(["mood": "ok"], channels: ["x"])
        #expect(transport.requests.last?.encodedPath == "/v2/presence/sub-key/sub-c-test/channel/x/uuid/me/data")
        #expect(transport.requests.last?.queryValue("state") == #"{"mood":"ok"}"#)
    }

    @Test("get-state and where-now read both answer shapes")
    func stateAndWhereNow() async throws {
        let single = try client(RecordingTransport(
            body: #"{"status":200,"uuid":"u","service":"Presence","message":"OK","payload":{"k":"v"},"channel":"ch"}"#))
        #expect(try await single.presence.presenceState(userId: "u", channels: ["ch"]) == ["ch": ["k": "v"]])
        let many = try client(RecordingTransport(
            body: #"{"status":200,"message":"OK","service":"Presence","payload":{"channels":{"a":{"k":1},"b":null}}}"#))
        #expect(try await many.presence.presenceState(userId: "u", channels: ["a", "b"]) == ["a": ["k": 1]])
        let whereNow = try client(RecordingTransport(
            body: #"{"status":200,"message":"OK","payload":{"channels":["ch",3]},"service":"Presence"}"#))
        #expect(try await whereNow.presence.whereNow(userId: "u") == ["ch"])
        let broken = try client(RecordingTransport(body: #"{"status":200}"#))
        await #expect(throws: WireError.self) { _ = try await broken.presence.whereNow(userId: "u") }
    }

    @Test("a signal is a GET with the JSON in the path; 64 bytes pass, 65 are refused before sending")
    func signalLimit() async throws {
        let transport = RecordingTransport(body: #"[1,"Sent","17900000000000001"]"#)
        let client = try client(transport)
        let typing = try client.signalRequest(SignalRequest(channel: "ch", message: ["type": "typing", "value": true]))
        #expect(typing.encodedPath.hasPrefix("/signal/pub-c-test/sub-c-test/0/ch/0/"))
        #expect(typing.pathSegments.last == #"{"type":"typing","value":true}"#)
        #expect(try await client.signal(SignalRequest(channel: "ch", message: .string(String(repeating: "é", count: 31)))) > 0)
        let over = SignalRequest(channel: "ch", message: .string(String(repeating: "é", count: 32)))   // 66 bytes of UTF-8 JSON
        await #expect(throws: WireError.payloadTooLarge(operation: "signal", bytes: 66, limit: 64)) { _ = try await client.signal(over) }
        #expect(transport.requests.count == 1)
        #expect(WireError.payloadTooLarge(operation: "signal", bytes: 66, limit: 64).retryability == .permanent)
    }

    @Test("presence events: every action of the references, interval lists and here_now_refresh; a single-user event without uuid is unreadable")
    func presenceEvents() throws {
        let body = #"""
        {"t":{"t":"15917376047002528","r":2},"m":[
         {"a":"4","f":0,"p":{"t":"15917376047002520","r":2},"k":"s","c":"ch-pnpres","b":"ch-pnpres","d":{"action":"state-change","uuid":"db9c","timestamp":1591042024,"data":{"key":"value"},"occupancy":0}},
         {"a":"4","f":0,"p":{"t":"15917376047002521","r":2},"k":"s","c":"ch-pnpres","u":{"pn_action":"interval"},"d":{"action":"interval","timestamp":1591737604,"occupancy":1,"timeout":["otherSub"],"join":["x"]}},
         {"a":"4","f":0,"p":{"t":"15917376047002522","r":2},"k":"s","c":"ch-pnpres","d":{"action":"interval","timestamp":1591737605,"occupancy":900,"here_now_refresh":true}},
         {"a":"4","f":0,"p":{"t":"15917376047002523","r":2},"k":"s","c":"ch-pnpres","d":{"action":"timeout","occupancy":0,"timestamp":"1591737606","uuid":"u"}},
         {"a":"4","f":0,"p":{"t":"15917376047002524","r":2},"k":"s","c":"ch-pnpres","d":{"action":"leave","occupancy":0}},
         {"a":"4","f":0,"p":{"t":"15917376047002525","r":2},"k":"s","c":"ch-pnpres","d":{"action":"wave","uuid":"u"}},
         {"a":"4","f":0,"p":{"t":"15917376047002526","r":2},"k":"s","c":"ch-pnpres","d":"join"}
        ]}
        """#
        let events = try PubNubClient.subscribeAnswer(from: WireResponse(status: 200, body: Data(body.utf8))).envelopes.map(\.event)
        #expect(events[0] == .presence(PresenceEvent(
            action: .stateChange, channel: "ch", userId: "db9c", occupancy: 0, timestamp: 1_591_042_024, state: ["key": "value"])))
        #expect(events[1] == .presence(PresenceEvent(
            action: .interval, channel: "ch", occupancy: 1, timestamp: 1_591_737_604, joined: ["x"], timedOut: ["otherSub"])))
        guard case .presence(let refresh) = events[2] else { Issue.record("not presence"); return }
        #expect(refresh.hereNowRefresh && refresh.occupancy == 900)
        #expect(events[3] == .presence(PresenceEvent(action: .timeout, channel: "ch", userId: "u", occupancy: 0, timestamp: 1_591_737_606)))
        guard case .unreadable = events[4] else { Issue.record("a leave without uuid must be unreadable"); return }
        #expect(events[5] == .presence(PresenceEvent(action: .other("wave"), channel: "ch", userId: "u")))
        guard case .unreadable = events[6] else { Issue.record("a payload that is not an object must be unreadable"); return }
    }
}
