import Foundation
import Testing
import PubNubWire
import ReplicaModel

@Suite("Requests follow PubNub's wire format")
struct RequestShapeTests {
    @Test("path segments are encoded one by one: / becomes %2F, + stays a plus")
    func pathEncoding() {
        let request = WireRequest(method: .get, pathSegments: ["v3", "a/b c+d,e"], operation: "x")
        #expect(request.encodedPath == "/v3/a%2Fb%20c+d,e")
        #expect(PercentEncoding.decode("a%2Fb%20c+d") == "a/b c+d")
        #expect(PercentEncoding.decode("%zz") == nil)
    }

    @Test("query values encode + and ? and keep valueless keys")
    func queryEncoding() {
        let request = WireRequest(
            method: .get, pathSegments: [], query: [QueryItem("filter", "a+b?c=d&e"), QueryItem("ee", nil)], operation: "x")
        #expect(request.encodedQuery == "filter=a%2Bb%3Fc%3Dd%26e&ee")
    }

    @Test("origins: host[:port] over https by default, or a full http URL", arguments: [
        ("ps.pndsn.com", "https://ps.pndsn.com"),
        ("127.0.0.1:8090", "https://127.0.0.1:8090"),
        ("http://127.0.0.1:8090", "http://127.0.0.1:8090"),
        ("https://example.com/", "https://example.com"),
    ])
    func origins(_ text: String, _ expected: String) throws {
        #expect(try Origin(parsing: text).description == expected)
    }

    @Test("bad origins are rejected with a typed error", arguments: ["", ":80", "host:0", "host:x", "a:1:2"])
    func badOrigins(_ text: String) {
        #expect(throws: WireError.self) { try Origin(parsing: text) }
    }

    @Test("configuration descriptions never show keys")
    func redaction() throws {
        let configuration = try PubNubConfiguration(
            publishKey: "pub-c-0123456789abcdef", subscribeKey: "sub-c-fedcba9876543210", userId: "me", authKey: "secret")
        #expect(!configuration.description.contains("0123456789abcdef"))
        #expect(!configuration.description.contains("fedcba9876543210"))
        #expect(!configuration.description.contains("secret"))
    }

    @Test("publish GET puts the JSON in the path, POST in the body, gzip compresses it; meta and store travel in the query")
    func publishShapes() async throws {
        let transport = RecordingTransport(body: #"[1,"Sent","17000000000000001"]"#)
        let pubnub = try client(transport, auth: "tok")
        let message: JSONValue = ["id": "m1", "text": "hi/there"]
        for method in [PublishRequest.Method.get, .post, .postGzip] {
            let tt = try await pubnub.publish(
                PublishRequest(channel: "ch/1", message: message, method: method, store: true, meta: ["op": "op-1"]))
            #expect(tt == 17_000_000_000_000_001)
        }
        let (get, post, gzip) = (transport.requests[0], transport.requests[1], transport.requests[2])
        #expect(get.method == .get && get.encodedPath.hasPrefix("/publish/pub-c-test/sub-c-test/0/ch%2F1/0/"))
        #expect(try JSONValue(jsonData: Data(PercentEncoding.decode(String(get.encodedPath.split(separator: "/").last!))!.utf8)) == message)
        #expect(post.method == .post && post.encodedPath == "/publish/pub-c-test/sub-c-test/0/ch%2F1/0")
        #expect(try JSONValue(jsonData: post.body!) == message)
        #expect(gzip.headers["Content-Encoding"] == "gzip")
        #expect(try JSONValue(jsonData: Gzip.decompress(gzip.body!)) == message)
        #expect(post.queryValue("meta") == #"{"op":"op-1"}"#)
        #expect(post.queryValue("store") == "1" && post.queryValue("uuid") == "me" && post.queryValue("auth") == "tok")
    }

    @Test("history max is capped at 100 for one channel and 25 for several or with actions")
    func historyCaps() async throws {
        let transport = RecordingTransport(body: #"{"status":200,"error":false,"error_message":"","channels":{}}"#)
        let pubnub = try client(transport)
        _ = try await pubnub.history.fetchHistory(HistoryQuery(channels: ["a"], max: 500, start: 20, end: 10))
        _ = try await pubnub.history.fetchHistory(HistoryQuery(channels: ["a", "b"], max: 100))
        _ = try await pubnub.history.fetchHistoryWithActions(HistoryQuery(channels: ["a"]))
        let requests = transport.requests
        #expect(requests.map { $0.queryValue("max") } == ["100", "25", "25"])
        #expect(requests[0].queryValue("start") == "20" && requests[0].queryValue("end") == "10")
        #expect(requests[1].encodedPath == "/v3/history/sub-key/sub-c-test/channel/a,b")
        #expect(requests[2].encodedPath == "/v3/history-with-actions/sub-key/sub-c-test/channel/a")
        await #expect(throws: WireError.self) { try await pubnub.history.fetchHistoryWithActions(HistoryQuery(channels: ["a", "b"])) }
    }

    @Test("set user sends If-Match and only the given fields; null clears")
    func setUserShape() throws {
        let pubnub = try client(RecordingTransport(body: "{}"))
        var fields = UserEdit<FlatCustom>()
        fields.name = .set("Jane")
        fields.email = .set(nil)
        let request = try pubnub.appContext.setUserRequest(id: "u1", fields: fields, ifMatch: "AYGyoY3gre71eA")
        #expect(request.method == .patch && request.encodedPath == "/v2/objects/sub-c-test/uuids/u1")
        #expect(request.headers["If-Match"] == "AYGyoY3gre71eA")
        #expect(try JSONValue(jsonData: request.body!) == ["name": "Jane", "email": nil])
    }

    @Test("membership PATCH sends set and delete lists keyed by channel")
    func membershipShape() throws {
        let pubnub = try client(RecordingTransport(body: "{}"))
        let request = try pubnub.appContext.setMembershipsRequest(
            userId: "me", set: [MembershipSet<FlatCustom>(id: "c1", status: "active", custom: ["k": "v"])], remove: ["c2"])
        #expect(request.encodedPath == "/v2/objects/sub-c-test/uuids/me/channels")
        #expect(
            try JSONValue(jsonData: request.body!)
                == ["set": [["channel": ["id": "c1"], "status": "active", "custom": ["k": "v"]]], "delete": [["channel": ["id": "c2"]]]])
    }
}
