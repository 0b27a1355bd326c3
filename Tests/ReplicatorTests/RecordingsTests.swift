/// Every answer in `../shared/recordings/` decodes and lands with its fields.
///
/// The recordings are PubNub's own answers (the Python and Ruby SDKs' cassettes of the real server,
/// the Swift SDK's mocks). Each is fed, status and body, to the real ``PubNubClient`` call of its
/// family: an error status must come back as a typed service error with that status, a 2xx must
/// decode unless PubNub's rules make it unreadable (then a typed decoding error). The data families
/// are then applied through the replicator's own paths, and each field the server gave is read back
/// from the store and compared with the recording's raw JSON (never with the decoder's output).
/// The folder is `../shared/recordings` from the package root; without it the suite passes quietly,
/// except under CI (`CI` set), where a missing folder fails.
import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
@testable import Replicator
import Testing

/// The recordings' families: a recording of a family not listed here fails the suite.
enum RecordingFamily: String, CaseIterable, Sendable {
    case subscribe = "subscribe_v2", historyV3 = "history_v3", historyWithActions = "history_with_actions"
    case historyV2 = "history_v2", users = "objects_users", channels = "objects_channels"
    case members = "objects_members", memberships = "objects_memberships", messageActions = "message_actions"
    case hereNow = "here_now", whereNow = "where_now", presenceState = "presence_state", heartbeat, leave, signal
    case publish, time, messageCounts = "message_counts", deleteMessages = "delete_messages", errors = "errors_generic"
}

/// One recorded answer, as `../shared/recordings/<id>.json` holds it.
struct RecordedAnswer: Decodable, Sendable {
    let id: String
    let family: String
    let method: String
    let requestPath: String?
    let status: Int
    let body: String

    /// The 2xx recordings whose body is JSON that this client cannot read, and why.
    static let undecodable: [String: String] = [
        // Answers to requests without `include_token`, which this client always sends: a message
        // without a timetoken has no place in a replica.
        "history_v2-00": "a v2 page of bare payloads, without timetokens",
        "history_v2-01": "a v2 page of bare payloads, without timetokens",
        "history_v2-04": "a v2 page whose entry has no timetoken",
        // A subscribe answer always carries the cursor `t`; `null` leaves nothing to continue from.
        "subscribe_v2-35": "a subscribe answer of `null`",
    ]

    var json: JSONValue? { JSONValue.parse(Data(body.utf8)) }
    /// The request path's segments, percent-decoded (`channel%7Cencoded::1` is `channel|encoded::1`).
    var path: [String] {
        (requestPath ?? "").split(separator: "/").map { PercentEncoding.decode(String($0)) ?? String($0) }
    }
    /// The path segment after `name` (`channel`, `uuids`, `channels`, `uuid`, `message`).
    func segment(after name: String) -> String? {
        guard let index = path.firstIndex(of: name), index + 1 < path.count else { return nil }
        return path[index + 1]
    }
    /// The channels the path names after `name`, or `fallback` (the mocks have no path).
    func channels(after name: String = "channel", or fallback: String = "TestChannel") -> [String] {
        let named = segment(after: name)?.split(separator: ",").map(String.init) ?? []
        return named.isEmpty ? [fallback] : named
    }
    /// The `data` of an App Context or message action answer, as a list of objects.
    var dataObjects: [[String: JSONValue]] {
        switch json?.objectValue?["data"] {
        case .array(let items)?: items.compactMap(\.objectValue)
        case .object(let object)?: [object]
        default: []
        }
    }

    enum Verb { case list, get, set, remove }
    /// What the request did: from its method and path, or for a mock from the shape of its `data`.
    var verb: Verb {
        switch (method, json?.objectValue?["data"]) {
        case ("PATCH", _), ("POST", _): .set
        case ("DELETE", _): .remove
        case ("GET", _): path.count >= 2 && ["uuids", "channels"].contains(path[path.count - 2]) ? .get : .list
        case (_, .object?): .get
        case (_, nil) where status == 207: .remove
        default: .list
        }
    }
}

/// A message as a recording gives it: a history entry, or a subscribe envelope (`live`), read raw.
struct RawMessage {
    var timetoken: Timetoken?, publisher: String?, meta: JSONValue?, customMessageType: String?, payload: JSONValue?

    init(_ e: [String: JSONValue], live: Bool) {
        timetoken = RecordingsTests.timetoken(live ? e["p"]?.objectValue?["t"] : e["timetoken"])
        publisher = e[live ? "i" : "uuid"]?.stringValue
        meta = e[live ? "u" : "meta"].flatMap { $0 == .null || $0 == .string("") ? JSONValue?.none : $0 }  // "" is no meta
        customMessageType = e[live ? "cmt" : "custom_message_type"]?.stringValue
        payload = e[live ? "d" : "message"]
    }
}

/// Answers every request with one recording.
struct RecordedTransport: Transport {
    let answer: RecordedAnswer
    func send(_ request: WireRequest, to origin: Origin) async throws(TransportFailure) -> WireResponse {
        WireResponse(status: answer.status, headers: ["Content-Type": "application/json"], body: Data(answer.body.utf8))
    }
}

@Suite("Recorded PubNub answers decode and land with their fields")
struct RecordingsTests {
    typealias Custom = DefaultChatCustom

    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("../shared/recordings").standardizedFileURL

    /// The recordings, without `index.json`; nil when the folder is missing, which fails under CI.
    static func recordings() throws -> [RecordedAnswer]? {
        guard let files = try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil) else {
            if ProcessInfo.processInfo.environment["CI"] != nil { Issue.record("no recordings at \(folder.path)") }
            return nil
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try files.filter { $0.pathExtension == "json" && $0.lastPathComponent != "index.json" }
            .map { try decoder.decode(RecordedAnswer.self, from: Data(contentsOf: $0)) }.sorted { $0.id < $1.id }
    }

    /// The family tests below exercise every recording of each family (each asserts so): together,
    /// every file of the folder but `index.json`. A new family fails here until it has its checks.
    @Test("the families' recordings are every file of the folder but index.json")
    func everyFileIsExercised() throws {
        guard let recordings = try Self.recordings() else { return }
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path).filter { $0.hasSuffix(".json") }
        let exercised = RecordingFamily.allCases.map { family in recordings.filter { $0.family == family.rawValue }.count }
        let unknown = Set(recordings.map(\.family)).subtracting(RecordingFamily.allCases.map(\.rawValue))
        #expect(exercised.reduce(0, +) == files.count - 1 && !recordings.isEmpty, "families without checks: \(unknown.sorted())")
    }

    @Test("every answer of the family decodes and lands with its fields", arguments: RecordingFamily.allCases)
    func family(_ family: RecordingFamily) async throws {
        guard let recordings = try Self.recordings()?.filter({ $0.family == family.rawValue }) else { return }
        var exercised = 0
        for recording in recordings {
            do {
                try await Self.exercise(recording, as: family, Replay(recording))
                exercised += 1
            } catch {
                Issue.record("\(recording.id): \(error)")
            }
        }
        #expect(exercised == recordings.count && exercised > 0, "\(exercised) of \(recordings.count) exercised")
    }

    /// A fresh store, and a reconciler whose client hears the recording whatever it asks.
    struct Replay {
        let store: ChatStore<Custom>
        let reconciler: Reconciler<Custom>
        init(_ recording: RecordedAnswer) throws {
            store = try ChatStore.open(at: SimulatedDevice<Custom>.temporaryStorePath())
            let client = try PubNubClient.simulated(RecordedTransport(answer: recording), userId: "me")
            reconciler = Reconciler(store: store, client: client, clock: VirtualClock(), random: SplitMix64(seed: 1))
        }
    }

    static func exercise(_ r: RecordedAnswer, as family: RecordingFamily, _ replay: Replay) async throws {
        let client = replay.reconciler.client
        switch family {
        case .historyV3, .historyWithActions:
            let query = HistoryQuery(channels: family == .historyV3 ? r.channels() : [r.channels()[0]])
            guard let page = await answer(r, { () async throws(WireError) -> HistoryPage in
                try await (family == .historyV3 ? client.history.fetchHistory(query) : client.history.fetchHistoryWithActions(query))
            }) else { return }
            let raw = r.json?.objectValue?["channels"]?.objectValue ?? [:]
            #expect(Set(page.channels.keys) == Set(raw.keys.map { PercentEncoding.decode($0) ?? $0 }), "\(r.id)")
            for (key, entries) in raw {
                let channel = PercentEncoding.decode(key) ?? key
                try await landHistory(r, page.channels[channel] ?? [], raw: entries.arrayValue ?? [], channel: channel, replay)
            }
        case .historyV2:
            let channel = r.channels()[0]
            let query = LegacyHistoryQuery(channel: channel)
            guard let page = await answer(r, { try await client.history.fetchLegacyHistory(query) }) else { return }
            let entries = page.messages.map { HistoryMessage(message: $0.message, timetoken: $0.timetoken, meta: $0.meta) }
            try await landHistory(r, entries, raw: r.json?.arrayValue?.first?.arrayValue ?? [], channel: channel, replay)
        case .subscribe:
            let named = r.path.count > 3 ? r.path[3].split(separator: ",").map(String.init) : []
            let request = SubscribeRequest(
                channels: named.isEmpty ? ["TestChannel"] : named, cursor: SubscribeCursor(timetoken: 1, region: 0))
            guard let live = await answer(r, { try await client.subscribe(request) }) else { return }
            try await landLive(r, live, replay)
        case .users, .channels: try await landObjects(r, family, replay)
        case .members, .memberships: try await landMemberships(r, family, replay)
        case .messageActions:
            let channel = r.channels()[0]
            let tt = r.segment(after: "message").flatMap { try? Timetoken(parsing: $0) } ?? 1
            let actions: [WireMessageAction]? = switch r.verb {
            case .list: await answer(r, { try await client.messageActions.listMessageActions(channel: channel) })?.data
            case .get, .set:
                await answer(r) {
                    try await client.messageActions.addMessageAction(channel: channel, messageTimetoken: tt, type: "reaction", value: "smile")
                }.map { [$0] }
            case .remove:
                await answer(r, readsBody: false) {
                    try await client.messageActions.removeMessageAction(channel: channel, messageTimetoken: tt, actionTimetoken: 2)
                }.map { [] }
            }
            try await landActions(r, actions ?? [], channel: channel, replay)
        default: try await decode(r, family, client)
        }
    }

    /// The families that leave nothing in the store: their answers decode to the recorded values.
    static func decode(_ r: RecordedAnswer, _ family: RecordingFamily, _ client: PubNubClient) async throws {
        let top = r.json?.objectValue, payload = top?["payload"]
        switch family {
        case .hereNow:
            // No channel in a real path is a global here-now; the mocks answer about TestChannel.
            let channels = r.requestPath == nil ? ["TestChannel"] : r.segment(after: "channel").map { _ in r.channels() } ?? []
            guard let present = await answer(r, { try await client.presence.hereNow(HereNowRequest(channels: channels)) }) else { return }
            #expect(payload?.objectValue?["total_occupancy"] ?? top?["occupancy"] == .int(Int64(present.totalOccupancy)), "\(r.id)")
        case .whereNow:
            let channels = await answer(r, { try await client.presence.whereNow(userId: r.segment(after: "uuid") ?? "me") })
            #expect(channels == nil || channels == payload?.objectValue?["channels"]?.arrayValue?.compactMap(\.stringValue), "\(r.id)")
        case .presenceState where r.path.last == "data":
            let channels = r.channels(or: "channelSwift")
            let state = await answer(r, { try await client.presence.setPresenceState(["some": "state"], channels: channels) })
            #expect(state == nil || state == payload, "\(r.id)")
        case .presenceState:
            let user = r.segment(after: "uuid") ?? "me", channels = r.channels(or: "channelSwift")
            _ = await answer(r, { try await client.presence.presenceState(userId: user, channels: channels) })
        // These calls use nothing of a 2xx but its status.
        case .heartbeat: _ = await answer(r, readsBody: false) { try await client.presence.heartbeat(channels: r.channels()) }
        case .leave: _ = await answer(r, readsBody: false) { try await client.presence.leave(channels: r.channels()) }
        case .deleteMessages: _ = await answer(r, readsBody: false) { try await client.history.deleteMessages(channel: r.channels()[0]) }
        case .signal, .publish, .time:
            guard let sent = await answer(r, { () async throws(WireError) -> Timetoken in
                switch family {
                case .signal: try await client.signal(SignalRequest(channel: "TestChannel", message: "hey"))
                case .publish: try await client.publish(PublishRequest(channel: "TestChannel", message: "hey"))
                default: try await client.time()
                }
            }) else { return }
            let raw = r.json?.arrayValue ?? [], index = family == .time ? 0 : 2
            #expect(sent == (raw.indices.contains(index) ? timetoken(raw[index]) : nil), "\(r.id)")
        case .messageCounts:
            let channels = r.channels(after: "message-counts")
            let counts = await answer(r, { try await client.history.messageCounts(channels: channels, since: [Timetoken(rawValue: 1)]) })
            #expect(counts == nil || counts?.mapValues { JSONValue.int(Int64($0)) } == top?["channels"]?.objectValue, "\(r.id)")
        default:
            _ = await answer(r, { try await client.history.fetchHistory(HistoryQuery(channels: ["TestChannel"])) })
        }
    }

    /// The client's answer to `r`, checked: an error status must be a typed service error with that
    /// status; a 2xx must decode unless PubNub's rules make it unreadable, then it must be a typed
    /// decoding error. `readsBody: false` is for calls that use nothing of a 2xx but its status.
    static func answer<T>(_ r: RecordedAnswer, readsBody: Bool = true, _ call: () async throws -> T) async -> T? {
        let unreadable = readsBody ? RecordedAnswer.undecodable[r.id] ?? (r.json == nil ? "the cassette cut the body short" : nil) : nil
        do {
            let value = try await call()
            if r.status >= 300 { Issue.record("\(r.id): HTTP \(r.status) came back as a success") }
            if let unreadable { Issue.record("\(r.id): decoded although it is \(unreadable)") }
            return value
        } catch WireError.service(let error) where r.status >= 300 {
            #expect(error.status == r.status && !error.message.isEmpty, "\(r.id): \(error)")
        } catch WireError.decoding(_, let status, _) where r.status < 300 && unreadable != nil {
            #expect(status == r.status, "\(r.id)")
        } catch {
            Issue.record("\(r.id): \(error)")
        }
        return nil
    }

    // MARK: Landing

    /// Applies one channel's history entries as a pull does, then finds each raw entry stored. Ids
    /// the server gives are stored as given (`channel|encoded::1`): the stricter rules are for local writes.
    static func landHistory(
        _ r: RecordedAnswer, _ entries: [HistoryMessage], raw: [JSONValue], channel: String, _ replay: Replay
    ) async throws {
        #expect(entries.count == raw.count, "\(r.id): \(entries.count) of \(raw.count) entries decoded")
        let messages = try entries.map { try HistorySync<Custom>.message($0, channel: channel) }
        _ = try await replay.reconciler.history.applyHistoryPage(messages, checkpoint: nil)
        // A v2 entry keeps an empty meta for the reconciler to drop (v3 and live decoders drop it themselves).
        try await expectStored(raw.map { RawMessage($0.objectValue ?? [:], live: false) }, channel: channel, r, replay.store)
    }

    /// Applies a subscribe answer as live sync does: each envelope is applied or deliberately
    /// ignored, none skipped; messages and App Context changes are then found stored.
    static func landLive(_ r: RecordedAnswer, _ live: SubscribeAnswer, _ replay: Replay) async throws {
        let result = try await replay.reconciler.live.applyLive(live.envelopes, advancing: [], through: nil)
        #expect(result.unreadableChannels.isEmpty, "\(r.id)")
        for record in result.applied {
            #expect(record.kind != "unreadable" && !record.outcome.hasPrefix("skipped"), "\(r.id): \(record)")
        }
        let raws = (r.json?.objectValue?["m"]?.arrayValue ?? []).map { $0.objectValue ?? [:] }
        #expect(raws.count == live.envelopes.count, "\(r.id)")
        let store = replay.store, queries = store.queries
        var messages: [String: [RawMessage]] = [:]
        for (envelope, raw) in zip(live.envelopes, raws) {
            let data = raw["d"]?.objectValue?["data"]?.objectValue ?? [:], what = "\(r.id) \(envelope.channel)"
            switch envelope.event {
            case .message, .file: messages[envelope.channel, default: []].append(RawMessage(raw, live: true))
            case .appContext(.userSet(let id, _, _, _)):
                expectFields(data, stored: try await store.fetch(queries.user(id: id)).map(wire), versioned: false, what)
            case .appContext(.channelSet(let id, _, _, _)):
                expectFields(data, stored: try await store.fetch(queries.channel(id: id)).map(wire), versioned: false, what)
            case .appContext(.membershipSet(let channel, let user, _, _, _)):
                expectFields(data, stored: try await store.fetch(queries.member(channelId: channel, userId: user)).map(wire), what)
            case .appContext(.userRemoved(let id)): #expect(try await store.fetch(queries.user(id: id)) == nil, "\(what)")
            case .appContext(.channelRemoved(let id)): #expect(try await store.fetch(queries.channel(id: id)) == nil, "\(what)")
            case .appContext(.membershipRemoved(let channel, let user)):
                #expect(try await store.fetch(queries.member(channelId: channel, userId: user)) == nil, "\(what)")
            default: break
            }
        }
        for (channel, raws) in messages { try await expectStored(raws, channel: channel, r, store) }
    }

    /// Decodes users or channels with the call the recording answered, stores them as a listing
    /// pull does, and finds each raw object stored with its fields.
    static func landObjects(_ r: RecordedAnswer, _ family: RecordingFamily, _ replay: Replay) async throws {
        let client = replay.reconciler.client, store = replay.store, users = family == .users
        let id = r.segment(after: users ? "uuids" : "channels") ?? "TestObject"
        if users {
            let decoded: [ChatUser<FlatCustom>]? = switch r.verb {
            case .list: await answer(r, { try await client.appContext.listUsers() })?.data
            case .get: await answer(r, { try await client.appContext.getUser(id: id) }).map { [$0] }
            case .set: await answer(r, { try await client.appContext.setUser(id: id, fields: UserEdit<FlatCustom>()) }).map { [$0] }
            case .remove: await answer(r, readsBody: false) { try await client.appContext.removeUser(id: id) }.map { [] }
            }
            _ = try await replay.reconciler.objectSync.applyPulled(users: decoded ?? [])
        } else {
            let decoded: [ChatChannel<FlatCustom>]? = switch r.verb {
            case .list: await answer(r, { try await client.appContext.listChannels() })?.data
            case .get: await answer(r, { try await client.appContext.getChannel(id: id) }).map { [$0] }
            case .set: await answer(r, { try await client.appContext.setChannel(id: id, fields: ChannelEdit<FlatCustom>()) }).map { [$0] }
            case .remove: await answer(r, readsBody: false) { try await client.appContext.removeChannel(id: id) }.map { [] }
            }
            _ = try await replay.reconciler.objectSync.applyPulled(channels: decoded ?? [])
        }
        for raw in r.dataObjects {
            let id = raw["id"]?.stringValue ?? "?"
            let stored = try await (users
                ? store.fetch(store.queries.user(id: id)).map(wire) : store.fetch(store.queries.channel(id: id)).map(wire))
            expectFields(raw, stored: stored, "\(r.id) \(id)")
        }
    }

    /// Decodes a channel's members or a user's memberships, stores them as a membership pull does
    /// (a complete listing of that side), and finds each raw membership stored with its fields.
    static func landMemberships(_ r: RecordedAnswer, _ family: RecordingFamily, _ replay: Replay) async throws {
        let client = replay.reconciler.client, set = r.verb == .set
        let channel = family == .members ? r.segment(after: "channels") ?? "TestChannel" : nil
        let owner = r.segment(after: "uuids") ?? "me"
        let server: [ChatMember<Custom>]?
        if let channel {
            server = try await answer(r, { () async throws(WireError) -> ObjectPage<WireChannelMember<Custom>> in
                try await (set ? client.appContext.setMembers(channelId: channel, set: [], as: Custom.self)
                    : client.appContext.getMembers(channelId: channel, as: Custom.self))
            })?.data.map { try $0.model(channelId: channel) }
        } else {
            server = try await answer(r, { () async throws(WireError) -> ObjectPage<WireMembership<Custom>> in
                try await (set ? client.appContext.setMemberships(userId: owner, set: [], as: Custom.self)
                    : client.appContext.getMemberships(userId: owner, as: Custom.self))
            })?.data.map { try $0.model(userId: owner) }
        }
        let side = channel.map { MembershipSide.channel($0) } ?? .user(owner)
        _ = try await replay.reconciler.objectSync.replaceMemberships(of: side, server: server ?? [])
        for raw in r.dataObjects {
            let other = raw[channel == nil ? "channel" : "uuid"]?.objectValue ?? [:], otherId = other["id"]?.stringValue ?? "?"
            let (channelId, userId) = channel.map { ($0, otherId) } ?? (otherId, owner)
            let member = try await replay.store.fetch(replay.store.queries.member(channelId: channelId, userId: userId))
            expectFields(raw, stored: member.map(wire), "\(r.id) \(channelId)/\(userId)")
            // A whole embedded user or channel (it has an eTag) is stored too, newer version winning.
            guard other["eTag"] != nil else { continue }
            expectFields(other, stored: member.map { channel == nil ? wire($0.channel) : wire($0.user) }, "\(r.id) \(otherId)")
        }
    }

    /// Stores actions as a reaction pull does (`replaceReactions`, on messages stored at their
    /// message timetokens), then finds each raw action stored against its message.
    static func landActions(_ r: RecordedAnswer, _ actions: [WireMessageAction], channel: String, _ replay: Replay) async throws {
        let raws = r.dataObjects, tts = actions.map(\.messageTimetoken)
        guard let oldest = tts.min(), let newest = tts.max(), let last = actions.map(\.actionTimetoken.rawValue).max() else { return }
        #expect(actions.count == raws.count, "\(r.id): \(actions.count) of \(raws.count) actions decoded")
        let seeds = try Set(tts).map { try HistorySync<Custom>.message(HistoryMessage(message: "seed", timetoken: $0), channel: channel) }
        _ = try await replay.reconciler.history.applyHistoryPage(seeds, checkpoint: nil)
        _ = try await replay.reconciler.reactionSync.replaceReactions(
            channel: channel, window: oldest...newest, server: try actions.map { try $0.model(channel: channel) },
            snapshot: Timetoken(rawValue: last + 1), currentUser: "me")
        let store = replay.store
        let stored = try await store.fetch(store.queries.messages(inChannel: channel, includeDeleted: true))
        for raw in raws {
            guard let message = stored.first(where: { $0.timetoken == timetoken(raw["messageTimetoken"]) }) else {
                Issue.record("\(r.id): no message for \(raw)")
                continue
            }
            let kept = try await store.fetch(store.queries.actions(ofMessage: message.id))
            #expect(kept.contains {
                $0.type == raw["type"]?.stringValue && $0.value == raw["value"]?.stringValue
                    && $0.userId == raw["uuid"]?.stringValue && $0.actionTimetoken == timetoken(raw["actionTimetoken"])
            }, "\(r.id): \(raw) is not stored against its message")
        }
    }

    // MARK: Checks

    /// Finds each raw message stored in `channel` at its timetoken, with its publisher (when given),
    /// meta, custom message type and text (a string payload's, or an object payload's string `text`).
    static func expectStored(
        _ raws: [RawMessage], channel: String, _ r: RecordedAnswer, _ store: ChatStore<Custom>
    ) async throws {
        let stored = try await store.fetch(store.queries.messages(inChannel: channel, includeDeleted: true))
        for raw in raws {
            guard let message = stored.first(where: { $0.timetoken == raw.timetoken }) else {
                Issue.record("\(r.id): \(channel) @ \(raw.timetoken?.description ?? "?") was not stored")
                continue
            }
            #expect(message.userId == raw.publisher ?? Reconciler<Custom>.unknownPublisher, "\(r.id): publisher")
            // PubNub's empty-string meta means none: stored as nil (RawMessage reads it so).
            #expect(message.meta == raw.meta, "\(r.id): meta")
            #expect(message.customMessageType == raw.customMessageType, "\(r.id): custom message type")
            if let text = raw.payload?.stringValue ?? raw.payload?.objectValue?["text"]?.stringValue {
                #expect(message.shownText == text, "\(r.id): text")
            }
        }
    }

    /// Checks each field the server gave (`raw`) against the stored object in wire form. Without
    /// `versioned`, `updated` and `eTag` are left out: a live `set` carries only the changed fields,
    /// so the store keeps no version of an object it did not hold whole.
    static func expectFields(_ raw: [String: JSONValue], stored: [String: JSONValue]?, versioned: Bool = true, _ what: String) {
        guard let stored else {
            Issue.record("\(what) was not stored")
            return
        }
        for (key, value) in raw where stored[key] != nil && (versioned || (key != "updated" && key != "eTag")) {
            let expected: JSONValue = switch (key, value) {
            case ("custom", .object(let fields)) where fields.isEmpty: .null
            case ("updated", .string(let text)): (try? ISOTimestamp(parsing: text)).map { .string($0.description) } ?? value
            default: value
            }
            #expect(stored[key] == expected, "\(what): \(key)")
        }
    }

    static func wire(_ user: ChatUser<FlatCustom>) -> [String: JSONValue] {
        ["name": text(user.name), "type": type(user.type), "status": text(user.status), "email": text(user.email),
         "externalId": text(user.externalId), "profileUrl": text(user.profileUrl), "custom": custom(user.custom),
         "updated": text(user.updated?.description), "eTag": text(user.eTag)]
    }

    static func wire(_ channel: ChatChannel<FlatCustom>) -> [String: JSONValue] {
        ["name": text(channel.name), "type": type(channel.type), "status": text(channel.status), "description": text(channel.details),
         "custom": custom(channel.custom), "updated": text(channel.updated?.description), "eTag": text(channel.eTag)]
    }

    static func wire(_ member: ChatMember<Custom>) -> [String: JSONValue] {
        ["type": text(member.type), "status": text(member.status), "custom": custom(member.custom),
         "updated": text(member.updated?.description), "eTag": text(member.eTag)]
    }

    static func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
    /// An absent or `null` type is stored as the default type.
    static func type(_ value: String) -> JSONValue { value == FieldSchema.defaultType ? .null : .string(value) }
    static func custom(_ value: FlatCustom?) -> JSONValue {
        guard let value, !value.values.isEmpty else { return .null }
        return .object(value.values.mapValues(\.jsonValue))
    }

    static func timetoken(_ value: JSONValue?) -> Timetoken? {
        switch value {
        case .string(let text)?: try? Timetoken(parsing: text)
        case .int(let number)? where number >= 0: Timetoken(rawValue: UInt64(number))
        default: nil
        }
    }
}
