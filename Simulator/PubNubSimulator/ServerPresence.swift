import Foundation
import PubNubWire
import ReplicaModel

/// How the simulator's presence behaves. PubNub's keyset defaults for the announce maximum and
/// the interval are not published; the simulator's choices are in `docs/presence.md`.
public struct PresenceSettings: Sendable, Hashable {
    /// The presence timeout of a subscriber that sends no `heartbeat` (seconds). PubNub's default: 300.
    public var defaultTimeout = 300
    /// The smallest `heartbeat` accepted; a smaller one is raised to it. PubNub's minimum: 20.
    public var minimumTimeout = 20
    /// Above this many occupants a channel stops announcing single join, leave and timeout
    /// events and sends an `interval` summary every ``interval`` seconds instead.
    public var announceMax = 20
    /// Seconds between two `interval` events of a channel in interval mode.
    public var interval: TimeInterval = 10
    /// An `interval` event lists at most this many ids (joins, leaves and timeouts together);
    /// beyond it, it carries `here_now_refresh: true` and no lists.
    public var intervalListLimit = 100

    /// The defaults above.
    public init() {}
}

/// One user present on one channel.
struct Occupant: Sendable {
    /// When the user times out (a timetoken on the server's clock).
    var expires: UInt64
}

/// A channel in interval mode: what changed since its last `interval` event.
struct IntervalChanges: Sendable {
    var joined: [String] = []
    var left: [String] = []
    var timedOut: [String] = []
    var last: UInt64 = 0

    var isEmpty: Bool { joined.isEmpty && left.isEmpty && timedOut.isEmpty }
}

extension PubNubServer {
    /// Changes how presence behaves (a test's short interval, say).
    public func configurePresence(_ settings: PresenceSettings) {
        presenceSettings = settings
        presenceDue = 0
    }

    /// The users present on `channel` now (after timing out the expired), sorted.
    public func occupants(of channel: String) -> [String] {
        sweepPresence()
        return (occupants[channel] ?? [:]).keys.sorted()
    }

    // MARK: Occupancy

    /// A subscribe or heartbeat from `uuid`: joins the channels it is not on (a `join` event, with
    /// its state when one is given) and moves its timeout `timeout` seconds ahead (the request
    /// that brought it has already swept the expired, in `handle`/`respond`); a state that
    /// differs from the stored one is a `state-change` for a user already present.
    func touchPresence(channels: [String], uuid: String, timeout: Int?, state: [String: JSONValue]?) {
        guard !uuid.isEmpty else { return }
        let seconds = max(presenceSettings.minimumTimeout, timeout ?? presenceSettings.defaultTimeout)
        let expires = timetokens.now &+ UInt64(seconds) &* 10_000_000
        for channel in channels where !channel.hasSuffix("-pnpres") {
            let newState = state?[channel].flatMap { $0.isNull ? nil : $0 }
            if occupants[channel]?[uuid] == nil {
                occupants[channel, default: [:]][uuid] = Occupant(expires: expires)
                presenceDue = min(presenceDue, expires)
                if let newState { presenceStates[channel, default: [:]][uuid] = newState }
                announce(.join, channel: channel, uuid: uuid, state: presenceStates[channel]?[uuid])
            } else {
                occupants[channel]?[uuid]?.expires = expires
                presenceDue = min(presenceDue, expires)
                if let newState, presenceStates[channel]?[uuid] != newState {
                    presenceStates[channel, default: [:]][uuid] = newState
                    announce(.stateChange, channel: channel, uuid: uuid, state: newState)
                }
            }
        }
    }

    /// `uuid` leaves `channels` (`leave` events); its state there is forgotten.
    func removePresence(channels: [String], uuid: String, action: PresenceAction, at timestamp: UInt64? = nil) {
        for channel in channels where occupants[channel]?[uuid] != nil {
            occupants[channel]?[uuid] = nil
            if occupants[channel]?.isEmpty == true { occupants[channel] = nil }
            let state = presenceStates[channel]?.removeValue(forKey: uuid)
            announce(action, channel: channel, uuid: uuid, state: state, at: timestamp)
        }
    }

    /// Times out every occupant whose heartbeats stopped (a `timeout` event stamped with the
    /// moment it expired), and sends the `interval` events that are due. Runs before every request
    /// (the server's clock may be virtual) and, over HTTP, once a second.
    public func sweepPresence() {
        let now = timetokens.now
        guard now >= presenceDue else { return }
        defer { presenceDue = nextPresenceDue() }
        var expired: [(channel: String, uuid: String, at: UInt64)] = []
        for (channel, users) in occupants {
            for (uuid, occupant) in users where occupant.expires <= now { expired.append((channel, uuid, occupant.expires)) }
        }
        for item in expired.sorted(by: { ($0.at, $0.channel, $0.uuid) < ($1.at, $1.channel, $1.uuid) }) {
            removePresence(channels: [item.channel], uuid: item.uuid, action: .timeout, at: item.at)
        }
        for channel in intervalChanges.keys.sorted() {
            guard let changes = intervalChanges[channel], !changes.isEmpty, now >= changes.last &+ intervalTicks else { continue }
            var payload: [String: JSONValue] = [
                "action": "interval", "occupancy": .int(Int64(occupants[channel]?.count ?? 0)),
                "timestamp": .int(Int64(now / 10_000_000)),
            ]
            if changes.joined.count + changes.left.count + changes.timedOut.count > presenceSettings.intervalListLimit {
                payload["here_now_refresh"] = true
            } else {
                if !changes.joined.isEmpty { payload["join"] = .array(changes.joined.map { .string($0) }) }
                if !changes.left.isEmpty { payload["leave"] = .array(changes.left.map { .string($0) }) }
                if !changes.timedOut.isEmpty { payload["timeout"] = .array(changes.timedOut.map { .string($0) }) }
            }
            intervalChanges[channel] = IntervalChanges(last: now)
            emit(channel: channel + "-pnpres", timetoken: timetokens.next(), kind: nil, publisher: nil, payload: .object(payload))
        }
    }

    /// ``PresenceSettings/interval`` in timetoken units (10^-7 s).
    private var intervalTicks: UInt64 { UInt64(max(0, min(presenceSettings.interval, 1e6)) * 10_000_000) }

    /// The earliest moment the next sweep has work: an expiry or a due interval.
    private func nextPresenceDue() -> UInt64 {
        var due = UInt64.max
        for users in occupants.values { for occupant in users.values { due = min(due, occupant.expires) } }
        for changes in intervalChanges.values where !changes.isEmpty { due = min(due, changes.last &+ intervalTicks) }
        return due
    }

    /// A presence event on `<channel>-pnpres`, or, for a channel over the announce maximum, an
    /// entry of its next `interval` event (a state change is always announced).
    private func announce(_ action: PresenceAction, channel: String, uuid: String, state: JSONValue?, at timestamp: UInt64? = nil) {
        let occupancy = occupants[channel]?.count ?? 0
        let crowded = occupancy > presenceSettings.announceMax
            || (action != .join && occupancy + 1 > presenceSettings.announceMax)
        if crowded && action != .stateChange {
            var changes = intervalChanges[channel] ?? IntervalChanges(last: timetokens.now)
            switch action {
            case .join: changes.joined.append(uuid)
            case .leave: changes.left.append(uuid)
            default: changes.timedOut.append(uuid)
            }
            intervalChanges[channel] = changes
            presenceDue = min(presenceDue, changes.last &+ intervalTicks)
            return
        }
        var payload: [String: JSONValue] = [
            "action": .string(action.rawValue), "uuid": .string(uuid), "occupancy": .int(Int64(occupancy)),
            "timestamp": .int(Int64((timestamp ?? timetokens.now) / 10_000_000)),
        ]
        if let state { payload["data"] = state }
        emit(channel: channel + "-pnpres", timetoken: timetokens.next(), kind: nil, publisher: nil, payload: .object(payload))
    }

    // MARK: Endpoints

    /// `/v2/presence/sub-key/{sub}/...`: here-now (one, several or all channels), where-now,
    /// heartbeat, leave, and set and get state.
    func presence(_ request: WireRequest) -> WireResponse {
        let s = request.pathSegments
        guard s.count >= 4, s[2] == "sub-key" else { return Reply.notFound() }
        guard s[3] == subscribeKey else { return Reply.presenceError(400, "Invalid Subscribe Key") }
        if s.count == 4 { return hereNow(request, channels: nil) }
        let list = s.count > 5 ? s[5].split(separator: ",").map(String.init).filter { !$0.isEmpty } : []
        switch (s[4], s.count) {
        case ("channel", 6):
            return hereNow(request, channels: list)
        case ("uuid", 6):
            let channels = occupants.filter { $0.value[s[5]] != nil }.keys.sorted()
            return Reply.json(200, [
                "status": 200, "message": "OK", "service": "Presence",
                "payload": ["channels": .array(channels.map { .string($0) })],
            ])
        case ("channel", 7) where s[6] == "heartbeat":
            let state: [String: JSONValue]?
            switch Self.stateParameter(request) {
            case .absent: state = nil
            case .invalid: return Reply.presenceError(400, "Invalid JSON in state")
            case .object(let object): state = object.compactMapValues { $0.objectValue.map(JSONValue.object) }
            }
            touchPresence(channels: list, uuid: request.actor, timeout: request.int("heartbeat"), state: state)
            return Reply.json(200, ["status": 200, "message": "OK", "service": "Presence"])
        case ("channel", 7) where s[6] == "leave":
            removePresence(channels: list, uuid: request.actor, action: .leave)
            return Reply.json(200, ["status": 200, "message": "OK", "action": "leave", "service": "Presence"])
        case ("channel", 9) where s[6] == "uuid" && s[8] == "data":
            guard case .object(let state) = Self.stateParameter(request) else {
                return Reply.presenceError(400, "No state specified.")
            }
            for channel in list {
                let new: JSONValue? = state.isEmpty ? nil : .object(state)
                guard presenceStates[channel]?[s[7]] != new else { continue }
                presenceStates[channel, default: [:]][s[7]] = new
                if occupants[channel]?[s[7]] != nil, let new {
                    announce(.stateChange, channel: channel, uuid: s[7], state: new)
                }
            }
            return Reply.json(200, ["status": 200, "message": "OK", "service": "Presence", "payload": .object(state)])
        case ("channel", 8) where s[6] == "uuid":
            let uuid = s[7]
            if list.count == 1, let channel = list.first {
                return Reply.json(200, [
                    "status": 200, "message": "OK", "service": "Presence", "uuid": .string(uuid), "channel": .string(channel),
                    "payload": presenceStates[channel]?[uuid] ?? .object([:]),
                ])
            }
            var states: [String: JSONValue] = [:]
            for channel in list { if let state = presenceStates[channel]?[uuid] { states[channel] = state } }
            return Reply.json(200, [
                "status": 200, "message": "OK", "service": "Presence", "uuid": .string(uuid),
                "payload": ["channels": .object(states)],
            ])
        default:
            return Reply.notFound()
        }
    }

    /// here-now: PubNub's single-channel shape for exactly one channel, else `payload.channels`
    /// (every occupied channel for a global here-now).
    private func hereNow(_ request: WireRequest, channels: [String]?) -> WireResponse {
        let withIds = !request.flag("disable_uuids", default: false)
        let withState = request.flag("state", default: false)
        let limit = min(max(request.int("limit") ?? 1000, 0), 1000)
        let offset = max(request.int("offset") ?? 0, 0)
        func entry(_ channel: String) -> (occupancy: Int, uuids: [JSONValue]) {
            let users = (occupants[channel] ?? [:]).keys.sorted()
            let page = users.dropFirst(offset).prefix(limit)
            let uuids: [JSONValue] = page.map { uuid in
                guard withState else { return .string(uuid) }
                var object: [String: JSONValue] = ["uuid": .string(uuid)]
                if let state = presenceStates[channel]?[uuid] { object["state"] = state }
                return .object(object)
            }
            return (users.count, uuids)
        }
        if let channels, channels.count == 1, request.queryValue("channel-group") == nil, let channel = channels.first {
            let (occupancy, uuids) = entry(channel)
            var body: [String: JSONValue] = ["status": 200, "message": "OK", "service": "Presence", "occupancy": .int(Int64(occupancy))]
            if withIds { body["uuids"] = .array(uuids) }
            return Reply.json(200, .object(body))
        }
        let names = channels ?? occupants.keys.sorted()
        var result: [String: JSONValue] = [:]
        var total = 0
        for channel in names {
            let (occupancy, uuids) = entry(channel)
            if channels == nil && occupancy == 0 { continue }
            total += occupancy
            var object: [String: JSONValue] = ["occupancy": .int(Int64(occupancy))]
            if withIds { object["uuids"] = .array(uuids) }
            result[channel] = .object(object)
        }
        return Reply.json(200, [
            "status": 200, "message": "OK", "service": "Presence",
            "payload": ["channels": .object(result), "total_channels": .int(Int64(result.count)), "total_occupancy": .int(Int64(total))],
        ])
    }

    /// The `state` query parameter.
    enum StateParameter {
        case absent
        case invalid
        case object([String: JSONValue])
    }

    static func stateParameter(_ request: WireRequest) -> StateParameter {
        guard let text = request.queryValue("state") else { return .absent }
        guard let object = (try? JSONValue(jsonData: Data(text.utf8)))?.objectValue else { return .invalid }
        return .object(object)
    }
}

extension Reply {
    static func presenceError(_ status: Int, _ message: String) -> WireResponse {
        json(status, ["status": .int(Int64(status)), "error": 1, "message": .string(message), "service": "Presence"])
    }
}
