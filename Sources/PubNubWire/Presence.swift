import Foundation
import ReplicaModel

// MARK: Presence events

/// What a presence event says happened (`d.action` on `<channel>-pnpres`).
public enum PresenceAction: Sendable, Hashable, CustomStringConvertible {
    /// A user subscribed (or sent a first heartbeat).
    case join
    /// A user left explicitly (a `leave` call, or "leave on TCP FIN" on the keyset).
    case leave
    /// A user's heartbeats stopped for longer than their presence timeout.
    case timeout
    /// A user's presence state changed (`d.data` is the new state).
    case stateChange
    /// A summary, sent instead of single events once a channel has more occupants than the
    /// keyset's announce maximum: the ids that joined, left and timed out since the last one.
    case interval
    /// An action this version does not know, kept as sent.
    case other(String)

    /// The action as sent: `join`, `leave`, `timeout`, `state-change`, `interval`.
    public init(rawValue: String) {
        switch rawValue {
        case "join": self = .join
        case "leave": self = .leave
        case "timeout": self = .timeout
        case "state-change": self = .stateChange
        case "interval": self = .interval
        default: self = .other(rawValue)
        }
    }

    /// The action as sent.
    public var rawValue: String {
        switch self {
        case .join: "join"
        case .leave: "leave"
        case .timeout: "timeout"
        case .stateChange: "state-change"
        case .interval: "interval"
        case .other(let text): text
        }
    }

    /// The action as sent.
    public var description: String { rawValue }
}

/// A presence event (on `<channel>-pnpres`). See PubNub's presence events
/// (https://www.pubnub.com/docs/general/presence/presence-events) and `docs/presence.md`.
///
/// `join`, `leave`, `timeout` and `state-change` are about one user (``userId``, never nil for
/// them); `interval` lists several (``joined``, ``left``, ``timedOut``) or, when the list was too
/// long to send, sets ``hereNowRefresh``: then only a here-now tells who is present.
public struct PresenceEvent: Sendable, Hashable {
    /// What happened.
    public var action: PresenceAction
    /// The channel, without `-pnpres`.
    public var channel: String
    /// The user, for a single-user event.
    public var userId: String?
    /// The occupancy after the event.
    public var occupancy: Int?
    /// Seconds since 1970.
    public var timestamp: Int64?
    /// The user's presence state (`d.data`), when sent (always for `state-change`).
    public var state: JSONValue?
    /// `interval`: who joined since the last interval.
    public var joined: [String]
    /// `interval`: who left since the last interval.
    public var left: [String]
    /// `interval`: who timed out since the last interval.
    public var timedOut: [String]
    /// `interval`: the lists were too long to send; call here-now for the channel.
    public var hereNowRefresh: Bool

    /// An event.
    public init(
        action: PresenceAction, channel: String, userId: String? = nil, occupancy: Int? = nil, timestamp: Int64? = nil,
        state: JSONValue? = nil, joined: [String] = [], left: [String] = [], timedOut: [String] = [], hereNowRefresh: Bool = false
    ) {
        self.action = action
        self.channel = channel
        self.userId = userId
        self.occupancy = occupancy
        self.timestamp = timestamp
        self.state = state
        self.joined = joined
        self.left = left
        self.timedOut = timedOut
        self.hereNowRefresh = hereNowRefresh
    }
}

// MARK: Here-now

/// A here-now query: who is subscribed to some channels right now.
///
/// ```swift
/// var query = HereNowRequest(channels: ["general"])
/// query.includeState = true
/// let answer = try await client.presence.hereNow(query)
/// answer.channels["general"]?.occupants   // [PresentUser(userId: "alice", state: ["mood": "busy"])]
/// ```
public struct HereNowRequest: Sendable, Hashable {
    /// The channels; empty with no groups asks for every channel of the keyset (global here-now).
    public var channels: [String]
    /// Channel groups (`channel-group`).
    public var channelGroups: [String] = []
    /// Whether to list the occupants (`disable_uuids=0`); false gives occupancy only.
    public var includeUserIds = true
    /// Whether to give each occupant's presence state (`state=1`).
    public var includeState = false
    /// At most this many occupants per channel (`limit`, PubNub's maximum and default 1000).
    public var limit: Int?
    /// Skip this many occupants per channel (`offset`), to page a larger channel.
    public var offset: Int?

    /// A here-now of `channels`, listing occupants without their state.
    public init(channels: [String], includeState: Bool = false) {
        self.channels = channels
        self.includeState = includeState
    }
}

/// One user present on a channel.
public struct PresentUser: Sendable, Hashable, Codable {
    /// The user id.
    public var userId: String
    /// Their presence state on the channel, when asked for and set.
    public var state: JSONValue?

    /// A present user.
    public init(userId: String, state: JSONValue? = nil) {
        self.userId = userId
        self.state = state
    }
}

/// Who is on one channel.
public struct ChannelOccupancy: Sendable, Hashable, Codable {
    /// How many are subscribed.
    public var occupancy: Int
    /// Who (empty when `HereNowRequest.includeUserIds` was false), in the server's order.
    public var occupants: [PresentUser]

    /// An occupancy.
    public init(occupancy: Int, occupants: [PresentUser]) {
        self.occupancy = occupancy
        self.occupants = occupants
    }
}

/// A here-now answer, one shape whatever PubNub sent (its single-channel shape has the
/// occupants at the top; the others under `payload.channels`).
public struct HereNowAnswer: Sendable, Hashable {
    /// Each channel asked for (or, for a global here-now, each occupied one).
    public var channels: [String: ChannelOccupancy]
    /// The sum of the occupancies.
    public var totalOccupancy: Int

    /// An answer.
    public init(channels: [String: ChannelOccupancy], totalOccupancy: Int) {
        self.channels = channels
        self.totalOccupancy = totalOccupancy
    }
}

// MARK: Signals

/// A signal: a small message delivered live to subscribers (`e: 1`) and never stored. Typing
/// indicators and read receipts use them.
public struct SignalRequest: Sendable, Hashable {
    /// The channel.
    public var channel: String
    /// The payload; its compact JSON must fit ``PubNubClient/signalSizeLimit`` bytes.
    public var message: JSONValue
    /// `custom_message_type`.
    public var customMessageType: String?

    /// A signal of `message` to `channel`.
    public init(channel: String, message: JSONValue, customMessageType: String? = nil) {
        self.channel = channel
        self.message = message
        self.customMessageType = customMessageType
    }
}

/// Presence through a client (`client.presence`): who is here now, where a user is, heartbeats,
/// leaving, and presence state.
///
/// ```swift
/// let answer = try await client.presence.hereNow(HereNowRequest(channels: ["general"]))
/// ```
public struct PubNubPresence: PubNubService {
    /// The client whose keys, origin, transport, token and crypto module are used.
    public let client: PubNubClient

    /// Presence through `client`.
    public init(client: PubNubClient) { self.client = client }

    // MARK: Presence requests

    /// `/v2/presence/sub-key/{sub}` plus `rest`.
    private func presencePath(_ rest: [String]) -> [String] {
        ["v2", "presence", "sub-key", configuration.subscribeKey] + rest
    }

    /// The channel list of a presence path: sorted and comma-joined, `,` when only groups are given.
    private static func channelList(_ channels: [String], groups: [String], operation: String) throws(WireError) -> String {
        guard channels.allSatisfy({ !$0.isEmpty && !$0.contains(",") }) else {
            throw .invalidArgument("\(operation): a channel name is empty or holds a comma")
        }
        guard !channels.isEmpty || !groups.isEmpty else { throw .invalidArgument("\(operation) needs channels or channel groups") }
        return channels.isEmpty ? "," : channels.sorted().joined(separator: ",")
    }

    /// The request ``hereNow(_:)`` sends.
    public func hereNowRequest(_ hereNow: HereNowRequest) throws(WireError) -> WireRequest {
        var query = commonQuery()
        query.append(QueryItem("disable_uuids", hereNow.includeUserIds ? "0" : "1"))
        query.append(QueryItem("state", hereNow.includeState ? "1" : "0"))
        if let limit = hereNow.limit { query.append(QueryItem("limit", String(min(max(limit, 0), 1000)))) }
        if let offset = hereNow.offset, offset > 0 { query.append(QueryItem("offset", String(offset))) }
        if !hereNow.channelGroups.isEmpty {
            query.append(QueryItem("channel-group", hereNow.channelGroups.sorted().joined(separator: ",")))
        }
        guard !hereNow.channels.isEmpty || !hereNow.channelGroups.isEmpty else {
            return WireRequest(method: .get, pathSegments: presencePath([]), query: query, operation: "here-now")
        }
        let list = try Self.channelList(hereNow.channels, groups: hereNow.channelGroups, operation: "here-now")
        return WireRequest(method: .get, pathSegments: presencePath(["channel", list]), query: query, operation: "here-now")
    }

    /// Who is subscribed to the channels now (PubNub caches the answer for about 3 s). A
    /// channel with more occupants than ``HereNowRequest/limit`` is paged with
    /// ``HereNowRequest/offset``; ``hereNowAll(channels:includeState:)`` does that.
    public func hereNow(_ hereNow: HereNowRequest) async throws(WireError) -> HereNowAnswer {
        let request = try hereNowRequest(hereNow)
        let single = hereNow.channels.count == 1 && hereNow.channelGroups.isEmpty ? hereNow.channels.first : nil
        return try Self.hereNowAnswer(from: try await perform(request), singleChannel: single)
    }

    /// Every occupant of `channels`, paging channels with more than 1000 (at most 100 pages).
    public func hereNowAll(channels: [String], includeState: Bool) async throws(WireError) -> HereNowAnswer {
        var query = HereNowRequest(channels: channels, includeState: includeState)
        query.limit = 1000
        var answer = try await hereNow(query)
        for channel in channels.sorted() {
            var pages = 0
            while var occupancy = answer.channels[channel], occupancy.occupants.count < occupancy.occupancy, pages < 100 {
                pages += 1
                var next = HereNowRequest(channels: [channel], includeState: includeState)
                next.limit = 1000
                next.offset = occupancy.occupants.count
                let page = try await hereNow(next).channels[channel]?.occupants ?? []
                guard !page.isEmpty else { break }
                occupancy.occupants.append(contentsOf: page)
                answer.channels[channel] = occupancy
            }
        }
        return answer
    }

    /// Decodes a here-now answer. `singleChannel` names the channel when exactly one was asked
    /// for (PubNub then answers with the occupants at the top level).
    public static func hereNowAnswer(from response: WireResponse, singleChannel: String?) throws(WireError) -> HereNowAnswer {
        guard let body = try? JSONValue(jsonData: response.body), let top = body.objectValue else {
            throw .decoding(operation: "here-now", status: response.status, message: "the answer is not a JSON object")
        }
        if let channels = top["payload"]?.objectValue?["channels"]?.objectValue {
            var result: [String: ChannelOccupancy] = [:]
            for (name, value) in channels {
                guard let object = value.objectValue else { continue }
                result[name] = occupancy(object)
            }
            let total = top["payload"]?.objectValue?["total_occupancy"].flatMap { SubscribeDecoding.int($0) }
            return HereNowAnswer(channels: result, totalOccupancy: total.map { Int(clamping: $0) } ?? result.values.reduce(0) { $0 + $1.occupancy })
        }
        guard let singleChannel, top["occupancy"] != nil || top["uuids"] != nil else {
            throw .decoding(operation: "here-now", status: response.status, message: "neither payload.channels nor occupancy")
        }
        let one = occupancy(top)
        return HereNowAnswer(channels: [singleChannel: one], totalOccupancy: one.occupancy)
    }

    /// One channel's `{occupancy, uuids}`, read leniently: an occupant is a string or
    /// `{uuid, state}`; anything else is skipped.
    private static func occupancy(_ object: [String: JSONValue]) -> ChannelOccupancy {
        let occupants: [PresentUser] = (object["uuids"]?.arrayValue ?? []).compactMap { element in
            switch element {
            case .string(let id) where !id.isEmpty: return PresentUser(userId: id)
            case .object(let fields):
                guard let id = fields["uuid"]?.stringValue, !id.isEmpty else { return nil }
                return PresentUser(userId: id, state: fields["state"].flatMap { $0.isNull ? JSONValue?.none : $0 })
            default: return nil
            }
        }
        let count = SubscribeDecoding.int(object["occupancy"]).map { Int(clamping: max(0, $0)) }
        return ChannelOccupancy(occupancy: count ?? occupants.count, occupants: occupants)
    }

    /// The channels a user is subscribed to now (`/uuid/{uuid}`).
    public func whereNow(userId: String) async throws(WireError) -> [String] {
        guard !userId.isEmpty else { throw .invalidArgument("where-now needs a user id") }
        let request = WireRequest(method: .get, pathSegments: presencePath(["uuid", userId]), query: commonQuery(), operation: "where-now")
        let response = try await perform(request)
        guard let body = try? JSONValue(jsonData: response.body),
              let channels = body.objectValue?["payload"]?.objectValue?["channels"]?.arrayValue
        else { throw .decoding(operation: "where-now", status: response.status, message: "no payload.channels array") }
        return channels.compactMap(\.stringValue)
    }

    /// The request ``heartbeat(channels:channelGroups:timeout:state:)`` sends.
    public func heartbeatRequest(
        channels: [String], channelGroups: [String] = [], timeout: Int? = nil, state: [String: JSONValue]? = nil
    ) throws(WireError) -> WireRequest {
        let list = try Self.channelList(channels, groups: channelGroups, operation: "heartbeat")
        var query = commonQuery()
        if let timeout { query.append(QueryItem("heartbeat", String(timeout))) }
        if let state, !state.isEmpty {
            query.append(QueryItem("state", String(decoding: try PubNubClient.json(JSONValue.object(state)), as: UTF8.self)))
        }
        if !channelGroups.isEmpty { query.append(QueryItem("channel-group", channelGroups.sorted().joined(separator: ","))) }
        return WireRequest(method: .get, pathSegments: presencePath(["channel", list, "heartbeat"]), query: query, operation: "heartbeat")
    }

    /// Tells PubNub this user is still on `channels` for another `timeout` seconds (the presence
    /// timeout; nil leaves the keyset's), with their state per channel. A subscribe long poll
    /// counts as a heartbeat too; separate ones are needed when the poll is held longer than
    /// the timeout.
    public func heartbeat(
        channels: [String], channelGroups: [String] = [], timeout: Int? = nil, state: [String: JSONValue]? = nil
    ) async throws(WireError) {
        _ = try await perform(try heartbeatRequest(channels: channels, channelGroups: channelGroups, timeout: timeout, state: state))
    }

    /// Leaves `channels` (`/v2/presence/sub-key/{sub}/channel/{channels}/leave`): other members
    /// see this user leave at once rather than after the presence timeout. `timeout` bounds the
    /// wait (a stopping app should not hang on it).
    public func leave(channels: [String], channelGroups: [String] = [], timeout: Duration? = nil) async throws(WireError) {
        let list = try Self.channelList(channels, groups: channelGroups, operation: "leave")
        var query = commonQuery()
        if !channelGroups.isEmpty { query.append(QueryItem("channel-group", channelGroups.sorted().joined(separator: ","))) }
        var request = WireRequest(method: .get, pathSegments: presencePath(["channel", list, "leave"]), query: query, operation: "leave")
        request.timeout = timeout
        _ = try await perform(request)
    }

    /// Sets this user's presence state on `channels` (a JSON object; subscribers see a
    /// `state-change`). Returns the state the server stored.
    @discardableResult
    public func setPresenceState(_ state: [String: JSONValue], channels: [String], channelGroups: [String] = []) async throws(WireError)
        -> JSONValue
    {
        let list = try Self.channelList(channels, groups: channelGroups, operation: "set-state")
        var query = commonQuery()
        query.append(QueryItem("state", String(decoding: try PubNubClient.json(JSONValue.object(state)), as: UTF8.self)))
        if !channelGroups.isEmpty { query.append(QueryItem("channel-group", channelGroups.sorted().joined(separator: ","))) }
        let request = WireRequest(
            method: .get, pathSegments: presencePath(["channel", list, "uuid", configuration.userId, "data"]), query: query,
            operation: "set-state")
        let response = try await perform(request)
        guard let payload = (try? JSONValue(jsonData: response.body))?.objectValue?["payload"] else {
            throw .decoding(operation: "set-state", status: response.status, message: "no payload")
        }
        return payload
    }

    /// A user's presence state on each of `channels` (a channel where none is set is absent).
    public func presenceState(userId: String, channels: [String], channelGroups: [String] = []) async throws(WireError)
        -> [String: JSONValue]
    {
        guard !userId.isEmpty else { throw .invalidArgument("get-state needs a user id") }
        let list = try Self.channelList(channels, groups: channelGroups, operation: "get-state")
        var query = commonQuery()
        if !channelGroups.isEmpty { query.append(QueryItem("channel-group", channelGroups.sorted().joined(separator: ","))) }
        let request = WireRequest(
            method: .get, pathSegments: presencePath(["channel", list, "uuid", userId]), query: query, operation: "get-state")
        let response = try await perform(request)
        guard let top = (try? JSONValue(jsonData: response.body))?.objectValue, let payload = top["payload"] else {
            throw .decoding(operation: "get-state", status: response.status, message: "no payload")
        }
        if let many = payload.objectValue?["channels"]?.objectValue { return many.filter { !$0.value.isNull } }
        guard let channel = top["channel"]?.stringValue ?? (channels.count == 1 ? channels.first : nil) else {
            throw .decoding(operation: "get-state", status: response.status, message: "neither payload.channels nor channel")
        }
        return payload.isNull ? [:] : [channel: payload]
    }
}

// Signals: at-most-once, never stored (typing indicators, read receipts).
extension PubNubClient {
    /// PubNub's default signal limit: 64 bytes of payload. Counted here as the bytes of the
    /// payload's compact JSON (sorted keys, UTF-8), before URL encoding; see `docs/presence.md`.
    public static let signalSizeLimit = 64

    /// The request ``signal(_:)`` sends: `GET /signal/{pub}/{sub}/0/{channel}/0/{json}`. A payload
    /// over ``signalSizeLimit`` is refused here (``WireError/payloadTooLarge(operation:bytes:limit:)``),
    /// before anything is sent.
    public func signalRequest(_ signal: SignalRequest) throws(WireError) -> WireRequest {
        guard !configuration.publishKey.isEmpty else { throw .invalidConfiguration("publishKey is empty") }
        guard !signal.channel.isEmpty else { throw .invalidArgument("a signal needs a channel") }
        let body = try Self.json(signal.message)
        guard body.count <= Self.signalSizeLimit else {
            throw .payloadTooLarge(operation: "signal", bytes: body.count, limit: Self.signalSizeLimit)
        }
        var query = commonQuery()
        if let type = signal.customMessageType { query.append(QueryItem("custom_message_type", type)) }
        return WireRequest(
            method: .get,
            pathSegments: ["signal", configuration.publishKey, configuration.subscribeKey, "0", signal.channel, "0",
                           String(decoding: body, as: UTF8.self)],
            query: query, operation: "signal")
    }

    /// Sends a signal and returns its timetoken. Signals are at-most-once and never stored:
    /// nothing retries them (a typing indicator that arrives late is worse than one that never
    /// arrives).
    public func signal(_ signal: SignalRequest) async throws(WireError) -> Timetoken {
        try Self.publishTimetoken(from: try await perform(try signalRequest(signal)))
    }
}
