import Foundation
import Testing
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel

/// A server enforcing Access Manager on virtual time, driven with raw requests (the bytes a
/// client sends), with the keys of reference §2.2's worked example.
struct AccessWorld {
    static let publishKey = "pub-c-demo"
    static let subscribeKey = "sub-c-demo"
    static let secretKey = "sec-c-demo"

    /// Virtual time, starting at 2023-11-14T22:13:20Z (unix 1700000000, the reference's timestamp).
    let clock = VirtualClock(start: Date(timeIntervalSince1970: 1_700_000_000))
    let server: PubNubServer

    init(secretKey: String? = AccessWorld.secretKey) {
        server = PubNubServer(publishKey: Self.publishKey, subscribeKey: Self.subscribeKey, clock: clock, secretKey: secretKey)
    }

    /// The request the simulator reads from these bytes.
    func request(_ method: String, _ target: String, body: String? = nil, headers: [String: String] = [:]) throws -> WireRequest {
        var all = headers
        if body != nil, all["Content-Type"] == nil { all["Content-Type"] = "application/json" }
        return try #require(RawRequest(method: method, target: target, headers: all, body: body.map { Data($0.utf8) }).decoded(),
                            "unreadable: \(method) \(target)")
    }

    /// Sends the bytes as they are.
    func send(_ method: String, _ target: String, body: String? = nil) async throws -> WireResponse {
        await server.respond(try request(method, target, body: body))
    }

    /// Sends the bytes with `auth=token` and `uuid=user` added to the query.
    func send(_ method: String, _ target: String, body: String? = nil, token: String?, user: String = "alice") async throws
        -> WireResponse
    {
        var query = "uuid=\(user)"
        if let token { query += "&auth=\(PercentEncoding.queryComponent(token))" }
        return try await send(method, target + (target.contains("?") ? "&" : "?") + query, body: body)
    }

    /// Sends the request signed with the secret key, as the Python SDK signs with one.
    func sendSigned(_ method: String, _ target: String, body: String? = nil, secretKey: String = AccessWorld.secretKey) async throws
        -> WireResponse
    {
        await server.respond(signed(try request(method, target, body: body), secretKey: secretKey))
    }

    func signed(_ request: WireRequest, secretKey: String = AccessWorld.secretKey) -> WireRequest {
        AccessSignature.signed(
            request, publishKey: Self.publishKey, subscribeKey: Self.subscribeKey, secretKey: secretKey,
            timestamp: Int64(clock.now.timeIntervalSince1970))
    }

    /// A token granting `grants` for `ttl` minutes, minted in process.
    func token(_ grants: AccessGrants, ttl: Int = 60, user: String? = nil) async throws -> String {
        try await server.grantToken(ttlMinutes: ttl, grants: grants, authorizedUserId: user)
    }

    static func text(_ response: WireResponse) -> String { String(decoding: response.body, as: UTF8.self) }
}

/// The exact bodies of reference §2.5.
enum AccessBodies {
    static let revoked = #"{"error":true,"status":403,"service":"Access Manager","message":"Token is revoked"}"#
    static let expired = #"{"error":true,"status":403,"service":"Access Manager","message":"Token is expired."}"#
    static let notPermitted = "Supplied authorization key does not have the permissions required to perform this operation."

    static func forbidden(channels: [String]? = nil, groups: [String]? = nil) -> String {
        var payload: [String] = []
        if let channels { payload.append(#""channels":[\#(channels.map { "\"\($0)\"" }.joined(separator: ","))]"#) }
        if let groups { payload.append(#""channel-groups":[\#(groups.map { "\"\($0)\"" }.joined(separator: ","))]"#) }
        return #"{"message":"Forbidden","payload":{\#(payload.joined(separator: ","))},"error":true,"service":"Access Manager","status":403}"#
    }

    static let actions = #"{"status":403,"error":{"source":"actions","message":"\#(notPermitted)"}}"#
    static let objects = #"{"status":403,"error":{"message":"\#(notPermitted)","source":"objects"}}"#
    static let files = #"{"status":403,"error":{"source":"Files","message":"\#(notPermitted)"}}"#
}
