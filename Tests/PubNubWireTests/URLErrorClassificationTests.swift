import Foundation
import Testing
@testable import PubNubWire

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("URLSession failures: not sent only when the request provably never left")
struct URLErrorClassificationTests {
    @Test("connection and DNS failures are not sent", arguments: [
        URLError.Code.cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet,
    ])
    func notSent(_ code: URLError.Code) {
        guard case .notSent = URLSessionTransport.classify(URLError(code)) else {
            Issue.record("\(code) should be not sent")
            return
        }
    }

    @Test("timeouts, lost connections and cancellation may have been applied", arguments: [
        URLError.Code.timedOut, .networkConnectionLost, .cancelled, .badServerResponse,
    ])
    func outcomeUnknown(_ code: URLError.Code) {
        guard case .outcomeUnknown = URLSessionTransport.classify(URLError(code)) else {
            Issue.record("\(code) should be outcome unknown")
            return
        }
    }
}
