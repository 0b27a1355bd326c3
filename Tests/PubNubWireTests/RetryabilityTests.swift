import Foundation
import PubNubWire
import Testing

@Suite("WireError.retryability: one classification for every caller")
struct RetryabilityTests {
    static func service(_ status: Int, retryAfter: Double? = nil) -> WireError {
        .service(ServiceError(operation: "op", status: status, family: .object, message: "m", retryAfter: retryAfter))
    }

    @Test("statuses", arguments: [
        (408, WireError.Retryability.outcomeUnknown(answered: true)),
        (429, .rateLimited(retryAfter: nil)),
        (500, .serverFailure), (502, .serverFailure), (503, .serverFailure), (504, .serverFailure), (599, .serverFailure),
        (400, .permanent), (401, .permanent), (403, .permanent), (404, .permanent), (409, .permanent),
        (412, .permanent), (413, .permanent), (414, .permanent), (302, .permanent), (600, .permanent),
    ])
    func statuses(status: Int, expected: WireError.Retryability) {
        #expect(Self.service(status).retryability == expected)
        #expect(Self.service(status).retryability.isRetryable == (expected != .permanent))
        #expect(Self.service(status).retryability.isUnreachable == false)
    }

    @Test("429 carries its Retry-After as the least wait")
    func rateLimited() {
        let limited = Self.service(429, retryAfter: 7).retryability
        #expect(limited == .rateLimited(retryAfter: 7))
        #expect(limited.minimumWait == 7 && limited.isRetryable)
        #expect(Self.service(429).retryability.minimumWait == 0)
    }

    @Test("transport failures: not sent and no answer are unreachable; only not sent is safe to resend blindly")
    func transport() {
        let notSent = WireError.transport(.notSent(reason: "offline")).retryability
        #expect(notSent == .notSent && notSent.isRetryable && notSent.isUnreachable && notSent.minimumWait == 0)
        let lost = WireError.transport(.outcomeUnknown(reason: "reset")).retryability
        #expect(lost == .outcomeUnknown(answered: false) && lost.isRetryable && lost.isUnreachable)
    }

    @Test("an unreadable 2xx is an unknown outcome with an answer; a refused request is permanent")
    func decodingAndArguments() {
        let unreadable = WireError.decoding(operation: "publish", status: 200, message: "bad").retryability
        #expect(unreadable == .outcomeUnknown(answered: true) && unreadable.isRetryable && !unreadable.isUnreachable)
        for error in [WireError.invalidArgument("limit"), .invalidConfiguration("origin")] {
            #expect(error.retryability == .permanent)
            #expect(error.retryability.minimumWait == nil && !error.retryability.isRetryable)
        }
        #expect(Self.service(503).retryability.minimumWait == 0)
        #expect(Self.service(408).retryability.minimumWait == 0)
    }
}
