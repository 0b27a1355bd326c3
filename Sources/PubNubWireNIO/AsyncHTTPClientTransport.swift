import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import PubNubWire

/// A ``Transport`` on AsyncHTTPClient: the fast default on Linux.
///
/// Whether a failed request may have been applied is decided by whether its request head went
/// out: AsyncHTTPClient tells its delegate when it writes the head, so a refused connection is
/// ``TransportFailure/notSent(reason:)`` and a timeout or reset after sending is
/// ``TransportFailure/outcomeUnknown(reason:)``. No retries happen here.
public final class AsyncHTTPClientTransport: Transport {
    private let client: HTTPClient
    private let timeout: TimeAmount

    /// A transport with its own client. Call ``shutdown()`` when done.
    ///
    /// - Parameters:
    ///   - timeout: deadline of each request (connecting included).
    ///   - connectionsPerHost: HTTP/1.1 connections kept per host (AsyncHTTPClient's default is 8).
    public init(timeout: Duration = .seconds(15), connectionsPerHost: Int = 16) {
        let (seconds, attoseconds) = timeout.components
        let timeout = TimeAmount.nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connectionsPerHost
        // AsyncHTTPClient retries a refused connection until the connect timeout: keep it within the deadline.
        configuration.timeout = HTTPClient.Configuration.Timeout(connect: min(.seconds(5), timeout))
        configuration.decompression = .enabled(limit: .size(32 << 20))
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.timeout = timeout
    }

    /// Closes the client's connections.
    public func shutdown() async throws {
        try await client.shutdown()
    }

    /// Sends the request and collects the whole response.
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
        let delegate = CollectingDelegate()
        do {
            let task = client.execute(request: clientRequest, delegate: delegate, deadline: .now() + timeout)
            let (head, body) = try await task.futureResult.get()
            var headers: [String: String] = [:]
            for field in head.headers { headers[field.name] = field.value }
            return WireResponse(status: Int(head.status.code), headers: headers, body: Data(body.readableBytesView))
        } catch {
            let reason = String(describing: error)
            throw delegate.requestWasSent ? .outcomeUnknown(reason: reason) : .notSent(reason: reason)
        }
    }
}

/// Collects the response and remembers whether the request head was written.
private final class CollectingDelegate: HTTPClientResponseDelegate, Sendable {
    typealias Response = (HTTPResponseHead, ByteBuffer)

    private struct State {
        var sent = false
        var head: HTTPResponseHead?
        var body = ByteBuffer()
    }

    private let state = NIOLockedValueBox(State())

    var requestWasSent: Bool { state.withLockedValue { $0.sent } }

    func didSendRequestHead(task: HTTPClient.Task<Response>, _ head: HTTPRequestHead) {
        state.withLockedValue { $0.sent = true }
    }

    func didReceiveHead(task: HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        state.withLockedValue { $0.head = head }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        state.withLockedValue {
            var part = buffer
            $0.body.writeBuffer(&part)
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Response>) throws -> Response {
        try state.withLockedValue { state in
            guard let head = state.head else { throw HTTPClientError.remoteConnectionClosed }
            return (head, state.body)
        }
    }
}
