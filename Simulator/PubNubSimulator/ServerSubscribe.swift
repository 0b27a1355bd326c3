import Foundation
import PubNubWire
import ReplicaModel

/// One event the simulator delivers to subscribers: an envelope of a subscribe answer (`m[]`).
struct LiveEvent: Sendable {
    var timetoken: UInt64
    var channel: String
    /// The whole envelope, `p` and `c` included, encoded once when the event happens (every
    /// answer that carries it copies these bytes).
    var envelope: Data
    /// A burst signal of ``Fault/bufferOverflow`` (not counted as a lost event when dropped).
    var isNoise = false
}

/// How the simulator's subscribe endpoint behaves: PubNub's real rules with the hold time
/// configurable (short in tests). See `docs/simulator.md`, "Subscribe".
public struct SubscribeSettings: Sendable, Hashable {
    /// How long an idle long poll is held before an empty answer; PubNub holds about 280 s.
    /// Zero answers at once (tests that step a client by hand). Timed by ``holdClock``.
    public var hold: Duration = .seconds(280)
    /// Which clock times ``hold``: real time by default (a client over HTTP waits for real), or
    /// the server's own clock (``PubNubServer/clock``), so that a test on a virtual clock ends
    /// a hold by advancing it instead of waiting.
    public var holdClock: HoldClock = .realTime
    /// Events a connection's buffer keeps (shared by all its channels); the oldest are dropped
    /// silently beyond it. PubNub's default is 100.
    public var bufferSize = 100
    /// How long an event stays in the buffer, on the server's clock: 20 minutes.
    public var retention: TimeInterval = 1200
    /// The region the server answers from (`t.r`, `p.r`).
    public var region = 12

    /// PubNub's rules.
    public init() {}

    /// PubNub's rules with another hold time, timed by `holdClock`.
    ///
    /// ```swift
    /// // A hold that ends when the test advances the server's VirtualClock by 280 s.
    /// await server.configureSubscribe(SubscribeSettings(hold: .seconds(280), holdClock: .server))
    /// ```
    public init(hold: Duration, holdClock: HoldClock = .realTime) {
        self.hold = hold
        self.holdClock = holdClock
    }

    /// The clock a long poll's hold is timed on.
    public enum HoldClock: Sendable, Hashable {
        /// Real time (`ContinuousClock`).
        case realTime
        /// The server's clock (``PubNubServer/clock``).
        case server
    }
}

/// When a held long poll gives up, on the clock ``SubscribeSettings/holdClock`` names.
enum HoldDeadline: Sendable {
    case realTime(ContinuousClock.Instant)
    case server(any ReplicaClock, Date)

    init(after hold: Duration, on holdClock: SubscribeSettings.HoldClock, server clock: any ReplicaClock) {
        switch holdClock {
        case .realTime: self = .realTime(ContinuousClock.now + hold)
        case .server:
            self = .server(clock, clock.now.addingTimeInterval(hold / .seconds(1)))
        }
    }

    var hasPassed: Bool {
        switch self {
        case .realTime(let deadline): ContinuousClock.now >= deadline
        case .server(let clock, let deadline): clock.now >= deadline
        }
    }

    /// Returns once the deadline has passed (or the task is cancelled).
    func sleep() async {
        switch self {
        case .realTime(let deadline): try? await Task.sleep(until: deadline, clock: .continuous)
        case .server(let clock, let deadline): try? await clock.sleep(until: deadline)
        }
    }
}

extension PubNubServer {
    // MARK: Emitting events

    /// Records an event for subscribers of `channel` and wakes the long polls waiting.
    func emit(channel: String, timetoken: UInt64, kind: Int?, publisher: String?, payload: JSONValue,
              meta: JSONValue? = nil, customMessageType: String? = nil, isNoise: Bool = false) {
        // No connection, no buffer: until a first subscribe arrives nothing is kept (and a
        // server nobody subscribes to does no extra work per change).
        guard hasSubscribers else { return }
        var envelope: [String: JSONValue] = [
            "a": "1", "f": 0, "k": .string(subscribeKey), "c": .string(channel), "b": .string(channel), "d": payload,
            "p": ["t": .string(String(timetoken)), "r": .int(Int64(subscribeSettings.region))],
        ]
        if let kind { envelope["e"] = .int(Int64(kind)) }
        if let publisher { envelope["i"] = .string(publisher) }
        if let meta { envelope["u"] = meta }
        if let customMessageType { envelope["cmt"] = .string(customMessageType) }
        let bytes = (try? JSONValue.object(envelope).jsonData()) ?? Data("{}".utf8)
        liveEvents.append(LiveEvent(timetoken: timetoken, channel: channel, envelope: bytes, isNoise: isNoise))
        pruneLiveEvents()
        let waiting = pollWaiters
        pollWaiters = [:]
        for continuation in waiting.values { continuation.resume() }
    }

    /// Drops events past the retention, and the oldest beyond a memory bound (a clock that
    /// never moves would otherwise keep them all).
    private func pruneLiveEvents() {
        let floor = retentionFloor
        if let first = liveEvents.firstIndex(where: { $0.timetoken >= floor }), first > 0 {
            liveEvents.removeFirst(first)
        } else if liveEvents.last.map({ $0.timetoken < floor }) == true {
            liveEvents.removeAll()
        }
        if liveEvents.count > 200_000 { liveEvents.removeFirst(liveEvents.count - 200_000) }
    }

    /// The oldest timetoken still in any buffer.
    private var retentionFloor: UInt64 {
        let now = timetokens.now
        let span = UInt64(max(0, min(subscribeSettings.retention, 1e9)) * 10_000_000)
        return now > span ? now - span : 0
    }

    /// A user or channel `set` event: only the fields that changed (all set fields for a new
    /// object), with `id`, `updated` and `eTag`, on the object's own channel.
    func emitObjectSet(kind: ObjectKind, old: StoredObject?, new object: StoredObject) {
        var data: [String: JSONValue] = ["id": .string(object.id), "updated": .string(object.updated), "eTag": .string(object.eTag)]
        for field in kind.fields {
            let before = old?.fields[field] ?? .null, after = object.fields[field] ?? .null
            if before != after { data[field] = after }
        }
        let payload: JSONValue = [
            "source": "objects", "version": "2.0", "event": "set", "type": .string(kind == .user ? "uuid" : "channel"),
            "data": .object(data),
        ]
        // The change took the last timetoken (its `updated`): the event shares it.
        emit(channel: object.id, timetoken: timetokens.last, kind: 2, publisher: nil, payload: payload)
    }

    /// A user or channel `delete` event.
    func emitObjectDelete(kind: ObjectKind, id: String) {
        let payload: JSONValue = [
            "source": "objects", "version": "2.0", "event": "delete", "type": .string(kind == .user ? "uuid" : "channel"),
            "data": ["id": .string(id)],
        ]
        emit(channel: id, timetoken: timetokens.next(), kind: 2, publisher: nil, payload: payload)
    }

    /// A membership `set` (all its fields: `custom`, `status`, `type`) or `delete` event, on the
    /// user's channel and on the channel, as PubNub delivers them.
    func emitMembership(user: String, channel: String, membership: StoredMembership?, updated: String?, eTag: String?) {
        // A set took the last timetoken (its `updated`) and shares it; a removal takes its own.
        let timetoken = membership == nil ? timetokens.next() : timetokens.last
        var data: [String: JSONValue] = [
            "uuid": ["id": .string(user)], "channel": ["id": .string(channel)],
            "updated": .string(updated ?? TimetokenClock.iso(timetoken)),
        ]
        if let eTag { data["eTag"] = .string(eTag) }
        if let membership {
            data["custom"] = membership.custom
            data["status"] = membership.status
            data["type"] = membership.type
        }
        let payload: JSONValue = [
            "source": "objects", "version": "2.0", "event": .string(membership == nil ? "delete" : "set"), "type": "membership",
            "data": .object(data),
        ]
        for target in Set([user, channel]).sorted() {
            emit(channel: target, timetoken: timetoken, kind: 2, publisher: nil, payload: payload)
        }
    }

    /// A message action event on the message's channel, `i` = the actor.
    func emitAction(_ action: StoredAction, channel: String, added: Bool) {
        let payload: JSONValue = [
            "source": "actions", "version": "1.0", "event": .string(added ? "added" : "removed"),
            "data": [
                "type": .string(action.type), "value": .string(action.value),
                "messageTimetoken": .string(String(action.messageTimetoken)),
                "actionTimetoken": .string(String(action.actionTimetoken)),
            ],
        ]
        // An added action's event shares its action timetoken; a removal takes its own.
        emit(channel: channel, timetoken: added ? action.actionTimetoken : timetokens.next(), kind: 3, publisher: action.uuid,
             payload: payload)
    }

    // MARK: Signals

    /// `GET /signal/{pub}/{sub}/0/{channel}/0/{json}`: delivered to subscribers (`e: 1`), never stored.
    func signal(_ request: WireRequest) -> WireResponse {
        let s = request.pathSegments
        let now = timetokens.now
        guard s.count == 7, s[1] == publishKey, s[2] == subscribeKey else { return Reply.publishError(400, "Invalid Key", timetoken: now) }
        guard let message = try? JSONValue(jsonData: Data(s[6].utf8)) else {
            return Reply.publishError(400, "Invalid JSON", timetoken: now)
        }
        if s[6].utf8.count > 64 { return Reply.publishError(400, "Signal size too large", timetoken: now) }
        let timetoken = timetokens.next()
        emit(channel: s[4], timetoken: timetoken, kind: 1, publisher: request.actor, payload: message,
             customMessageType: request.queryValue("custom_message_type"))
        return Reply.json(200, [1, "Sent", .string(String(timetoken))], contentType: Reply.javascript)
    }

    // MARK: Subscribe

    /// What a subscribe request meets besides a clean answer.
    enum SubscribeFault {
        case none
        /// The server forgot the cursor: it answers from another region with its current
        /// cursor and no events (the events in between are lost to this connection).
        case staleCursor
        /// A burst of signals fills the connection's buffer just before the answer, so that the
        /// oldest pending events are dropped.
        case bufferOverflow
    }

    /// `GET /v2/subscribe/{sub}/{channels}/0`: a handshake (`tt` 0 or absent) answers at once
    /// with the current cursor; a receive answers with the buffered events newer than `tt` on the
    /// channels, holding an idle request up to ``SubscribeSettings/hold``.
    func subscribe(_ request: WireRequest, fault: SubscribeFault = .none) async -> WireResponse {
        let s = request.pathSegments
        guard s.count == 5, s[4] == "0" else { return Reply.notFound() }
        guard s[2] == subscribeKey else { return Reply.subscribeError(400, "Invalid Subscribe Key") }
        // The channels named, and those the channel groups cover (their events carry the
        // channel in `c`; `b` is the channel too here, not the group: docs/simulator.md).
        let channels = Set(s[3].split(separator: ",").map(String.init)).subtracting([""])
            .union(channels(inGroups: request.queryValue("channel-group")))
        guard !channels.isEmpty || request.queryValue("channel-group") != nil else {
            return Reply.subscribeError(400, "Invalid Arguments: no channels")
        }
        hasSubscribers = true
        // A subscribe is a heartbeat: the subscriber is present on its channels (not on `-pnpres`).
        var state: [String: JSONValue]?
        switch Self.stateParameter(request) {
        case .absent: state = nil
        case .invalid: return Reply.subscribeError(400, "Invalid JSON in state")
        case .object(let object): state = object
        }
        let tt: UInt64
        if let text = request.queryValue("tt") {
            guard let value = UInt64(text) else { return Reply.subscribeError(400, "Invalid Timetoken") }
            tt = value
        } else {
            tt = 0
        }
        let region = subscribeSettings.region
        // A wildcard (`poll.*`) is no channel one is present in.
        let present = channels.filter { !Self.isWildcard($0) }.sorted()
        if tt == 0 {
            // The handshake's cursor comes before the subscriber's own join, so that its first
            // long poll hears the join, as on PubNub.
            let cursor = currentCursor(after: 0)
            touchPresence(channels: present, uuid: request.actor, timeout: request.int("heartbeat"), state: state)
            return Reply.subscribeAnswer(timetoken: cursor, region: region, events: [])
        }
        touchPresence(channels: present, uuid: request.actor, timeout: request.int("heartbeat"), state: state)
        switch fault {
        case .none: break
        case .staleCursor:
            return Reply.subscribeAnswer(timetoken: currentCursor(after: tt), region: region + 1, events: [])
        case .bufferOverflow:
            if let channel = channels.sorted().first {
                for index in 0..<subscribeSettings.bufferSize {
                    emit(channel: channel, timetoken: timetokens.next(), kind: 1, publisher: "pn-simulator-burst",
                         payload: ["burst": .int(Int64(index))], isNoise: true)
                }
            }
        }
        var events = pending(after: tt, channels: channels)
        if events.isEmpty && subscribeSettings.hold > .zero && !closing {
            let deadline = HoldDeadline(after: subscribeSettings.hold, on: subscribeSettings.holdClock, server: clock)
            while events.isEmpty, !deadline.hasPassed, !Task.isCancelled, !closing {
                await waitForEvent(until: deadline)
                events = pending(after: tt, channels: channels)
            }
        }
        let kept = Array(events.suffix(subscribeSettings.bufferSize))
        let dropped = events.dropLast(kept.count).filter { !$0.isNoise }.count
        if dropped > 0 { bufferDrops += dropped }
        return Reply.subscribeAnswer(timetoken: currentCursor(after: tt), region: region, events: kept.map(\.envelope))
    }

    /// The cursor of an answer: the server's present, never before `tt` nor any event handed out.
    private func currentCursor(after tt: UInt64) -> UInt64 { max(timetokens.cursor(), tt) }

    /// Buffered events newer than `tt` on `channels`, oldest first, within the retention. A
    /// wildcard channel (`poll.*`) takes every channel under its prefix (`poll.1`, `poll.1.a`);
    /// an event it alone matched carries it as `b`, as PubNub's do (the recording
    /// `datasync_events-03`: `"b":"animal.*"`).
    private func pending(after tt: UInt64, channels: Set<String>) -> [LiveEvent] {
        let floor = max(tt &+ 1, retentionFloor)
        var low = 0, high = liveEvents.count
        while low < high {
            let mid = (low + high) / 2
            if liveEvents[mid].timetoken < floor { low = mid + 1 } else { high = mid }
        }
        let wildcards = channels.filter(Self.isWildcard).sorted()
        guard !wildcards.isEmpty else { return liveEvents[low...].filter { channels.contains($0.channel) } }
        return liveEvents[low...].compactMap { event in
            if channels.contains(event.channel) { return event }
            // Presence under a wildcard needs its own subscription (`poll.1-pnpres`).
            guard !event.channel.hasSuffix("-pnpres"),
                  let wildcard = wildcards.first(where: { event.channel.hasPrefix($0.dropLast()) }) else { return nil }
            var matched = event
            if case .object(var envelope)? = JSONValue.parse(event.envelope) {
                envelope["b"] = .string(wildcard)
                matched.envelope = (try? JSONValue.object(envelope).jsonData()) ?? event.envelope
            }
            return matched
        }
    }

    /// Whether `channel` is a wildcard (`poll.*`): events of the channels under it, no presence
    /// of its own.
    static func isWildcard(_ channel: String) -> Bool { channel.count > 2 && channel.hasSuffix(".*") }

    /// Suspends until an event is emitted, `deadline` passes or the task is cancelled.
    private func waitForEvent(until deadline: HoldDeadline) async {
        waiterCounter += 1
        let id = waiterCounter
        let timer = Task { [weak self] in
            await deadline.sleep()
            await self?.wake(id)
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in pollWaiters[id] = continuation }
        } onCancel: {
            Task { [weak self] in await self?.wake(id) }
        }
        timer.cancel()
    }

    /// Answers every held long poll now, and every later one at once: the server is stopping
    /// (a graceful shutdown would otherwise wait out each hold, up to 280 s).
    public func releaseHeldPolls() {
        closing = true
        let waiting = pollWaiters
        pollWaiters = [:]
        for continuation in waiting.values { continuation.resume() }
    }

    /// Long polls waiting at the server for an event (tests wait for one before publishing).
    public var waitingPolls: Int { pollWaiters.count }

    private func wake(_ id: UInt64) {
        pollWaiters.removeValue(forKey: id)?.resume()
    }
}

extension Reply {
    /// `{"t":{"t":"<tt>","r":<region>},"m":[<envelopes>]}`, the envelopes' bytes copied as encoded.
    static func subscribeAnswer(timetoken: UInt64, region: Int, events: [Data]) -> WireResponse {
        var body = Data(#"{"t":{"t":"\#(timetoken)","r":\#(region)},"m":["#.utf8)
        body.reserveCapacity(body.count + events.reduce(2) { $0 + $1.count + 1 })
        for (index, event) in events.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(event)
        }
        body.append(contentsOf: Array("]}".utf8))
        return WireResponse(status: 200, headers: ["Content-Type": javascript], body: body)
    }

    static func subscribeError(_ status: Int, _ message: String) -> WireResponse {
        json(status, ["status": .int(Int64(status)), "error": true, "service": "Balancer", "message": .string(message)])
    }
}
