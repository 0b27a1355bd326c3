#if HTTPSimulator
import Foundation
import Hummingbird
import NIOCore
import PubNubWire

/// Ways the HTTP front end misbehaves on purpose, so that a client's deadlines and progress checks
/// can be tested against a real socket.
///
/// Unlike the seeded faults of a ``PubNubSimulator/FaultPlan``, these take real time: they exist to
/// show that a client bounds a whole request and a whole sync, not just the gaps between bytes.
///
/// ## Topics
///
/// ### Creating misbehaviour
///
/// - ``init(dripInterval:publishDelay:historyIgnoresStart:)``
/// - ``none``
///
/// ### Misbehaviours
///
/// - ``dripInterval``
/// - ``publishDelay``
/// - ``historyIgnoresStart``
///
/// ### Rewriting requests
///
/// - ``rewrite(_:)``
public struct ServerMisbehaviour: Sendable, Equatable {
    /// The pause before each byte of every response body; `nil` writes bodies at once. A client
    /// with only an idle timeout never gives up on a dripping body.
    public var dripInterval: Duration?
    /// How long a publish waits before it is applied and answered; `nil` applies it at once.
    ///
    /// The wait comes **before** the publish is applied, so that for the whole delay the message is
    /// neither stored nor answered: a second client that probes history in that window does not
    /// find it and, if nothing stops it, publishes it again.
    public var publishDelay: Duration?
    /// Whether history reads (`GET` v3 history, v3 history with actions, v2 history) drop `start`
    /// and `end` before the simulator sees them, so that a client paging backwards gets the newest
    /// page again and again.
    public var historyIgnoresStart: Bool

    /// A server that behaves.
    public static let none = ServerMisbehaviour()

    /// Misbehaviour as listed; the defaults behave.
    public init(dripInterval: Duration? = nil, publishDelay: Duration? = nil, historyIgnoresStart: Bool = false) {
        self.dripInterval = dripInterval
        self.publishDelay = publishDelay
        self.historyIgnoresStart = historyIgnoresStart
    }

    /// The request the simulator sees: `request` without `start` and `end` when it is a history
    /// read and ``historyIgnoresStart`` is set; otherwise `request` unchanged.
    public func rewrite(_ request: WireRequest) -> WireRequest {
        guard historyIgnoresStart, Self.isHistoryRead(request) else { return request }
        var copy = request
        copy.query.removeAll { $0.name == "start" || $0.name == "end" }
        return copy
    }

    /// `GET /v3/history/sub-key/K/channel/C`, `/v3/history-with-actions/...` or `/v2/history/...`.
    /// Message counts and deletes are not reads of a page and keep their bounds.
    static func isHistoryRead(_ request: WireRequest) -> Bool {
        let path = request.pathSegments
        guard request.method == .get, path.count >= 6, path[2] == "sub-key", path[4] == "channel" else { return false }
        switch (path[0], path[1]) {
        case ("v3", "history"), ("v3", "history-with-actions"), ("v2", "history"): return true
        default: return false
        }
    }

    /// Whether `request` is a publish, which ``publishDelay`` holds back.
    static func isPublish(_ request: WireRequest) -> Bool {
        request.pathSegments.first == "publish"
    }

    /// `bytes` as a response body: at once, or one byte per ``dripInterval``.
    func body(_ bytes: Data) -> ResponseBody {
        guard let interval = dripInterval, !bytes.isEmpty else { return ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)) }
        return ResponseBody(contentLength: bytes.count) { writer in
            for byte in bytes {
                // A client that hangs up makes the next write throw, which ends the drip.
                try await Task.sleep(for: interval)
                try await writer.write(ByteBuffer(bytes: [byte]))
            }
            try await writer.finish(nil)
        }
    }
}
#endif
