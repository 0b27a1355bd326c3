import Foundation
import ReplicaModel

/// The push service a device token belongs to, and how PubNub addresses it.
///
/// | type | path | query |
/// | --- | --- | --- |
/// | ``fcm`` | `/v1/push/sub-key/{sub}/devices/{token}` | `type=fcm` |
/// | ``apns2(topic:environment:)`` | `/v2/push/sub-key/{sub}/devices-apns2/{token}` | `environment=…&topic=…` |
///
/// The legacy gateways (`apns` over the v1 path, `gcm`, `mpns`) are not offered: PubNub's SDKs
/// moved to APNs over HTTP/2 and FCM.
public enum PushType: Sendable, Hashable {
    /// Apple Push Notification service over HTTP/2 (PubNub's `apns2`): `topic` is the app's
    /// bundle id, `environment` the one the token was issued for.
    case apns2(topic: String, environment: PushEnvironment)
    /// Firebase Cloud Messaging (`type=fcm`).
    case fcm
}

/// Why a ``PushDevice`` could not be made: PubNub's SDKs refuse the same before sending.
public enum PushDeviceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The device token is empty.
    case emptyToken
    /// An APNs device has no topic (the app's bundle id).
    case emptyTopic
    /// The token cannot be a URL path segment (`.`, `..`, a `/`, a control character, over
    /// `ReplicaModel.Validation.maxDeviceTokenBytes`): every push request ends with it.
    case invalidToken(String)

    /// A one-line explanation that names the field.
    public var description: String {
        switch self {
        case .emptyToken: "push device: the token is empty"
        case .invalidToken(let reason): "push device: \(reason)"
        case .emptyTopic: "push device: an APNs device needs a topic (the app's bundle id)"
        }
    }
}

/// One device as PubNub's push service knows it: a token and the service that issued it. Made
/// only through a validating initializer, so every value can be sent.
///
/// ```swift
/// // iOS, in application(_:didRegisterForRemoteNotificationsWithDeviceToken:)
/// let phone = try PushDevice.apns2(deviceToken: deviceToken, topic: "com.example.chat", environment: .production)
/// // Android, from FirebaseMessaging's token
/// let tablet = try PushDevice(token: fcmToken, type: .fcm)
/// ```
///
/// A registration is kept per token, type and, for APNs, topic and environment: the same token
/// registered in `development` and `production` is two registrations.
public struct PushDevice: Sendable, Hashable {
    /// The token as PubNub receives it: an FCM registration token as given, an APNs device token
    /// as lowercase hex (``apns2(deviceToken:topic:environment:)``).
    public let token: String
    /// The service, and for APNs the topic and environment.
    public let type: PushType

    /// A device; throws ``PushDeviceError/emptyToken`` for an empty token,
    /// ``PushDeviceError/invalidToken(_:)`` for one no request path may carry
    /// (`ReplicaModel.Validation.validateDeviceToken(_:field:)`: `..` would send the request to
    /// another endpoint) and ``PushDeviceError/emptyTopic`` for an APNs device without a topic.
    public init(token: String, type: PushType) throws(PushDeviceError) {
        guard !token.isEmpty else { throw .emptyToken }
        do {
            try Validation.validateDeviceToken(token)
        } catch {
            throw .invalidToken(error.description)
        }
        if case .apns2(let topic, _) = type, topic.isEmpty { throw .emptyTopic }
        self.token = token
        self.type = type
    }

    /// An APNs device from the token `Data` iOS hands the app, written as lowercase hex (as the
    /// Swift SDK sends it).
    public static func apns2(
        deviceToken: Data, topic: String, environment: PushEnvironment = .development
    ) throws(PushDeviceError) -> PushDevice {
        let hex = deviceToken.map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }.joined()
        return try PushDevice(token: hex, type: .apns2(topic: topic, environment: environment))
    }
}

/// PubNub Mobile Push's device registration through a client (`client.push`): which channels'
/// messages reach a device as notifications (`docs/protocol.md`, "Push"). A message becomes a
/// notification when its body carries `pn_fcm` or `pn_apns` (`ChatPushPayload` in `ReplicaModel`).
///
/// ```swift
/// let device = try PushDevice(token: fcmToken, type: .fcm)
/// try await client.push.addChannels(["general", "alice"], device: device)
/// try await client.push.channels(device: device)   // ["alice", "general"]
/// try await client.push.removeDevice(device)        // signing out: no more notifications
/// ```
///
/// Each call needs `read` on every channel it names under Access Manager (``AccessNeed``);
/// listing and removing the device name none. The keyset must have Mobile Push enabled, else
/// every call fails with ``ServiceError/Reason/pushNotEnabled``; a token PubNub refuses is
/// ``ServiceError/Reason/invalidDeviceToken``. One request carries every channel given:
/// PubNub's SDKs and documentation name no per-request limit (the URL's length is the bound; a
/// 414 is ``ServiceError/Reason/uriTooLong``).
///
/// ## Topics
///
/// ### Registering
///
/// - ``addChannels(_:device:)``
/// - ``removeChannels(_:device:)``
/// - ``channels(device:)``
/// - ``removeDevice(_:)``
///
/// ### The requests and their answers
///
/// - ``addChannelsRequest(_:device:)``
/// - ``removeChannelsRequest(_:device:)``
/// - ``channelsRequest(device:)``
/// - ``removeDeviceRequest(_:)``
/// - ``acknowledgement(from:operation:)``
/// - ``channelList(from:)``
public struct PubNubPush: PubNubService {
    /// The client whose keys, origin and transport are used.
    public let client: PubNubClient

    /// Mobile Push through `client`.
    public init(client: PubNubClient) { self.client = client }

    // MARK: Registering

    /// Registers `device` on `channels`: their messages with push keys reach it. Channels it is
    /// already on stay; registering again changes nothing.
    public func addChannels(_ channels: [String], device: PushDevice) async throws(WireError) {
        let request = try addChannelsRequest(channels, device: device)
        try Self.acknowledgement(from: try await client.perform(request), operation: request.operation)
    }

    /// Unregisters `device` from `channels`; a channel it was not on is no error.
    public func removeChannels(_ channels: [String], device: PushDevice) async throws(WireError) {
        let request = try removeChannelsRequest(channels, device: device)
        try Self.acknowledgement(from: try await client.perform(request), operation: request.operation)
    }

    /// The channels `device` is registered on, in the server's order (empty when none).
    public func channels(device: PushDevice) async throws(WireError) -> [String] {
        try Self.channelList(from: try await client.perform(channelsRequest(device: device)))
    }

    /// Unregisters `device` from every channel (for its type, and for APNs its topic and
    /// environment); a device never registered is no error.
    public func removeDevice(_ device: PushDevice) async throws(WireError) {
        let request = removeDeviceRequest(device)
        try Self.acknowledgement(from: try await client.perform(request), operation: request.operation)
    }

    // MARK: Requests

    /// `GET {device path}?add=a,b` plus the type's items. Throws
    /// ``WireError/invalidArgument(_:)`` for no channels, an empty name or one holding a comma
    /// (the list is comma-joined), before anything is sent.
    public func addChannelsRequest(_ channels: [String], device: PushDevice) throws(WireError) -> WireRequest {
        let list = try Self.channelList(channels, operation: "addPushChannels")
        return request(device, remove: false, extra: [QueryItem("add", list)], operation: "addPushChannels")
    }

    /// `GET {device path}?remove=a,b` plus the type's items; the same checks as
    /// ``addChannelsRequest(_:device:)``.
    public func removeChannelsRequest(_ channels: [String], device: PushDevice) throws(WireError) -> WireRequest {
        let list = try Self.channelList(channels, operation: "removePushChannels")
        return request(device, remove: false, extra: [QueryItem("remove", list)], operation: "removePushChannels")
    }

    /// `GET {device path}` with the type's items.
    public func channelsRequest(device: PushDevice) -> WireRequest {
        request(device, remove: false, extra: [], operation: "listPushChannels")
    }

    /// `GET {device path}/remove` with the type's items.
    public func removeDeviceRequest(_ device: PushDevice) -> WireRequest {
        request(device, remove: true, extra: [], operation: "removePushDevice")
    }

    /// The device's path and query (``PushType`` shows both), after the common items.
    private func request(_ device: PushDevice, remove: Bool, extra: [QueryItem], operation: String) -> WireRequest {
        var path = ["push", "sub-key", client.configuration.subscribeKey]
        var query = client.commonQuery() + extra
        switch device.type {
        case .fcm:
            path = ["v1"] + path + ["devices", device.token]
            query.append(QueryItem("type", "fcm"))
        case .apns2(let topic, let environment):
            path = ["v2"] + path + ["devices-apns2", device.token]
            query.append(QueryItem("environment", environment.rawValue))
            query.append(QueryItem("topic", topic))
        }
        if remove { path.append("remove") }
        return WireRequest(method: .get, pathSegments: path, query: query, operation: operation)
    }

    /// The names joined with `,`, in the order given (as the Python SDK's `join_items`).
    private static func channelList(_ channels: [String], operation: String) throws(WireError) -> String {
        guard !channels.isEmpty else { throw .invalidArgument("\(operation) needs at least one channel") }
        guard channels.allSatisfy({ !$0.isEmpty && !$0.contains(",") }) else {
            throw .invalidArgument("\(operation): a channel name is empty or holds a comma")
        }
        return channels.joined(separator: ",")
    }

    // MARK: Answers

    /// Reads `[1,"Modified Channels"]` or `[1,"Removed Device"]`: an array that opens with a
    /// number and ends with a text (as the Swift SDK checks it); anything else is
    /// ``WireError/decoding(operation:status:message:)``.
    public static func acknowledgement(from response: WireResponse, operation: String) throws(WireError) {
        guard let items = JSONValue.parse(response.body)?.arrayValue, case .int? = items.first, case .string? = items.last else {
            throw .decoding(operation: operation, status: response.status, message: "not a [1,\"…\"] acknowledgement")
        }
    }

    /// Reads a list answer, `["ch1","ch2"]` (`[]` for a device on no channel); an element that is
    /// not a string makes it a ``WireError/decoding(operation:status:message:)``.
    public static func channelList(from response: WireResponse) throws(WireError) -> [String] {
        guard let items = JSONValue.parse(response.body)?.arrayValue else {
            throw .decoding(operation: "listPushChannels", status: response.status, message: "not an array of channels")
        }
        var channels: [String] = []
        channels.reserveCapacity(items.count)
        for item in items {
            guard case .string(let name) = item else {
                throw .decoding(operation: "listPushChannels", status: response.status, message: "a channel that is not a string")
            }
            channels.append(name)
        }
        return channels
    }

    /// The reason of a push error answer, `{"error":"…"}`, by its recorded text (Python SDK
    /// fixtures `native_sync/*push*`; the Swift SDK's `push_not_enabled_for_key_Message.json`);
    /// nil leaves the status's reason.
    static func reason(status: Int, message: String) -> ServiceError.Reason? {
        switch (status, message) {
        case (400, "Invalid type argument"): .invalidPushType
        case (400, "Invalid device token"): .invalidDeviceToken
        case (403, _) where message.hasPrefix("Use of the mobile push notifications API requires Push Notifications"):
            .pushNotEnabled
        default: nil
        }
    }
}
