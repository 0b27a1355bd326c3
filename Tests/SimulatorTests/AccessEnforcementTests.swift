import Foundation
import Testing
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel

/// One endpoint under Access Manager: the request (placeholders `{tt}`, `{att}`, `{id}`, `{name}`
/// are the prepared message, reaction and file), what a minimal token must grant, and the answers
/// with and without it.
struct GuardedEndpoint: Sendable, CustomTestStringConvertible {
    var name: String
    var method: String
    var target: String
    var body: String?
    /// The minimal grant that allows it.
    var needs: [AccessRequirement]
    /// The bits taken away from an all-granting token to refuse it (default: ``needs``).
    var refuse: [AccessRequirement]?
    /// The exact 403 body.
    var refusedBody: String
    /// The status when allowed.
    var allowed: Int

    var testDescription: String { name }

    static func channel(_ name: String?, _ bit: AccessPermissions) -> AccessRequirement { AccessRequirement(.channel, name, bit) }
    static func user(_ name: String?, _ bit: AccessPermissions) -> AccessRequirement { AccessRequirement(.uuid, name, bit) }
}

extension GuardedEndpoint {
    static let keys = "pub-c-demo/sub-c-demo"
    static let forbidden = AccessBodies.forbidden(channels: ["room-1"])

    static let all: [GuardedEndpoint] = pubSub + history + actions + objects + files

    static let pubSub: [GuardedEndpoint] = [
        .init(name: "publish (GET)", method: "GET", target: "/publish/\(keys)/0/room-1/0/%22hi%22",
              needs: [channel("room-1", .write)], refusedBody: forbidden, allowed: 200),
        .init(name: "publish (POST)", method: "POST", target: "/publish/\(keys)/0/room-1/0", body: #""hi""#,
              needs: [channel("room-1", .write)], refusedBody: forbidden, allowed: 200),
        .init(name: "signal", method: "GET", target: "/signal/\(keys)/0/room-1/0/%22typing%22",
              needs: [channel("room-1", .write)], refusedBody: forbidden, allowed: 200),
        .init(name: "subscribe", method: "GET", target: "/v2/subscribe/sub-c-demo/room-1/0?tt=0",
              needs: [channel("room-1", .read)], refusedBody: forbidden, allowed: 200),
        .init(name: "subscribe with presence: the refused channel is listed", method: "GET",
              target: "/v2/subscribe/sub-c-demo/room-1,room-1-pnpres/0?tt=0",
              needs: [channel("room-1", .read), channel("room-1-pnpres", .read)], refuse: [channel("room-1-pnpres", .read)],
              refusedBody: AccessBodies.forbidden(channels: ["room-1-pnpres"]), allowed: 200),
        .init(name: "subscribe to a channel group", method: "GET", target: "/v2/subscribe/sub-c-demo/,/0?tt=0&channel-group=g1",
              needs: [AccessRequirement(.group, "g1", .read)], refusedBody: AccessBodies.forbidden(groups: ["g1"]), allowed: 200),
        .init(name: "presence heartbeat", method: "GET", target: "/v2/presence/sub-key/sub-c-demo/channel/room-1/heartbeat?heartbeat=300",
              needs: [channel("room-1", .read)], refusedBody: forbidden, allowed: 200),
        .init(name: "here now", method: "GET", target: "/v2/presence/sub-key/sub-c-demo/channel/room-1",
              needs: [channel("room-1", .read)], refusedBody: forbidden, allowed: 200),
        .init(name: "set presence state", method: "GET",
              target: "/v2/presence/sub-key/sub-c-demo/channel/room-1/uuid/alice/data?state=%7B%22mood%22%3A1%7D",
              needs: [channel("room-1", .read)], refusedBody: forbidden, allowed: 200),
    ]

    static let history: [GuardedEndpoint] = [
        .init(name: "fetch history", method: "GET", target: "/v3/history/sub-key/sub-c-demo/channel/room-1",
              needs: [channel("room-1", .read)], refusedBody: forbidden, allowed: 200),
        .init(name: "history with actions", method: "GET", target: "/v3/history-with-actions/sub-key/sub-c-demo/channel/room-1",
              needs: [channel("room-1", .read)], refusedBody: forbidden, allowed: 200),
        .init(name: "legacy history", method: "GET", target: "/v2/history/sub-key/sub-c-demo/channel/room-1",
              needs: [channel("room-1", .read)], refusedBody: forbidden, allowed: 200),
        .init(name: "message counts", method: "GET", target: "/v3/history/sub-key/sub-c-demo/message-counts/room-1?timetoken=1",
              needs: [channel("room-1", .read)], refusedBody: forbidden, allowed: 200),
        .init(name: "delete messages", method: "DELETE", target: "/v3/history/sub-key/sub-c-demo/channel/room-1",
              needs: [channel("room-1", .delete)], refusedBody: forbidden, allowed: 200),
    ]

    static let actions: [GuardedEndpoint] = [
        .init(name: "add a message action", method: "POST", target: "/v1/message-actions/sub-c-demo/channel/room-1/message/{tt}",
              body: #"{"type":"reaction","value":"wave"}"#,
              needs: [channel("room-1", .write)], refusedBody: AccessBodies.actions, allowed: 200),
        .init(name: "remove a message action", method: "DELETE",
              target: "/v1/message-actions/sub-c-demo/channel/room-1/message/{tt}/action/{att}",
              needs: [channel("room-1", .delete)], refusedBody: AccessBodies.actions, allowed: 200),
        .init(name: "list message actions", method: "GET", target: "/v1/message-actions/sub-c-demo/channel/room-1",
              needs: [channel("room-1", .read)], refusedBody: AccessBodies.actions, allowed: 200),
    ]

    static let objects: [GuardedEndpoint] = [
        .init(name: "get a user", method: "GET", target: "/v2/objects/sub-c-demo/uuids/alice",
              needs: [user("alice", .get)], refusedBody: AccessBodies.objects, allowed: 200),
        .init(name: "set a user", method: "PATCH", target: "/v2/objects/sub-c-demo/uuids/alice", body: #"{"name":"Al"}"#,
              needs: [user("alice", .update)], refusedBody: AccessBodies.objects, allowed: 200),
        .init(name: "remove a user", method: "DELETE", target: "/v2/objects/sub-c-demo/uuids/alice",
              needs: [user("alice", .delete)], refusedBody: AccessBodies.objects, allowed: 200),
        .init(name: "get a channel", method: "GET", target: "/v2/objects/sub-c-demo/channels/room-1",
              needs: [channel("room-1", .get)], refusedBody: AccessBodies.objects, allowed: 200),
        .init(name: "set a channel", method: "PATCH", target: "/v2/objects/sub-c-demo/channels/room-1", body: #"{"name":"Room"}"#,
              needs: [channel("room-1", .update)], refusedBody: AccessBodies.objects, allowed: 200),
        .init(name: "remove a channel", method: "DELETE", target: "/v2/objects/sub-c-demo/channels/room-1",
              needs: [channel("room-1", .delete)], refusedBody: AccessBodies.objects, allowed: 200),
        .init(name: "list every user (category)", method: "GET", target: "/v2/objects/sub-c-demo/uuids",
              needs: [user(nil, .get)], refusedBody: AccessBodies.objects, allowed: 200),
        .init(name: "list every channel (category)", method: "GET", target: "/v2/objects/sub-c-demo/channels",
              needs: [channel(nil, .get)], refusedBody: AccessBodies.objects, allowed: 200),
        .init(name: "get memberships", method: "GET", target: "/v2/objects/sub-c-demo/uuids/alice/channels",
              needs: [user("alice", .get)], refusedBody: AccessBodies.objects, allowed: 200),
        .init(name: "set memberships (join on the user)", method: "PATCH", target: "/v2/objects/sub-c-demo/uuids/alice/channels",
              body: #"{"set":[{"channel":{"id":"room-1"}}]}"#,
              needs: [user("alice", .join)], refuse: [user("alice", .join), user("alice", .update)],
              refusedBody: AccessBodies.objects, allowed: 200),
        .init(name: "set memberships (update on the user, join on the channel)", method: "PATCH",
              target: "/v2/objects/sub-c-demo/uuids/alice/channels", body: #"{"set":[{"channel":{"id":"room-1"}}]}"#,
              needs: [user("alice", .update), channel("room-1", .join)], refuse: [user("alice", .join), channel("room-1", .join)],
              refusedBody: AccessBodies.objects, allowed: 200),
        .init(name: "get members", method: "GET", target: "/v2/objects/sub-c-demo/channels/room-1/uuids",
              needs: [channel("room-1", .get)], refusedBody: AccessBodies.objects, allowed: 200),
        .init(name: "set members", method: "PATCH", target: "/v2/objects/sub-c-demo/channels/room-1/uuids",
              body: #"{"set":[{"uuid":{"id":"alice"}}]}"#,
              needs: [channel("room-1", .manage)], refusedBody: AccessBodies.objects, allowed: 200),
    ]

    static let files: [GuardedEndpoint] = [
        .init(name: "generate an upload URL", method: "POST", target: "/v1/files/sub-c-demo/channels/room-1/generate-upload-url",
              body: #"{"name":"b.txt"}"#, needs: [channel("room-1", .write)], refusedBody: AccessBodies.files, allowed: 200),
        .init(name: "list files", method: "GET", target: "/v1/files/sub-c-demo/channels/room-1/files",
              needs: [channel("room-1", .read)], refusedBody: AccessBodies.files, allowed: 200),
        .init(name: "get a file's URL", method: "GET", target: "/v1/files/sub-c-demo/channels/room-1/files/{id}/{name}",
              needs: [channel("room-1", .read)], refusedBody: AccessBodies.files, allowed: 307),
        .init(name: "delete a file", method: "DELETE", target: "/v1/files/sub-c-demo/channels/room-1/files/{id}/{name}",
              needs: [channel("room-1", .delete)], refusedBody: AccessBodies.files, allowed: 200),
        .init(name: "publish a file message", method: "GET",
              target: "/v1/files/publish-file/\(keys)/0/room-1/0/{filemessage}?store=1",
              needs: [channel("room-1", .write)], refusedBody: AccessBodies.files, allowed: 200),
    ]
}

/// A world with a message, a reaction (alice's, so that she may remove it), a user, a channel and
/// an uploaded file on `room-1`, made by admin (signed) requests.
struct PreparedAccessWorld {
    let world = AccessWorld()
    var values: [String: String] = [:]

    static func make() async throws -> PreparedAccessWorld {
        var prepared = PreparedAccessWorld()
        let world = prepared.world
        let published = try await world.sendSigned("GET", "/publish/pub-c-demo/sub-c-demo/0/room-1/0/%22hello%22?uuid=admin")
        let tt = try #require(JSONValue.parse(published.body)?.arrayValue?.last?.stringValue)
        let action = try await world.sendSigned(
            "POST", "/v1/message-actions/sub-c-demo/channel/room-1/message/\(tt)?uuid=alice", body: #"{"type":"reaction","value":"smile"}"#)
        let att = try #require(JSONValue.parse(action.body)?.objectValue?["data"]?.objectValue?["actionTimetoken"]?.stringValue)
        #expect(try await world.sendSigned("PATCH", "/v2/objects/sub-c-demo/uuids/alice?uuid=admin", body: #"{"name":"Alice"}"#).status == 200)
        #expect(try await world.sendSigned("PATCH", "/v2/objects/sub-c-demo/channels/room-1?uuid=admin", body: #"{"name":"Room 1"}"#).status == 200)
        let generated = try await world.sendSigned(
            "POST", "/v1/files/sub-c-demo/channels/room-1/generate-upload-url?uuid=admin", body: #"{"name":"a.txt"}"#)
        let top = try #require(JSONValue.parse(generated.body)?.objectValue)
        let id = try #require(top["data"]?.objectValue?["id"]?.stringValue)
        let request = try #require(top["file_upload_request"]?.objectValue)
        let url = try #require(request["url"]?.stringValue)
        let fields = try #require(request["form_fields"]?.arrayValue).compactMap { item -> (key: String, value: String)? in
            guard let key = item.objectValue?["key"]?.stringValue, let value = item.objectValue?["value"]?.stringValue else { return nil }
            return (key, value)
        }
        // The presigned upload carries its own signed form: no token, no signature.
        let (body, type) = FileWorld.multipart(fields, file: Data("bytes".utf8), filename: "a.txt")
        let origin = await world.server.storageOrigin
        let upload = try #require(RawRequest(method: "POST", target: String(url.dropFirst(origin.count)), headers: ["Content-Type": type], body: body).decoded())
        #expect(await world.server.respond(upload).status == 204)
        let fileMessage = try JSONValue.object(["message": "hi", "file": ["id": .string(id), "name": "a.txt"]]).jsonString()
        prepared.values = ["{tt}": tt, "{att}": att, "{id}": id, "{name}": "a.txt", "{filemessage}": PercentEncoding.pathSegment(fileMessage)]
        return prepared
    }

    func target(_ endpoint: GuardedEndpoint) -> String {
        values.reduce(endpoint.target) { $0.replacingOccurrences(of: $1.key, with: $1.value) }
    }
}

@Suite("Access Manager: every endpoint family refused without its permission, allowed with it")
struct AccessEnforcementTests {
    /// A token granting every bit on every resource of the tests, minus `refuse`.
    static func everythingBut(_ refuse: [AccessRequirement]) -> AccessGrants {
        var grants = AccessGrants(
            resources: [
                .channel: ["room-1": AccessPermissions(rawValue: 255), "room-1-pnpres": AccessPermissions(rawValue: 255)],
                .group: ["g1": AccessPermissions(rawValue: 255)], .uuid: ["alice": AccessPermissions(rawValue: 255)],
            ],
            categories: [.channel: AccessPermissions(rawValue: 255), .uuid: AccessPermissions(rawValue: 255)])
        for requirement in refuse {
            if let name = requirement.name {
                grants.resources[requirement.kind]?[name]?.subtract(requirement.permission)
            } else {
                grants.categories[requirement.kind]?.subtract(requirement.permission)
            }
        }
        return grants
    }

    /// A token granting exactly `needs`.
    static func only(_ needs: [AccessRequirement]) -> AccessGrants {
        var grants = AccessGrants()
        for requirement in needs {
            if let name = requirement.name {
                grants.resources[requirement.kind, default: [:]][name, default: []].formUnion(requirement.permission)
            } else {
                grants.categories[requirement.kind, default: []].formUnion(requirement.permission)
            }
        }
        return grants
    }

    @Test("refused with the family's exact 403 when the one permission it needs is missing; nothing changes", arguments: GuardedEndpoint.all)
    func refusedWithoutThePermission(_ endpoint: GuardedEndpoint) async throws {
        let prepared = try await PreparedAccessWorld.make()
        let world = prepared.world
        let before = await world.server.stateDigest()
        let token = try await world.token(Self.everythingBut(endpoint.refuse ?? endpoint.needs))
        let answer = try await world.send(endpoint.method, prepared.target(endpoint), body: endpoint.body, token: token)
        #expect(answer.status == 403)
        #expect(AccessWorld.text(answer) == endpoint.refusedBody)
        #expect(await world.server.stateDigest() == before, "a refused request changed the server")
    }

    @Test("allowed with a token granting only that permission", arguments: GuardedEndpoint.all)
    func allowedWithThePermission(_ endpoint: GuardedEndpoint) async throws {
        let prepared = try await PreparedAccessWorld.make()
        let world = prepared.world
        let token = try await world.token(Self.only(endpoint.needs))
        let answer = try await world.send(endpoint.method, prepared.target(endpoint), body: endpoint.body, token: token)
        #expect(answer.status == endpoint.allowed, "\(AccessWorld.text(answer))")
        // And refused with no token at all.
        let none = try await world.send(endpoint.method, prepared.target(endpoint), body: endpoint.body, token: nil)
        #expect(none.status == 403)
    }

    @Test("the presigned download needs nothing: a 307 under a token, then the storage URL with no token")
    func presignedDownloadNeedsNothing() async throws {
        let prepared = try await PreparedAccessWorld.make()
        let world = prepared.world
        let token = try await world.token(Self.only([GuardedEndpoint.channel("room-1", .read)]))
        let located = try await world.send(
            "GET", prepared.target(GuardedEndpoint.files[2]), token: token)
        let location = try #require(located.header("Location"))
        let origin = await world.server.storageOrigin
        let download = try await world.send("GET", String(location.dropFirst(origin.count)))
        #expect(download.status == 200 && download.body == Data("bytes".utf8))
    }
}
