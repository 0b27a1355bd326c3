import Foundation
import Testing
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel

/// The simulator's Mobile Push registrations: through `client.push` in process, in the recorded
/// bytes (`pubnub/python` fixtures `native_sync/*push*`), with their 400s, the add-on off, and
/// under Access Manager.
@Suite("Simulator: Mobile Push registrations")
struct PushEndpointTests {
    static let fcm = try! PushDevice(token: "fcm-token-1", type: .fcm)
    static let development = try! PushDevice(token: "0000000000000000", type: .apns2(topic: "com.example.app", environment: .development))
    static let production = try! PushDevice(token: "0000000000000000", type: .apns2(topic: "com.example.app", environment: .production))

    /// A server on the `demo` keys answering raw request bytes.
    struct Raw {
        let server = PubNubServer(clock: VirtualClock())

        func send(_ target: String) async throws -> (status: Int, body: String, contentType: String?) {
            let request = try #require(RawRequest(method: "GET", target: target, headers: [:], body: nil).decoded(), "\(target)")
            let response = await server.respond(request)
            return (response.status, String(decoding: response.body, as: UTF8.self), response.header("content-type"))
        }
    }

    @Test("a round trip through PubNubClient: add, list, remove, remove the device; APNs environments and topics are apart")
    func roundTrip() async throws {
        let world = try InProcess()
        let push = world.client.push
        try await push.addChannels(["b", "a", "b"], device: Self.fcm)
        #expect(try await push.channels(device: Self.fcm) == ["a", "b"])
        #expect(await world.server.pushChannels(of: Self.fcm) == ["a", "b"])
        try await push.removeChannels(["a", "never-added"], device: Self.fcm)
        #expect(try await push.channels(device: Self.fcm) == ["b"])

        try await push.addChannels(["dev"], device: Self.development)
        try await push.addChannels(["prod"], device: Self.production)
        let otherTopic = try PushDevice(token: "0000000000000000", type: .apns2(topic: "com.example.other", environment: .development))
        #expect(try await push.channels(device: otherTopic) == [])
        try await push.removeDevice(Self.development)
        #expect(try await push.channels(device: Self.development) == [])
        #expect(try await push.channels(device: Self.production) == ["prod"])
        #expect(await world.server.pushChannels(of: Self.production) == ["prod"])

        try await push.removeDevice(Self.fcm)
        try await push.removeDevice(Self.fcm)   // a device on no channel: still acknowledged
        #expect(try await push.channels(device: Self.fcm) == [])
    }

    @Test("the recorded bytes: acknowledgements and lists with \", \", text/javascript; the recordings' %2C and a repeated name are read")
    func recordedBytes() async throws {
        let raw = Raw()
        let device = "/v1/push/sub-key/demo/devices/0000000000000000"
        let added = try await raw.send(device + "?add=ch_1%2Cch_2%2Cch_3&type=apns&uuid=test-uuid")
        #expect(added.status == 200 && added.body == #"[1, "Modified Channels"]"#)
        #expect(added.contentType == #"text/javascript; charset="UTF-8""#)
        _ = try await raw.send(device + "?remove=ch_2%2Cch_2&type=apns&uuid=test-uuid")
        _ = try await raw.send(device + "?add=ch_4,ch_5&type=apns&uuid=test-uuid")
        _ = try await raw.send(device + "?remove=ch_1&type=apns&uuid=test-uuid")
        // list_push_channels/after_mixed_operations.json, request for request
        #expect(try await raw.send(device + "?type=apns&uuid=test-uuid").body == #"["ch_3", "ch_4", "ch_5"]"#)
        let removed = try await raw.send(device + "/remove?type=apns&uuid=test-uuid")
        #expect(removed.status == 200 && removed.body == #"[1, "Removed Device"]"#)
        #expect(try await raw.send(device + "?type=apns&uuid=test-uuid").body == "[]")
        // The same token under another type is another registration.
        _ = try await raw.send(device + "?add=g&type=gcm")
        #expect(try await raw.send(device + "?type=apns").body == "[]")
        #expect(try await raw.send(device + "?type=gcm").body == #"["g"]"#)
    }

    @Test("refusals in PubNub's words, and a refused request changes nothing", arguments: [
        ("/v1/push/sub-key/demo/devices/0000000000000000?add=a", 400, #"{"error": "Invalid type argument"}"#),
        ("/v1/push/sub-key/demo/devices/0000000000000000/remove", 400, #"{"error": "Invalid type argument"}"#),
        ("/v1/push/sub-key/demo/devices/0000000000000000?type=apns2", 400, #"{"error": "Invalid type argument"}"#),
        ("/v1/push/sub-key/demo/devices/device_id_should_be_16_characters_long?add=a&type=apns", 400,
         #"{"error": "Invalid device token"}"#),
        ("/v1/push/sub-key/demo/devices/?type=fcm", 400, #"{"error": "Invalid device token"}"#),
        ("/v1/push/sub-key/demo/devices//remove?type=fcm", 400, #"{"error": "Invalid device token"}"#),
        ("/v2/push/sub-key/demo/devices-apns2/00ff?add=a&environment=development", 400, #"{"error": "Invalid topic argument"}"#),
        ("/v2/push/sub-key/demo/devices-apns2/00ff?add=a&environment=staging&topic=t", 400,
         #"{"error": "Invalid environment argument"}"#),
        ("/v1/push/sub-key/other/devices/00ff?type=fcm", 400, #"{"error": "Invalid subscribe key"}"#),
        ("/v2/push/sub-key/demo/devices/00ff?topic=t", 404, #"{"error":true,"message":"Not Found","service":"Balancer","status":404}"#),
    ])
    func refusals(target: String, status: Int, body: String) async throws {
        let raw = Raw()
        let before = await raw.server.stateDigest()
        let answer = try await raw.send(target)
        #expect(answer.status == status && answer.body == body, "\(answer)")
        #expect(await raw.server.stateDigest() == before)
    }

    @Test("a token that is not hex is refused only when added to the legacy apns gateway (recorded); removals, FCM and APNs2 take any token")
    func tokenFormats() async throws {
        let raw = Raw()
        let unicode = "/v1/push/sub-key/demo/devices/%E6%B5%8B%E8%AF%95%E8%AE%BE%E5%A4%87ID123456"
        #expect(try await raw.send(unicode + "?add=a&type=apns").status == 400)
        #expect(try await raw.send(unicode + "?remove=test_channel&type=apns").status == 200)
        #expect(try await raw.send(unicode + "/remove?type=apns").status == 200)
        #expect(try await raw.send("/v1/push/sub-key/demo/devices/%20%201234567890ABCDEF%20%20/remove?type=apns").status == 200)
        #expect(try await raw.send(unicode + "?add=a&type=fcm").status == 200)
        #expect(try await raw.send("/v1/push/sub-key/demo/devices/00AbfF?add=a&type=apns").status == 200)
        let world = try InProcess()
        let device = try PushDevice(token: "device67ade8c1", type: .apns2(topic: "com.example.app", environment: .development))
        try await world.client.push.addChannels(["a"], device: device)
        #expect(await world.server.pushChannels(of: device) == ["a"])
    }

    @Test("with the add-on off every call gets the recorded 403, which the client reads as pushNotEnabled")
    func notEnabled() async throws {
        let world = try InProcess()
        await world.server.configurePush(enabled: false)
        do {
            _ = try await world.client.push.channels(device: Self.fcm)
            Issue.record("answered with the add-on off")
        } catch {
            guard case .service(let service) = error else { Issue.record("\(error)"); return }
            #expect(service.status == 403 && service.reason == .pushNotEnabled && service.family == .push)
        }
        await world.server.configurePush(enabled: true)
        #expect(try await world.client.push.channels(device: Self.fcm) == [])
    }

    @Test("Access Manager: read on every channel named; the client refuses before sending, the server answers Forbidden naming the channel")
    func accessDenial() async throws {
        let world = AccessWorld()
        let token = try await world.token(AccessGrants(resources: [.channel: ["room-1": [.read]]]))
        let client = try PubNubClient.simulated(
            InProcessTransport(server: world.server), userId: "alice", publishKey: AccessWorld.publishKey,
            subscribeKey: AccessWorld.subscribeKey, authToken: token, clock: world.clock)
        for device in [Self.fcm, Self.development] {
            try await client.push.addChannels(["room-1"], device: device)
            #expect(try await client.push.channels(device: device) == ["room-1"])
            await #expect {
                try await client.push.addChannels(["room-1", "room-2"], device: device)
            } throws: { error in
                guard case WireError.accessDenied(let denial) = error, case .notGranted(let missing) = denial.reason else { return false }
                return missing == [AccessRequirement(.channel, "room-2", .read)]
            }
            try await client.push.removeDevice(device)
        }
        let v1 = "/v1/push/sub-key/sub-c-demo/devices/00ff?type=fcm"
        let v2 = "/v2/push/sub-key/sub-c-demo/devices-apns2/00ff?environment=production&topic=com.example.app"
        for target in [v1, v2] {
            let refused = try await world.send("GET", target + "&add=room-1,room-2", token: token)
            #expect(refused.status == 403 && AccessWorld.text(refused) == AccessBodies.forbidden(channels: ["room-2"]))
            #expect(try await world.send("GET", target + "&remove=room-1", token: token).status == 200)
            #expect(try await world.send("GET", target, token: token).status == 200)
            #expect(try await world.send("GET", target, token: nil).status == 403)
        }
        #expect(await world.server.pushChannels(of: try PushDevice(token: "00ff", type: .fcm)) == [])
    }
}
