import Foundation
import PubNubWire
import ReplicaModel

/// PubNub Mobile Push's device registrations in the simulator (`docs/simulator.md`, "Mobile
/// Push"): which channels each device token is registered on, per gateway and, for APNs over
/// HTTP/2, per topic and environment. A value the ``PubNubServer`` actor holds, for its one
/// subscribe key. Nothing is delivered: no message becomes a notification here.
///
/// | request | answer |
/// | --- | --- |
/// | `GET /v1/push/sub-key/{sub}/devices/{token}?add=a,b&type=…` (or `remove=`) | `[1, "Modified Channels"]` |
/// | `GET /v1/push/sub-key/{sub}/devices/{token}?type=…` | `["a", "b"]`, sorted |
/// | `GET /v1/push/sub-key/{sub}/devices/{token}/remove?type=…` | `[1, "Removed Device"]` |
/// | `GET /v2/push/sub-key/{sub}/devices-apns2/{token}…?environment=…&topic=…` | the same |
///
/// The bytes are the recorded ones (Python SDK fixtures `native_sync/*push*`): `text/javascript`,
/// `", "` between items, errors `400 {"error": "Invalid type argument"}` and
/// `400 {"error": "Invalid device token"}`, and with the add-on off the 403 of the Swift SDK's
/// `push_not_enabled_for_key_Message.json`.
struct PushRegistry: Sendable {
    /// One registration as PubNub keeps them apart: the same token in two environments, or under
    /// two topics, is two registrations.
    struct Device: Sendable, Hashable, Comparable {
        /// The token as sent (percent-decoded from the path).
        var token: String
        /// `apns`, `gcm`, `fcm` or `mpns` for v1; `apns2` for v2.
        var gateway: String
        /// The APNs topic (v2 only).
        var topic: String?
        /// `development` or `production` (v2 only).
        var environment: String?

        static func < (a: Device, b: Device) -> Bool {
            (a.token, a.gateway, a.topic ?? "", a.environment ?? "") < (b.token, b.gateway, b.topic ?? "", b.environment ?? "")
        }
    }

    /// The v1 `type` values PubNub accepts: `apns`, `gcm` and `mpns` are recorded answering 200
    /// (`mpns_basic_success.json` before the Python SDK dropped it); `fcm` is what the SDKs send now.
    static let v1Gateways: Set<String> = ["apns", "gcm", "fcm", "mpns"]

    /// The subscribe key the endpoints answer for.
    let subscribeKey: String
    /// Whether the keyset has the Mobile Push add-on (on by default).
    var enabled = true
    /// Each registered device's channels; a device on no channel has no entry.
    private(set) var registrations: [Device: Set<String>] = [:]

    init(subscribeKey: String) { self.subscribeKey = subscribeKey }

    /// Answers a `/v1/push/…` or `/v2/push/…` request.
    mutating func api(_ request: WireRequest) -> WireResponse {
        let s = request.pathSegments
        let v2 = s[0] == "v2"
        guard request.method == .get, (6...7).contains(s.count), s[2] == "sub-key", s[4] == (v2 ? "devices-apns2" : "devices"),
              s.count == 6 || s[6] == "remove"
        else { return Reply.notFound() }
        guard s[3] == subscribeKey else { return Self.error(400, "Invalid subscribe key") }
        guard enabled else { return Self.error(403, Self.notEnabled) }
        let device: Device
        do {
            device = try Self.device(request, token: s[5], v2: v2)
        } catch {
            return error.response
        }
        if s.count == 7 {
            registrations[device] = nil
            return Self.reply(200, #"[1, "Removed Device"]"#)
        }
        let add = request.queryValue("add").map(Self.names), remove = request.queryValue("remove").map(Self.names)
        guard add != nil || remove != nil else {
            let list = (registrations[device] ?? []).sorted().map(OrderedJSON.string)
            return Self.reply(200, "[" + list.joined(separator: ", ") + "]")
        }
        if let add, !add.isEmpty, device.gateway == "apns", !Self.isHex(device.token) {
            return Self.error(400, "Invalid device token")
        }
        var channels = registrations[device] ?? []
        channels.formUnion(add ?? [])
        channels.subtract(remove ?? [])
        registrations[device] = channels.isEmpty ? nil : channels
        return Self.reply(200, #"[1, "Modified Channels"]"#)
    }

    /// The answer to a request that names no valid registration.
    struct Refusal: Error {
        let response: WireResponse
        init(_ message: String) { response = PushRegistry.error(400, message) }
    }

    /// The registration a request names; refused for a missing or unknown type (v1), a missing
    /// topic or an unknown environment (v2), an empty token.
    private static func device(_ request: WireRequest, token: String, v2: Bool) throws(Refusal) -> Device {
        var device = Device(token: token, gateway: "apns2")
        if v2 {
            guard let topic = request.queryValue("topic"), !topic.isEmpty else { throw Refusal("Invalid topic argument") }
            let environment = request.queryValue("environment") ?? PushEnvironment.development.rawValue
            guard PushEnvironment(rawValue: environment) != nil else { throw Refusal("Invalid environment argument") }
            device.topic = topic
            device.environment = environment
        } else {
            guard let gateway = request.queryValue("type"), v1Gateways.contains(gateway) else {
                throw Refusal("Invalid type argument")
            }
            device.gateway = gateway
        }
        guard !token.isEmpty else { throw Refusal("Invalid device token") }
        return device
    }

    /// The channels `device` is registered on, sorted.
    func channels(of device: PushDevice) -> [String] {
        let key: Device = switch device.type {
        case .fcm: Device(token: device.token, gateway: "fcm")
        case .apns2(let topic, let environment):
            Device(token: device.token, gateway: "apns2", topic: topic, environment: environment.rawValue)
        }
        return (registrations[key] ?? []).sorted()
    }

    /// The registrations, for ``PubNubServer/stateDigest()``.
    var digestText: String {
        var text = "push:\(enabled);"
        for device in registrations.keys.sorted() {
            text += "\(device.token),\(device.gateway),\(device.topic ?? ""),\(device.environment ?? ""):"
                + (registrations[device] ?? []).sorted().joined(separator: ",") + ";"
        }
        return text
    }

    /// The channel names of an `add` or `remove` list; empty names are skipped.
    private static func names(_ list: String) -> Set<String> {
        Set(list.split(separator: ",").map(String.init))
    }

    /// Whether `token` is hexadecimal, as APNs device tokens are: PubNub refuses another token on
    /// add to the legacy `apns` gateway (`add_channels_to_push/invalid_device_id_error.json`).
    /// Nothing records the same for `apns2`, so it takes any token.
    private static func isHex(_ token: String) -> Bool {
        token.unicodeScalars.allSatisfy { $0.properties.isASCIIHexDigit }
    }

    /// The Swift SDK's recorded 403 of a keyset without the Mobile Push add-on.
    static let notEnabled = "Use of the mobile push notifications API requires Push Notifications which is not enabled for this"
        + " subscribe key. Login to your PubNub Dashboard Account and enable Push Notifications. Contact support@pubnub.com"
        + " if you require further assistance."

    /// `{"error": "…"}`, as the push service writes it.
    static func error(_ status: Int, _ message: String) -> WireResponse {
        reply(status, #"{"error": \#(OrderedJSON.string(message))}"#)
    }

    static func reply(_ status: Int, _ text: String) -> WireResponse {
        WireResponse(status: status, headers: ["Content-Type": Reply.javascript], body: Data(text.utf8))
    }
}
