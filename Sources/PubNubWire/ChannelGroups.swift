import Foundation
import ReplicaModel

/// PubNub's channel groups (the Stream Controller add-on): a named set of channels that one
/// subscribe follows by its name (`channel-group=`), so that a client of thousands of channels
/// needs no thousands of names in its request line (`docs/live.md`, "Many channels").
///
/// | call | request | Access Manager |
/// | --- | --- | --- |
/// | ``channels(in:)`` | `GET /v1/channel-registration/sub-key/{sub}/channel-group/{group}` | group `read` |
/// | ``add(_:to:)`` | the same with `add=a,b` | group `manage` |
/// | ``remove(_:from:)`` | the same with `remove=a,b` | group `manage` |
/// | ``delete(group:)`` | `…/channel-group/{group}/remove` | group `manage` |
///
/// A client holding `manage` on a group could add any channel to it and read that channel's
/// messages through the group: adding is the job of the app's server (with the secret key, or a
/// token granting `manage`), and an app's users get only `read` on their own groups. Answers are
/// `{"status":200,"message":"OK","service":"channel-registry","error":false}` and, for a list,
/// `{"status":200,"payload":{"channels":[…],"group":"g"},"service":"channel-registry","error":false}`
/// (recorded from the real service: the Python SDK's `native_sync/channel_groups` fixtures).
///
/// ```swift
/// try await server.channelGroups.add(["support-1", "support-2"], to: "desk-alice")  // the app's server
/// let channels = try await client.channelGroups.channels(in: "desk-alice")         // the app
/// ```
public struct PubNubChannelGroups: PubNubService {
    /// The client whose keys, origin and transport are used.
    public let client: PubNubClient

    /// Channel groups through `client`.
    public init(client: PubNubClient) { self.client = client }

    /// PubNub's limit of channels added or removed by one request.
    public static let maxChannelsPerRequest = 200

    /// The channels of `group`, in the server's order (empty for a group never filled).
    public func channels(in group: String) async throws(WireError) -> [String] {
        let request = try listRequest(group: group)
        return try Self.channelList(from: try await client.perform(request), operation: request.operation)
    }

    /// Adds `channels` to `group` (at most ``maxChannelsPerRequest`` a request: more are sent in
    /// several). A channel the group has already stays.
    public func add(_ channels: [String], to group: String) async throws(WireError) {
        for start in stride(from: 0, to: channels.count, by: Self.maxChannelsPerRequest) {
            let slice = Array(channels[start..<min(start + Self.maxChannelsPerRequest, channels.count)])
            let request = try changeRequest(group: group, add: slice)
            try Self.acknowledgement(from: try await client.perform(request), operation: request.operation)
        }
    }

    /// Removes `channels` from `group`; a channel it does not have is no error.
    public func remove(_ channels: [String], from group: String) async throws(WireError) {
        for start in stride(from: 0, to: channels.count, by: Self.maxChannelsPerRequest) {
            let slice = Array(channels[start..<min(start + Self.maxChannelsPerRequest, channels.count)])
            let request = try changeRequest(group: group, remove: slice)
            try Self.acknowledgement(from: try await client.perform(request), operation: request.operation)
        }
    }

    /// Deletes `group` and its list of channels.
    public func delete(group: String) async throws(WireError) {
        let request = try deleteRequest(group: group)
        try Self.acknowledgement(from: try await client.perform(request), operation: request.operation)
    }

    // MARK: Requests

    /// The list request; throws ``WireError/invalidArgument(_:)`` for a group name no path may carry.
    public func listRequest(group: String) throws(WireError) -> WireRequest {
        WireRequest(method: .get, pathSegments: try path(group), query: commonQuery(), operation: "listChannelGroup")
    }

    /// The add or remove request for at most ``maxChannelsPerRequest`` channels.
    public func changeRequest(group: String, add: [String] = [], remove: [String] = []) throws(WireError) -> WireRequest {
        let channels = add.isEmpty ? remove : add
        guard !channels.isEmpty, add.isEmpty || remove.isEmpty else {
            throw .invalidArgument("a channel group change adds or removes at least one channel, not both")
        }
        guard channels.count <= Self.maxChannelsPerRequest else {
            throw .invalidArgument("a channel group change takes at most \(Self.maxChannelsPerRequest) channels, got \(channels.count)")
        }
        guard channels.allSatisfy({ !$0.isEmpty && !$0.contains(",") }) else {
            throw .invalidArgument("a channel group's channel name is empty or holds a comma")
        }
        let query = commonQuery() + [QueryItem(add.isEmpty ? "remove" : "add", channels.joined(separator: ","))]
        return WireRequest(
            method: .get, pathSegments: try path(group), query: query, operation: add.isEmpty ? "removeChannelsFromGroup" : "addChannelsToGroup")
    }

    /// The delete request.
    public func deleteRequest(group: String) throws(WireError) -> WireRequest {
        WireRequest(method: .get, pathSegments: try path(group) + ["remove"], query: commonQuery(), operation: "deleteChannelGroup")
    }

    private func path(_ group: String) throws(WireError) -> [String] {
        do {
            try Validation.validatePathSegment(group, field: "channel group", limit: Validation.maxIdentifierBytes)
        } catch {
            throw .invalidArgument("\(error)")
        }
        guard !group.contains(",") else { throw .invalidArgument("a channel group name holds a comma") }
        return ["v1", "channel-registration", "sub-key", configuration.subscribeKey, "channel-group", group]
    }

    // MARK: Answers

    /// Reads `{"status":200,…,"error":false}`; anything else is a decoding error.
    public static func acknowledgement(from response: WireResponse, operation: String) throws(WireError) {
        guard let object = JSONValue.parse(response.body)?.objectValue, object["error"] == .bool(false) else {
            throw .decoding(operation: operation, status: response.status, message: "not a channel-registry acknowledgement")
        }
    }

    /// Reads the list answer's `payload.channels`; a channel that is not a string is a decoding error.
    public static func channelList(from response: WireResponse, operation: String = "listChannelGroup") throws(WireError) -> [String] {
        guard let object = JSONValue.parse(response.body)?.objectValue, object["error"] == .bool(false),
            let items = object["payload"]?.objectValue?["channels"]?.arrayValue
        else {
            throw .decoding(operation: operation, status: response.status, message: "not a channel group listing")
        }
        var channels: [String] = []
        for item in items {
            guard case .string(let name) = item else {
                throw .decoding(operation: operation, status: response.status, message: "a channel that is not a string")
            }
            channels.append(name)
        }
        return channels
    }
}

extension PubNubClient {
    /// Channel groups (``PubNubChannelGroups``): list a group's channels; add and remove them (the
    /// app's server's job).
    public var channelGroups: PubNubChannelGroups { PubNubChannelGroups(client: self) }
}
