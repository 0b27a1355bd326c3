import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

/// The users, channels and memberships of a test double object service, shared by every device
/// of a test (each reaches it through its own ``InMemoryObjects``). Each write gives the object a
/// new eTag and a strictly later `updated` from the test's clock.
actor InMemoryObjectServer {
    struct Record: Sendable, Equatable {
        var fields: [String: JSONValue]
        var updated: ISOTimestamp
        var eTag: String
    }

    struct MemberKey: Hashable, Sendable {
        var channel: String
        var user: String
    }

    private(set) var users: [String: Record] = [:]
    private(set) var channels: [String: Record] = [:]
    private(set) var memberships: [MemberKey: Record] = [:]
    /// Every request the devices made, as `operation target` (`setUser u1`, `users page`).
    private(set) var requests: [String] = []
    /// When set, another client changes the target of every conditional write just before it
    /// (as the simulator's `preconditionRace` fault): each `If-Match` meets a new eTag.
    var preconditionRace = false
    private let clock: VirtualClock
    private var lastStamp: Int64 = 0
    private var versions = 0

    init(clock: VirtualClock) { self.clock = clock }

    func setPreconditionRace(_ on: Bool) { preconditionRace = on }

    private func stamp() -> (ISOTimestamp, String) {
        let now = Int64(clock.now.timeIntervalSince1970 * 1_000_000) * 1_000
        lastStamp = max(now, lastStamp + 1_000)
        versions += 1
        return (ISOTimestamp(nanoseconds: lastStamp), "v\(versions)")
    }

    private func merged(_ old: [String: JSONValue], _ fields: [String: JSONValue]) -> [String: JSONValue] {
        var result = old
        for (key, value) in fields { result[key] = value.isNull ? nil : value }
        return result
    }

    // MARK: A third client's writes (no device involved)

    func editUser(_ id: String, _ fields: [String: JSONValue]) {
        let (updated, eTag) = stamp()
        users[id] = Record(fields: merged(users[id]?.fields ?? [:], fields), updated: updated, eTag: eTag)
    }

    func editChannel(_ id: String, _ fields: [String: JSONValue]) {
        let (updated, eTag) = stamp()
        channels[id] = Record(fields: merged(channels[id]?.fields ?? [:], fields), updated: updated, eTag: eTag)
    }

    func editMembership(channel: String, user: String, _ fields: [String: JSONValue]) {
        let key = MemberKey(channel: channel, user: user), (updated, eTag) = stamp()
        memberships[key] = Record(fields: merged(memberships[key]?.fields ?? [:], fields), updated: updated, eTag: eTag)
    }

    func removeMembership(channel: String, user: String) { memberships[MemberKey(channel: channel, user: user)] = nil }

    // MARK: What a device's backend asks

    func log(_ line: String) { requests.append(line) }

    func records(_ kind: ObjectTable) -> [String: Record] { kind == .users ? users : channels }

    func memberships(of side: MembershipSide) -> [(MemberKey, Record)] {
        memberships.filter { key, _ in
            switch side {
            case .user(let user): key.user == user
            case .channel(let channel): key.channel == channel
            }
        }.map { ($0.key, $0.value) }
    }

    /// Applies a write under its precondition; `conditionalMemberships`: whether a membership
    /// write honours its `If-Match` (else it is ignored, as App Context does).
    func apply(_ write: ObjectWrite, conditionalMemberships: Bool) throws(WireError) -> (ObjectTable?, String?, MemberKey?) {
        func check(_ current: Record?, _ precondition: ObjectPrecondition, operation: String) throws(WireError) {
            switch precondition {
            case .none: return
            case .ifMatch(let eTag): if current?.eTag == eTag { return }
            case .mustNotExist: if current == nil { return }
            }
            let status = precondition == .mustNotExist ? 409 : 412
            throw .service(ServiceError(operation: operation, status: status, family: .unknown, message: "precondition failed"))
        }
        switch write {
        case .setUser(let id, let fields, let precondition):
            if preconditionRace, precondition != .none, users[id] != nil { editUser(id, [:]) }
            try check(users[id], precondition, operation: "setUser")
            editUser(id, fields)
            return (.users, id, nil)
        case .removeUser(let id, _):
            users[id] = nil
            return (nil, nil, nil)
        case .setChannel(let id, let fields, let precondition):
            if preconditionRace, precondition != .none, channels[id] != nil { editChannel(id, [:]) }
            try check(channels[id], precondition, operation: "setChannel")
            editChannel(id, fields)
            return (.channels, id, nil)
        case .removeChannel(let id, _):
            channels[id] = nil
            return (nil, nil, nil)
        case .setMembership(let channel, let user, let fields, _, let precondition):
            let key = MemberKey(channel: channel, user: user)
            if conditionalMemberships {
                if preconditionRace, precondition != .none, memberships[key] != nil { editMembership(channel: channel, user: user, [:]) }
                try check(memberships[key], precondition, operation: "setMembership")
            }
            editMembership(channel: channel, user: user, fields)
            return (nil, nil, key)
        case .removeMembership(let channel, let user, let precondition):
            let key = MemberKey(channel: channel, user: user)
            if conditionalMemberships, memberships[key] != nil { try check(memberships[key], precondition, operation: "removeMembership") }
            memberships[key] = nil
            return (nil, nil, nil)
        case .setMemberships(let user, let sets, _):
            for set in sets { editMembership(channel: set.channel, user: user, set.fields) }
            return (nil, nil, nil)
        }
    }
}

/// Whether a device reaches the test double: offline, or losing the next answer after the write
/// was applied.
final class ObjectLink: @unchecked Sendable {
    private let lock = NSLock()
    private var isOffline = false
    private var losing = 0

    var offline: Bool {
        get { lock.withLock { isOffline } }
        set { lock.withLock { isOffline = newValue } }
    }

    /// The next `count` writes are applied but their answers are lost (the outcome is unknown).
    func loseAnswers(_ count: Int) { lock.withLock { losing = count } }

    func takeLoss() -> Bool {
        lock.withLock {
            guard losing > 0 else { return false }
            losing -= 1
            return true
        }
    }
}

/// A test double of ``Replicator/ObjectBackend``: every object read and write of a device goes
/// to an ``InMemoryObjectServer`` instead of App Context, so the object scenarios run through the
/// seam alone. `capabilities` picks the semantic family: App Context's (the outbox reads a
/// membership before writing it) or a conditional one (`If-Match` on memberships, as DataSync).
struct InMemoryObjects: ObjectBackend {
    let server: InMemoryObjectServer
    let capabilities: ObjectBackendCapabilities
    let link: ObjectLink

    static let appContextLike = ObjectBackendCapabilities(conditionalMembershipWrites: false, nativeCreateOnly: false)
    static let conditional = ObjectBackendCapabilities(conditionalMembershipWrites: true, nativeCreateOnly: false)

    var name: String { "in-memory" }

    private func reach(_ line: String) async throws(WireError) {
        if link.offline { throw .transport(.notSent(reason: "offline (test double)")) }
        await server.log(line)
    }

    private static func decode<T: Decodable>(_ object: [String: JSONValue], as type: T.Type) throws(WireError) -> T {
        do {
            return try JSONValue.object(object).decode(as: T.self)
        } catch {
            throw .decoding(operation: "in-memory", status: 200, message: "\(error)")
        }
    }

    private static func object(_ id: String, _ record: InMemoryObjectServer.Record) -> [String: JSONValue] {
        var object = record.fields
        object["id"] = .string(id)
        object["updated"] = .string(record.updated.description)
        object["eTag"] = .string(record.eTag)
        return object
    }

    private static func member(_ key: InMemoryObjectServer.MemberKey, _ record: InMemoryObjectServer.Record) -> [String: JSONValue] {
        var object = record.fields
        object["channel"] = ["id": .string(key.channel)]
        object["uuid"] = ["id": .string(key.user)]
        object["updated"] = .string(record.updated.description)
        object["eTag"] = .string(record.eTag)
        return object
    }

    /// One page of `records` (oldest change first after `since`, else by id), the cursor an offset.
    private static func page<Item>(
        _ records: [(id: String, record: InMemoryObjectServer.Record, json: [String: JSONValue])], _ request: ObjectPageRequest,
        as type: Item.Type
    ) throws(WireError) -> ObjectBatch<Item> where Item: Decodable & Sendable & Hashable {
        var rows = records
        if let since = request.since {
            rows = rows.filter { $0.record.updated >= since }.sorted { ($0.record.updated, $0.id) < ($1.record.updated, $1.id) }
        } else {
            rows.sort { $0.id < $1.id }
        }
        let start = Int(request.cursor ?? "0") ?? 0
        let slice = rows.dropFirst(start).prefix(request.limit)
        var items: [Item] = []
        for row in slice { items.append(try decode(row.json, as: Item.self)) }
        let end = start + slice.count
        return ObjectBatch(
            items: items, next: end < rows.count ? String(end) : nil, totalCount: request.wantsTotal ? rows.count : nil)
    }

    func users<C: CustomData>(_ page: ObjectPageRequest, as custom: C.Type) async throws(WireError) -> ObjectBatch<ChatUser<C>> {
        try await reach("users page")
        let rows = await server.records(.users).map { (id: $0.key, record: $0.value, json: Self.object($0.key, $0.value)) }
        return try Self.page(rows, page, as: ChatUser<C>.self)
    }

    func channels<C: CustomData>(_ page: ObjectPageRequest, as custom: C.Type) async throws(WireError) -> ObjectBatch<ChatChannel<C>> {
        try await reach("channels page")
        let rows = await server.records(.channels).map { (id: $0.key, record: $0.value, json: Self.object($0.key, $0.value)) }
        return try Self.page(rows, page, as: ChatChannel<C>.self)
    }

    func memberships<C: ChatCustomData>(
        of side: MembershipSide, channels: [String]?, _ page: ObjectPageRequest, as custom: C.Type
    ) async throws(WireError) -> ObjectBatch<ChatMember<C>> {
        try await reach("memberships page \(side)")
        var rows = await server.memberships(of: side)
        if let channels { rows = rows.filter { channels.contains($0.0.channel) } }
        let listed = rows.map { (id: "\($0.0.channel)/\($0.0.user)", record: $0.1, json: Self.member($0.0, $0.1)) }
        return try Self.page(listed, page, as: ChatMember<C>.self)
    }

    func user<C: CustomData>(id: String, as custom: C.Type) async throws(WireError) -> ChatUser<C>? {
        try await reach("getUser \(id)")
        guard let record = await server.users[id] else { return nil }
        return try Self.decode(Self.object(id, record), as: ChatUser<C>.self)
    }

    func channel<C: CustomData>(id: String, as custom: C.Type) async throws(WireError) -> ChatChannel<C>? {
        try await reach("getChannel \(id)")
        guard let record = await server.channels[id] else { return nil }
        return try Self.decode(Self.object(id, record), as: ChatChannel<C>.self)
    }

    func plannedRequest(for write: ObjectWrite) throws(WireError) -> WireRequest {
        let (method, path, precondition): (HTTPMethod, [String], ObjectPrecondition) = switch write {
        case .setUser(let id, _, let p): (.patch, ["mem", "users", id], p)
        case .removeUser(let id, let p): (.delete, ["mem", "users", id], p)
        case .setChannel(let id, _, let p): (.patch, ["mem", "channels", id], p)
        case .removeChannel(let id, let p): (.delete, ["mem", "channels", id], p)
        case .setMembership(let channel, let user, _, _, let p): (.patch, ["mem", "memberships", channel, user], p)
        case .removeMembership(let channel, let user, let p): (.delete, ["mem", "memberships", channel, user], p)
        case .setMemberships(let user, _, _): (.patch, ["mem", "memberships", user], .none)
        }
        var headers: [String: String] = [:]
        if case .ifMatch(let eTag) = precondition { headers["If-Match"] = eTag }
        return WireRequest(method: method, pathSegments: path, headers: headers, operation: "in-memory")
    }

    func write(_ write: ObjectWrite) async throws(WireError) -> ObjectWritten {
        let request = try plannedRequest(for: write)
        try await reach("\(request.method) \(request.pathSegments.dropFirst().joined(separator: "/")) \(request.headers["If-Match"] ?? "")")
        let (table, id, key) = try await server.apply(write, conditionalMemberships: capabilities.conditionalMembershipWrites)
        if link.takeLoss() { throw .transport(.outcomeUnknown(reason: "answer lost (test double)")) }
        switch (table, id, key, write) {
        case (.users?, let id?, _, _):
            guard let record = await server.users[id] else { return .removed }
            return .user(try Self.decode(Self.object(id, record), as: ChatUser<JSONValue>.self))
        case (.channels?, let id?, _, _):
            guard let record = await server.channels[id] else { return .removed }
            return .channel(try Self.decode(Self.object(id, record), as: ChatChannel<JSONValue>.self))
        case (_, _, let key?, _):
            guard let record = await server.memberships[key] else { return .membership(nil) }
            return .membership(try Self.decode(Self.member(key, record), as: ChatMember<RawChatCustom>.self))
        case (_, _, _, .setMemberships(let user, _, let answering)):
            let rows = await server.memberships(of: .user(user)).filter { answering.contains($0.0.channel) }
            var members: [ChatMember<RawChatCustom>] = []
            for (key, record) in rows { members.append(try Self.decode(Self.member(key, record), as: ChatMember<RawChatCustom>.self)) }
            return .memberships(members)
        default:
            return .removed
        }
    }

    /// The double has no live channel: its objects arrive by pulls only.
    func events(in envelope: SubscribeEnvelope) -> [ObjectEvent]? { nil }
}
