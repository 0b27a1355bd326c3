import Foundation

/// Whether and how the messages a client sends carry mobile push keys: the Chat SDK's
/// `PushNotificationsConfig` (its sending half) and the `customPushData` of a send.
///
/// ```swift
/// var push = ChatPushConfiguration(sendPushes: true, apnsTopic: "com.example.chat")
/// push.customPushData = ["deepLink": "chat://general"]
/// ```
///
/// The receiving half (which device token is registered on which channels) is the wire
/// client's: `PubNubClient.push` in `PubNubWire`.
public struct ChatPushConfiguration: Sendable, Hashable {
    /// Whether text messages and mention events carry push keys at all (the Chat SDK's
    /// `sendPushes`). False adds nothing, whatever else is set.
    public var sendPushes: Bool
    /// The iOS app's bundle id, the APNs topic. Set, messages carry `pn_apns` next to `pn_fcm`;
    /// nil, only `pn_fcm`. An empty string counts as set, as in the Chat SDK (which tests for null).
    public var apnsTopic: String?
    /// The environment the `pn_apns` target names (``PushEnvironment/development`` by default,
    /// as in the Chat SDK).
    public var apnsEnvironment: PushEnvironment
    /// Extra string pairs for the receiving app, merged into `pn_fcm.data` and into the top level
    /// of `pn_apns`. The Chat SDK takes them per send (`sendText(customPushData:)`); here they
    /// ride in the configuration: give each send the copy it needs.
    public var customPushData: [String: String]

    /// A configuration; by default it sends no pushes.
    public init(
        sendPushes: Bool = false, apnsTopic: String? = nil, apnsEnvironment: PushEnvironment = .development,
        customPushData: [String: String] = [:]
    ) {
        self.sendPushes = sendPushes
        self.apnsTopic = apnsTopic
        self.apnsEnvironment = apnsEnvironment
        self.customPushData = customPushData
    }
}

/// The push keys the Chat SDK adds to a text message's body and to a mention event, so that
/// PubNub forwards the message to FCM and APNs as a notification (reference
/// `files-access-chat.md` §3.10; `pubnub/kmp-chat` `BaseChannel.getPushPayload`, built with the
/// Kotlin SDK's `PushPayloadHelper`).
///
/// ```swift
/// let push = ChatPushConfiguration(sendPushes: true, apnsTopic: "com.example.chat")
/// let keys = ChatPushPayload.keys(
///     title: ChatPushPayload.title(userName: "Alice", userId: "alice"), body: "Hi all",
///     channelName: "General", configuration: push)
/// // {"pn_apns":{"aps":{"alert":{"body":"Hi all","title":"Alice"},"sound":"default"},
/// //             "pn_push":[{"auth_method":"token","targets":[{"environment":"development",
/// //             "topic":"com.example.chat"}],"version":"v2"}],"subtitle":"General"},
/// //  "pn_fcm":{"android":{"direct_boot_ok":false,"notification":{"body":"Hi all",
/// //            "notification_priority":"PRIORITY_DEFAULT","sound":"default","sticky":false,
/// //            "title":"Alice"},"priority":"NORMAL"},"data":{"subtitle":"General"},
/// //            "notification":{"body":"Hi all","title":"Alice"}}}
/// var body = ChatSDKFormat.textBody(["id": "m1"], text: "Hi all").objectValue ?? [:]
/// body.merge(keys) { _, push in push }   // the Chat SDK puts the push keys last: they win
/// ```
///
/// Where kmp-chat's code says more than the reference's sketch, this follows the code:
///
/// - `subtitle` (in `pn_fcm.data` and in `pn_apns`) is there only when the channel has a name
///   (`channelName` not nil; an empty name is kept). The reference shows it always.
/// - The custom pairs are merged after `subtitle`, and into `pn_apns` after `aps` and `pn_push`:
///   a custom key of the same name replaces them, as Kotlin's `putAll` does.
/// - `data` is left out when it would be empty (no name, no custom pairs); `android` always
///   carries `priority`, `sticky`, `notification_priority` and `direct_boot_ok`, the helper's
///   defaults.
/// - No `pn_debug`, no `pn_gcm` (the legacy FCM shape), no badge, no `collapse_id`.
public enum ChatPushPayload {
    /// The `pn_fcm` and, when ``ChatPushConfiguration/apnsTopic`` is set, `pn_apns` keys of a
    /// message whose notification reads `title` over `body`; empty when
    /// ``ChatPushConfiguration/sendPushes`` is false.
    ///
    /// - Parameters:
    ///   - title: The sender's name, or their id without one (``title(userName:userId:)``).
    ///   - body: The message's text (for a mention event, the text of the message that mentions).
    ///   - channelName: The name of the channel the message was sent on (its App Context `name`),
    ///     shown as the notification's subtitle; nil leaves `subtitle` out.
    ///   - configuration: Whether to send pushes, the APNs topic and environment, the custom pairs.
    public static func keys(
        title: String, body: String, channelName: String?, configuration: ChatPushConfiguration
    ) -> [String: JSONValue] {
        guard configuration.sendPushes else { return [:] }
        var custom: [String: JSONValue] = [:]
        if let channelName { custom["subtitle"] = .string(channelName) }
        for (key, value) in configuration.customPushData { custom[key] = .string(value) }

        var fcm: [String: JSONValue] = [
            "notification": ["title": .string(title), "body": .string(body)],
            "android": [
                "priority": "NORMAL",
                "notification": [
                    "title": .string(title), "body": .string(body), "sound": "default", "sticky": false,
                    "notification_priority": "PRIORITY_DEFAULT",
                ],
                "direct_boot_ok": false,
            ],
        ]
        if !custom.isEmpty { fcm["data"] = .object(custom) }
        var keys: [String: JSONValue] = ["pn_fcm": .object(fcm)]

        if let topic = configuration.apnsTopic {
            var apns: [String: JSONValue] = [
                "aps": ["alert": ["title": .string(title), "body": .string(body)], "sound": "default"],
                "pn_push": [[
                    "targets": [["topic": .string(topic), "environment": .string(configuration.apnsEnvironment.rawValue)]],
                    "version": "v2",
                    "auth_method": "token",
                ]],
            ]
            apns.merge(custom) { _, customValue in customValue }
            keys["pn_apns"] = .object(apns)
        }
        return keys
    }

    /// A notification's title as the Chat SDK picks it: the sender's name, or their id when they
    /// have none. An empty name is a name (Kotlin's `name ?: id` replaces only null).
    public static func title(userName: String?, userId: String) -> String {
        userName ?? userId
    }
}
