import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import Testing

/// Every request of `../shared/recordings/datasync/` recorded from the live service, replayed
/// against the simulator seeded with the state it needs (its classes, the records it reads,
/// changes or links), gets the recorded status; an error answer also its `DS-` codes and
/// message; each recorded `e: 5` event is published by the simulator, after the write it
/// reports, with the same metadata and the same `data` members.
@Suite("Recorded DataSync requests replayed against the simulator")
struct DataSyncReplayTests {
    static let start = Date(timeIntervalSince1970: 1_788_766_495)  // 2026-09-07T07:34:55Z

    /// A server on the recording's subscribe key, with Access Manager, and an admin to seed it.
    struct Seeded {
        let clock = VirtualClock(start: DataSyncReplayTests.start)
        let server: PubNubServer
        let admin: PubNubDataSync

        init(subscribeKey: String) throws {
            server = PubNubServer(subscribeKey: subscribeKey, clock: clock, secretKey: "sec")
            admin = try PubNubClient.simulated(
                InProcessTransport(server: server), userId: "admin", subscribeKey: subscribeKey, clock: clock).dataSync
        }

        /// Defines the class a row or an event names, if it is not a built-in one.
        func define(_ name: String?, version: Int?, level: String?, on resource: DataSyncResource) async {
            guard let name, !["User", "Channel", "Membership"].contains(name) || level == "SubKey" else { return }
            let extends: String? = switch resource {
            case .users: "User"
            case .channels: "Channel"
            default: nil
            }
            await server.defineDataSyncClass(DataSyncClass(
                name: name, version: version ?? 1, level: level == "Global" ? .global : .subKey,
                kind: resource.isRelationship ? .relationship : .entity, extends: extends, ttlSeconds: 365 * 86_400))
        }

        /// Creates `row` under `resource` (its class, and bare ends first); returns its eTag.
        @discardableResult
        func seed(_ resource: DataSyncResource, _ row: [String: JSONValue]) async throws -> String? {
            let id = row["id"]?.stringValue ?? "seed"
            let className = (row["entityClass"] ?? row["relationshipClass"])?.stringValue
            var version = 1
            if case .int(let v)? = row["entityClassVersion"] ?? row["relationshipClassVersion"] { version = Int(v) }
            await define(className, version: version, level: row["entityClassLevel"]?.stringValue, on: resource)
            var object = DataSyncObject(id: id, className: resource == .memberships ? nil : className, classVersion: version)
            object.classLevel = row["entityClassLevel"]?.stringValue.flatMap(DataSyncClassLevel.init(rawValue:))
            object.status = row["status"]?.stringValue
            object.payload = row["payload"]?.objectValue
            if resource == .memberships {
                object.channelId = row["channelId"]?.stringValue ?? "channel-of-\(id)"
                object.userId = row["userId"]?.stringValue ?? "user-of-\(id)"
                try await ensure(.channels, object.channelId!)
                try await ensure(.users, object.userId!)
            } else if resource == .relationships {
                object.className = className ?? "REQUESTED_BY"
                await define(object.className, version: version, level: nil, on: .relationships)
                object.entityAId = row["entityAId"]?.stringValue ?? "a-of-\(id)"
                object.entityBId = row["entityBId"]?.stringValue ?? "b-of-\(id)"
                try await ensure(.entities, object.entityAId!)
                try await ensure(.entities, object.entityBId!)
            } else if resource == .entities, object.className == nil {
                object.className = "Seed"
                await define("Seed", version: 1, level: nil, on: .entities)
            }
            let answer = await server.dataSyncAsAdmin(try admin.createRequest(resource, object))
            #expect(answer.status == 201, "seeding \(resource.rawValue)/\(id): \(String(decoding: answer.body, as: UTF8.self))")
            return try PubNubDataSync.row(from: answer, operation: "seed").eTag
        }

        /// A bare record `id` under `resource`, unless one exists.
        func ensure(_ resource: DataSyncResource, _ id: String) async throws {
            guard await server.dataSyncRecord(resource, id: id) == nil else { return }
            try await seed(resource, ["id": .string(id)])
        }

        /// A token granting everything to `user`, or only `get` on users.
        func token(user: String, everything: Bool = true) async throws -> String {
            let all = AccessPermissions(rawValue: 255)
            let kinds: [AccessResourceKind] = [.user, .channel, .dataSyncMembership, .dataSyncEntity, .dataSyncRelationship]
            let grants = everything
                ? AccessGrants(patterns: Dictionary(uniqueKeysWithValues: kinds.map { ($0, ["^.*$": all]) }))
                : AccessGrants(patterns: [.user: ["^.*$": .get]])
            return try await server.grantToken(grants: grants, authorizedUserId: user)
        }
    }

    @Test("each recorded-real REST request gets the recorded status (and an error its codes and message)")
    func rest() async throws {
        guard let all = try DataSyncRecording.all() else {
            if ProcessInfo.processInfo.environment["CI"] != nil { Issue.record("no DataSync recordings") }
            return
        }
        let real = all.filter { $0.provenance == "recorded-real" && $0.family != "datasync_events" }
        #expect(real.count == 21)
        for recording in real {
            guard let resource = recording.resource else {
                Issue.record("\(recording.id): no resource")
                continue
            }
            let world = try Seeded(subscribeKey: recording.segments[3])
            var eTag: String?
            let rows: [[String: JSONValue]] = switch recording.json?.objectValue?["data"] {
            case .array(let items)?: items.compactMap(\.objectValue)
            case .object(let row)?: [row]
            default: []
            }
            if recording.method == "POST" {
                // The created record must not exist; what it links to must.
                let data = recording.requestJSON?.objectValue?["data"]?.objectValue ?? [:]
                await world.define(
                    (data["entityClass"] ?? data["relationshipClass"])?.stringValue,
                    version: 1, level: data["entityClassLevel"]?.stringValue, on: resource)
                if resource == .memberships {
                    try await world.ensure(.channels, data["channelId"]?.stringValue ?? "")
                    try await world.ensure(.users, data["userId"]?.stringValue ?? "")
                }
                for key in ["entityAId", "entityBId"] { if let end = data[key]?.stringValue { try await world.ensure(.entities, end) } }
            } else if recording.status < 300 {
                if rows.isEmpty, let id = recording.recordId {
                    eTag = try await world.seed(resource, ["id": .string(id)])
                } else {
                    for row in rows { eTag = try await world.seed(resource, row) }
                }
            }
            var request = WireRequest(
                method: HTTPMethod(rawValue: recording.method)!, pathSegments: recording.segments,
                body: recording.requestBody.map { Data($0.utf8) }, operation: recording.id)
            let user = recording.query["uuid"] ?? "myUUID"
            let token = try await world.token(user: user, everything: recording.status != 403)
            for (name, value) in recording.query.sorted(by: { $0.key < $1.key }) {
                request.query.append(QueryItem(name, name == "auth" ? token : value))
            }
            if let type = recording.requestHeader("Content-Type") { request.headers["Content-Type"] = type }
            if recording.requestHeader("If-Match") != nil { request.headers["If-Match"] = eTag }
            let answer = await world.server.respond(request)
            #expect(answer.status == recording.status, "\(recording.id): \(String(decoding: answer.body, as: UTF8.self))")
            if let errors = recording.json?.objectValue?["errors"]?.arrayValue {
                let got = JSONValue.parse(answer.body)?.objectValue?["errors"]?.arrayValue
                #expect(got?.map { $0.objectValue?["errorCode"] } == errors.map { $0.objectValue?["errorCode"] }, "\(recording.id)")
                #expect(got?.map { $0.objectValue?["message"] } == errors.map { $0.objectValue?["message"] }, "\(recording.id)")
            } else if recording.status == 403 {
                #expect(answer.body == Data(recording.body.utf8) && answer.header("content-type") == recording.responseContentType)
            } else if recording.status == 200 || recording.status == 201, let row = rows.first, recording.method != "GET" || rows.count == 1 {
                let got = try PubNubDataSync.row(from: answer, operation: recording.id)
                #expect(got.id == row["id"]?.stringValue && got.className == (row["entityClass"] ?? row["relationshipClass"])?.stringValue)
                #expect(got.payload == row["payload"]?.objectValue && got.status == row["status"]?.stringValue, "\(recording.id)")
            }
        }
    }

    @Test("each recorded e:5 event is published after its write, with the recorded metadata and data members")
    func events() async throws {
        let recordings = try DataSyncRecording.family("events")
        guard !recordings.isEmpty else { return }
        for recording in recordings {
            let element = try #require(recording.json?.objectValue?["m"]?.arrayValue?.first?.objectValue)
            let channel = try #require(element["c"]?.stringValue)
            let d = try #require(element["d"]?.objectValue)
            let metadata = try #require(d["metadata"]?.objectValue)
            let data = try #require(d["data"]?.objectValue)
            let type = metadata["type"]?.stringValue ?? ""
            let resource: DataSyncResource = switch type {
            case "user": .users
            case "channel": .channels
            case "membership": .memberships
            case "relationship": .relationships
            default: .entities
            }
            let world = try Seeded(subscribeKey: recording.segments[2])
            await world.server.configureSubscribe(SubscribeSettings(hold: .milliseconds(200)))
            let className = metadata["className"]?.stringValue
            var classVersion = 1
            if case .int(let version)? = metadata["classVersion"] { classVersion = Int(version) }
            await world.define(className, version: classVersion, level: metadata["classLevel"]?.stringValue, on: resource)
            var row = data
            row["deletedAt"] = nil
            // The channel to listen on: the recorded one when it is the record's id channel (or, for
            // a delete that names no ends, one end's); the Dart captures were rewritten to `ch`.
            let id = data["id"]?.stringValue ?? ""
            let ends = ["channelId", "userId", "entityAId", "entityBId"].compactMap { data[$0]?.stringValue }
            let own = resource.isRelationship ? ends : [id]
            let target = own.isEmpty || own.contains(channel) ? channel : own[0]
            if resource.isRelationship, ends.isEmpty { row[resource == .memberships ? "channelId" : "entityAId"] = .string(channel) }
            if let className { row[resource.isRelationship ? "relationshipClass" : "entityClass"] = .string(className) }
            row[resource.isRelationship ? "relationshipClassVersion" : "entityClassVersion"] = .int(Int64(classVersion))
            if let level = metadata["classLevel"]?.stringValue, !resource.isRelationship { row["entityClassLevel"] = .string(level) }
            let verb = metadata["event"]?.stringValue
            if verb != "create" { try await world.seed(resource, row) } else if resource.isRelationship {
                for key in ["channelId", "entityAId"] { if let end = row[key]?.stringValue { try await world.ensure(resource == .memberships ? .channels : .entities, end) } }
                for key in ["userId", "entityBId"] { if let end = row[key]?.stringValue { try await world.ensure(resource == .memberships ? .users : .entities, end) } }
            }
            let listener = try PubNubClient.simulated(
                InProcessTransport(server: world.server), userId: "listener", subscribeKey: recording.segments[2],
                authToken: try await world.token(user: "listener"), clock: world.clock)
            let handshake = try await listener.subscribe(SubscribeRequest(channels: [target]))
            switch verb {
            case "create": try await world.seed(resource, row)
            case "update":
                var object = DataSyncObject(classVersion: classVersion, status: row["status"]?.stringValue, payload: row["payload"]?.objectValue)
                object.channelId = row["channelId"]?.stringValue
                object.userId = row["userId"]?.stringValue
                object.entityAId = row["entityAId"]?.stringValue
                object.entityBId = row["entityBId"]?.stringValue
                #expect(await world.server.dataSyncAsAdmin(try world.admin.replaceRequest(resource, id: id, object)).status == 200)
            default:
                #expect(await world.server.dataSyncAsAdmin(try world.admin.deleteRequest(resource, id: id)).status == 200)
            }
            let answer = try await listener.subscribe(SubscribeRequest(channels: [target], cursor: handshake.cursor))
            let published = answer.envelopes.filter { envelope in
                if case .dataSync(let event) = envelope.event { return event.row.id == id }
                return false
            }
            #expect(published.count == 1, "\(recording.id): \(answer.envelopes.map(\.event))")
            guard let envelope = published.first, let sent = envelope.payload.objectValue else { continue }
            #expect(envelope.kind == 5 && envelope.channel == target, "\(recording.id)")
            #expect(sent["metadata"]?.objectValue == metadata, "\(recording.id): metadata")
            #expect(Set(sent["data"]?.objectValue?.keys ?? [:].keys) == Set(data.keys), "\(recording.id): data members")
        }
    }
}
