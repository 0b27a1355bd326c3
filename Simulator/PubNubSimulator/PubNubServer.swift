import Foundation
import PubNubWire
import ReplicaModel

/// An in-memory PubNub: the REST surface of publish, history, message actions, App Context, time
/// and File Sharing (with an S3-like storage, `FileStorage`), answering with the real status
/// codes, bodies and content types (`docs/protocol.md`, `docs/simulator.md`). Given a secret key,
/// it enforces Access Manager v3: grants, revokes, signatures and tokens
/// (``configureAccess(secretKey:)``).
///
/// The server is pure: ``handle(_:)`` turns a request into a response with no sockets. The HTTP
/// front end and the in-process transport both call it.
public actor PubNubServer {
    /// The keys the server accepts.
    public let publishKey: String
    /// The subscribe key the server accepts.
    public let subscribeKey: String

    /// The server's clock: timetokens and App Context `updated` dates come from it.
    public nonisolated let clock: any ReplicaClock
    var timetokens: TimetokenClock
    var messages: [String: [StoredMessage]] = [:]
    var actions: [String: [StoredAction]] = [:]
    var users: [String: StoredObject] = [:]
    var channels: [String: StoredObject] = [:]
    /// Memberships by user id, then channel id.
    var memberships: [String: [String: StoredMembership]] = [:]
    var eTagCounter: UInt64 = 0
    /// Events for subscribers, oldest first, within the retention (``SubscribeSettings``).
    var liveEvents: [LiveEvent] = []
    var pollWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    var waiterCounter: UInt64 = 0
    /// Whether a subscribe ever arrived: events are kept for subscribers from then on.
    var hasSubscribers = false
    /// Set by ``releaseHeldPolls()``: long polls are no longer held.
    var closing = false
    /// How subscribe behaves (hold time, buffer, retention, region).
    public var subscribeSettings = SubscribeSettings()
    /// Events that a subscribe answer left out because the connection's buffer overflowed
    /// (``SubscribeSettings/bufferSize``): what a client must recover from history.
    public internal(set) var bufferDrops = 0
    /// How presence behaves (timeouts, announce maximum, interval).
    public internal(set) var presenceSettings = PresenceSettings()
    /// Who is present where: channel, then user id.
    var occupants: [String: [String: Occupant]] = [:]
    /// Presence state: channel, then user id.
    var presenceStates: [String: [String: JSONValue]] = [:]
    /// Channels in interval mode with changes not yet announced.
    var intervalChanges: [String: IntervalChanges] = [:]
    /// No presence work (expiry, interval) is due before this timetoken.
    var presenceDue = UInt64.max
    /// How many requests were handled (for fault plans and tests).
    public private(set) var requestCount = 0
    /// The longest request line answered, in bytes (`GET /path?query HTTP/1.1`); a longer one gets
    /// PubNub's 414 (``requestLineLimit``). Nil: no limit.
    public private(set) var maximumRequestLine: Int? = PubNubServer.requestLineLimit
    /// File Sharing: upload forms, stored files and the storage origin (``FileStorage``).
    var fileStorage: FileStorage
    /// Access Manager, when the server has a secret key (``configureAccess(secretKey:)``).
    var access: AccessManager?
    /// Mobile Push: device registrations (``PushRegistry``).
    var push: PushRegistry
    /// Channel groups: each group's channels, in the order added (`ServerChannelGroups.swift`).
    var channelGroups: [String: [String]] = [:]
    /// DataSync: records, classes and their TTLs (``DataSyncService``).
    var dataSync: DataSyncService
    /// The Admin API key set by ``configureAdminKey(_:)``; nil: the secret key is the admin key.
    var configuredAdminKey: String?

    /// A server with the given keys, reading the time from `clock`.
    ///
    /// Pass the clock the replicator under test uses (a `VirtualClock` from
    /// `PubNubSimulatorTesting`) and server timetokens and client retries share one timeline. A
    /// timetoken is the clock's unix time × 10^7, and never less than the last one plus one.
    ///
    /// With a `secretKey`, the server enforces Access Manager (``configureAccess(secretKey:)``);
    /// without one, everything is granted to everyone.
    public init(
        publishKey: String = "demo", subscribeKey: String = "demo", clock: any ReplicaClock = SystemClock(),
        secretKey: String? = nil
    ) {
        self.publishKey = publishKey
        self.subscribeKey = subscribeKey
        self.clock = clock
        self.timetokens = TimetokenClock(clock: clock)
        self.fileStorage = FileStorage(subscribeKey: subscribeKey)
        self.push = PushRegistry(subscribeKey: subscribeKey)
        self.dataSync = DataSyncService(subscribeKey: subscribeKey)
        self.access = secretKey.map { AccessManager(secretKey: $0, publishKey: publishKey, subscribeKey: subscribeKey) }
    }

    /// Changes how subscribe behaves (a test's short hold time, say).
    public func configureSubscribe(_ settings: SubscribeSettings) { subscribeSettings = settings }

    /// The request-line limit by default: 32 KiB, PubNub's documented length of a GET request
    /// ("Length of GET request, including HTTP headers & URI encoding overhead (~32 KiB)",
    /// <https://www.pubnub.com/docs/general/setup/limits>). Past it PubNub's edge answers 414
    /// (`service: "Balancer"`); PubNub gives no exact figure, so this one is a choice, written in
    /// `docs/simulator.md` ("Request-line limit").
    public static let requestLineLimit = 0x8000   // 32 KiB (not the publish limit, which has its own owner)

    /// Changes the longest request line answered (nil: none). A subscribe naming thousands of
    /// channels meets it, as it would at PubNub's edge.
    public func configureRequestLine(maximum bytes: Int?) { maximumRequestLine = bytes }

    /// PubNub's 414 for a request whose request line is longer than ``maximumRequestLine``.
    func requestLineRefusal(_ request: WireRequest) -> WireResponse? {
        guard let maximum = maximumRequestLine else { return nil }
        let query = request.encodedQuery
        // `GET ` + path + `?` + query + ` HTTP/1.1`
        let length = request.method.rawValue.utf8.count + 1 + request.encodedPath.utf8.count
            + (query.isEmpty ? 0 : 1 + query.utf8.count) + 9
        guard length > maximum else { return nil }
        return Reply.subscribeError(414, "Request URI Too Long")
    }

    /// Answers one request, holding a subscribe long poll until events arrive or its hold time
    /// passes. The HTTP front end and the in-process transport call this.
    public func respond(_ request: WireRequest) async -> WireResponse {
        await respond(request, fault: .none)
    }

    /// Answers one request meeting `fault`; only ``Fault/staleCursor`` and
    /// ``Fault/bufferOverflow`` change an answer here, and only a subscribe's.
    func respond(_ request: WireRequest, fault: Fault) async -> WireResponse {
        guard Self.isSubscribe(request) else { return handle(request) }
        requestCount += 1
        if let refusal = requestLineRefusal(request) { return refusal }
        sweepPresence()
        if let refusal = access?.intercept(request, now: clock.now) { return refusal }
        switch fault {
        case .staleCursor: return await subscribe(request, fault: .staleCursor)
        case .bufferOverflow: return await subscribe(request, fault: .bufferOverflow)
        default: return await subscribe(request)
        }
    }

    /// Whether `request` is a subscribe (`/v2/subscribe/...`).
    static func isSubscribe(_ request: WireRequest) -> Bool {
        request.method == .get && request.pathSegments.count >= 2 && request.pathSegments[0] == "v2"
            && request.pathSegments[1] == "subscribe"
    }

    /// Answers one request at once; a subscribe receive is answered without holding it.
    public func handle(_ request: WireRequest) -> WireResponse {
        requestCount += 1
        if let refusal = requestLineRefusal(request) { return refusal }
        sweepPresence()
        if let answer = dataSyncAdmin(request) { return answer }
        if let refusal = dataSyncCredentialRefusal(request) { return refusal }
        if let answer = access?.intercept(request, now: clock.now) { return answer }
        let s = request.pathSegments
        switch (request.method, s.first) {
        case (.get, "time") where s.count == 2:
            return Reply.json(200, .array([.int(Int64(timetokens.next()))]), contentType: Reply.javascript)
        case (_, "publish"):
            return publish(request)
        case (.get, "signal"):
            return signal(request)
        case (.get, "v2") where s.count >= 2 && s[1] == "presence":
            return presence(request)
        case (_, "v3") where s.count >= 6 && s[2] == "sub-key":
            guard s[3] == subscribeKey else { return Reply.historyError(400, "Invalid Subkey") }
            switch (request.method, s[1], s[4]) {
            case (.get, "history", "channel"): return fetchHistory(request, channels: s[5], withActions: false)
            case (.get, "history-with-actions", "channel"): return fetchHistory(request, channels: s[5], withActions: true)
            case (.get, "history", "message-counts"): return messageCounts(request, channels: s[5])
            case (.delete, "history", "channel"): return deleteMessages(request, channel: s[5])
            default: return Reply.notFound()
            }
        case (_, "v2") where s.count >= 6 && s[1] == "history" && s[2] == "sub-key" && s[4] == "channel":
            guard s[3] == subscribeKey else { return Reply.historyError(400, "Invalid Subkey") }
            return legacyHistory(request, channel: s[5])
        case (_, "v1") where s.count >= 5 && s[1] == "message-actions" && s[3] == "channel":
            guard s[2] == subscribeKey else { return Reply.objectError(400, "Invalid Subkey", source: "actions") }
            return messageActions(request, segments: Array(s.dropFirst(4)))
        case (.get, "v1") where s.count >= 3 && s[1] == "files" && s[2] == "publish-file":
            return publishFile(request)
        case (_, "v1") where s.count >= 2 && s[1] == "files":
            return fileStorage.api(request, now: clock.now)
        case (_, FileStorage.pathPrefix):
            return fileStorage.storage(request, now: clock.now)
        case (.get, "v1") where s.count >= 6 && s[1] == "channel-registration" && s[2] == "sub-key":
            return channelRegistry(request)
        case (_, "v1") where s.count >= 6 && s[1] == "push", (_, "v2") where s.count >= 6 && s[1] == "push":
            return push.api(request)
        case (_, "v1") where s.count >= 5 && s[1] == "datasync" && s[2] == "subkeys":
            guard s[3] == subscribeKey else { return DataSyncReply.error(404, nil, "Unknown subscribe key") }
            let readable = access?.readable(request) ?? { _, _ in true }
            return dataSync(request, readable: readable)
        case (_, "v2") where s.count >= 4 && s[1] == "objects":
            guard s[2] == subscribeKey else { return Reply.objectError(400, "Invalid Subkey", source: "objects") }
            return objects(request, segments: Array(s.dropFirst(3)))
        default:
            return Reply.notFound()
        }
    }

    /// A new opaque eTag, deterministic for a given sequence of changes.
    func nextETag() -> String {
        eTagCounter += 1
        return Self.fnv1a(String(eTagCounter))
    }

    /// A digest of the whole server state: equal digests mean equal state (determinism tests).
    public func stateDigest() -> String {
        var text = "\(timetokens.last)|"
        for (channel, list) in messages.sorted(by: { $0.key < $1.key }) {
            for m in list {
                text += "\(channel),\(m.timetoken),\(m.publisher),\((try? m.message.jsonString()) ?? "")\(m.messageType.map { ",t\($0)" } ?? "");"
            }
        }
        for channel in actions.keys.sorted() {
            for a in actions[channel]! { text += "\(channel),\(a.messageTimetoken),\(a.actionTimetoken),\(a.type),\(a.value),\(a.uuid);" }
        }
        for (kind, objects) in [("u", users), ("c", channels)] {
            for id in objects.keys.sorted() { text += "\(kind),\(id),\(objects[id]!.eTag);" }
        }
        for user in memberships.keys.sorted() {
            for channel in memberships[user]!.keys.sorted() { text += "m,\(user),\(channel),\(memberships[user]![channel]!.eTag);" }
        }
        text += fileStorage.digestText
        text += push.digestText
        text += dataSync.digestText
        return Self.fnv1a(text)
    }

    /// FNV-1a, 64 bits, as hex: stable across runs and platforms (unlike `Hasher`).
    static func fnv1a(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(hash, radix: 16)
    }

    /// The messages stored for a channel, oldest first (for tests and checkers).
    public func storedMessages(channel: String) -> [(timetoken: UInt64, message: JSONValue, publisher: String)] {
        (messages[channel] ?? []).map { ($0.timetoken, $0.message, $0.publisher) }
    }

    /// The message actions stored for a channel, in the order they were added (for tests and checkers).
    public func storedActions(channel: String)
        -> [(messageTimetoken: UInt64, actionTimetoken: UInt64, type: String, value: String, uuid: String)]
    {
        (actions[channel] ?? []).map { ($0.messageTimetoken, $0.actionTimetoken, $0.type, $0.value, $0.uuid) }
    }

    // MARK: Access Manager

    /// Turns Access Manager on with `secretKey` (nil turns it off: everything granted to
    /// everyone). Tokens minted under another key are forgotten.
    ///
    /// On, every request needs a token minted here (sent as `auth`) that allows it, or the
    /// secret key's signature (an admin); grants and revokes come over the wire
    /// (`POST /v3/pam/{sub}/grant`, `DELETE /v3/pam/{sub}/grant/{token}`) or in process with
    /// ``grantToken(ttlMinutes:grants:authorizedUserId:meta:)`` and ``revokeToken(_:)``. TTLs
    /// run on ``clock``: advance a `VirtualClock` to expire a token. See `docs/simulator.md`,
    /// "Access Manager".
    public func configureAccess(secretKey: String?) {
        guard secretKey != access?.secretKey else { return }
        access = secretKey.map { AccessManager(secretKey: $0, publishKey: publishKey, subscribeKey: subscribeKey) }
    }

    /// Whether Access Manager is on (the server has a secret key).
    public var enforcesAccess: Bool { access != nil }

    /// Mints a token as the grant endpoint does, issued now on ``clock``: a test's shortcut.
    ///
    /// ```swift
    /// let server = PubNubServer(clock: clock, secretKey: "sec")
    /// let token = try await server.grantToken(
    ///     ttlMinutes: 10, grants: AccessGrants(resources: [.channel: ["room-1": [.read, .write]]]),
    ///     authorizedUserId: "alice")
    /// ```
    ///
    /// Throws ``AccessGrantError/accessManagerOff`` without a secret key and
    /// ``AccessGrantError/invalidTTL`` outside 1...43200 minutes.
    public func grantToken(
        ttlMinutes: Int = 60, grants: AccessGrants, authorizedUserId: String? = nil, meta: [String: JSONValue] = [:]
    ) throws(AccessGrantError) -> String {
        guard var manager = access else { throw .accessManagerOff }
        let token = try manager.mint(
            TokenGrant(ttlMinutes: ttlMinutes, grants: grants, authorizedUserId: authorizedUserId, meta: meta), now: clock.now)
        access = manager
        return token
    }

    /// Revokes `token` as the revoke endpoint does; false when it was never minted here or has
    /// expired (the endpoint's 400s).
    @discardableResult
    public func revokeToken(_ token: String) -> Bool {
        access?.revoke(token, now: clock.now).status == 200
    }

    // MARK: Files

    /// The origin (`scheme://host[:port]`) of the simulator's file storage: the upload and
    /// download URLs point there. In process any origin reaches this server (the in-process
    /// transport keeps only the path); `SimulatorHTTPServer.run` sets `http://127.0.0.1:<port>`.
    public var storageOrigin: String { fileStorage.origin }

    /// Points the upload and download URLs handed out from now on at `origin` (`http://host:port`,
    /// no trailing `/`).
    public func configureStorage(origin: String) {
        var origin = origin
        while origin.hasSuffix("/") { origin.removeLast() }
        fileStorage.origin = origin
    }

    /// The files uploaded to `channel` (uploads that completed), oldest first (for tests and checkers).
    public func storedFiles(channel: String) -> [StoredFile] { fileStorage.files(channel: channel).map(\.file) }

    /// Every channel's uploaded files, each channel's oldest first (an "every upload has its
    /// message" check lists them all).
    public func allStoredFiles() -> [String: [StoredFile]] { fileStorage.allFiles() }

    /// Upload forms handed out (`generate-upload-url`) whose file was never uploaded.
    public var pendingUploadCount: Int { fileStorage.pendingUploads }

    // MARK: Mobile Push

    /// The channels `device` is registered on, sorted; empty when it is on none (for tests and
    /// checkers). Registrations are kept per token, type, topic and environment (`docs/simulator.md`).
    public func pushChannels(of device: PushDevice) -> [String] { push.channels(of: device) }

    /// Turns the keyset's Mobile Push add-on off or on (on by default). Off, every push request
    /// gets PubNub's 403 `Use of the mobile push notifications API requires Push Notifications…`.
    public func configurePush(enabled: Bool) { push.enabled = enabled }
}

// MARK: DataSync

/// DataSync's front: credentials as PubNub checks them, the service's answers, its events as `e: 5`
/// envelopes, and the hooks tests and `simulator serve` use (`docs/simulator.md`, "DataSync").
extension PubNubServer {
    /// PubNub's answer to a DataSync request whose credentials cannot be right, before Access
    /// Manager looks at them: no Access Manager on the keyset (403 `DS-0201`), no credential (401
    /// `DS-0203`), a token and a signature together (403 `DS-0201`). Nil for every other request.
    func dataSyncCredentialRefusal(_ request: WireRequest) -> WireResponse? {
        let s = request.pathSegments
        guard s.count >= 2, s[0] == "v1", s[1] == "datasync", dataSync.choices.requiresAccessManager else { return nil }
        guard access != nil else { return DataSyncReply.error(403, dataSync.choices.codes.accessDenied, "ACCESS_DENIED: Access Manager is not enabled on this keyset") }
        let token = request.queryValue("auth"), signature = request.queryValue("signature")
        if token == nil && signature == nil { return DataSyncReply.error(401, dataSync.choices.codes.unauthenticated, "UNAUTHENTICATED: a token or a signature is required") }
        if token != nil && signature != nil { return DataSyncReply.error(403, dataSync.choices.codes.accessDenied, "ACCESS_DENIED: send a token or a signature, not both") }
        return nil
    }

    /// Runs a DataSync request through the service and publishes its events.
    func dataSync(_ request: WireRequest, readable: (AccessResourceKind, String) -> Bool) -> WireResponse {
        let segments = request.pathSegments.dropFirst(4)
        let (response, emissions) = dataSync.api(request, segments: segments, now: clock.now, readable: readable)
        for emission in emissions {
            let timetoken = timetokens.next()
            for channel in emission.channels {
                emit(channel: channel, timetoken: timetoken, kind: 5, publisher: nil, payload: emission.payload)
            }
        }
        return response
    }

    /// Answers a DataSync request as the secret key's holder would get it answered (an app's
    /// server, a test's third client): no credential needed, every record visible; events are
    /// published as for any write.
    ///
    /// ```swift
    /// let answer = await server.dataSyncAsAdmin(try client.dataSync.patchRequest(.users, id: "alice",
    ///     [.add(JSONPointer(["payload", "name"]), "Alice B.")]))
    /// ```
    public func dataSyncAsAdmin(_ request: WireRequest) -> WireResponse {
        let s = request.pathSegments
        guard s.count >= 5, s[0] == "v1", s[1] == "datasync", s[2] == "subkeys", s[3] == subscribeKey else { return Reply.notFound() }
        return dataSync(request, readable: { _, _ in true })
    }

    /// A DataSync record as a GET answers it (`data`), or nil when there is none or it expired.
    public func dataSyncRecord(_ resource: DataSyncResource, id: String) -> JSONValue? {
        dataSync.sweep(now: ISOTimestamp(date: clock.now))
        return dataSync.records[resource]?[id]?.json
    }

    /// Defines (or redefines) a class: a subclass of `User` or `Channel` with its own TTL, an
    /// app's entity or relationship class. `simulator serve --datasync-class` calls it; a peer
    /// uses the Admin API instead (``adminKey``).
    public func defineDataSyncClass(_ type: DataSyncClass) { dataSync.classes[type.key] = type }

    /// The key the Admin API's `Authorization` header must carry
    /// (`/v2/datasync/subkeys/{subKey}/entity-classes/{Name}/versions/{n}`): the one
    /// ``configureAdminKey(_:)`` set, else the secret key; nil (no secret key, none set) refuses
    /// every Admin API request with a 401.
    public var adminKey: String? { configuredAdminKey ?? access?.secretKey }

    /// Sets the Admin API key (nil: the secret key again), as a team's portal issues one.
    ///
    /// ```swift
    /// await server.configureAdminKey("admin-key")
    /// // POST /v2/datasync/subkeys/sub/entity-classes/Poll/versions/1, Authorization: admin-key
    /// ```
    public func configureAdminKey(_ key: String?) { configuredAdminKey = key }

    /// The answer to an Admin API request (`/v2/datasync/subkeys/{subKey}/…`), or nil for any
    /// other request: 401 without the admin key, 404 for another subscribe key, else the class
    /// definitions' answer (``DataSyncService``).
    func dataSyncAdmin(_ request: WireRequest) -> WireResponse? {
        let s = request.pathSegments
        guard s.count >= 4, s[0] == "v2", s[1] == "datasync", s[2] == "subkeys" else { return nil }
        let given = request.headers.first { $0.key.lowercased() == "authorization" }?.value
        guard let adminKey, let given, given == adminKey else {
            return DataSyncReply.error(401, nil, "Unauthorized: the Authorization header must carry the Admin API key")
        }
        guard s[3] == subscribeKey else { return DataSyncReply.error(404, nil, "Unknown subscribe key") }
        return dataSync.admin(request, segments: s.dropFirst(4))
    }

    /// Turns a class's `e: 5` events off or on (on by default; off is what a keyset without an
    /// event rule for the class does), for every version and level of that name.
    public func setDataSyncEvents(className: String, on: Bool) {
        for (key, type) in dataSync.classes where type.name == className { dataSync.classes[key]?.events = on }
    }

    /// Changes what the simulator does where the DataSync reference is unconfirmed.
    public func configureDataSync(_ choices: DataSyncChoices) { dataSync.choices = choices }
}

/// Building responses in each service's real shape.
enum Reply {
    static let javascript = "text/javascript; charset=\"UTF-8\""
    static let json = "application/json"

    static func json(_ status: Int, _ body: JSONValue, contentType: String = json, headers: [String: String] = [:]) -> WireResponse {
        var all = headers
        all["Content-Type"] = contentType
        return WireResponse(status: status, headers: all, body: (try? body.jsonData()) ?? Data())
    }

    static func publishError(_ status: Int, _ message: String, timetoken: UInt64) -> WireResponse {
        json(status, [0, .string(message), .string(String(timetoken))], contentType: javascript)
    }

    static func historyError(_ status: Int, _ message: String) -> WireResponse {
        json(status, ["status": .int(Int64(status)), "error": true, "error_message": .string(message), "channels": [:]],
             contentType: javascript)
    }

    static func objectError(
        _ status: Int, _ message: String, source: String, details: [(message: String, location: String)] = []
    ) -> WireResponse {
        var error: [String: JSONValue] = ["message": .string(message), "source": .string(source)]
        if !details.isEmpty {
            error["details"] = .array(details.map {
                ["message": .string($0.message), "location": .string($0.location), "locationType": "body"]
            })
        }
        return json(status, ["status": .int(Int64(status)), "error": .object(error)])
    }

    static func notFound() -> WireResponse {
        json(404, ["status": 404, "error": true, "message": "Not Found", "service": "Balancer"])
    }

    /// Parses a request body as JSON (gzip-decoded when `Content-Encoding: gzip`).
    static func bodyJSON(_ request: WireRequest) -> JSONValue? {
        guard var body = request.body else { return nil }
        if request.headers.first(where: { $0.key.lowercased() == "content-encoding" })?.value.lowercased() == "gzip" {
            guard let inflated = try? Gzip.decompress(body) else { return nil }
            body = inflated
        }
        return try? JSONValue(jsonData: body)
    }
}

extension WireRequest {
    /// A query value parsed as an integer.
    func int(_ name: String) -> Int? { queryValue(name).flatMap { Int($0) } }
    /// A query value parsed as a timetoken.
    func timetoken(_ name: String) -> UInt64? { queryValue(name).flatMap { UInt64($0) } }
    /// A query flag (`true`/`1`).
    func flag(_ name: String, default value: Bool) -> Bool {
        guard let text = queryValue(name) else { return value }
        return text == "true" || text == "1"
    }
    /// The `uuid` query parameter (the actor).
    var actor: String { queryValue("uuid") ?? "" }
}
