import Foundation
import PubNubWire
import ReplicaModel

/// Selection rule shared by every history read: `end ≤ tt < start`, newest `max` kept, oldest first.
enum HistorySelection {
    static func select<T>(_ items: [T], timetoken: (T) -> UInt64, start: UInt64?, end: UInt64?, max: Int) -> [T] {
        let inRange = items.filter { item in
            let tt = timetoken(item)
            return (start.map { tt < $0 } ?? true) && (end.map { tt >= $0 } ?? true)
        }
        return Array(inRange.suffix(max))
    }
}

extension PubNubServer {
    func publish(_ request: WireRequest) -> WireResponse {
        let s = request.pathSegments
        let now = timetokens.now
        guard s.count >= 6, s[1] == publishKey, s[2] == subscribeKey else {
            return Reply.publishError(400, "Invalid Key", timetoken: now)
        }
        let channel = s[4]
        let text: Data
        switch request.method {
        case .get:
            guard s.count == 7 else { return Reply.publishError(400, "Invalid JSON", timetoken: now) }
            text = Data(s[6].utf8)
        case .post:
            guard s.count == 6, let body = request.body else { return Reply.publishError(400, "Invalid JSON", timetoken: now) }
            if request.headers.first(where: { $0.key.lowercased() == "content-encoding" })?.value == "gzip" {
                guard let inflated = try? Gzip.decompress(body) else { return Reply.publishError(400, "Invalid JSON", timetoken: now) }
                text = inflated
            } else {
                text = body
            }
        default:
            return Reply.notFound()
        }
        return accept(text, channel: channel, request: request, kind: nil)
    }

    /// `GET /v1/files/publish-file/{pub}/{sub}/0/{ch}/0/{payload}`: a publish whose stored
    /// message has type 4 (history's `message_type`, the subscribe envelope's `e`). The payload is
    /// any JSON (a string when encrypted): the simulator does not check that the file exists.
    func publishFile(_ request: WireRequest) -> WireResponse {
        let s = request.pathSegments
        guard s.count == 9, s[3] == publishKey, s[4] == subscribeKey else {
            return Reply.publishError(400, "Invalid Key", timetoken: timetokens.now)
        }
        return accept(Data(s[8].utf8), channel: s[6], request: request, kind: 4)
    }

    /// Publishes `text` to `channel` as a message of `kind` (nil: an ordinary message): the size
    /// limit, the JSON, `meta`, `store`, `custom_message_type`, then the event for subscribers.
    private func accept(_ text: Data, channel: String, request: WireRequest, kind: Int?) -> WireResponse {
        let now = timetokens.now
        if text.count > Validation.maxPublishBytes { return Reply.publishError(413, "Message Too Large", timetoken: now) }
        guard let message = try? JSONValue(jsonData: text) else {
            return Reply.publishError(400, "Invalid JSON", timetoken: now)
        }
        var meta: JSONValue?
        if let metaText = request.queryValue("meta") {
            guard let parsed = try? JSONValue(jsonData: Data(metaText.utf8)) else {
                return Reply.publishError(400, "Invalid JSON", timetoken: now)
            }
            meta = parsed
        }
        let timetoken = timetokens.next()
        let store = request.queryValue("store")
        let customType = request.queryValue("custom_message_type")
        if store != "0" && store != "false" {
            messages[channel, default: []].append(StoredMessage(
                timetoken: timetoken, message: message, publisher: request.actor, meta: meta,
                customMessageType: customType, messageType: kind))
        }
        emit(channel: channel, timetoken: timetoken, kind: kind, publisher: request.actor, payload: message, meta: meta,
             customMessageType: customType)
        return Reply.json(200, [1, "Sent", .string(String(timetoken))], contentType: Reply.javascript)
    }

    /// Stores messages as if `publisher` had published them one after another (tests and
    /// benchmarks that need a long history fast); returns their timetokens.
    @discardableResult
    public func seedMessages(channel: String, _ payloads: [JSONValue], publisher: String) -> [UInt64] {
        payloads.map { payload in
            let timetoken = timetokens.next()
            messages[channel, default: []].append(StoredMessage(timetoken: timetoken, message: payload, publisher: publisher))
            emit(channel: channel, timetoken: timetoken, kind: nil, publisher: publisher, payload: payload)
            return timetoken
        }
    }

    func fetchHistory(_ request: WireRequest, channels list: String, withActions: Bool) -> WireResponse {
        let names = list.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        if withActions && names.count != 1 { return Reply.historyError(400, "Invalid Arguments: channel") }
        let cap = names.count > 1 || withActions ? 25 : 100
        let max = Swift.min(request.int("max") ?? cap, cap)
        guard max >= 1 else { return Reply.historyError(400, "Invalid Arguments: max") }
        if let text = request.queryValue("start"), UInt64(text) == nil { return Reply.historyError(400, "Invalid Arguments: start") }
        if let text = request.queryValue("end"), UInt64(text) == nil { return Reply.historyError(400, "Invalid Arguments: end") }
        let includeMeta = request.flag("include_meta", default: false)
        let includeUUID = request.flag("include_uuid", default: false)
        let includeType = request.flag("include_message_type", default: false)
        let includeCustomType = request.flag("include_custom_message_type", default: false)
        var result: [String: JSONValue] = [:]
        for name in names {
            let selected = HistorySelection.select(
                messages[name] ?? [], timetoken: \.timetoken, start: request.timetoken("start"), end: request.timetoken("end"),
                max: max)
            guard !selected.isEmpty else { continue }
            // Channel keys are URL-encoded unless the client sends encode_channels=false.
            let key = request.flag("encode_channels", default: true) ? PercentEncoding.pathSegment(name) : name
            result[key] = .array(selected.map { stored in
                var entry: [String: JSONValue] = ["message": stored.message, "timetoken": .string(String(stored.timetoken))]
                if includeUUID { entry["uuid"] = .string(stored.publisher) }
                if includeMeta { entry["meta"] = stored.meta ?? "" }
                if includeType { entry["message_type"] = stored.messageType.map { .int(Int64($0)) } ?? .null }
                if includeCustomType, let type = stored.customMessageType { entry["custom_message_type"] = .string(type) }
                if withActions { entry["actions"] = actionsMap(channel: name, messageTimetoken: stored.timetoken) }
                return .object(entry)
            })
        }
        return Reply.json(
            200, ["status": 200, "error": false, "error_message": "", "channels": .object(result)], contentType: Reply.javascript)
    }

    func actionsMap(channel: String, messageTimetoken: UInt64) -> JSONValue {
        var map: [String: [String: [JSONValue]]] = [:]
        for action in actions[channel] ?? [] where action.messageTimetoken == messageTimetoken {
            map[action.type, default: [:]][action.value, default: []].append(
                ["uuid": .string(action.uuid), "actionTimetoken": .string(String(action.actionTimetoken))])
        }
        return .object(map.mapValues { .object($0.mapValues { .array($0) }) })
    }

    func legacyHistory(_ request: WireRequest, channel: String) -> WireResponse {
        let count = Swift.min(Swift.max(request.int("count") ?? 100, 1), 100)
        let start = request.timetoken("start")
        let end = request.timetoken("end")
        let inRange = (messages[channel] ?? []).filter { m in
            (start.map { m.timetoken < $0 } ?? true) && (end.map { m.timetoken >= $0 } ?? true)
        }
        // reverse=true takes the slice from the oldest end, except when both bounds are given.
        let reverse = request.flag("reverse", default: false) && !(start != nil && end != nil)
        let slice = reverse ? Array(inRange.prefix(count)) : Array(inRange.suffix(count))
        let strings = request.flag("string_message_token", default: false) || request.flag("stringtoken", default: false)
        func token(_ value: UInt64) -> JSONValue { strings ? .string(String(value)) : .int(Int64(value)) }
        let includeToken = request.flag("include_token", default: false)
        let includeMeta = request.flag("include_meta", default: false)
        let items: [JSONValue] = slice.map { m in
            guard includeToken else { return m.message }
            var entry: [String: JSONValue] = ["message": m.message, "timetoken": token(m.timetoken)]
            if includeMeta, let meta = m.meta { entry["meta"] = meta }
            return .object(entry)
        }
        return Reply.json(
            200, [.array(items), token(slice.first?.timetoken ?? 0), token(slice.last?.timetoken ?? 0)],
            contentType: Reply.javascript)
    }

    func messageCounts(_ request: WireRequest, channels list: String) -> WireResponse {
        let names = list.split(separator: ",").map(String.init)
        var since: [UInt64]
        if let single = request.queryValue("timetoken") {
            guard request.queryValue("channelsTimetoken") == nil, let value = UInt64(single) else {
                return Reply.historyError(400, "Invalid Arguments: timetoken")
            }
            since = Array(repeating: value, count: names.count)
        } else if let many = request.queryValue("channelsTimetoken") {
            let parsed = many.split(separator: ",", omittingEmptySubsequences: false).map { UInt64($0) }
            since = parsed.compactMap { $0 }
            guard since.count == parsed.count, since.count == names.count else { return Reply.historyError(400, "Invalid Arguments: channelsTimetoken") }
        } else {
            return Reply.historyError(400, "Invalid Arguments: timetoken")
        }
        var counts: [String: JSONValue] = [:]
        for (name, tt) in zip(names, since) {
            counts[name] = .int(Int64(Swift.min((messages[name] ?? []).filter { $0.timetoken > tt }.count, 10_000)))
        }
        return Reply.json(200, ["status": 200, "error": false, "error_message": "", "channels": .object(counts)],
                          contentType: Reply.javascript)
    }

    func deleteMessages(_ request: WireRequest, channel: String) -> WireResponse {
        let a = request.timetoken("start")
        let b = request.timetoken("end")
        // `start` is exclusive and `end` inclusive, whichever is larger; start == end deletes nothing.
        messages[channel]?.removeAll { m in
            switch (a, b) {
            case (nil, nil): return true
            case (let start?, nil): return m.timetoken < start
            case (nil, let end?): return m.timetoken >= end
            case (let start?, let end?):
                return m.timetoken >= Swift.min(start, end) && m.timetoken <= Swift.max(start, end) && m.timetoken != start
            }
        }
        return Reply.json(200, ["status": 200, "error": false, "error_message": ""], contentType: Reply.javascript)
    }
}
