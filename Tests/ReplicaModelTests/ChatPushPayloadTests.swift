import Foundation
import Testing
import ReplicaModel

/// The Chat SDK's push keys (`files-access-chat.md` §3.10; `pubnub/kmp-chat` `BaseChannel.getPushPayload`
/// with the Kotlin SDK's `PushPayloadHelper`), compared as compact JSON with sorted keys.
@Suite("The Chat SDK's push payload")
struct ChatPushPayloadTests {
    static func text(_ keys: [String: JSONValue]) -> String {
        String(decoding: JSONValue.object(keys).compactJSONBytes() ?? [], as: UTF8.self)
    }

    static let android = #""android":{"direct_boot_ok":false,"notification":{"body":"Hi all","notification_priority":"PRIORITY_DEFAULT","sound":"default","sticky":false,"title":"Alice"},"priority":"NORMAL"}"#
    static let notification = #""notification":{"body":"Hi all","title":"Alice"}"#

    @Test("without sendPushes nothing is added, whatever else is set")
    func off() {
        let configuration = ChatPushConfiguration(
            sendPushes: false, apnsTopic: "com.example.chat", apnsEnvironment: .production, customPushData: ["k": "v"])
        #expect(ChatPushPayload.keys(title: "Alice", body: "Hi all", channelName: "General", configuration: configuration).isEmpty)
        #expect(ChatPushConfiguration() == ChatPushConfiguration(sendPushes: false))
    }

    @Test("without an APNs topic only pn_fcm, its data the channel's name as subtitle")
    func fcmOnly() {
        let keys = ChatPushPayload.keys(
            title: "Alice", body: "Hi all", channelName: "General", configuration: ChatPushConfiguration(sendPushes: true))
        #expect(Self.text(keys) == #"{"pn_fcm":{"# + Self.android + #","data":{"subtitle":"General"},"# + Self.notification + "}}")
    }

    @Test("with a topic, pn_apns too: alert, sound, one token-auth v2 target in the configured environment, subtitle and custom pairs at its top")
    func withTopic() {
        let configuration = ChatPushConfiguration(
            sendPushes: true, apnsTopic: "com.example.chat", apnsEnvironment: .production,
            customPushData: ["deepLink": "chat://general", "kind": "message"])
        let keys = ChatPushPayload.keys(title: "Alice", body: "Hi all", channelName: "General", configuration: configuration)
        let apns = #""pn_apns":{"aps":{"alert":{"body":"Hi all","title":"Alice"},"sound":"default"},"deepLink":"chat://general","kind":"message","pn_push":[{"auth_method":"token","targets":[{"environment":"production","topic":"com.example.chat"}],"version":"v2"}],"subtitle":"General"}"#
        let fcm = #""pn_fcm":{"# + Self.android
            + #","data":{"deepLink":"chat://general","kind":"message","subtitle":"General"},"# + Self.notification + "}"
        #expect(Self.text(keys) == "{" + apns + "," + fcm + "}")
    }

    @Test("no channel name and no custom pairs: no data map, no subtitle; an empty name is still a subtitle")
    func noName() {
        let configuration = ChatPushConfiguration(sendPushes: true, apnsTopic: "com.example.chat")
        let keys = ChatPushPayload.keys(title: "Alice", body: "Hi all", channelName: nil, configuration: configuration)
        #expect(Self.text(keys) == #"{"pn_apns":{"aps":{"alert":{"body":"Hi all","title":"Alice"},"sound":"default"},"pn_push":[{"auth_method":"token","targets":[{"environment":"development","topic":"com.example.chat"}],"version":"v2"}]},"pn_fcm":{"# + Self.android + "," + Self.notification + "}}")
        let empty = ChatPushPayload.keys(title: "Alice", body: "Hi all", channelName: "", configuration: configuration)
        #expect(empty["pn_fcm"]?.objectValue?["data"] == ["subtitle": ""])
        #expect(empty["pn_apns"]?.objectValue?["subtitle"] == "")
    }

    @Test("custom pairs are merged last, as Kotlin's putAll: they replace subtitle, and aps in pn_apns")
    func customWins() {
        let configuration = ChatPushConfiguration(
            sendPushes: true, apnsTopic: "com.example.chat", customPushData: ["subtitle": "mine", "aps": "replaced"])
        let keys = ChatPushPayload.keys(title: "Alice", body: "Hi all", channelName: "General", configuration: configuration)
        #expect(keys["pn_fcm"]?.objectValue?["data"] == ["subtitle": "mine", "aps": "replaced"])
        #expect(keys["pn_apns"]?.objectValue?["subtitle"] == "mine")
        #expect(keys["pn_apns"]?.objectValue?["aps"] == "replaced")
    }

    @Test("an empty topic counts as set (the Chat SDK tests for null)")
    func emptyTopic() {
        let keys = ChatPushPayload.keys(
            title: "a", body: "b", channelName: nil, configuration: ChatPushConfiguration(sendPushes: true, apnsTopic: ""))
        let target = keys["pn_apns"]?.objectValue?["pn_push"]?.arrayValue?.first?.objectValue?["targets"]?.arrayValue?.first
        #expect(target == ["topic": "", "environment": "development"])
    }

    @Test("the title is the sender's name, else their id; an empty name stays")
    func title() {
        #expect(ChatPushPayload.title(userName: "Alice", userId: "alice") == "Alice")
        #expect(ChatPushPayload.title(userName: nil, userId: "alice") == "alice")
        #expect(ChatPushPayload.title(userName: "", userId: "alice") == "")
    }

    @Test("merged into a text body, the push keys sit beside type, text and files")
    func mergedIntoTextBody() throws {
        let keys = ChatPushPayload.keys(
            title: "Alice", body: "Hi all", channelName: nil, configuration: ChatPushConfiguration(sendPushes: true))
        var body = try #require(ChatSDKFormat.textBody(["id": "m1"], text: "Hi all").objectValue)
        body.merge(keys) { _, push in push }
        #expect(Set(body.keys) == ["id", "type", "text", "files", "pn_fcm"])
        #expect(ChatSDKFormat.text(ofBody: .object(body)) == "Hi all")
    }
}
