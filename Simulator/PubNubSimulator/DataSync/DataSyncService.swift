import Foundation
import PubNubWire
import ReplicaModel

/// The simulator's DataSync (`/v1/datasync/subkeys/{subKey}/…`; the protocol reference,
/// `reference/datasync.md`): users, channels, memberships, entities and relationships with
/// their classes and TTLs, create-only POST (409 on a duplicate id or membership pair), PUT,
/// atomic JSON Patch with `test`, `If-Match` (412), DELETE (200, empty; a user's or channel's
/// memberships go with it), forward cursors, `filter_fast`/`filter`, `sort`, lists filtered by
/// the token, and `e: 5` events. What the reference leaves unconfirmed is decided in
/// ``DataSyncChoices`` (`docs/datasync.md`, "Choices").
///
/// A value held by ``PubNubServer``; it never sees credentials: the server checks them first and
/// passes what the token may read.
struct DataSyncService: Sendable {
    let subscribeKey: String
    var classes: [DataSyncClass.Key: DataSyncClass] = [:]
    var records: [DataSyncResource: [String: DataSyncRecord]] = [:]
    var sequence: UInt64 = 0
    var eTagCounter: UInt64 = 0
    /// The last `createdAt`/`updatedAt` given: each write's is strictly later, service-wide, so
    /// a `updatedAt >= checkpoint` list never finds two writes sharing one microsecond.
    var lastStamp: ISOTimestamp?
    /// The earliest `expiresAt` stored (nil: none): ``sweep(now:)`` does nothing before it.
    var nextExpiry: ISOTimestamp?
    var choices = DataSyncChoices()
    /// The error codes answered: ``DataSyncChoices/codes``.
    var codes: DataSyncCodes { choices.codes }

    init(subscribeKey: String) {
        self.subscribeKey = subscribeKey
        for type in [DataSyncClass.user, .channel, .membership] { classes[type.key] = type }
    }

    /// Answers one request (`segments` after `subkeys/{subKey}`) at `now`; `readable` says which
    /// records a list may show (the token's `get`; everything for a signed request).
    mutating func api(
        _ request: WireRequest, segments: ArraySlice<String>, now: Date, readable: (AccessResourceKind, String) -> Bool
    ) -> (WireResponse, [DataSyncEmission]) {
        guard let first = segments.first, let resource = DataSyncResource(rawValue: first), segments.count <= 2 else {
            return (Reply.notFound(), [])
        }
        let time = ISOTimestamp(date: now)
        sweep(now: time)
        let id = segments.count == 2 ? segments.last : nil
        switch (request.method, id) {
        case (.get, nil): return (list(resource, request, readable: readable), [])
        case (.get, let id?):
            guard let record = records[resource]?[id] else { return (DataSyncReply.notFound(resource, id, code: codes.notFound), []) }
            return (DataSyncReply.record(200, record), [])
        case (.post, nil): return create(resource, request, now: time)
        case (.put, let id?): return replace(resource, id: id, request, now: time)
        case (.patch, let id?): return patch(resource, id: id, request, now: time)
        case (.delete, let id?): return delete(resource, id: id, request, now: time)
        default: return (DataSyncReply.error(405, nil, "Method Not Allowed"), [])
        }
    }

    // MARK: Records

    /// Drops what expired (lazily, at a request once the earliest expiry has passed; no event,
    /// choice 2c).
    mutating func sweep(now: ISOTimestamp) {
        guard let due = nextExpiry, now >= due else { return }
        for resource in records.keys {
            records[resource] = records[resource]?.filter { !$0.value.isExpired(at: now) }
        }
        nextExpiry = records.values.lazy.flatMap(\.values).map(\.expiresAt).min()
    }

    mutating func nextETag() -> String {
        eTagCounter += 1
        let text = String(eTagCounter &* 2_654_435_761 % 2_176_782_336, radix: 36)
        return String(repeating: "0", count: max(0, 6 - text.count)) + text
    }

    /// The time of a write at `now`: strictly later than every earlier write's (``lastStamp``).
    mutating func stamp(_ now: ISOTimestamp) -> ISOTimestamp {
        let time = Self.later(now, than: lastStamp)
        lastStamp = time
        return time
    }

    /// A strictly later `updatedAt` than `previous`, else `now`.
    static func later(_ now: ISOTimestamp, than previous: ISOTimestamp?) -> ISOTimestamp {
        // Microseconds, as PubNub writes them; truncation must not fall back onto `previous`.
        let truncated = now.nanoseconds / 1000 * 1000
        guard let previous, truncated <= previous.nanoseconds else { return ISOTimestamp(nanoseconds: truncated) }
        return ISOTimestamp(nanoseconds: previous.nanoseconds + 1000)
    }

    /// `createdAt + ttl`, rounded up to the next UTC midnight (an exact midnight stays; choice 2b).
    static func expiry(_ created: ISOTimestamp, ttlSeconds: Int) -> ISOTimestamp {
        // Clamped, never trapping: a clock or a TTL at the edge of what an instant can hold expires
        // at the last day that can be written.
        let day: Int64 = 86_400 * 1_000_000_000
        let ttl = Int64(max(0, min(ttlSeconds, 315_569_260))) * 1_000_000_000
        let (end, overflow) = created.nanoseconds.addingReportingOverflow(ttl + day - 1)
        let rounded = overflow ? (Int64.max / day) * day : end / day * day
        return ISOTimestamp(nanoseconds: rounded, fractionDigits: 0)
    }

    /// The class a create names on `resource`, or the answer refusing it.
    func resolveClass(_ resource: DataSyncResource, name: String?, version: Int, level: DataSyncClassLevel?)
        -> Result<DataSyncClass, DataSyncRefusal>
    {
        let builtIn: String? = switch resource {
        case .users: "User"
        case .channels: "Channel"
        case .memberships: "Membership"
        case .entities, .relationships: nil
        }
        guard let name = name ?? builtIn else { return .failure(.init(400, codes.notNull, "class: must not be null")) }
        let levels: [DataSyncClassLevel] = level.map { [$0] } ?? [.subKey, .global]
        guard let type = levels.lazy.compactMap({ classes[DataSyncClass.Key(name: name, version: version, level: $0)] }).first else {
            return .failure(.init(404, codes.notFound, "Class definition not found: \(name) v\(version)"))
        }
        guard type.resource == resource else {
            return .failure(.init(400, codes.notSubclass, "\(name) is not a \(builtIn ?? resource.noun) class"))
        }
        return .success(type)
    }

    func exists(_ resource: DataSyncResource, _ id: String) -> Bool { records[resource]?[id] != nil }

    /// The answer to a write whose `If-Match` is stale, or nil.
    func staleIfMatch(_ request: WireRequest, _ record: DataSyncRecord) -> WireResponse? {
        guard let expected = request.headers.first(where: { $0.key.lowercased() == "if-match" })?.value else { return nil }
        return expected == record.eTag ? nil : DataSyncReply.stale(codes.stale)
    }

    /// The content type a write must carry: the resource's vendor type or `application/json`
    /// (a PATCH: `application/json-patch+json`); anything else is a 415.
    static func contentTypeRefusal(_ request: WireRequest, patch: Bool, resource: DataSyncResource) -> WireResponse? {
        let type = (request.headers.first { $0.key.lowercased() == "content-type" }?.value ?? "").lowercased()
        let base = type.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        let allowed = patch ? ["application/json-patch+json"] : ["application/json", "application/vnd.pubnub.objects.\(resource.noun)+json"]
        return allowed.contains(base) ? nil : DataSyncReply.error(415, nil, "Unsupported Media Type: \(base)")
    }

    /// The `e: 5` event of a change to `record`.
    func emission(_ verb: String, _ record: DataSyncRecord, deletedAt: ISOTimestamp? = nil) -> [DataSyncEmission] {
        // The class as registered now: `setDataSyncEvents` turns a class off for its records too.
        guard classes[record.type.key]?.events ?? record.type.events else { return [] }
        let metadata: JSONValue = [
            "event": .string(verb), "source": "data-sync", "type": .string(record.type.eventType),
            "className": .string(record.type.name), "classLevel": .string(record.type.level.rawValue),
            "classVersion": .int(Int64(record.type.version)),
        ]
        let data: JSONValue = deletedAt.map { ["id": .string(record.id), "deletedAt": .string($0.description)] } ?? .object(record.eventData)
        return [DataSyncEmission(channels: record.eventChannels, payload: ["version": "1.0", "metadata": metadata, "data": data])]
    }
}

/// A refused DataSync request: its status, code and message.
struct DataSyncRefusal: Error, Sendable {
    var status: Int
    var code: String?
    var message: String
    var path: String?

    init(_ status: Int, _ code: String?, _ message: String, path: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.path = path
    }

    var response: WireResponse { DataSyncReply.error(status, code, message, path: path) }
}

/// What the simulator does where the DataSync reference is unconfirmed (reference §20;
/// `docs/datasync.md`, "Choices"): each a value to change in one place.
public struct DataSyncChoices: Sendable, Hashable {
    /// Whether DataSync needs Access Manager (PubNub: yes; without a secret key every DataSync
    /// request is a 403 `DS-0201`). In-process tests whose subject is not access may turn it off.
    public var requiresAccessManager = true
    /// The most predicates a `filter_fast` may hold (10 by default on PubNub).
    public var maxFastPredicates = 10

    /// The error codes answered (``DataSyncCodes``: the reference's by default; the Kotlin or Dart
    /// SDK's stubs on request).
    public var codes = DataSyncCodes()

    /// The defaults.
    public init() {}
}
