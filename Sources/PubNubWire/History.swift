import Foundation
import ReplicaModel

/// A history (v3) query. `start` is exclusive, `end` inclusive; pages come oldest first.
public struct HistoryQuery: Sendable, Hashable {
    /// One or more channels.
    public var channels: [String]
    /// Messages per channel; capped at 100 for one channel and 25 for several or with actions.
    public var max: Int?
    /// Only messages older than this timetoken (exclusive).
    public var start: Timetoken?
    /// Only messages at or newer than this timetoken (inclusive).
    public var end: Timetoken?
    /// Include `meta`.
    public var includeMeta = true
    /// Include the publisher (`uuid`).
    public var includeUUID = true
    /// Include `message_type`.
    public var includeMessageType = true
    /// Include `custom_message_type` (the server leaves it out by default; file messages and the
    /// Chat SDK's moderation events carry one): default true.
    public var includeCustomMessageType = true

    /// A query.
    public init(channels: [String], max: Int? = nil, start: Timetoken? = nil, end: Timetoken? = nil) {
        self.channels = channels
        self.max = max
        self.start = start
        self.end = end
    }
}

/// One (uuid, actionTimetoken) pair of a message's actions in history-with-actions.
public struct HistoryActionEntry: Decodable, Sendable, Hashable {
    /// Who added it.
    public var uuid: String
    /// When.
    public var actionTimetoken: Timetoken

    /// An entry.
    public init(uuid: String, actionTimetoken: Timetoken) {
        self.uuid = uuid
        self.actionTimetoken = actionTimetoken
    }
}

/// A message as history returns it.
public struct HistoryMessage: Decodable, Sendable, Hashable {
    /// The payload.
    public var message: JSONValue
    /// Its publish timetoken.
    public var timetoken: Timetoken
    /// The publisher, when requested.
    public var uuid: String?
    /// The publish metadata (`""` on the wire when none: read as nil).
    public var meta: JSONValue?
    /// `message_type` (nil or 0 = message, 4 = file).
    public var messageType: Int?
    /// `custom_message_type`.
    public var customMessageType: String?
    /// Actions by type, then value (history-with-actions only).
    public var actions: [String: [String: [HistoryActionEntry]]]?
    /// Why the payload could not be decrypted, when the client has a crypto module and it could
    /// not: ``message`` is then the payload as received.
    public var decryptionError: CryptoError?

    enum CodingKeys: String, CodingKey {
        case message, timetoken, uuid, meta, actions
        case messageType = "message_type"
        case customMessageType = "custom_message_type"
    }

    /// An entry (tests, the simulator, legacy pages).
    public init(
        message: JSONValue, timetoken: Timetoken, uuid: String? = nil, meta: JSONValue? = nil, messageType: Int? = nil,
        customMessageType: String? = nil, actions: [String: [String: [HistoryActionEntry]]]? = nil
    ) {
        self.message = message
        self.timetoken = timetoken
        self.uuid = uuid
        self.meta = meta
        self.messageType = messageType
        self.customMessageType = customMessageType
        self.actions = actions
    }

    /// Reads one entry from parsed JSON as ``init(from:)`` would, or nil when a field is not as
    /// expected (the caller then lets `JSONDecoder` name the error).
    init?(json: JSONValue) {
        guard case .object(let body) = json, let message = body["message"], let timetoken = body["timetoken"].flatMap(Timetoken.init(json:))
        else { return nil }
        self.message = message
        self.timetoken = timetoken
        switch body["uuid"] {
        case nil, .null?: uuid = nil
        case .string(let value)?: uuid = value
        default: return nil
        }
        switch body["meta"] {
        case nil, .null?, .string("")?: meta = nil
        case let value?: meta = value
        }
        switch body["message_type"] {
        case .int(let value)?: messageType = Int(exactly: value)
        case .string(let value)?: messageType = Int(value)
        default: messageType = nil
        }
        switch body["custom_message_type"] {
        case nil, .null?: customMessageType = nil
        case .string(let value)?: customMessageType = value
        default: return nil
        }
        switch body["actions"] {
        case nil, .null?: actions = nil
        case .object(let byType)?:
            var actions: [String: [String: [HistoryActionEntry]]] = [:]
            for (type, byValue) in byType {
                guard case .object(let values) = byValue else { return nil }
                var entries: [String: [HistoryActionEntry]] = [:]
                for (value, list) in values {
                    guard case .array(let items) = list else { return nil }
                    var parsed: [HistoryActionEntry] = []
                    for item in items {
                        guard case .object(let fields) = item, case .string(let uuid)? = fields["uuid"],
                              let actionTimetoken = fields["actionTimetoken"].flatMap(Timetoken.init(json:))
                        else { return nil }
                        parsed.append(HistoryActionEntry(uuid: uuid, actionTimetoken: actionTimetoken))
                    }
                    entries[value] = parsed
                }
                actions[type] = entries
            }
            self.actions = actions
        default: return nil
        }
    }

    /// Decodes one entry; tolerates `message_type` as a numeric string (seen in real recordings).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        message = try c.decode(JSONValue.self, forKey: .message)
        timetoken = try c.decode(Timetoken.self, forKey: .timetoken)
        uuid = try c.decodeIfPresent(String.self, forKey: .uuid)
        let meta = try c.decodeIfPresent(JSONValue.self, forKey: .meta)
        self.meta = (meta == .string("") || meta == .null) ? nil : meta
        if let number = try? c.decodeIfPresent(Int.self, forKey: .messageType) {
            messageType = number
        } else {
            messageType = (try? c.decodeIfPresent(String.self, forKey: .messageType)).flatMap { $0.flatMap(Int.init) }
        }
        customMessageType = try c.decodeIfPresent(String.self, forKey: .customMessageType)
        actions = try c.decodeIfPresent([String: [String: [HistoryActionEntry]]].self, forKey: .actions)
    }
}

/// A history page: messages per channel, each list oldest first.
public struct HistoryPage: Decodable, Sendable, Hashable, JSONValueDecodable {
    /// Messages by channel; channels with no messages are absent.
    public var channels: [String: [HistoryMessage]]
    /// Continuation, present only when the server truncated a with-actions page.
    public var more: More?

    /// The continuation of a truncated page.
    public struct More: Decodable, Sendable, Hashable {
        /// Where the next page starts.
        public var start: Timetoken?
        /// The server's suggested URL.
        public var url: String?
        /// Its page size.
        public var max: Int?

        init(start: Timetoken? = nil, url: String? = nil, max: Int? = nil) {
            self.start = start
            self.url = url
            self.max = max
        }
    }

    enum CodingKeys: String, CodingKey { case channels, more }

    /// Decodes a page; channel keys arrive URL-encoded (`encode_channels` defaults to true) and are decoded.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let raw = try c.decodeIfPresent([String: [HistoryMessage]].self, forKey: .channels) ?? [:]
        channels = Dictionary(raw.map { (PercentEncoding.decode($0.key) ?? $0.key, $0.value) }, uniquingKeysWith: { a, b in a + b })
        more = try c.decodeIfPresent(More.self, forKey: .more)
    }

    /// Reads a page from parsed JSON, as ``init(from:)`` would, or nil when anything is not as
    /// expected (then `JSONDecoder` decodes the page, or names what is wrong).
    init?(json: JSONValue) {
        guard case .object(let body) = json else { return nil }
        var channels: [String: [HistoryMessage]] = [:]
        switch body["channels"] {
        case nil, .null?: break
        case .object(let raw)?:
            for (key, list) in raw {
                guard case .array(let entries) = list else { return nil }
                var messages: [HistoryMessage] = []
                messages.reserveCapacity(entries.count)
                for entry in entries {
                    guard let message = HistoryMessage(json: entry) else { return nil }
                    messages.append(message)
                }
                channels[PercentEncoding.decode(key) ?? key, default: []].append(contentsOf: messages)
            }
        default: return nil
        }
        self.channels = channels
        switch body["more"] {
        case nil, .null?: more = nil
        case .object(let raw)?:
            var more = More()
            switch raw["start"] {
            case nil, .null?: break
            case let value?:
                guard let start = Timetoken(json: value) else { return nil }
                more.start = start
            }
            switch raw["url"] {
            case nil, .null?: break
            case .string(let url)?: more.url = url
            default: return nil
            }
            switch raw["max"] {
            case nil, .null?: break
            case .int(let max)?:
                guard let max = Int(exactly: max) else { return nil }
                more.max = max
            default: return nil
            }
            self.more = more
        default: return nil
        }
    }

    /// The oldest timetoken in the page (the next backward page's `start`), or nil when empty.
    public var oldestTimetoken: Timetoken? {
        channels.values.compactMap { $0.first?.timetoken }.min()
    }
}

/// A legacy v2 history query (`reverse` semantics).
public struct LegacyHistoryQuery: Sendable, Hashable {
    /// The channel.
    public var channel: String
    /// 1 to 100; default 100.
    public var count: Int = 100
    /// Exclusive upper bound.
    public var start: Timetoken?
    /// Inclusive lower bound.
    public var end: Timetoken?
    /// Take the slice from the oldest end (ignored by the server when both bounds are set).
    public var reverse = false
    /// Include `meta`.
    public var includeMeta = false

    /// A query.
    public init(channel: String, count: Int = 100, start: Timetoken? = nil, end: Timetoken? = nil, reverse: Bool = false) {
        self.channel = channel
        self.count = count
        self.start = start
        self.end = end
        self.reverse = reverse
    }
}

/// A legacy v2 history page: `[[messages], first, last]`, messages always oldest first.
public struct LegacyHistoryPage: Decodable, Sendable, Hashable {
    /// One message with its timetoken.
    public struct Entry: Decodable, Sendable, Hashable {
        /// The payload.
        public var message: JSONValue
        /// Its timetoken.
        public var timetoken: Timetoken
        /// Metadata, when requested and present.
        public var meta: JSONValue?
        /// Why the payload could not be decrypted (then ``message`` is as received).
        public var decryptionError: CryptoError?

        enum CodingKeys: String, CodingKey { case message, timetoken, meta }
    }

    /// The messages, oldest first.
    public var messages: [Entry]
    /// The first (oldest) timetoken returned; 0 when empty.
    public var first: Timetoken
    /// The last (newest) timetoken returned; 0 when empty.
    public var last: Timetoken

    /// Decodes the three-element array.
    public init(from decoder: any Decoder) throws {
        var c = try decoder.unkeyedContainer()
        messages = try c.decode([Entry].self)
        first = try c.decode(Timetoken.self)
        last = try c.decode(Timetoken.self)
    }
}

struct MessageCountsResponse: Decodable {
    let channels: [String: Int]
}

/// Message Persistence through a client (`client.history`): fetching history (with or without
/// message actions, and the legacy v2 form), paging it, message counts, and deleting a range.
///
/// ```swift
/// let page = try await client.history.fetchHistory(HistoryQuery(channels: ["general"], max: 25))
/// ```
public struct PubNubHistory: PubNubService {
    /// The client whose keys, origin, transport, token and crypto module are used.
    public let client: PubNubClient

    /// History through `client`.
    public init(client: PubNubClient) { self.client = client }

    /// The largest `max` the server allows for this query.
    public static func historyCap(channelCount: Int, withActions: Bool) -> Int {
        channelCount > 1 || withActions ? 25 : 100
    }

    func historyRequest(_ query: HistoryQuery, withActions: Bool) throws(WireError) -> WireRequest {
        guard !query.channels.isEmpty else { throw .invalidArgument("history needs at least one channel") }
        if withActions, query.channels.count != 1 { throw .invalidArgument("history with actions takes one channel") }
        let cap = Self.historyCap(channelCount: query.channels.count, withActions: withActions)
        if let max = query.max, max < 1 { throw .invalidArgument("max must be at least 1") }
        var items = commonQuery()
        items.append(QueryItem("max", String(min(query.max ?? cap, cap))))
        if let start = query.start { items.append(QueryItem("start", start.description)) }
        if let end = query.end { items.append(QueryItem("end", end.description)) }
        items.append(QueryItem("include_meta", String(query.includeMeta)))
        items.append(QueryItem("include_uuid", String(query.includeUUID)))
        items.append(QueryItem("include_message_type", String(query.includeMessageType)))
        if query.includeCustomMessageType { items.append(QueryItem("include_custom_message_type", "true")) }
        let service = withActions ? "history-with-actions" : "history"
        return WireRequest(
            method: .get,
            pathSegments: ["v3", service, "sub-key", configuration.subscribeKey, "channel", query.channels.joined(separator: ",")],
            query: items, operation: withActions ? "fetchHistoryWithActions" : "fetchHistory")
    }

    /// History v3 of one or more channels (`max` is capped at 100 / 25).
    public func fetchHistory(_ query: HistoryQuery) async throws(WireError) -> HistoryPage {
        decrypted(try await perform(try historyRequest(query, withActions: false), as: HistoryPage.self))
    }

    /// History v3 of one channel with each message's actions (`max` capped at 25).
    public func fetchHistoryWithActions(_ query: HistoryQuery) async throws(WireError) -> HistoryPage {
        decrypted(try await perform(try historyRequest(query, withActions: true), as: HistoryPage.self))
    }

    /// A page with each payload decrypted by ``crypto`` (unchanged without one). A payload that
    /// does not decrypt stays as received, with its ``HistoryMessage/decryptionError``.
    func decrypted(_ page: HistoryPage) -> HistoryPage {
        guard let crypto else { return page }
        var page = page
        for (channel, messages) in page.channels {
            page.channels[channel] = messages.map { entry in
                var entry = entry
                (entry.message, entry.decryptionError) = crypto.decryptKeepingPayload(entry.message)
                return entry
            }
        }
        return page
    }

    /// Legacy v2 history, for its `reverse` semantics.
    public func fetchLegacyHistory(_ query: LegacyHistoryQuery) async throws(WireError) -> LegacyHistoryPage {
        guard (1...100).contains(query.count) else { throw .invalidArgument("count must be 1-100") }
        var items = commonQuery()
        items.append(QueryItem("count", String(query.count)))
        if let start = query.start { items.append(QueryItem("start", start.description)) }
        if let end = query.end { items.append(QueryItem("end", end.description)) }
        items.append(QueryItem("reverse", String(query.reverse)))
        items.append(QueryItem("include_token", "true"))
        items.append(QueryItem("include_meta", String(query.includeMeta)))
        items.append(QueryItem("string_message_token", "true"))
        let request = WireRequest(
            method: .get, pathSegments: ["v2", "history", "sub-key", configuration.subscribeKey, "channel", query.channel],
            query: items, operation: "fetchLegacyHistory")
        var page = try await perform(request, as: LegacyHistoryPage.self)
        if let crypto {
            for index in page.messages.indices {
                (page.messages[index].message, page.messages[index].decryptionError) =
                    crypto.decryptKeepingPayload(page.messages[index].message)
            }
        }
        return page
    }

    /// How many messages each channel has with a timetoken strictly greater than its given one.
    /// One value for all channels sends `timetoken`; per-channel values send `channelsTimetoken`.
    public func messageCounts(channels: [String], since: [Timetoken]) async throws(WireError) -> [String: Int] {
        guard !channels.isEmpty else { throw .invalidArgument("message counts need at least one channel") }
        var items = commonQuery()
        if since.count == 1 {
            items.append(QueryItem("timetoken", since[0].description))
        } else if since.count == channels.count {
            items.append(QueryItem("channelsTimetoken", since.map(\.description).joined(separator: ",")))
        } else {
            throw .invalidArgument("give one timetoken or one per channel")
        }
        let request = WireRequest(
            method: .get,
            pathSegments: ["v3", "history", "sub-key", configuration.subscribeKey, "message-counts", channels.joined(separator: ",")],
            query: items, operation: "messageCounts")
        return try await perform(request, as: MessageCountsResponse.self).channels
    }

    /// Deletes messages of a channel: `end` inclusive, `start` exclusive (a single message:
    /// `end = tt`, `start = tt + 1`).
    public func deleteMessages(channel: String, start: Timetoken? = nil, end: Timetoken? = nil) async throws(WireError) {
        _ = try await perform(deleteMessagesRequest(channel: channel, start: start, end: end))
    }

    /// The request ``deleteMessages(channel:start:end:)`` sends.
    public func deleteMessagesRequest(channel: String, start: Timetoken? = nil, end: Timetoken? = nil) -> WireRequest {
        var items = commonQuery()
        if let start { items.append(QueryItem("start", start.description)) }
        if let end { items.append(QueryItem("end", end.description)) }
        return WireRequest(
            method: .delete, pathSegments: ["v3", "history", "sub-key", configuration.subscribeKey, "channel", channel],
            query: items, operation: "deleteMessages")
    }
}

// The history pager (the engine and the stop rule are in Pagers.swift).
extension PubNubHistory {
    /// The history of `channel` back from `start` (exclusive; nil: now) to `end` (inclusive),
    /// `pageSize` messages per request; see ``HistoryPages``. Errors are `WireError`,
    /// ``PagingError`` and `CancellationError`; no request is retried.
    public func historyPages(
        channel: String, pageSize: Int = 100, start: Timetoken? = nil, end: Timetoken? = nil
    ) -> HistoryPages {
        HistoryPages(channel: channel, pageSize: pageSize, start: start, end: end) { query in
            try await self.fetchHistory(query)
        }
    }
}
