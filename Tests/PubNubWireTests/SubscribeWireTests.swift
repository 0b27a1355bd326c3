import Foundation
import PubNubWire
import ReplicaModel
import Testing

@Suite("Subscribe on the wire")
struct SubscribeWireTests {
    static let client = PubNubClient(
        configuration: try! PubNubConfiguration(publishKey: "pub", subscribeKey: "sub", userId: "me"), transport: NoTransport())

    struct NoTransport: Transport {
        func send(_ request: WireRequest, to origin: Origin) async throws(TransportFailure) -> WireResponse {
            throw .notSent(reason: "no transport in this test")
        }
    }

    @Test("a handshake sends tt=0 and no tr; a receive sends the cursor; channels go sorted; the long poll outlasts the 280 s hold")
    func requestShape() throws {
        let handshake = try Self.client.subscribeRequest(SubscribeRequest(channels: ["b", "a"]))
        #expect(handshake.encodedPath == "/v2/subscribe/sub/a,b/0")
        #expect(handshake.queryValue("tt") == "0" && handshake.queryValue("tr") == nil)
        #expect(handshake.query.contains(QueryItem("ee", nil)))
        #expect(handshake.operation == "handshake")
        #expect(handshake.timeout.map { $0 > .seconds(280) } == true)
        var receive = SubscribeRequest(channels: ["a"], cursor: SubscribeCursor(timetoken: 17_900_000_000_000_123, region: 12))
        receive.heartbeat = 300
        receive.state = ["a": ["mood": "ok"]]
        receive.filterExpression = "uuid != 'me'"
        receive.channelGroups = ["g2", "g1"]
        let request = try Self.client.subscribeRequest(receive)
        #expect(request.queryValue("tt") == "17900000000000123" && request.queryValue("tr") == "12")
        #expect(request.queryValue("heartbeat") == "300" && request.queryValue("channel-group") == "g1,g2")
        #expect(request.queryValue("state") == #"{"a":{"mood":"ok"}}"#)
        #expect(request.queryValue("filter-expr") == "uuid != 'me'")
        #expect(request.operation == "subscribe")
    }

    @Test("no channels, an empty channel or a comma in a name is refused before sending", arguments: [[String](), [""], ["a,b"]])
    func badChannels(_ channels: [String]) {
        #expect(throws: WireError.self) { try Self.client.subscribeRequest(SubscribeRequest(channels: channels)) }
    }

    @Test("every envelope kind of the references decodes to its event")
    func envelopeKinds() throws {
        let body = #"""
        {"t":{"t":"15670248886386268","r":2},"m":[
         {"a":"2","f":0,"i":"pub","s":1,"p":{"t":"14818963573025400","r":12},"k":"sub","c":"ch","d":"hey"},
         {"a":"1","f":514,"e":1,"i":"TestUser","p":{"t":"15670248886386268","r":2},"k":"demo","c":"TestChannel","d":"Test Signal","b":"TestChannel"},
         {"a":"1","f":514,"e":3,"i":"SomeUser","p":{"t":"15725459793173220","r":1},"k":"demo","c":"TestChannel","d":{"source":"actions","version":"1.0","event":"added","data":{"messageTimetoken":"15725459448096144","type":"reaction","value":"winky_face","actionTimetoken":"15725459793173220"}}},
         {"a":"4","f":0,"e":2,"p":{"t":"15703136553306610","r":1},"k":"demo","c":"TestUserID","b":"TestUserID","d":{"source":"objects","version":"2.0","event":"set","type":"uuid","data":{"eTag":"UserUpdateEtag","id":"TestUserID","name":"Test Name","custom":null,"updated":"2019-10-06T01:55:50.645685Z"}}},
         {"a":"4","f":0,"e":2,"p":{"t":"15703136553306611","r":1},"k":"demo","c":"TestUserID","d":{"source":"objects","version":"2.0","event":"set","type":"membership","data":{"custom":{"k":1},"channel":{"id":"ch"},"uuid":{"id":"TestUserID"},"status":"joined","updated":"2019-10-06T01:55:50.645685Z","eTag":"E"}}},
         {"a":"4","f":0,"e":2,"p":{"t":"15703136553306612","r":1},"k":"demo","c":"ch","d":{"source":"objects","version":"2.0","event":"delete","type":"channel","data":{"id":"ch"}}},
         {"a":"1","f":0,"e":4,"p":{"t":"15703136553306613","r":1},"k":"demo","c":"ch","cmt":"test-message-type","d":{"message":"Hello","file":{"id":"file-id","name":"file-name"}}},
         {"a":"2","f":0,"p":{"t":"14818963587725382","r":2},"k":"sub","c":"ch-pnpres","b":"ch-pnpres","d":{"action":"join","timestamp":1481896358,"uuid":"listener","occupancy":1}},
         {"a":"1","f":0,"e":5,"p":{"t":"15703136553306614","r":1},"k":"demo","c":"ch","d":{"anything":true}}
        ]}
        """#
        let answer = try PubNubClient.subscribeAnswer(from: WireResponse(status: 200, body: Data(body.utf8)))
        #expect(answer.cursor == SubscribeCursor(timetoken: 15_670_248_886_386_268, region: 2))
        let events = answer.envelopes.map(\.event)
        #expect(events[0] == .message && answer.envelopes[0].publisher == "pub" && answer.envelopes[0].payload == "hey")
        #expect(events[1] == .signal)
        #expect(events[2] == .messageAction(MessageActionEvent(added: true, action: WireMessageAction(
            type: "reaction", value: "winky_face", uuid: "SomeUser", actionTimetoken: 15_725_459_793_173_220,
            messageTimetoken: 15_725_459_448_096_144))))
        #expect(events[3] == .appContext(.userSet(
            id: "TestUserID", fields: ["name": "Test Name", "custom": nil], updated: "2019-10-06T01:55:50.645685Z", eTag: "UserUpdateEtag")))
        #expect(events[4] == .appContext(.membershipSet(
            channelId: "ch", userId: "TestUserID", fields: ["custom": ["k": 1], "status": "joined"],
            updated: "2019-10-06T01:55:50.645685Z", eTag: "E")))
        #expect(events[5] == .appContext(.channelRemoved(id: "ch")))
        #expect(events[6] == .file && answer.envelopes[6].customMessageType == "test-message-type")
        #expect(events[7] == .presence(PresenceEvent(action: .join, channel: "ch", userId: "listener", occupancy: 1, timestamp: 1_481_896_358)))
        #expect(events[8] == .unknown(kind: 5))
        #expect(!answer.mayHaveOverflowed)
    }

    @Test("a reply without a readable cursor fails as a decoding error; a wrong m fails too", arguments: [
        #"{"m":[]}"#, #"{"t":{"t":"abc","r":1},"m":[]}"#, #"{"t":{"t":"1","r":1},"m":{}}"#, "<html>", "",
    ])
    func unreadableAnswers(_ body: String) {
        #expect(throws: WireError.self) { try PubNubClient.subscribeAnswer(from: WireResponse(status: 200, body: Data(body.utf8))) }
    }

    @Test("an answer of 100 envelopes may have overflowed the server's buffer")
    func fullAnswer() throws {
        let envelope = #"{"a":"1","f":0,"p":{"t":"2","r":1},"k":"k","c":"c","d":1}"#
        let body = #"{"t":{"t":"3","r":1},"m":["# + Array(repeating: envelope, count: 100).joined(separator: ",") + "]}"
        let answer = try PubNubClient.subscribeAnswer(from: WireResponse(status: 200, body: Data(body.utf8)))
        #expect(answer.mayHaveOverflowed)
    }
}
