import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A tiny HTTP/1.1 server on 127.0.0.1 (ephemeral port) that misbehaves on purpose, recording every
/// connection and request it gets. ``stop()`` closes it and every connection it accepted.
final class HostileHTTPServer: Sendable {
    /// How the server answers every request.
    enum Behaviour: Sendable {
        /// 200 announcing a 1,000,000-byte body, then one byte every `interval`, `count` times, then
        /// the connection closes (so a transport without a whole-request deadline ends late, not never).
        case drip(interval: TimeAmount, count: Int)
        /// `status` with `Location: location` and a short body.
        case redirect(status: Int, location: String)
        /// 200 with `bytes` bytes of body, announced by Content-Length or sent chunked.
        case body(bytes: Int, announced: Bool)
        /// Reads the request and never answers.
        case silent
        /// 200 `{}`.
        case ok
    }

    /// A request as the server saw it.
    struct Request: Sendable, Equatable {
        var method: String
        var uri: String
        var bodyBytes: Int
    }

    let port: Int
    private let channel: any Channel
    private let recorder: Recorder

    private init(port: Int, channel: any Channel, recorder: Recorder) {
        self.port = port
        self.channel = channel
        self.recorder = recorder
    }

    /// `http://127.0.0.1:port`.
    var origin: String { "http://127.0.0.1:\(port)" }

    /// Connections accepted so far.
    var connections: Int { recorder.state.withLockedValue { $0.connections } }

    /// Requests read to their end so far.
    var requests: [Request] { recorder.state.withLockedValue { $0.requests } }

    /// Yields once per dripped answer that ended, with the bytes dripped by then: fewer than the
    /// count when the client hung up first. Counted on the server's event loop, so a client's
    /// deadline is measured in real time even when the test's own tasks resume late on a loaded
    /// machine.
    var dripEnds: AsyncStream<Int> { recorder.dripEnds }

    /// Yields once per request head the server reads.
    var requestHeads: AsyncStream<Void> { recorder.heads }

    /// Starts a server answering every request with `behaviour`.
    static func start(_ behaviour: Behaviour) async throws -> HostileHTTPServer {
        let recorder = Recorder()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                recorder.accepted(child)
                return child.eventLoop.makeCompletedFuture {
                    try child.pipeline.syncOperations.configureHTTPServerPipeline()
                    try child.pipeline.syncOperations.addHandler(HostileHandler(behaviour: behaviour, recorder: recorder))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        guard let port = channel.localAddress?.port else {
            try? await channel.close()
            throw HostileServerError.noPort
        }
        return HostileHTTPServer(port: port, channel: channel, recorder: recorder)
    }

    /// Closes the listener and every accepted connection.
    func stop() async {
        try? await channel.close()
        let children = recorder.state.withLockedValue { $0.children }
        for child in children { try? await child.close() }
        recorder.finish()
    }
}

enum HostileServerError: Error { case noPort }

/// What the server saw, shared by its connections.
private final class Recorder: Sendable {
    struct State {
        var connections = 0
        var requests: [HostileHTTPServer.Request] = []
        var children: [any Channel] = []
    }

    let state = NIOLockedValueBox(State())
    let heads: AsyncStream<Void>
    private let headsContinuation: AsyncStream<Void>.Continuation

    let dripEnds: AsyncStream<Int>
    private let dripEndsContinuation: AsyncStream<Int>.Continuation

    init() {
        (heads, headsContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        (dripEnds, dripEndsContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    func accepted(_ child: any Channel) {
        state.withLockedValue {
            $0.connections += 1
            $0.children.append(child)
        }
    }

    func headArrived() { headsContinuation.yield() }

    func record(_ request: HostileHTTPServer.Request) { state.withLockedValue { $0.requests.append(request) } }

    func dripEnded(afterDrips drips: Int) { dripEndsContinuation.yield(drips) }

    func finish() {
        headsContinuation.finish()
        dripEndsContinuation.finish()
    }
}

/// Answers each request on one connection as the behaviour says.
private final class HostileHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let behaviour: HostileHTTPServer.Behaviour
    private let recorder: Recorder
    private var current = HostileHTTPServer.Request(method: "", uri: "", bodyBytes: 0)
    private var drip: Scheduled<Void>?
    private var dripped = 0
    private var dripping = false

    init(behaviour: HostileHTTPServer.Behaviour, recorder: Recorder) {
        self.behaviour = behaviour
        self.recorder = recorder
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            current = HostileHTTPServer.Request(method: head.method.rawValue, uri: head.uri, bodyBytes: 0)
            recorder.headArrived()
        case .body(let buffer):
            current.bodyBytes += buffer.readableBytes
        case .end:
            recorder.record(current)
            respond(context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if dripping { recorder.dripEnded(afterDrips: dripped) }
        dripping = false
        drip?.cancel()
        context.fireChannelInactive()
    }

    private func respond(context: ChannelHandlerContext) {
        switch behaviour {
        case .ok:
            writeWhole(context: context, status: .ok, headers: ["Content-Type": "application/json"], body: "{}")
        case .redirect(let status, let location):
            writeWhole(
                context: context, status: HTTPResponseStatus(statusCode: status), headers: ["Location": location],
                body: "moved")
        case .body(let bytes, let announced):
            var headers = HTTPHeaders()
            if announced { headers.add(name: "Content-Length", value: "\(bytes)") }
            let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            var left = bytes
            while left > 0 {
                let size = min(left, 64 << 10)
                left -= size
                let chunk = ByteBuffer(repeating: UInt8(ascii: "x"), count: size)
                context.write(wrapOutboundOut(.body(.byteBuffer(chunk))), promise: nil)
            }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        case .silent:
            break
        case .drip(let interval, let count):
            let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: ["Content-Length": "1000000"])
            context.writeAndFlush(wrapOutboundOut(.head(head)), promise: nil)
            dripping = true
            dripOne(context: context, left: count, interval: interval)
        }
    }

    private func dripOne(context: ChannelHandlerContext, left: Int, interval: TimeAmount) {
        guard left > 0 else {
            dripping = false
            recorder.dripEnded(afterDrips: dripped)
            context.close(promise: nil)
            return
        }
        drip = context.eventLoop.assumeIsolated().scheduleTask(in: interval) {
            context.writeAndFlush(self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "x")))), promise: nil)
            self.dripped += 1
            self.dripOne(context: context, left: left - 1, interval: interval)
        }
    }

    private func writeWhole(context: ChannelHandlerContext, status: HTTPResponseStatus, headers: HTTPHeaders, body: String) {
        var headers = headers
        headers.add(name: "Content-Length", value: "\(body.utf8.count)")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}
