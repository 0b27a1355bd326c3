import Foundation
import PubNubWire

/// A transport that records requests and answers from a script, for request-shape tests.
final class RecordingTransport: Transport, @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [WireRequest] = []
    private let answer: @Sendable (WireRequest) throws(TransportFailure) -> WireResponse

    init(answer: @escaping @Sendable (WireRequest) throws(TransportFailure) -> WireResponse) {
        self.answer = answer
    }

    convenience init(status: Int = 200, body: String, headers: [String: String] = [:]) {
        self.init { _ in WireResponse(status: status, headers: headers, body: Data(body.utf8)) }
    }

    var requests: [WireRequest] { lock.withLock { recorded } }

    func send(_ request: WireRequest, to origin: Origin) async throws(TransportFailure) -> WireResponse {
        lock.withLock { recorded.append(request) }
        return try answer(request)
    }
}

func client(_ transport: any Transport, auth: String? = nil) throws -> PubNubClient {
    let configuration = try PubNubConfiguration(
        publishKey: "pub-c-test", subscribeKey: "sub-c-test", userId: "me", origin: "127.0.0.1:9", secure: false,
        authKey: auth)
    return PubNubClient(configuration: configuration, transport: transport)
}
