#if NIOTransport
import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import PubNubWire

/// A ``PubNubWire/Transport`` on AsyncHTTPClient: the fast default on Linux.
///
/// Whether a failed request may have been applied is decided by whether its request head went
/// out: AsyncHTTPClient tells its delegate when it writes the head, so a refused connection is
/// ``PubNubWire/TransportFailure/notSent(reason:)`` and a timeout or reset after sending is
/// ``PubNubWire/TransportFailure/outcomeUnknown(reason:)``. No retries happen here.
///
/// Each request runs under an AsyncHTTPClient deadline, which bounds the whole exchange
/// (connecting, sending and reading the entire body, not idle gaps); when it fires the reason says
/// "deadline of N s exceeded". The body is capped (``PubNubWire/TransportLimits/defaultMaximumResponseBytes``
/// unless configured), cancelling the calling task cancels the request at once, and redirects are
/// never followed (`redirectConfiguration = .disallow`): the 3xx response itself is returned.
public final class AsyncHTTPClientTransport: Transport {
    private let client: HTTPClient
    private let timeout: Duration
    private let maximumResponseBytes: Int

    /// A transport with its own client. Call ``shutdown()`` when done.
    ///
    /// - Parameters:
    ///   - timeout: how long the whole request may take, connecting included; clamped into
    ///     ``PubNubWire/TransportLimits/timeoutRange``.
    ///   - connectionsPerHost: HTTP/1.1 connections kept per host (AsyncHTTPClient's default is 8).
    ///   - maximumResponseBytes: the largest response body accepted; a larger one fails the request.
    public init(
        timeout: Duration = .seconds(15), connectionsPerHost: Int = 16,
        maximumResponseBytes: Int = TransportLimits.defaultMaximumResponseBytes
    ) {
        self.timeout = TransportLimits.clamp(timeout)
        self.maximumResponseBytes = max(0, maximumResponseBytes)
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = max(1, connectionsPerHost)
        // AsyncHTTPClient retries a refused connection until the connect timeout: keep it within the deadline.
        configuration.timeout = HTTPClient.Configuration.Timeout(connect: min(.seconds(5), Self.timeAmount(self.timeout)))
        configuration.decompression = .enabled(limit: .size(self.maximumResponseBytes))
        // Following a redirect would send the keys and user id in the URL to the Location's host.
        configuration.redirectConfiguration = .disallow
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Closes the client's connections.
    public func shutdown() async throws {
        try await client.shutdown()
    }

    /// Sends the request within the deadline and collects the whole response (a 3xx included).
    public func send(_ request: WireRequest, to origin: Origin) async throws(TransportFailure) -> WireResponse {
        let clientRequest: HTTPClient.Request
        do {
            var headers = HTTPHeaders()
            for (name, value) in request.headers { headers.add(name: name, value: value) }
            clientRequest = try HTTPClient.Request(
                url: origin.url(for: request), method: HTTPMethod(rawValue: request.method.rawValue), headers: headers,
                body: request.body.map { .byteBuffer(ByteBuffer(bytes: $0)) })
        } catch {
            throw .notSent(reason: "cannot build the request: \(error)")
        }
        guard !Task.isCancelled else { throw .notSent(reason: "cancelled before sending") }
        let delegate = CollectingDelegate(maximumBytes: maximumResponseBytes)
        let timeout = request.timeout.map(TransportLimits.clamp) ?? self.timeout
        let task = client.execute(request: clientRequest, delegate: delegate, deadline: .now() + Self.timeAmount(timeout))
        do {
            // `get()` ignores task cancellation; the handler cancels the request instead.
            let (head, body) = try await withTaskCancellationHandler {
                try await task.futureResult.get()
            } onCancel: {
                task.cancel()
            }
            var headers: [String: String] = [:]
            for field in head.headers { headers[field.name] = field.value }
            return WireResponse(status: Int(head.status.code), headers: headers, body: Data(body.readableBytesView))
        } catch {
            let reason: String
            if error is BodyTooLarge {
                reason = TransportLimits.bodyTooLarge(maximumResponseBytes)
            } else if let error = error as? HTTPClientError, error == .deadlineExceeded {
                reason = TransportLimits.deadlineExceeded(timeout)
            } else if let error = error as? HTTPClientError, error == .cancelled {
                reason = "cancelled by the caller"
            } else {
                reason = String(describing: error)
            }
            throw delegate.requestWasSent ? .outcomeUnknown(reason: reason) : .notSent(reason: reason)
        }
    }

    /// `duration` (already clamped, so it cannot overflow) as NIO's time amount.
    private static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

/// The response body outgrew the transport's cap.
private struct BodyTooLarge: Error {}

/// Collects the response up to the cap and remembers whether the request head was written.
private final class CollectingDelegate: HTTPClientResponseDelegate, Sendable {
    typealias Response = (HTTPResponseHead, ByteBuffer)

    private struct State {
        var sent = false
        var head: HTTPResponseHead?
        var body = ByteBuffer()
    }

    private let state = NIOLockedValueBox(State())
    private let maximumBytes: Int

    init(maximumBytes: Int) { self.maximumBytes = maximumBytes }

    var requestWasSent: Bool { state.withLockedValue { $0.sent } }

    func didSendRequestHead(task: HTTPClient.Task<Response>, _ head: HTTPRequestHead) {
        state.withLockedValue { $0.sent = true }
    }

    func didReceiveHead(task: HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        if let length = head.headers.first(name: "content-length").flatMap(Int.init), length > maximumBytes {
            return task.eventLoop.makeFailedFuture(BodyTooLarge())
        }
        state.withLockedValue { $0.head = head }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let fits = state.withLockedValue { state in
            guard state.body.readableBytes + buffer.readableBytes <= maximumBytes else { return false }
            var part = buffer
            state.body.writeBuffer(&part)
            return true
        }
        return fits ? task.eventLoop.makeSucceededVoidFuture() : task.eventLoop.makeFailedFuture(BodyTooLarge())
    }

    func didFinishRequest(task: HTTPClient.Task<Response>) throws -> Response {
        try state.withLockedValue { state in
            guard let head = state.head else { throw HTTPClientError.remoteConnectionClosed }
            return (head, state.body)
        }
    }
}
#else
#error("PubNubWireNIO needs the NIOTransport trait: add traits: [\"NIOTransport\"] to pnreplicate's .package line (docs/installation.md)")
#endif
