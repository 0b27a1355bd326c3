import Foundation
import PubNubWire
import ReplicaModel

extension PubNubServer {
    /// `segments` starts at the channel: `[ch]`, `[ch, "message", mtt]`, `[ch, "message", mtt, "action", att]`.
    func messageActions(_ request: WireRequest, segments s: [String]) -> WireResponse {
        let channel = s[0]
        switch (request.method, s.count) {
        case (.get, 1):
            return listActions(request, channel: channel)
        case (.post, 3) where s[1] == "message":
            guard let messageTT = UInt64(s[2]) else { return Reply.objectError(400, "Invalid message timetoken", source: "actions") }
            guard case .object(let body)? = Reply.bodyJSON(request) else {
                return Reply.objectError(415, "Request payload must be in JSON format.", source: "actions")
            }
            for field in ["type", "value"] {
                guard case .string(let text)? = body[field], !text.isEmpty else {
                    return Reply.objectError(400, "Request payload contained invalid input.", source: "actions",
                                             details: [("Missing field", field)])
                }
            }
            let type = body["type"]!.stringValue!
            let value = body["value"]!.stringValue!
            if (actions[channel] ?? []).contains(where: {
                $0.messageTimetoken == messageTT && $0.type == type && $0.value == value && $0.uuid == request.actor
            }) {
                return Reply.objectError(409, "Action Already Added", source: "actions")
            }
            let action = StoredAction(type: type, value: value, uuid: request.actor, messageTimetoken: messageTT,
                                      actionTimetoken: timetokens.next())
            actions[channel, default: []].append(action)
            emitAction(action, channel: channel, added: true)
            return Reply.json(200, ["status": 200, "data": action.json])
        case (.delete, 5) where s[1] == "message" && s[3] == "action":
            guard let messageTT = UInt64(s[2]), let actionTT = UInt64(s[4]) else {
                return Reply.objectError(400, "Invalid timetoken", source: "actions")
            }
            let matching = (actions[channel] ?? []).filter { $0.messageTimetoken == messageTT && $0.actionTimetoken == actionTT }
            guard !matching.isEmpty else {
                return Reply.objectError(400, "No matching message actions to delete", source: "actions")
            }
            guard matching.contains(where: { $0.uuid == request.actor }) else {
                return Reply.objectError(400, "Not deleting message action: wrong uuid specified", source: "actions")
            }
            for action in matching where action.uuid == request.actor { emitAction(action, channel: channel, added: false) }
            actions[channel]?.removeAll {
                $0.messageTimetoken == messageTT && $0.actionTimetoken == actionTT && $0.uuid == request.actor
            }
            return Reply.json(200, ["status": 200, "data": [:]])
        default:
            return Reply.notFound()
        }
    }

    /// `start` exclusive (<), `end` inclusive (>=), newest `limit` kept, ascending, `more` when truncated.
    func listActions(_ request: WireRequest, channel: String) -> WireResponse {
        let limit = request.int("limit") ?? 100
        guard (1...100).contains(limit) else {
            return Reply.objectError(400, "Request contained invalid parameters.", source: "actions",
                                     details: [("limit must be 1-100", "limit")])
        }
        let start = request.timetoken("start")
        let end = request.timetoken("end")
        let all = (actions[channel] ?? []).sorted { $0.actionTimetoken < $1.actionTimetoken }
        let inRange = all.filter { a in (start.map { a.actionTimetoken < $0 } ?? true) && (end.map { a.actionTimetoken >= $0 } ?? true) }
        let page = Array(inRange.suffix(limit))
        var body: [String: JSONValue] = ["status": 200, "data": .array(page.map(\.json))]
        if inRange.count > page.count, let oldest = page.first {
            var more: [String: JSONValue] = ["start": .string(String(oldest.actionTimetoken)), "limit": .int(Int64(limit))]
            var url = "/v1/message-actions/\(subscribeKey)/channel/\(channel)?start=\(oldest.actionTimetoken)&limit=\(limit)"
            if let end {
                more["end"] = .string(String(end))
                url += "&end=\(end)"
            }
            more["url"] = .string(url)
            body["more"] = .object(more)
        }
        return Reply.json(200, .object(body))
    }
}
