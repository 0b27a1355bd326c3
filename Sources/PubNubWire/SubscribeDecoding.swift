import Foundation
import ReplicaModel

/// Reading envelopes leniently: a wrong type in one field costs that envelope, never the answer.
enum SubscribeDecoding {
    /// The answer's outer shape: `t` required (checked by the caller), `m` an array when present.
    struct Answer: Decodable {
        var t: Cursor?
        var m: [Element]?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            t = try? container.decodeIfPresent(Cursor.self, forKey: .t)
            m = try container.decodeIfPresent([Element].self, forKey: .m)
        }

        enum CodingKeys: String, CodingKey { case t, m }

        /// The answer read from parsed JSON as ``init(from:)`` reads it, or nil where that would
        /// throw (`m` present but not an array, or not an object at all).
        init?(json: JSONValue) {
            guard case .object(let object) = json else { return nil }
            t = object["t"].flatMap(Cursor.init(json:))
            switch object["m"] {
            case nil, .null?: m = nil
            case .array(let elements)?: m = elements.map(Element.init(json:))
            default: return nil
            }
        }
    }

    /// `t`, each field read leniently (a timetoken as a string or a number).
    struct Cursor: Decodable {
        var t: Timetoken?
        var r: Int64?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            t = try? container.decodeIfPresent(Timetoken.self, forKey: .t)
            r = Lenient.int(container, .r)
        }

        enum CodingKeys: String, CodingKey { case t, r }

        /// `t` read from parsed JSON as ``init(from:)`` reads it (nil: not an object).
        init?(json: JSONValue) {
            guard case .object(let object) = json else { return nil }
            t = object["t"].flatMap(Timetoken.init(json:))
            r = Lenient.int(object["r"])
        }
    }

    /// One element of `m`: decoded field by field, each with `try?`, so that a field of the wrong
    /// type costs that field (and then, maybe, the envelope), never the answer. An element that
    /// is not an object is kept whole.
    struct Element: Decodable {
        var envelope: SubscribeEnvelope

        init(from decoder: any Decoder) throws {
            guard let container = try? decoder.container(keyedBy: CodingKeys.self) else {
                let raw = (try? JSONValue(from: decoder)) ?? .null
                envelope = SubscribeEnvelope(channel: "", timetoken: nil, payload: raw, event: .unreadable(reason: "not an object"))
                return
            }
            let publish = try? container.decodeIfPresent(Cursor.self, forKey: .p)
            let meta = (try? container.decodeIfPresent(JSONValue.self, forKey: .u)).flatMap { $0 }
            envelope = SubscribeDecoding.envelope(
                channel: Lenient.string(container, .c), subscription: Lenient.string(container, .b),
                timetoken: publish?.t, publisher: Lenient.string(container, .i),
                kind: Lenient.int(container, .e).map { Int(clamping: $0) },
                payload: (try? container.decodeIfPresent(JSONValue.self, forKey: .d)).flatMap { $0 } ?? .null,
                meta: meta, customMessageType: Lenient.string(container, .cmt))
        }

        enum CodingKeys: String, CodingKey { case b, c, d, e, i, p, u, cmt }

        /// One element read from parsed JSON as ``init(from:)`` reads it.
        init(json: JSONValue) {
            guard case .object(let object) = json else {
                envelope = SubscribeEnvelope(channel: "", timetoken: nil, payload: json, event: .unreadable(reason: "not an object"))
                return
            }
            let publish = object["p"].flatMap(Cursor.init(json:))
            envelope = SubscribeDecoding.envelope(
                channel: Lenient.string(object["c"]), subscription: Lenient.string(object["b"]),
                timetoken: publish?.t, publisher: Lenient.string(object["i"]),
                kind: Lenient.int(object["e"]).map { Int(clamping: $0) },
                payload: object["d"] ?? .null, meta: object["u"].flatMap { $0 == .null ? JSONValue?.none : $0 },
                customMessageType: Lenient.string(object["cmt"]))
        }
    }

    /// Reading one field of a keyed container whatever its JSON type.
    enum Lenient {
        static func string<K: CodingKey>(_ container: KeyedDecodingContainer<K>, _ key: K) -> String? {
            if let text = try? container.decodeIfPresent(String.self, forKey: key) { return text }
            return (try? container.decodeIfPresent(Int64.self, forKey: key)).flatMap { $0 }.map(String.init)
        }

        static func int<K: CodingKey>(_ container: KeyedDecodingContainer<K>, _ key: K) -> Int64? {
            if let number = try? container.decodeIfPresent(Int64.self, forKey: key) { return number }
            return (try? container.decodeIfPresent(String.self, forKey: key)).flatMap { $0 }.flatMap { Int64($0) }
        }

        /// ``string(_:_:)`` of a parsed value.
        static func string(_ value: JSONValue?) -> String? {
            switch value {
            case .string(let text)?: text
            case .int(let number)?: String(number)
            default: nil
            }
        }

        /// ``int(_:_:)`` of a parsed value.
        static func int(_ value: JSONValue?) -> Int64? {
            switch value {
            case .int(let number)?: number
            case .string(let text)?: Int64(text)
            default: nil
            }
        }
    }

    static func timetoken(_ value: JSONValue?) -> Timetoken? {
        switch value {
        case .string(let text)?: try? Timetoken(parsing: text)
        case .int(let number)? where number >= 0: Timetoken(rawValue: UInt64(number))
        default: nil
        }
    }

    static func int(_ value: JSONValue?) -> Int64? {
        switch value {
        case .int(let number)?: number
        case .string(let text)?: Int64(text)
        case .double(let number)? where number.isFinite && number == number.rounded() && abs(number) < 9e15: Int64(number)
        default: nil
        }
    }

    static func string(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text)?: text
        case .int(let number)?: String(number)
        default: nil
        }
    }

    /// An envelope from its fields: the event decided by `c`, `p.t` and `e`.
    static func envelope(
        channel: String?, subscription: String?, timetoken: Timetoken?, publisher: String?, kind: Int?, payload: JSONValue,
        meta: JSONValue?, customMessageType: String?
    ) -> SubscribeEnvelope {
        let channel = channel ?? ""
        var envelope = SubscribeEnvelope(
            channel: channel, subscription: subscription, timetoken: timetoken, publisher: publisher, kind: kind,
            payload: payload, meta: meta.flatMap { $0.isNull || $0 == .string("") ? JSONValue?.none : $0 },
            customMessageType: customMessageType, event: .message)
        if channel.isEmpty {
            envelope.event = .unreadable(reason: "no channel (c)")
        } else if timetoken == nil {
            envelope.event = .unreadable(reason: "no publish timetoken (p.t)")
        } else if channel.hasSuffix("-pnpres") {
            envelope.event = presence(payload, channel: String(channel.dropLast("-pnpres".count)))
        } else {
            switch kind ?? 0 {
            case 0: envelope.event = .message
            case 1: envelope.event = .signal
            case 2: envelope.event = appContext(payload)
            case 3: envelope.event = messageAction(payload, actor: publisher)
            case 4: envelope.event = .file
            case 5: envelope.event = dataSync(payload)
            case let other: envelope.event = .unknown(kind: other)
            }
        }
        return envelope
    }

    static func presence(_ payload: JSONValue, channel: String) -> SubscribeEvent {
        guard let d = payload.objectValue, let action = d["action"]?.stringValue else {
            return .unreadable(reason: "presence event without an action")
        }
        let kind = PresenceAction(rawValue: action)
        let userId = string(d["uuid"])
        switch kind {
        case .join, .leave, .timeout, .stateChange:
            guard let userId, !userId.isEmpty else { return .unreadable(reason: "presence \(action) without a uuid") }
        case .interval, .other: break
        }
        func ids(_ key: String) -> [String] { d[key]?.arrayValue?.compactMap { string($0) } ?? [] }
        let state = d["data"].flatMap { $0.isNull ? JSONValue?.none : $0 }
        return .presence(PresenceEvent(
            action: kind, channel: channel, userId: userId, occupancy: int(d["occupancy"]).map { Int(clamping: $0) },
            timestamp: int(d["timestamp"]), state: state, joined: ids("join"), left: ids("leave"), timedOut: ids("timeout"),
            hereNowRefresh: d["here_now_refresh"] == .bool(true)))
    }

    static func messageAction(_ payload: JSONValue, actor: String?) -> SubscribeEvent {
        guard let d = payload.objectValue, let data = d["data"]?.objectValue else {
            return .unreadable(reason: "message action event without data")
        }
        let event = d["event"]?.stringValue
        guard event == "added" || event == "removed" else { return .unreadable(reason: "message action event \(event ?? "nil")") }
        guard let actor, let type = data["type"]?.stringValue, let value = data["value"]?.stringValue,
              let messageTimetoken = timetoken(data["messageTimetoken"]), let actionTimetoken = timetoken(data["actionTimetoken"])
        else { return .unreadable(reason: "message action event lacks type, value, timetokens or actor (i)") }
        return .messageAction(MessageActionEvent(
            added: event == "added",
            action: WireMessageAction(
                type: type, value: value, uuid: actor, actionTimetoken: actionTimetoken, messageTimetoken: messageTimetoken)))
    }

    static func appContext(_ payload: JSONValue) -> SubscribeEvent {
        guard let d = payload.objectValue, var data = d["data"]?.objectValue,
              let event = d["event"]?.stringValue, let type = d["type"]?.stringValue
        else { return .unreadable(reason: "App Context event without event, type or data") }
        let updated = data.removeValue(forKey: "updated")?.stringValue
        let eTag = data.removeValue(forKey: "eTag")?.stringValue
        switch (type, event) {
        case ("uuid", "set"), ("user", "set"):
            guard let id = data.removeValue(forKey: "id")?.stringValue else { return .unreadable(reason: "user event without id") }
            return .appContext(.userSet(id: id, fields: data, updated: updated, eTag: eTag))
        case ("uuid", "delete"), ("user", "delete"):
            guard let id = data["id"]?.stringValue else { return .unreadable(reason: "user event without id") }
            return .appContext(.userRemoved(id: id))
        case ("channel", "set"):
            guard let id = data.removeValue(forKey: "id")?.stringValue else { return .unreadable(reason: "channel event without id") }
            return .appContext(.channelSet(id: id, fields: data, updated: updated, eTag: eTag))
        case ("channel", "delete"):
            guard let id = data["id"]?.stringValue else { return .unreadable(reason: "channel event without id") }
            return .appContext(.channelRemoved(id: id))
        case ("membership", "set"), ("membership", "delete"):
            guard let channel = data.removeValue(forKey: "channel")?.objectValue?["id"]?.stringValue,
                  let user = (data.removeValue(forKey: "uuid") ?? data.removeValue(forKey: "user"))?.objectValue?["id"]?.stringValue
            else { return .unreadable(reason: "membership event without channel.id or uuid.id") }
            if event == "delete" { return .appContext(.membershipRemoved(channelId: channel, userId: user)) }
            return .appContext(.membershipSet(channelId: channel, userId: user, fields: data, updated: updated, eTag: eTag))
        default:
            return .unreadable(reason: "App Context event \(type)/\(event)")
        }
    }
}
