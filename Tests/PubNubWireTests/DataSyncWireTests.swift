/// DataSync at the wire: every answer of `../shared/recordings/datasync/` (users, channels,
/// memberships, entities, relationships, errors, events) decodes with its fields, compared with
/// the recording's raw JSON; the request this client builds for each recorded operation equals
/// the recorded one (method, path, query, body, content type, If-Match); JSON Patch follows
/// RFC 6902. Without the folder the recording tests pass quietly, except under CI.
import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import Testing

extension DataSyncRecording {
    /// Every recording; nil without the folder, which fails under CI.
    static func checked() throws -> [DataSyncRecording]? {
        let all = try all()
        if all == nil, ProcessInfo.processInfo.environment["CI"] != nil { Issue.record("no DataSync recordings at \(folder.path)") }
        return all
    }
}

@Suite("DataSync at the wire: the recordings, the requests, JSON Patch")
struct DataSyncWireTests {
    static func pubnub(_ transport: any Transport, subscribeKey: String = "mySubKey") throws -> PubNubClient {
        let configuration = try PubNubConfiguration(
            publishKey: "pub-c-test", subscribeKey: subscribeKey, userId: "myUUID", origin: "127.0.0.1:9", secure: false,
            authKey: "myAuthKey")
        return PubNubClient(configuration: configuration, transport: transport)
    }

    /// A row's fields equal the raw JSON object's, member by member.
    static func expectRow(_ row: DataSyncRow, equals raw: [String: JSONValue], _ id: String) {
        func time(_ key: String) -> ISOTimestamp? { raw[key]?.stringValue.flatMap { try? ISOTimestamp(parsing: $0) } }
        #expect(row.id == raw["id"]?.stringValue, "\(id): id")
        #expect(row.eTag == raw["eTag"]?.stringValue, "\(id): eTag")
        #expect(row.status == raw["status"]?.stringValue, "\(id): status")
        #expect(row.payload == raw["payload"]?.objectValue, "\(id): payload")
        #expect(row.createdAt == time("createdAt") && row.updatedAt == time("updatedAt"), "\(id): createdAt, updatedAt")
        #expect(row.expiresAt == time("expiresAt") && row.deletedAt == time("deletedAt"), "\(id): expiresAt, deletedAt")
        for key in ["createdAt", "updatedAt", "expiresAt", "deletedAt"] where raw[key] != nil {
            #expect(time(key) != nil, "\(id): \(key) is a timestamp")
        }
        #expect(row.className == (raw["entityClass"] ?? raw["relationshipClass"])?.stringValue, "\(id): class")
        let version = (raw["entityClassVersion"] ?? raw["relationshipClassVersion"]).flatMap { value -> Int? in
            if case .int(let number) = value { return Int(number) }
            return nil
        }
        #expect(row.classVersion == version && row.classLevel == raw["entityClassLevel"]?.stringValue, "\(id): class version, level")
        #expect(row.channelId == raw["channelId"]?.stringValue && row.userId == raw["userId"]?.stringValue, "\(id): links")
        #expect(row.entityAId == raw["entityAId"]?.stringValue && row.entityBId == raw["entityBId"]?.stringValue, "\(id): ends")
    }

    // MARK: Answers

    @Test("the tests below exercise every file of the folder but index.json")
    func everyFile() throws {
        guard let recordings = try DataSyncRecording.checked() else { return }
        let files = try FileManager.default.contentsOfDirectory(atPath: DataSyncRecording.folder.path).filter { $0.hasSuffix(".json") }
        let families = ["users", "channels", "memberships", "entities", "relationships", "errors", "events"].map { "datasync_" + $0 }
        #expect(recordings.count == files.count - 1 && recordings.allSatisfy { families.contains($0.family) })
    }

    @Test("every REST answer decodes with every field of the recording", arguments: ["users", "channels", "memberships", "entities", "relationships"])
    func restAnswers(_ family: String) async throws {
        let recordings = try DataSyncRecording.family(family)
        guard !recordings.isEmpty || ProcessInfo.processInfo.environment["CI"] != nil else { return }
        #expect(!recordings.isEmpty)
        for recording in recordings {
            let response = recording.response()
            #expect((200..<300).contains(recording.status), "\(recording.id): a success")
            switch recording.json {
            case nil:
                // DELETE answers 200 with an empty body.
                #expect(recording.method == "DELETE" && recording.body.isEmpty, "\(recording.id): empty only for a delete")
            case .object(let object)?:
                if case .array(let items)? = object["data"] {
                    let page = try PubNubDataSync.page(from: response, operation: recording.id)
                    #expect(page.skipped.isEmpty && page.data.count == items.count, "\(recording.id): \(page.skipped)")
                    for (row, item) in zip(page.data, items) { Self.expectRow(row, equals: item.objectValue ?? [:], recording.id) }
                    let meta = object["meta"]?.objectValue
                    #expect(page.hasNext == (meta?["has_next"] == .bool(true)), "\(recording.id): has_next")
                    #expect(page.nextCursor == meta?["next_cursor"]?.stringValue, "\(recording.id): next_cursor")
                    if !page.hasNext { #expect(page.next == nil) }
                } else {
                    let row = try PubNubDataSync.row(from: response, operation: recording.id)
                    Self.expectRow(row, equals: object["data"]?.objectValue ?? [:], recording.id)
                }
            default:
                Issue.record("\(recording.id): an answer that is not an object")
            }
        }
    }

    @Test("every error answer is a typed service error with its status and DS- codes")
    func errorAnswers() async throws {
        let recordings = try DataSyncRecording.family("errors")
        guard !recordings.isEmpty else { return }
        for recording in recordings {
            let pubnub = try Self.pubnub(RecordingTransport { _ in recording.response() })
            var caught: ServiceError?
            var waitsForToken = false
            do {
                _ = try await pubnub.dataSync.list(.users)
            } catch {
                if case .service(let service) = error { caught = service }
                if case .accessDenied(let denial) = error, case .refused(let service) = denial.reason {
                    (caught, waitsForToken) = (service, true)
                }
            }
            guard let error = caught else {
                Issue.record("\(recording.id): no service error")
                continue
            }
            let items = recording.json?.objectValue?["errors"]?.arrayValue
            let codes = items?.compactMap { $0.objectValue?["errorCode"]?.stringValue } ?? []
            #expect(error.status == recording.status && error.codes == codes, "\(recording.id): \(error)")
            #expect(error.family == (items != nil ? .dataSync : recording.json == nil ? .unknown : .legacyService), "\(recording.id)")
            let expected = DataSyncErrors.reason(codes: codes) ?? ServiceError.reason(forStatus: recording.status)
            #expect(error.reason == expected, "\(recording.id): \(error.reason)")
            if let first = items?.first?.objectValue, let message = first["message"]?.stringValue, !message.isEmpty {
                #expect(error.message == message, "\(recording.id): the first item's message")
            }
            #expect(error.details.count == (items?.count ?? 0), "\(recording.id): one detail per item")
            // Only Access Manager's own refusal waits for a new token; a DataSync 403 (DS-0201, DS-0202) never does.
            #expect(waitsForToken == (recording.status == 403 && error.family != .dataSync), "\(recording.id): token wait")
        }
    }

    @Test("the DS- codes are classified once", arguments: [
        (["DS-0100"], ServiceError.Reason?.some(.notFound)), (["DS-0201"], .notConfigured), (["DS-0203"], .notConfigured),
        (["DS-0006"], .notConfigured), (["DS-0202"], .outsideProjection), (["DS-0302"], .preconditionFailed),
        (["DS-0801"], .conflict), (["DS-0005"], .badRequest), (["DS-0004", "DS-0202"], .outsideProjection),
        (["DS-0300"], .preconditionFailed), (["DS-0008"], .badRequest), (["DS-0650"], .badRequest), (["DS-1001"], .badRequest),
        (["SYN-0004"], nil), ([], nil),
    ])
    func classification(codes: [String], reason: ServiceError.Reason?) {
        #expect(DataSyncErrors.reason(codes: codes) == reason)
    }

    @Test("every recorded e:5 event decodes with its verb, type, class and record")
    func events() throws {
        let recordings = try DataSyncRecording.family("events")
        guard !recordings.isEmpty else { return }
        #expect(recordings.count == 12)
        for recording in recordings {
            let answer = try PubNubClient.subscribeAnswer(from: recording.response())
            let raw = recording.json?.objectValue?["m"]?.arrayValue ?? []
            #expect(answer.envelopes.count == raw.count && !raw.isEmpty, "\(recording.id)")
            for (envelope, element) in zip(answer.envelopes, raw) {
                guard case .dataSync(let event) = envelope.event else {
                    Issue.record("\(recording.id): \(envelope.event)")
                    continue
                }
                let d = element.objectValue?["d"]?.objectValue
                let metadata = d?["metadata"]?.objectValue ?? [:]
                let data = d?["data"]?.objectValue ?? [:]
                #expect(event.type == metadata["type"]?.stringValue && event.className == metadata["className"]?.stringValue)
                #expect(event.classLevel == metadata["classLevel"]?.stringValue)
                #expect(event.classVersion.map { JSONValue.int(Int64($0)) } == metadata["classVersion"], "\(recording.id)")
                switch metadata["event"]?.stringValue {
                case "create": #expect(event.verb == .create)
                case "update": #expect(event.verb == .update)
                case "delete": #expect(event.verb == .delete && event.row.deletedAt != nil && event.row.payload == nil)
                default: Issue.record("\(recording.id): verb")
                }
                #expect(envelope.channel == element.objectValue?["c"]?.stringValue)
                Self.expectRow(event.row, equals: data, recording.id)
            }
        }
    }

    @Test("an e:5 that is not DataSync's shape is unknown; DataSync's with bad data is unreadable; older shapes decode")
    func eventShapes() throws {
        func event(_ d: String) throws -> SubscribeEvent {
            let body = #"{"t":{"t":"2","r":1},"m":[{"e":5,"c":"u1","p":{"t":"1","r":1},"d":"# + d + "}]}"
            return try PubNubClient.subscribeAnswer(from: WireResponse(status: 200, headers: [:], body: Data(body.utf8))).envelopes[0].event
        }
        #expect(try event(#"{"hello":1}"#) == .unknown(kind: 5))
        #expect(try event(#"{"metadata":{"event":"create","source":"elsewhere","type":"user"},"data":{"id":"u1"}}"#) == .unknown(kind: 5))
        guard case .unreadable = try event(#"{"metadata":{"event":"create","source":"data-sync","type":"user"},"data":{"id":7}}"#) else {
            Issue.record("a DataSync event whose id is not a string is unreadable")
            return
        }
        let older = try event(#"{"metadata":{"event":"update","source":"data-sync","type":"relationship","className":"Membership"},"data":{"id":"m1","entityAId":"c1","entityBId":"u1","eTag":"e","updatedAt":"2026-08-13T03:45:57.918497Z"}}"#)
        guard case .dataSync(let membership) = older else {
            Issue.record("an older membership shape decodes")
            return
        }
        #expect(membership.type == "relationship" && membership.row.entityAId == "c1" && membership.row.entityBId == "u1")
        guard case .dataSync(let other) = try event(#"{"metadata":{"event":"expire","source":"data-sync","type":"user"},"data":{"id":"u1"}}"#) else {
            Issue.record("an unknown verb still decodes")
            return
        }
        #expect(other.verb == .other("expire"))
    }

    // MARK: Requests

    /// What the recorded request's body says, as this client's object.
    static func object(from body: JSONValue?) -> DataSyncObject {
        let data = body?.objectValue?["data"]?.objectValue ?? [:]
        var object = DataSyncObject(id: data["id"]?.stringValue)
        object.className = (data["entityClass"] ?? data["relationshipClass"])?.stringValue
        if case .int(let version)? = data["entityClassVersion"] ?? data["relationshipClassVersion"] { object.classVersion = Int(version) }
        object.classLevel = data["entityClassLevel"]?.stringValue.flatMap(DataSyncClassLevel.init(rawValue:))
        object.channelId = data["channelId"]?.stringValue
        object.userId = data["userId"]?.stringValue
        object.entityAId = data["entityAId"]?.stringValue
        object.entityBId = data["entityBId"]?.stringValue
        object.status = data["status"]?.stringValue
        object.payload = data["payload"]?.objectValue
        return object
    }

    static func listQuery(_ query: [String: String]) -> DataSyncListQuery {
        var result = DataSyncListQuery()
        result.limit = query["limit"].flatMap { Int($0) } ?? 100
        result.cursor = query["cursor"]
        result.filterFast = query["filter_fast"]
        result.filter = query["filter"]
        result.sort = query["sort"].map { $0.split(separator: ",").map(String.init) } ?? []
        result.userId = query["user_id"]
        result.channelId = query["channel_id"]
        result.entityAId = query["entity_a_id"]
        result.entityBId = query["entity_b_id"]
        result.className = query["entity_class"] ?? query["relationship_class"]
        result.classVersion = (query["entity_class_version"] ?? query["relationship_class_version"]).flatMap { Int($0) }
        result.classLevel = query["entity_class_level"].flatMap(DataSyncClassLevel.init(rawValue:))
        return result
    }

    @Test("the request built for each recorded operation is the recorded request", arguments: ["users", "channels", "memberships", "entities", "relationships"])
    func requests(_ family: String) throws {
        let recordings = try DataSyncRecording.family(family)
        guard !recordings.isEmpty else { return }
        for recording in recordings {
            let sync = try Self.pubnub(RecordingTransport(body: ""), subscribeKey: recording.segments[3]).dataSync
            guard let resource = recording.resource else {
                Issue.record("\(recording.id): no resource in \(recording.requestPath ?? "-")")
                continue
            }
            let body = recording.requestJSON
            // A stub that kept no body (relationships-08) tells nothing of the request's.
            if body == nil, ["POST", "PUT", "PATCH"].contains(recording.method) { continue }
            let ifMatch = recording.requestHeaders?.first { $0.key.lowercased() == "if-match" }?.value
            let request: WireRequest
            switch (recording.method, recording.recordId) {
            case ("GET", nil): request = try sync.listRequest(resource, Self.listQuery(recording.query))
            case ("GET", let id?): request = try sync.getRequest(resource, id: id)
            case ("POST", nil): request = try sync.createRequest(resource, Self.object(from: body))
            case ("PUT", let id?): request = try sync.replaceRequest(resource, id: id, Self.object(from: body), ifMatch: ifMatch)
            case ("PATCH", let id?):
                let operations = try (body?.arrayValue ?? []).map { json throws in try JSONPatchOperation(json: json) }
                request = try sync.patchRequest(resource, id: id, operations, ifMatch: ifMatch)
            case ("DELETE", let id?): request = try sync.deleteRequest(resource, id: id, ifMatch: ifMatch)
            default:
                Issue.record("\(recording.id): \(recording.method) \(recording.requestPath ?? "-")")
                continue
            }
            #expect(request.method.rawValue == recording.method && request.pathSegments == recording.segments, "\(recording.id)")
            var query: [String: String] = [:]
            // A unit-test stub's query (entities-15…17) leaves out the SDK's common parameters.
            let common: Set<String> = recording.query["uuid"] == nil ? ["pnsdk", "uuid", "auth"] : ["pnsdk"]
            for item in request.query where !common.contains(item.name) { query[item.name] = item.value ?? "" }
            if recording.requestQuery != nil { #expect(query == recording.query, "\(recording.id): query") }
            #expect(request.body.flatMap { JSONValue.parse($0) } == body, "\(recording.id): body")
            #expect(request.headers["If-Match"] == ifMatch, "\(recording.id): If-Match")
            let contentType = recording.requestHeaders?.first { $0.key.lowercased() == "content-type" }?.value
            if let contentType { #expect(request.headers["Content-Type"] == contentType, "\(recording.id): content type") }
        }
    }

    @Test("ids DataSync forbids and bad bodies are refused before sending")
    func refusedBeforeSending() throws {
        let transport = RecordingTransport(body: "")
        let sync = try Self.pubnub(transport).dataSync
        for id in ["a:b", "a,b", "a*", "a/b", #"a\b"#, "a b", "a\tb", "a\u{7}", "", String(repeating: "x", count: 256)] {
            #expect(throws: WireError.self, "\(id.debugDescription)") { try sync.getRequest(.users, id: id) }
        }
        _ = try sync.getRequest(.users, id: String(repeating: "é", count: 255))
        #expect(throws: WireError.self) { try sync.patchRequest(.users, id: "u", []) }
        #expect(throws: WireError.self) { try sync.createRequest(.memberships, DataSyncObject(id: "m", channelId: "c")) }
        #expect(throws: WireError.self) { try sync.createRequest(.entities, DataSyncObject(id: "e")) }
        #expect(throws: WireError.self) { try sync.createRequest(.users, DataSyncObject(id: "u", status: "")) }
        var both = DataSyncListQuery()
        (both.filter, both.filterFast) = ("a == 1", "b == 2")
        #expect(throws: WireError.self) { try sync.listRequest(.users, both) }
        var big = DataSyncListQuery()
        big.limit = 101
        #expect(throws: WireError.self) { try sync.listRequest(.users, big) }
        #expect(throws: WireError.self) { try sync.listRequest(.entities) }
    }

    // MARK: Access

    @Test("each DataSync request needs its permission on its record", arguments: [
        ("GET", "users/alice", AccessRequirement(.user, "alice", .get)),
        ("PATCH", "users/alice", AccessRequirement(.user, "alice", .update)),
        ("PUT", "channels/general", AccessRequirement(.channel, "general", .update)),
        ("DELETE", "memberships/m-1", AccessRequirement(.dataSyncMembership, "m-1", .delete)),
        ("POST", "memberships", AccessRequirement(.dataSyncMembership, "m-1", .create)),
        ("GET", "entities/e1", AccessRequirement(.dataSyncEntity, "e1", .get)),
        ("DELETE", "relationships/r1", AccessRequirement(.dataSyncRelationship, "r1", .delete)),
    ])
    func accessNeeds(method: String, path: String, requirement: AccessRequirement) {
        let body = method == "POST" ? Data(#"{"data":{"id":"m-1","channelId":"c","userId":"u"}}"#.utf8) : nil
        let request = WireRequest(
            method: HTTPMethod(rawValue: method)!, pathSegments: ["v1", "datasync", "subkeys", "sub"] + path.split(separator: "/").map(String.init),
            body: body, operation: "test")
        #expect(AccessNeed.of(request) == .all([requirement]))
        let list = WireRequest(method: .get, pathSegments: ["v1", "datasync", "subkeys", "sub", "users"], operation: "list")
        #expect(AccessNeed.of(list) == .all([]))
    }

    @Test("a token granting DataSync's resources parses with them, and they cover the right needs")
    func dataSyncToken() async throws {
        let grants = AccessGrants(
            resources: [.user: ["alice": [.get, .update]], .channel: ["general": .get]],
            patterns: [.dataSyncMembership: [#"^pnm\.5\.[0-9]+\.alice\..*$"#: [.get, .create, .update, .delete]]])
        let server = PubNubServer(clock: HandClock(), secretKey: "s")
        let token = try AccessToken(parsing: try await server.grantToken(grants: grants, authorizedUserId: "alice"))
        #expect(token.grants.resources.filter { !$0.value.isEmpty } == grants.resources)
        #expect(token.grants.patterns.filter { !$0.value.isEmpty } == grants.patterns)
        #expect(token.grants.permissions(.dataSyncMembership, name: "pnm.5.7.alice.general").contains(.create))
        #expect(token.grants.permissions(.dataSyncMembership, name: "pnm.3.7.bob.general").isEmpty)
        #expect(token.grants.permissions(.user, name: "alice") == [.get, .update])
        let shown = token.parsedJSON.objectValue
        #expect(shown?["resources"]?.objectValue?["users"] == nil, "parse_token's sections stay its own")
        #expect(shown?["datasync"]?.objectValue?["patterns"]?.objectValue?["datasync:memberships"] != nil)
        #expect(shown?["datasync"]?.objectValue?["resources"]?.objectValue?["users"]?.objectValue?["alice"]?.objectValue?["update"] == true)
        let body: JSONValue = ["ttl": 60, "permissions": ["resources": ["users": ["u": 96], "datasync:memberships": ["m": 32]]]]
        let parsed = try TokenGrant(body: body)
        #expect(parsed.grants.resources[.user] == ["u": [.get, .update]] && parsed.grants.resources[.dataSyncMembership] == ["m": .get])
    }

    // MARK: JSON Patch

    @Test("JSON Pointers escape ~ and / (RFC 6901)")
    func pointers() throws {
        #expect(JSONPointer(["payload", "a/b", "m~n", ""]).text == "/payload/a~1b/m~0n/")
        #expect(try JSONPointer(parsing: "/payload/a~1b/m~0n/").tokens == ["payload", "a/b", "m~n", ""])
        #expect(try JSONPointer(parsing: "/~01").tokens == ["~1"])
        #expect(try JSONPointer(parsing: "").tokens.isEmpty)
        for bad in ["payload", "/a~2", "/a~"] { #expect(throws: JSONPatchError.self) { try JSONPointer(parsing: bad) } }
    }

    /// RFC 6902 Appendix A, the cases with a result and the ones that must fail.
    @Test("JSON Patch applies RFC 6902's examples", arguments: [
        (#"{"foo":"bar"}"#, #"[{"op":"add","path":"/baz","value":"qux"}]"#, #"{"baz":"qux","foo":"bar"}"#),
        (#"{"foo":["bar","baz"]}"#, #"[{"op":"add","path":"/foo/1","value":"qux"}]"#, #"{"foo":["bar","qux","baz"]}"#),
        (#"{"baz":"qux","foo":"bar"}"#, #"[{"op":"remove","path":"/baz"}]"#, #"{"foo":"bar"}"#),
        (#"{"foo":["bar","qux","baz"]}"#, #"[{"op":"remove","path":"/foo/1"}]"#, #"{"foo":["bar","baz"]}"#),
        (#"{"baz":"qux","foo":"bar"}"#, #"[{"op":"replace","path":"/baz","value":"boo"}]"#, #"{"baz":"boo","foo":"bar"}"#),
        (#"{"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}}"#, #"[{"op":"move","from":"/foo/waldo","path":"/qux/thud"}]"#,
         #"{"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}}"#),
        (#"{"foo":["all","grass","cows","eat"]}"#, #"[{"op":"move","from":"/foo/1","path":"/foo/3"}]"#, #"{"foo":["all","cows","eat","grass"]}"#),
        (#"{"baz":"qux","foo":["a",2,"c"]}"#, #"[{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}]"#,
         #"{"baz":"qux","foo":["a",2,"c"]}"#),
        (#"{"foo":"bar"}"#, #"[{"op":"add","path":"/child","value":{"grandchild":{}}}]"#, #"{"foo":"bar","child":{"grandchild":{}}}"#),
        (#"{"/":9,"~1":10}"#, #"[{"op":"test","path":"/~01","value":10}]"#, #"{"/":9,"~1":10}"#),
        (#"{"foo":["bar"]}"#, #"[{"op":"add","path":"/foo/-","value":["abc","def"]}]"#, #"{"foo":["bar",["abc","def"]]}"#),
        (#"{"foo":1}"#, #"[{"op":"copy","from":"/foo","path":"/bar"},{"op":"test","path":"/bar","value":1.0}]"#, #"{"foo":1,"bar":1}"#),
        (#"{"baz":"qux"}"#, #"[{"op":"test","path":"/baz","value":"bar"}]"#, "error"),
        (#"{"foo":"bar"}"#, #"[{"op":"add","path":"/baz/bat","value":"qux"}]"#, "error"),
        (#"{"/":9,"~1":10}"#, #"[{"op":"test","path":"/~01","value":"10"}]"#, "error"),
        (#"{"foo":"bar"}"#, #"[{"op":"replace","path":"/nope","value":1}]"#, "error"),
        (#"{"foo":"bar"}"#, #"[{"op":"remove","path":"/nope"}]"#, "error"),
        (#"{"foo":["a"]}"#, #"[{"op":"add","path":"/foo/01","value":1}]"#, "error"),
        (#"{"foo":{"a":1}}"#, #"[{"op":"move","from":"/foo","path":"/foo/b"}]"#, "error"),
    ])
    func rfcExamples(document: String, patch: String, result: String) throws {
        let doc = try #require(JSONValue.parse(text: document))
        let operations = try (JSONValue.parse(text: patch)?.arrayValue ?? []).map { json throws in try JSONPatchOperation(json: json) }
        if result == "error" {
            #expect(throws: JSONPatchError.self) { try JSONPatch.apply(operations, to: doc) }
        } else {
            #expect(try JSONPatch.apply(operations, to: doc) == JSONValue.parse(text: result))
        }
        #expect(operations.map(\.json) == JSONValue.parse(text: patch)?.arrayValue, "each operation writes back as read")
    }

    @Test("a patch is all or nothing: a failing operation after others changes nothing")
    func atomic() throws {
        let doc: JSONValue = ["status": "active", "payload": ["name": "Alice"]]
        #expect(throws: JSONPatchError.testFailed(JSONPointer(["payload", "name"]))) {
            try JSONPatch.apply(
                [.replace(JSONPointer(["status"]), "away"), .test(JSONPointer(["payload", "name"]), "Bob")], to: doc)
        }
        #expect(try JSONPatch.apply([.add(JSONPointer(["payload", "name"]), "Al")], to: doc) == ["status": "active", "payload": ["name": "Al"]])
    }
}
