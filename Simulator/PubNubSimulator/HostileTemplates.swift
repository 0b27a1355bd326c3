import Foundation
import PubNubWire
import ReplicaModel

/// A valid answer shape for each endpoint, for ``HostileCase`` to mutate when the real answer is
/// an error or too plain to be interesting. Ids and channels come from the request, so that a
/// mutated answer is about what the client asked for.
enum HostileTemplates {
    /// A timetoken near the simulator's usual virtual "now" (2026), or just below the request's `start`.
    static func timetoken(_ request: WireRequest, _ random: inout SplitMix64) -> String {
        if let start = request.queryValue("start").flatMap(UInt64.init), start > 1000 {
            return String(start - 1 - random.next() % 1000)
        }
        return String(17_900_000_000_000_000 + random.next() % 1_000_000_000_000)
    }

    static func chatPayload(_ random: inout SplitMix64) -> JSONValue {
        [
            "id": .string("hostile-\(random.next() % 10_000)"), "text": "hostile hello",
            "createdAt": "2026-01-01T00:00:00.000Z", "content": ["nested": [1, 2, ["deep": true]]],
        ]
    }

    static func user(_ id: String) -> JSONValue {
        [
            "id": .string(id), "name": "Hostile User", "externalId": nil, "profileUrl": "https://example.com/a.png",
            "email": "h@example.com", "type": "user", "status": "active", "custom": ["role": "admin", "n": 1],
            "updated": "2026-01-01T00:00:00.123456Z", "eTag": "AbCdEf0123",
        ]
    }

    static func channel(_ id: String) -> JSONValue {
        [
            "id": .string(id), "name": "Hostile Channel", "description": "a channel", "type": "group", "status": "open",
            "custom": ["topic": "x"], "updated": "2026-01-01T00:00:00.123456Z", "eTag": "ChAnNeL01",
        ]
    }

    static func membership(channel id: String) -> JSONValue {
        [
            "channel": channel(id), "status": "joined", "type": "member", "custom": ["muted": false],
            "updated": "2026-01-01T00:00:00.654321Z", "eTag": "MeMbEr01",
        ]
    }

    static func member(user id: String) -> JSONValue {
        [
            "uuid": user(id), "status": "joined", "type": "member", "custom": ["muted": false],
            "updated": "2026-01-01T00:00:00.654321Z", "eTag": "MeMbEr02",
        ]
    }

    static func action(_ request: WireRequest, messageTimetoken: String?, _ random: inout SplitMix64) -> JSONValue {
        [
            "type": "reaction", "value": "👍", "uuid": .string(request.queryValue("uuid") ?? "someone"),
            "actionTimetoken": .string(timetoken(request, &random)),
            "messageTimetoken": .string(messageTimetoken ?? timetoken(request, &random)),
        ]
    }

    static func historyEntry(_ request: WireRequest, withActions: Bool, _ random: inout SplitMix64) -> JSONValue {
        var entry: [String: JSONValue] = [
            "message": chatPayload(&random), "timetoken": .string(timetoken(request, &random)), "uuid": "someone",
            "meta": "", "message_type": nil,
        ]
        if withActions {
            entry["actions"] = ["reaction": ["👍": [["uuid": "someone", "actionTimetoken": .string(timetoken(request, &random))]]]]
        }
        return .object(entry)
    }

    /// The shape the endpoint of `request` answers with on success.
    static func shape(for request: WireRequest, _ random: inout SplitMix64) -> JSONValue {
        let s = request.pathSegments
        let ok: [String: JSONValue] = ["status": 200, "error": false, "error_message": ""]
        switch s.first {
        case "time":
            return [.int(Int64(17_900_000_000_000_000 + random.next() % 1_000_000_000))]
        case "publish":
            return [1, "Sent", .string(timetoken(request, &random))]
        case "v3" where s.count >= 6 && s[4] == "message-counts":
            let names = s[5].split(separator: ",").map(String.init)
            return .object(ok.merging(["channels": .object(Dictionary(names.map { ($0, JSONValue.int(2)) }, uniquingKeysWith: { a, _ in a }))]) { a, _ in a })
        case "v3" where s.count >= 6 && request.method == .delete:
            return .object(ok)
        case "v3" where s.count >= 6:
            let withActions = s[1] == "history-with-actions"
            let names = s[5].split(separator: ",").map(String.init)
            var channels: [String: JSONValue] = [:]
            for name in names {
                channels[PercentEncoding.pathSegment(name)] = .array(
                    (0...(random.next() % 3)).map { _ in historyEntry(request, withActions: withActions, &random) })
            }
            var body = ok
            body["channels"] = .object(channels)
            if random.next() % 2 == 0 {
                body["more"] = ["start": .string(timetoken(request, &random)), "url": "/v3/history-with-actions/more", "max": 25]
            }
            return .object(body)
        case "v2" where s.count >= 2 && s[1] == "history":
            let entries: [JSONValue] = (0...(random.next() % 3)).map { _ in
                ["message": chatPayload(&random), "timetoken": .string(timetoken(request, &random))]
            }
            return [.array(entries), .string(timetoken(request, &random)), .string(timetoken(request, &random))]
        case "v1" where s.count >= 5:
            let rest = Array(s.dropFirst(4))
            if request.method == .post { return ["status": 200, "data": action(request, messageTimetoken: rest.count >= 3 ? rest[2] : nil, &random)] }
            if request.method == .delete { return ["status": 200, "data": [:]] }
            var body: [String: JSONValue] = [
                "status": 200, "data": .array((0...(random.next() % 3)).map { _ in action(request, messageTimetoken: nil, &random) }),
            ]
            if random.next() % 2 == 0 {
                body["more"] = ["url": "/v1/message-actions/more", "start": .string(timetoken(request, &random)), "end": "1", "limit": 100]
            }
            return .object(body)
        case "v2" where s.count >= 4 && s[1] == "objects":
            return objectShape(request, Array(s.dropFirst(3)), &random)
        default:
            return ["status": 200, "data": nil]
        }
    }

    private static func objectShape(_ request: WireRequest, _ s: [String], _ random: inout SplitMix64) -> JSONValue {
        let isUser = s.first == "uuids"
        func page(_ items: [JSONValue]) -> JSONValue {
            var body: [String: JSONValue] = ["status": 200, "data": .array(items), "totalCount": .int(Int64(items.count))]
            if random.next() % 2 == 0 { body["next"] = "MTAw" }
            if random.next() % 3 == 0 { body["prev"] = "MA" }
            return .object(body)
        }
        let count = Int(random.next() % 3) + 1
        switch s.count {
        case 1:
            return page((0..<count).map { i in isUser ? user("hostile-user-\(i)") : channel("hostile-channel-\(i)") })
        case 2:
            if request.method == .delete { return ["status": 200, "data": nil] }
            return ["status": 200, "data": isUser ? user(s[1]) : channel(s[1])]
        default:
            return page((0..<count).map { i in
                isUser ? membership(channel: i == 0 ? "general" : "hostile-channel-\(i)") : member(user: i == 0 ? "me" : "hostile-user-\(i)")
            })
        }
    }

    /// The success shape of some other endpoint (a publish answer to a history request, ...).
    static func otherShape(than request: WireRequest, _ random: inout SplitMix64) -> JSONValue {
        let others: [[String]] = [
            ["time", "0"], ["publish", "demo", "demo", "0", "general", "0"],
            ["v3", "history", "sub-key", "demo", "channel", "general"],
            ["v2", "history", "sub-key", "demo", "channel", "general"],
            ["v1", "message-actions", "demo", "channel", "general"],
            ["v2", "objects", "demo", "uuids"], ["v2", "objects", "demo", "channels", "general"],
            ["v2", "objects", "demo", "uuids", "me", "channels"],
        ]
        let other = WireRequest(
            method: .get, pathSegments: others[Int(random.next() % UInt64(others.count))], query: request.query,
            operation: "other")
        return shape(for: other, &random)
    }
}
