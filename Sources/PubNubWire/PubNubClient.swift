import CoreMetrics
import Foundation
import Logging
import ReplicaModel

/// Speaks PubNub's REST protocol through a ``Transport``. One method per endpoint; every method
/// throws ``WireError`` and nothing else. No retries here: that is the outbox's job.
///
/// Each of PubNub's APIs is a value over the client (``PubNubService``): ``appContext``,
/// ``history``, ``messageActions``, ``presence``, ``files``, ``push``, ``dataSync``. Publishing,
/// signals, subscribe and `/time` are the client's own.
///
/// ```swift
/// let client = PubNubClient(configuration: configuration, transport: URLSessionTransport())
/// let timetoken = try await client.publish(PublishRequest(channel: "general", message: ["text": "hi"]))
/// let page = try await client.history.fetchHistory(HistoryQuery(channels: ["general"], max: 25))
/// ```
///
/// ## Topics
///
/// ### Creating a client
///
/// - ``init(configuration:transport:crypto:access:logger:)``
/// - ``configuration``
/// - ``transport``
/// - ``perform(_:)``
///
/// ### Publishing and signals
///
/// - ``publish(_:)``
/// - ``publishRequest(_:)``
/// - ``publishTimetoken(from:)``
/// - ``signal(_:)``
/// - ``signalRequest(_:)``
/// - ``time()``
///
/// ### Subscribe
///
/// - ``subscribe(_:)``
/// - ``subscribeRequest(_:)``
/// - ``handshake(_:)``
/// - ``subscribeAnswer(from:operation:)``
///
/// ### PubNub's other APIs
///
/// - ``appContext``
/// - ``history``
/// - ``messageActions``
/// - ``presence``
/// - ``files``
/// - ``push``
/// - ``dataSync``
public struct PubNubClient: Sendable {
    /// Keys, user id and origin.
    public let configuration: PubNubConfiguration
    /// How requests travel.
    public let transport: any Transport
    /// PubNub's crypto module when the app has a cipher key: message payloads are encrypted
    /// before publishing and decrypted in history and subscribe (`docs/encryption.md`).
    public let crypto: CryptoModule?
    /// The Access Manager token sent as `auth`, replaceable at runtime (``AccessControl/setToken(_:)``),
    /// and the checks made before and after each request (`docs/access.md`). Every copy of the
    /// client shares it. Starts with ``PubNubConfiguration/authKey``.
    public let access: AccessControl
    /// The last requests sent, with every secret taken out (``RequestJournal``): what a
    /// diagnostics report shows. Every copy of the client shares it.
    public let journal: RequestJournal
    /// Where this client and the replicator on it report their metrics (`docs/metrics.md`):
    /// by default swift-metrics' global factory as it was when the client was made (bootstrap
    /// yours before: `MetricsSystem.bootstrap(...)`), whose default reports nothing.
    public let metrics: any MetricsFactory
    let logger: Logger

    /// A client. `access` defaults to one holding the configuration's `authKey`, on the system
    /// clock; `journal` to one keeping the last 50 requests on the system clock; `metrics` to
    /// swift-metrics' global factory (`MetricsSystem.factory`).
    public init(
        configuration: PubNubConfiguration, transport: any Transport, crypto: CryptoModule? = nil,
        access: AccessControl? = nil, journal: RequestJournal? = nil, metrics: (any MetricsFactory)? = nil,
        logger: Logger = Logger(label: "pnreplicate.wire")
    ) {
        self.configuration = configuration
        self.transport = transport
        self.crypto = crypto
        self.access = access ?? AccessControl(token: configuration.authKey, userId: configuration.userId)
        self.journal = journal ?? RequestJournal()
        self.journal.redacting(publishKey: configuration.publishKey, subscribeKey: configuration.subscribeKey)
        self.metrics = metrics ?? MetricsSystem.factory
        self.logger = logger
    }

    /// App Context: users, channels, memberships and members (``PubNubAppContext``).
    public var appContext: PubNubAppContext { PubNubAppContext(client: self) }

    /// Message Persistence: history, its pages, message counts, deleting a range (``PubNubHistory``).
    public var history: PubNubHistory { PubNubHistory(client: self) }

    /// Message actions: add, remove, list (``PubNubMessageActions``).
    public var messageActions: PubNubMessageActions { PubNubMessageActions(client: self) }

    /// Presence: here now, where now, heartbeats, leave, state (``PubNubPresence``).
    public var presence: PubNubPresence { PubNubPresence(client: self) }

    /// File Sharing: list, upload, publish file messages, download, delete (``PubNubFiles``).
    public var files: PubNubFiles { PubNubFiles(client: self) }

    /// Mobile Push device registration: add and remove a device's channels, list them, remove the
    /// device (``PubNubPush``).
    public var push: PubNubPush { PubNubPush(client: self) }

    /// DataSync: users, channels, memberships, entities and relationships under
    /// `/v1/datasync/` (``PubNubDataSync``; `docs/datasync.md`).
    public var dataSync: PubNubDataSync { PubNubDataSync(client: self) }

    /// The query items every request carries: `pnsdk`, `uuid`, and `auth` (the current token) when there is one.
    func commonQuery(auth: Bool = true) -> [QueryItem] {
        var items = [QueryItem("pnsdk", configuration.sdkName), QueryItem("uuid", configuration.userId)]
        if auth, let key = access.token { items.append(QueryItem("auth", key)) }
        return items
    }

    /// Sends `request`; a non-2xx answer becomes ``WireError/service(_:)``.
    ///
    /// A 3xx answer is never followed (transports return it as is): it becomes a
    /// ``ServiceError`` with reason ``ServiceError/Reason/other`` whose message names where it
    /// pointed, "redirect to https://other.example/path refused: …", so the outbox dead-letters the
    /// op and the reconciler stops the pull rather than sending keys to another host.
    ///
    /// Access Manager (``access``): a request that needs a permission is not sent while the
    /// client waits for a token, or when the parsed token does not grant it; a 403 under the
    /// current token makes every request wait for a new one. Both throw
    /// ``WireError/accessDenied(_:)``. `auth` is sent with the current token: a request built
    /// before ``AccessControl/setToken(_:)`` goes with the new one.
    public func perform(_ request: WireRequest) async throws(WireError) -> WireResponse {
        let admission = try access.admit(request)
        let request = withToken(admission.token, request)
        let response: WireResponse
        let started = journal.start()
        do {
            response = try await transport.send(request, to: configuration.origin)
        } catch {
            log(journal.record(request, started: started, status: nil, failure: "\(error)", codes: [], metrics: metrics))
            throw .transport(error)
        }
        if (300..<400).contains(response.status) {
            log(journal.record(request, started: started, status: response.status, failure: nil, codes: [], metrics: metrics))
            throw .service(Self.refusedRedirect(operation: request.operation, response: response))
        }
        guard (200..<300).contains(response.status) else {
            let error = ErrorDecoding.serviceError(operation: request.operation, response: response)
            log(journal.record(request, started: started, status: response.status, failure: nil, codes: error.codes, metrics: metrics))
            if response.status == 403 { throw access.refused(request, error: error, admission: admission) }
            throw .service(error)
        }
        log(journal.record(request, started: started, status: response.status, failure: nil, codes: [], metrics: metrics))
        return response
    }

    /// The debug line about a finished request: what its journal entry holds (no key, token,
    /// signature or message text), with the op it was sent for (``WireTrace/op``).
    private func log(_ entry: RequestJournal.Entry) {
        // Built only when it is written: every request passes here.
        guard logger.logLevel <= .debug else { return }
        var metadata: Logger.Metadata = [
            "operation": "\(entry.operation)", "method": "\(entry.method)", "path": "\(entry.path)",
            "status": "\(entry.status.map(String.init) ?? "none")", "ms": "\(entry.milliseconds)",
        ]
        if let failure = entry.failure { metadata["failure"] = "\(failure)" }
        if let op = entry.op { metadata["op"] = "\(op)" }
        logger.debug("request", metadata: metadata)
    }

    /// `request` with its `auth` item replaced by `token` (or removed when there is none); a
    /// request that carries no `auth` (time, storage) is left alone.
    func withToken(_ token: String?, _ request: WireRequest) -> WireRequest {
        guard let index = request.query.firstIndex(where: { $0.name == "auth" }) else { return request }
        var copy = request
        if let token { copy.query[index].value = token } else { copy.query.remove(at: index) }
        return copy
    }

    /// The error for a 3xx: names the `Location` as scheme, host and port only, since the text is
    /// logged and stored, and PubNub paths carry the keys (and a publish's message).
    static func refusedRedirect(operation: String, response: WireResponse) -> ServiceError {
        var target = "(no Location header)"
        if let location = response.header("location") {
            target = "(an unreadable Location)"
            if let components = URLComponents(string: location.trimmingCharacters(in: .whitespaces)) {
                var text = ""
                if let scheme = components.scheme, let host = components.host {
                    text = scheme + "://" + host + (components.port.map { ":\($0)" } ?? "")
                }
                target = text.isEmpty ? "to a path on the same origin" : "to " + String(text.prefix(200))
            }
        }
        return ServiceError(
            operation: operation, status: response.status, family: .unknown,
            message: "redirect \(target) refused: pnreplicate never follows redirects (keys would leak)")
    }

    /// Sends `request` and decodes a 2xx body as `T`.
    func perform<T: Decodable>(_ request: WireRequest, as type: T.Type) async throws(WireError) -> T {
        let response = try await perform(request)
        return try Self.decode(T.self, from: response, operation: request.operation)
    }

    static func decode<T: Decodable>(_ type: T.Type, from response: WireResponse, operation: String) throws(WireError) -> T {
        if let fast = T.self as? any JSONValueDecodable.Type, let json = JSONValue.parse(response.body),
           let value = fast.init(json: json) as? T
        {
            return value
        }
        do {
            return try JSONDecoder().decode(T.self, from: response.body)
        } catch {
            throw .decoding(operation: operation, status: response.status, message: "\(error)")
        }
    }

    static func json(_ value: some Encodable) throws(WireError) -> Data {
        // Payloads are JSONValues: the fast writer writes the encoder's exact bytes.
        if let json = value as? JSONValue, let bytes = json.compactJSONBytes() { return Data(bytes) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(value)
        } catch {
            throw .invalidArgument("cannot encode JSON: \(error)")
        }
    }
}
