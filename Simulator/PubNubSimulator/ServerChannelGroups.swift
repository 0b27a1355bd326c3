import Foundation
import PubNubWire
import ReplicaModel

// Channel groups (PubNub's Stream Controller, `docs/simulator.md`, "Channel groups"): the channel
// registry's REST calls, and the channels a subscribe's `channel-group=` covers.
extension PubNubServer {
    /// PubNub's limits: channels per group and channels per add request.
    static let maxChannelsPerGroup = 2_000
    static let maxChannelsPerAdd = 200

    /// `/v1/channel-registration/sub-key/{sub}/channel-group/{group}[/remove]`: list (no query),
    /// `add=a,b`, `remove=a,b`, or delete the group (`/remove`). Answers as recorded from PubNub
    /// (the Python SDK's `native_sync/channel_groups` fixtures).
    func channelRegistry(_ request: WireRequest) -> WireResponse {
        let s = request.pathSegments
        guard s.count >= 6, s.count <= 7, s[4] == "channel-group", !s[5].isEmpty else { return Reply.notFound() }
        guard s[3] == subscribeKey else { return Reply.registryError(400, "Invalid Subscribe Key") }
        let group = s[5]
        if s.count == 7 {
            guard s[6] == "remove" else { return Reply.notFound() }
            channelGroups[group] = nil
            return Reply.registryOK()
        }
        func names(_ value: String) -> [String] { value.split(separator: ",").map(String.init).filter { !$0.isEmpty } }
        if let add = request.queryValue("add") {
            let channels = names(add)
            guard !channels.isEmpty, channels.count <= Self.maxChannelsPerAdd else {
                return Reply.registryError(400, "Invalid Arguments: add takes 1 to \(Self.maxChannelsPerAdd) channels")
            }
            var list = channelGroups[group] ?? []
            for channel in channels where !list.contains(channel) { list.append(channel) }
            guard list.count <= Self.maxChannelsPerGroup else {
                return Reply.registryError(400, "Maximum channels per group exceeded (\(Self.maxChannelsPerGroup))")
            }
            channelGroups[group] = list
            return Reply.registryOK()
        }
        if let remove = request.queryValue("remove") {
            let gone = Set(names(remove))
            channelGroups[group] = (channelGroups[group] ?? []).filter { !gone.contains($0) }
            return Reply.registryOK()
        }
        return Reply.json(200, [
            "status": 200, "payload": ["channels": .array((channelGroups[group] ?? []).map { .string($0) }), "group": .string(group)],
            "service": "channel-registry", "error": false,
        ], contentType: Reply.javascript)
    }

    /// The channels `groups` (a `channel-group=` value) cover: each group's channels, and for a
    /// `<group>-pnpres` its channels' presence channels.
    func channels(inGroups groups: String?) -> Set<String> {
        var result = Set<String>()
        for name in (groups ?? "").split(separator: ",").map(String.init) {
            if name.hasSuffix("-pnpres") {
                result.formUnion((channelGroups[String(name.dropLast(7))] ?? []).map { $0 + "-pnpres" })
            } else {
                result.formUnion(channelGroups[name] ?? [])
            }
        }
        return result
    }

    /// Adds `channels` to `group` in process (a test's shortcut for the app server's `add`).
    public func addChannels(_ channels: [String], toGroup group: String) {
        var list = channelGroups[group] ?? []
        for channel in channels where !list.contains(channel) { list.append(channel) }
        channelGroups[group] = list
    }
}

extension Reply {
    /// `{"status":200,"message":"OK","service":"channel-registry","error":false}`.
    static func registryOK() -> WireResponse {
        json(200, ["status": 200, "message": "OK", "service": "channel-registry", "error": false], contentType: javascript)
    }

    /// A channel registry error, in PubNub's legacy service shape.
    static func registryError(_ status: Int, _ message: String) -> WireResponse {
        json(status, ["status": .int(Int64(status)), "message": .string(message), "service": "channel-registry", "error": true],
             contentType: javascript)
    }
}
