import Foundation
import ReplicaModel

/// Where a subscribe loop stands on the server's event stream: the `t` object of a subscribe
/// answer, sent back as `tt` and `tr` by the next request.
///
/// A cursor is only ever taken from an answer (or a handshake, ``PubNubClient/handshake(_:)``):
/// the next request asks for the events published after ``timetoken``.
public struct SubscribeCursor: Sendable, Hashable, Codable, CustomStringConvertible {
    /// `t.t`: every event of the answer is at or before it; the next request asks for later ones.
    public var timetoken: Timetoken
    /// `t.r`: the region (data centre) that answered; sending it back keeps the client on it.
    public var region: Int

    /// A cursor.
    public init(timetoken: Timetoken, region: Int) {
        self.timetoken = timetoken
        self.region = region
    }

    /// `timetoken@region`.
    public var description: String { "\(timetoken)@\(region)" }
}

/// What one subscribe request asks for. See PubNub's subscribe REST API
/// (https://www.pubnub.com/docs/sdks/rest-api/subscribe-v-2) and `docs/live.md`.
///
/// ```swift
/// var request = SubscribeRequest(channels: ["general", "me"])
/// request.cursor = previous.cursor          // nil: a handshake
/// let answer = try await client.subscribe(request)
/// ```
public struct SubscribeRequest: Sendable, Hashable {
    /// The channels, in any order (sent sorted, as the JS SDK does). At least one channel or group.
    public var channels: [String]
    /// Channel groups (`channel-group`).
    public var channelGroups: [String] = []
    /// Where to continue; nil is a handshake (`tt=0`), answered at once with the server's cursor.
    public var cursor: SubscribeCursor?
    /// The presence timeout in seconds (`heartbeat`); nil leaves the keyset default.
    public var heartbeat: Int?
    /// Presence state keyed by channel (`state`, a JSON object).
    public var state: JSONValue?
    /// A filter on publish metadata (`filter-expr`).
    public var filterExpression: String?
    /// How long the client waits for the answer. PubNub holds an idle request for about 280 s,
    /// so the default (310 s, as the JS and Python SDKs) is longer than any hold.
    public var timeout: Duration = .seconds(310)

    /// A subscribe to `channels`, starting with a handshake.
    public init(channels: [String], cursor: SubscribeCursor? = nil) {
        self.channels = channels
        self.cursor = cursor
    }
}

/// A subscribe answer: the new cursor and the events after the request's cursor, oldest first.
public struct SubscribeAnswer: Sendable, Hashable {
    /// The cursor to send with the next request.
    public var cursor: SubscribeCursor
    /// The envelopes (`m`), in the order the server sent them. An envelope that could not be
    /// read is kept as ``SubscribeEvent/unreadable(reason:)``: one bad event never fails the answer.
    public var envelopes: [SubscribeEnvelope]

    /// An answer.
    public init(cursor: SubscribeCursor, envelopes: [SubscribeEnvelope]) {
        self.cursor = cursor
        self.envelopes = envelopes
    }

    /// How many envelopes an answer holds when the server's buffer may have overflowed: PubNub
    /// keeps 100 events per connection and drops the oldest silently, so an answer this full may
    /// have lost some (the SDKs' `requestMessageCountThreshold`).
    public static let bufferThreshold = 100

    /// Whether the answer is as full as the server's buffer (``bufferThreshold``): events before
    /// these may have been dropped.
    public var mayHaveOverflowed: Bool { envelopes.count >= Self.bufferThreshold }
}

/// One element of a subscribe answer's `m`, with PubNub's one-letter keys given names.
public struct SubscribeEnvelope: Sendable, Hashable {
    /// `c`: the channel the event happened on (`<ch>-pnpres` for presence). Empty when the
    /// envelope had none (then ``event`` is ``SubscribeEvent/unreadable(reason:)``).
    public var channel: String
    /// `b`: the subscription that matched (a channel, a group or a wildcard), when sent.
    public var subscription: String?
    /// `p.t`: when the event was published; nil when the envelope had none (unreadable).
    public var timetoken: Timetoken?
    /// `i`: who published it (the actor of a message action).
    public var publisher: String?
    /// `e` as sent: nil or 0 message, 1 signal, 2 App Context, 3 message action, 4 file.
    public var kind: Int?
    /// `d`: the payload.
    public var payload: JSONValue
    /// `u`: publish metadata.
    public var meta: JSONValue?
    /// `cmt`: the custom message type.
    public var customMessageType: String?
    /// The event, decoded from the fields above.
    public var event: SubscribeEvent
    /// Why a message's payload could not be decrypted, when the client has a crypto module and
    /// it could not: ``payload`` is then as received.
    public var decryptionError: CryptoError?

    /// An envelope.
    public init(
        channel: String, subscription: String? = nil, timetoken: Timetoken?, publisher: String? = nil, kind: Int? = nil,
        payload: JSONValue, meta: JSONValue? = nil, customMessageType: String? = nil, event: SubscribeEvent
    ) {
        self.channel = channel
        self.subscription = subscription
        self.timetoken = timetoken
        self.publisher = publisher
        self.kind = kind
        self.payload = payload
        self.meta = meta
        self.customMessageType = customMessageType
        self.event = event
    }
}

/// What an envelope says happened. Every kind PubNub sends has a case; a kind this version does
/// not know (a future `e: 6`, say) is ``unknown(kind:)``, and an envelope missing what its
/// kind needs is ``unreadable(reason:)``: neither is ever an error.
public enum SubscribeEvent: Sendable, Hashable {
    /// A published message (`e` absent or 0): ``SubscribeEnvelope/payload`` is the message.
    case message
    /// A signal (`e: 1`): never stored by PubNub.
    case signal
    /// A file message (`e: 4`): the payload holds `message` and `file` (`id`, `name`).
    case file
    /// A message action added or removed (`e: 3`).
    case messageAction(MessageActionEvent)
    /// An App Context change (`e: 2`).
    case appContext(AppContextEvent)
    /// A presence event on a `-pnpres` channel.
    case presence(PresenceEvent)
    /// A DataSync record created, updated or deleted (`e: 5`), on the record's id channel (a
    /// membership's on its channel's and its user's).
    case dataSync(DataSyncEvent)
    /// A kind this version does not know; the envelope is kept as sent.
    case unknown(kind: Int)
    /// An envelope that lacks what its kind needs (no channel, no timetoken, a payload of the
    /// wrong shape). Whoever keeps a replica treats it as a possible gap.
    case unreadable(reason: String)
}

/// A message action event (`e: 3`), on the parent message's channel.
public struct MessageActionEvent: Sendable, Hashable {
    /// Whether the action was added (`true`) or removed.
    public var added: Bool
    /// The action, with its actor (`i`) as ``WireMessageAction/uuid``.
    public var action: WireMessageAction

    /// An event.
    public init(added: Bool, action: WireMessageAction) {
        self.added = added
        self.action = action
    }
}

/// An App Context event (`e: 2`). A `set` carries only the fields that changed (an explicit
/// `null` clears one) with the new `updated` and `eTag`.
public enum AppContextEvent: Sendable, Hashable {
    /// A user was created or changed: `fields` are the changed fields in wire form (`name`,
    /// `externalId`, `profileUrl`, `email`, `type`, `status`, `custom`).
    case userSet(id: String, fields: [String: JSONValue], updated: String?, eTag: String?)
    /// A user was removed.
    case userRemoved(id: String)
    /// A channel was created or changed (`name`, `description`, `type`, `status`, `custom`).
    case channelSet(id: String, fields: [String: JSONValue], updated: String?, eTag: String?)
    /// A channel was removed.
    case channelRemoved(id: String)
    /// A membership was created or changed (`custom`, `status`, `type`).
    case membershipSet(channelId: String, userId: String, fields: [String: JSONValue], updated: String?, eTag: String?)
    /// A membership was removed.
    case membershipRemoved(channelId: String, userId: String)
}

extension PubNubClient {
    /// The request ``subscribe(_:)`` sends: `GET /v2/subscribe/{sub}/{channels}/0` with `tt`
    /// (0 for a handshake), `tr`, `channel-group`, `heartbeat`, `state`, `filter-expr` and `ee`.
    public func subscribeRequest(_ subscribe: SubscribeRequest) throws(WireError) -> WireRequest {
        guard !subscribe.channels.isEmpty || !subscribe.channelGroups.isEmpty else {
            throw .invalidArgument("subscribe needs at least one channel or channel group")
        }
        guard subscribe.channels.allSatisfy({ !$0.isEmpty && !$0.contains(",") }) else {
            throw .invalidArgument("a subscribed channel name is empty or holds a comma")
        }
        let channels = subscribe.channels.isEmpty ? "," : subscribe.channels.sorted().joined(separator: ",")
        var query = commonQuery()
        query.append(QueryItem("tt", subscribe.cursor.map { String($0.timetoken.rawValue) } ?? "0"))
        if let cursor = subscribe.cursor { query.append(QueryItem("tr", String(cursor.region))) }
        if !subscribe.channelGroups.isEmpty {
            query.append(QueryItem("channel-group", subscribe.channelGroups.sorted().joined(separator: ",")))
        }
        if let heartbeat = subscribe.heartbeat { query.append(QueryItem("heartbeat", String(heartbeat))) }
        if let state = subscribe.state {
            query.append(QueryItem("state", String(decoding: try Self.json(state), as: UTF8.self)))
        }
        if let filter = subscribe.filterExpression { query.append(QueryItem("filter-expr", filter)) }
        query.append(QueryItem("ee", nil))
        var request = WireRequest(
            method: .get, pathSegments: ["v2", "subscribe", configuration.subscribeKey, channels, "0"], query: query,
            operation: subscribe.cursor == nil ? "handshake" : "subscribe")
        request.timeout = subscribe.timeout
        return request
    }

    /// One subscribe request. Without a cursor it is a handshake, answered at once with the
    /// server's current cursor and no events; with one it is a long poll that the server holds
    /// until events newer than the cursor arrive, or for about 280 s. Cancelling the calling
    /// task ends it promptly (``TransportFailure/outcomeUnknown(reason:)``).
    ///
    /// The answer's envelopes are decoded one by one: one the client cannot read becomes
    /// ``SubscribeEvent/unreadable(reason:)``; only an answer with no readable cursor fails
    /// (``WireError/decoding(operation:status:message:)``).
    public func subscribe(_ subscribe: SubscribeRequest) async throws(WireError) -> SubscribeAnswer {
        let request = try subscribeRequest(subscribe)
        let response = try await perform(request)
        var answer = try Self.subscribeAnswer(from: response, operation: request.operation)
        if let crypto {
            // Message payloads are encrypted; actions, App Context and presence never are. We send
            // signals in the clear (docs/encryption.md); the Swift SDK encrypts them, so a string
            // signal that decrypts is read decrypted, and any other is a plain signal, kept as is.
            for index in answer.envelopes.indices {
                switch answer.envelopes[index].event {
                case .message, .file:
                    // A file message's whole payload (`{"message","file"}`) is encrypted, as a message's is.
                    (answer.envelopes[index].payload, answer.envelopes[index].decryptionError) =
                        crypto.decryptKeepingPayload(answer.envelopes[index].payload)
                case .signal where answer.envelopes[index].payload.stringValue != nil:
                    if case (let plaintext, nil) = crypto.decryptKeepingPayload(answer.envelopes[index].payload) {
                        answer.envelopes[index].payload = plaintext
                    }
                default:
                    continue
                }
            }
        }
        return answer
    }

    /// A handshake: the server's current cursor for `channels`, with no events.
    public func handshake(_ channels: [String]) async throws(WireError) -> SubscribeCursor {
        try await subscribe(SubscribeRequest(channels: channels)).cursor
    }

    /// Decodes a subscribe answer (exposed for tests and tools that read recorded traffic).
    public static func subscribeAnswer(from response: WireResponse, operation: String = "subscribe") throws(WireError)
        -> SubscribeAnswer
    {
        let wire: SubscribeDecoding.Answer
        do {
            // The fast parser and a field-by-field read first; JSONDecoder for what they leave.
            if let json = JSONValue.parse(response.body), let answer = SubscribeDecoding.Answer(json: json) {
                wire = answer
            } else {
                wire = try JSONDecoder().decode(SubscribeDecoding.Answer.self, from: response.body)
            }
        } catch {
            throw .decoding(operation: operation, status: response.status, message: "the answer is not JSON with an m array")
        }
        guard let t = wire.t, let timetoken = t.t else {
            throw .decoding(operation: operation, status: response.status, message: "the answer has no readable cursor t.t")
        }
        return SubscribeAnswer(
            cursor: SubscribeCursor(timetoken: timetoken, region: Int(clamping: t.r ?? 0)),
            envelopes: (wire.m ?? []).map(\.envelope))
    }
}
