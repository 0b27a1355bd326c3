import Foundation
import PubNubWire
import ReplicaModel
import Testing

/// Mobile Push device registration on the wire (`client.push`), against the Python SDK's recorded
/// requests and answers (`pubnub/python` `tests/integrational/fixtures/native_sync/*push*`) and
/// the Swift SDK's push-not-enabled body.
@Suite("Mobile Push registration on the wire")
struct PushTests {
    static let fcm = try! PushDevice(token: "0000000000000000", type: .fcm)
    static let apns = try! PushDevice(
        token: "0000000000000000", type: .apns2(topic: "com.example.testapp.notifications", environment: .development))
    static let apnsProduction = try! PushDevice(
        token: "0000000000000000", type: .apns2(topic: "com.example.testapp.notifications", environment: .production))

    /// The query items of a request as the server decodes them, without `pnsdk` (which differs by SDK).
    static func items(_ query: String) -> [String: String] {
        var items: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { PercentEncoding.decode(String($0)) ?? "?" }
            items[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        items["pnsdk"] = nil
        return items
    }

    static func pushClient(_ transport: RecordingTransport, auth: String? = nil) throws -> PubNubPush {
        let configuration = try PubNubConfiguration(
            publishKey: "pub-c-test", subscribeKey: "sub-c-test", userId: "test-uuid", origin: "127.0.0.1:9", secure: false,
            authKey: auth)
        return PubNubClient(configuration: configuration, transport: transport).push
    }

    typealias Build = @Sendable (PubNubPush) throws -> WireRequest

    /// Each operation and type, with the request the Python SDK sent for it (recorded;
    /// `{PN_KEY_SUBSCRIBE}` is the subscribe key; the cassettes spell the comma `%2C`).
    static let shapes: [(name: String, build: Build, python: String)] = [
        ("add, FCM", { try $0.addChannelsRequest(["gcm_channel_1", "gcm_channel_2"], device: fcm) },
         // gcm_basic_success.json, with Python 10.8.0's `type=fcm` for PNPushType.FCM
         "/v1/push/sub-key/sub-c-test/devices/0000000000000000?add=gcm_channel_1%2Cgcm_channel_2&type=fcm&uuid=test-uuid"),
        ("add, APNs2", { try $0.addChannelsRequest(["apns2_channel_1", "apns2_channel_2"], device: apns) },
         // add_channels_to_push/apns2_basic_success.json
         "/v2/push/sub-key/sub-c-test/devices-apns2/0000000000000000?add=apns2_channel_1%2Capns2_channel_2&environment=development&topic=com.example.testapp.notifications&uuid=test-uuid"),
        ("remove, FCM", { try $0.removeChannelsRequest(["gcm_remove_channel_1", "gcm_remove_channel_2"], device: fcm) },
         "/v1/push/sub-key/sub-c-test/devices/0000000000000000?remove=gcm_remove_channel_1%2Cgcm_remove_channel_2&type=fcm&uuid=test-uuid"),
        ("remove, APNs2 production", {
            try $0.removeChannelsRequest(["apns2_prod_remove_channel_1", "apns2_prod_remove_channel_2"], device: apnsProduction)
         },
         // remove_channels_from_push/apns2_production_environment.json
         "/v2/push/sub-key/sub-c-test/devices-apns2/0000000000000000?environment=production&remove=apns2_prod_remove_channel_1%2Capns2_prod_remove_channel_2&topic=com.example.testapp.notifications&uuid=test-uuid"),
        ("list, FCM", { $0.channelsRequest(device: fcm) },
         "/v1/push/sub-key/sub-c-test/devices/0000000000000000?type=fcm&uuid=test-uuid"),
        ("list, APNs2", { $0.channelsRequest(device: apns) },
         // list_push_channels/apns2_basic_success.json
         "/v2/push/sub-key/sub-c-test/devices-apns2/0000000000000000?environment=development&topic=com.example.testapp.notifications&uuid=test-uuid"),
        ("remove device, FCM", { $0.removeDeviceRequest(fcm) },
         "/v1/push/sub-key/sub-c-test/devices/0000000000000000/remove?type=fcm&uuid=test-uuid"),
        ("remove device, APNs2", { $0.removeDeviceRequest(apns) },
         // remove_device_from_push/apns2_basic_success.json
         "/v2/push/sub-key/sub-c-test/devices-apns2/0000000000000000/remove?environment=development&topic=com.example.testapp.notifications&uuid=test-uuid"),
    ]

    @Test("each request has the Python SDK's path and query; the comma goes raw, as Python 10.8.0 and the Swift SDK send it", arguments: shapes.indices)
    func requestShape(index: Int) throws {
        let shape = Self.shapes[index]
        let request = try shape.build(try Self.pushClient(RecordingTransport(body: "[]")))
        let parts = shape.python.split(separator: "?", maxSplits: 1).map(String.init)
        try #require(parts.count == 2)
        let (path, query) = (parts[0], parts[1])
        #expect(request.method == .get, "\(shape.name)")
        #expect(request.encodedPath == path, "\(shape.name)")
        #expect(Self.items(request.encodedQuery) == Self.items(query), "\(shape.name)")
        #expect(request.queryValue("pnsdk") == "pnreplicate/0.1")
        // PercentEncoding leaves `,` literal in a query; so do Python 10.8.0 (its bytes in the
        // simulator's request log) and Foundation. The recordings above show it as %2C.
        for name in ["add", "remove"] {
            guard let list = request.queryValue(name) else { continue }
            #expect(list.contains(",") && request.encodedQuery.contains("\(name)=\(list)&"), "\(shape.name)")
        }
    }

    @Test("the whole URL of an FCM add, byte for byte; a token's reserved characters are escaped in its path segment; '..', '/' and control characters refused")
    func wholeURL() throws {
        let push = try Self.pushClient(RecordingTransport(body: "[]"), auth: "tok")
        let add = try push.addChannelsRequest(["a", "b c"], device: Self.fcm)
        #expect(Origin(host: "127.0.0.1", port: 9, secure: false).url(for: add)
            == "http://127.0.0.1:9/v1/push/sub-key/sub-c-test/devices/0000000000000000?pnsdk=pnreplicate/0.1&uuid=test-uuid&auth=tok&add=a,b%20c&type=fcm")
        let odd = try PushDevice(token: "  a:b+c  ", type: .fcm)
        #expect(push.removeDeviceRequest(odd).encodedPath == "/v1/push/sub-key/sub-c-test/devices/%20%20a:b+c%20%20/remove")
        // A token no path segment may carry is refused before any request is made.
        for bad in ["..", ".", "a/b", "a\u{7}"] {
            #expect(throws: PushDeviceError.self) { _ = try PushDevice(token: bad, type: .fcm) }
        }
    }

    @Test("the four calls send one request each and read the recorded answers")
    func roundTrips() async throws {
        let answers = [#"[1, "Modified Channels"]"#, #"[1, "Modified Channels"]"#, #"["ch_3", "ch_4", "ch_5"]"#, #"[1, "Removed Device"]"#]
        let transport = RecordingTransport { request throws(TransportFailure) in
            let body = switch request.operation {
            case "addPushChannels": answers[0]
            case "removePushChannels": answers[1]
            case "listPushChannels": answers[2]
            default: answers[3]
            }
            return WireResponse(status: 200, headers: ["Content-Type": #"text/javascript; charset="UTF-8""#], body: Data(body.utf8))
        }
        let push = try Self.pushClient(transport)
        try await push.addChannels(["ch_3", "ch_4", "ch_5"], device: Self.apns)
        try await push.removeChannels(["ch_1"], device: Self.apns)
        #expect(try await push.channels(device: Self.apns) == ["ch_3", "ch_4", "ch_5"])
        try await push.removeDevice(Self.apns)
        #expect(transport.requests.map(\.operation) == ["addPushChannels", "removePushChannels", "listPushChannels", "removePushDevice"])
    }

    @Test("answers: acknowledgements and lists decode; any other 2xx body is a typed decoding error", arguments: [
        (#"[1,"Modified Channels"]"#, true, nil), (#"[1, "Removed Device"]"#, true, nil),
        ("[]", false, [String]()), (#"["a","b"]"#, false, ["a", "b"]),
        ("[1]", false, nil), (#"["a",1]"#, false, nil), (#"{"a":1}"#, false, nil), ("null", false, nil), ("", false, nil),
    ] as [(String, Bool, [String]?)])
    func answers(body: String, acknowledges: Bool, list: [String]?) {
        let response = WireResponse(status: 200, body: Data(body.utf8))
        let acknowledged = (try? PubNubPush.acknowledgement(from: response, operation: "addPushChannels")) != nil
        #expect(acknowledged == acknowledges)
        #expect((try? PubNubPush.channelList(from: response)) == list)
        if list == nil {
            #expect {
                try PubNubPush.channelList(from: response)
            } throws: { error in
                if case WireError.decoding("listPushChannels", 200, _) = error { return true }
                return false
            }
        }
    }

    @Test("error answers become typed service errors with the push reasons", arguments: [
        (400, #"{"error": "Invalid type argument"}"#, ServiceError.Reason.invalidPushType),
        (400, #"{"error": "Invalid device token"}"#, .invalidDeviceToken),
        (403, #"{"error": "Use of the mobile push notifications API requires Push Notifications which is not enabled for this subscribe key. Login to your PubNub Dashboard Account and enable Push Notifications. Contact support@pubnub.com if you require further assistance."}"#,
         .pushNotEnabled),
        (400, #"{"error": "Something else"}"#, .badRequest),
    ])
    func errors(status: Int, body: String, reason: ServiceError.Reason) async throws {
        let push = try Self.pushClient(RecordingTransport(status: status, body: body))
        do {
            try await push.addChannels(["a"], device: Self.fcm)
            Issue.record("HTTP \(status) came back as a success")
        } catch .service(let error) {
            #expect(error.reason == reason && error.family == .push && error.status == status && error.operation == "addPushChannels")
            #expect(body.contains(error.message))
            #expect(WireError.service(error).retryability == .permanent)
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test("push not enabled under a token is not Access Manager's refusal: nothing waits for a new token (a Forbidden does)")
    func pushNotEnabledUnderToken() async throws {
        let notEnabled = #"{"error": "Use of the mobile push notifications API requires Push Notifications which is not enabled for this subscribe key."}"#
        let push = try Self.pushClient(RecordingTransport(status: 403, body: notEnabled), auth: "tok")
        await #expect(throws: WireError.self) { try await push.channels(device: Self.fcm) }
        do {
            _ = try await push.channels(device: Self.fcm)
        } catch {
            guard case .service(let service) = error else { Issue.record("\(error)"); return }
            #expect(service.reason == .pushNotEnabled)
        }
        #expect(push.client.access.waitingFor == nil)

        let forbidden = #"{"message":"Forbidden","payload":{"channels":["a"]},"error":true,"service":"Access Manager","status":403}"#
        let refused = try Self.pushClient(RecordingTransport(status: 403, body: forbidden), auth: "tok")
        await #expect {
            try await refused.addChannels(["a"], device: Self.fcm)
        } throws: { error in
            if case WireError.accessDenied = error { return true }
            return false
        }
        #expect(refused.client.access.waitingFor == .refused)
    }

    @Test("invalid input is refused before any request: empty token, APNs without topic, no channels, an empty or comma name")
    func refusedBeforeSending() async throws {
        #expect(throws: PushDeviceError.emptyToken) { try PushDevice(token: "", type: .fcm) }
        #expect(throws: PushDeviceError.emptyTopic) {
            try PushDevice(token: "00ab", type: .apns2(topic: "", environment: .production))
        }
        #expect(throws: PushDeviceError.emptyToken) { try PushDevice.apns2(deviceToken: Data(), topic: "com.example") }
        let transport = RecordingTransport(body: #"[1,"Modified Channels"]"#)
        let push = try Self.pushClient(transport)
        for channels in [[], [""], ["a,b"], ["a", ""]] as [[String]] {
            await #expect(throws: WireError.self) { try await push.addChannels(channels, device: Self.fcm) }
            await #expect(throws: WireError.self) { try await push.removeChannels(channels, device: Self.apns) }
        }
        #expect(transport.requests.isEmpty)
    }

    @Test("an APNs token from Data is lowercase hex, two digits a byte")
    func apnsHex() throws {
        let device = try PushDevice.apns2(deviceToken: Data([0x00, 0xAB, 0x0F, 0x10]), topic: "com.example", environment: .production)
        #expect(device.token == "00ab0f10")
        #expect(device.type == .apns2(topic: "com.example", environment: .production))
    }

    @Test("Access Manager: read on each channel added or removed, on v1 and v2 alike; list and remove device name none")
    func accessNeed() throws {
        let push = try Self.pushClient(RecordingTransport(body: "[]"))
        for device in [Self.fcm, Self.apns] {
            let add = AccessNeed.of(try push.addChannelsRequest(["a", "b"], device: device))
            #expect(add == .all([AccessRequirement(.channel, "a", .read), AccessRequirement(.channel, "b", .read)]))
            #expect(AccessNeed.of(try push.removeChannelsRequest(["c"], device: device)) == .all([AccessRequirement(.channel, "c", .read)]))
            #expect(AccessNeed.of(push.channelsRequest(device: device)) == .all([]))
            #expect(AccessNeed.of(push.removeDeviceRequest(device)) == .all([]))
        }
    }

    @Test("fuzz: mangled answers to each call return a value or a typed WireError, never trap")
    func fuzz() {
        var random = SplitMix64(seed: 0x9054_F022)
        let pieces = ["[", "]", "1", "\"Modified Channels\"", ",", "\"a\"", "null", "{", "}", ":", "-", "1e999", "\"\\u0000\"", " ", "true", "\"\\ud800\""]
        for _ in 0..<2_000 {
            let count = Int(random.next() % 12)
            let body = (0..<count).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined()
            let response = WireResponse(status: 200, body: Data(body.utf8))
            do {
                let channels = try PubNubPush.channelList(from: response)
                #expect(JSONValue.parse(Data(body.utf8))?.arrayValue?.compactMap(\.stringValue) == channels, "\(body)")
            } catch {
                guard case .decoding = error else { Issue.record("\(body): \(error)"); continue }
            }
            do {
                try PubNubPush.acknowledgement(from: response, operation: "removePushDevice")
            } catch {
                guard case .decoding = error else { Issue.record("\(body): \(error)"); continue }
            }
        }
    }
}
