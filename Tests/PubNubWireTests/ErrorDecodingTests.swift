import Foundation
import Testing
import PubNubWire

@Suite("Error bodies become one typed error")
struct ErrorDecodingTests {
    static func failure(status: Int, body: String, headers: [String: String] = [:]) async throws -> ServiceError {
        let pubnub = try client(RecordingTransport(status: status, body: body, headers: headers))
        do {
            _ = try await pubnub.time()
        } catch {
            if case .service(let serviceError) = error { return serviceError }
            Issue.record("expected a service error, got \(error)")
        }
        throw CancellationError()
    }

    @Test("each body family is read with its message and reason", arguments: [
        (400, #"[0,"Invalid Key","17000000000000000"]"#, ServiceError.Family.publishArray, "Invalid Key", ServiceError.Reason.badRequest),
        (403, #"{"status":403,"error":true,"error_message":"Use of the history API requires the Storage & Playback add-on","channels":{}}"#,
         .history, "Use of the history API requires the Storage & Playback add-on", .forbidden),
        (412, #"{"status":412,"error":{"message":"User to update has been modified after it was read.","source":"objects"}}"#,
         .object, "User to update has been modified after it was read.", .preconditionFailed),
        (409, #"{"status":409,"error":{"source":"actions","message":"Action Already Added"}}"#, .object, "Action Already Added", .conflict),
        (404, #"{"status":404,"error":{"message":"Requested object was not found.","source":"objects"}}"#,
         .object, "Requested object was not found.", .notFound),
        (403, #"{"message":"Forbidden","payload":{"channels":["a"]},"error":true,"service":"Access Manager","status":403}"#,
         .legacyService, "Forbidden", .forbidden),
        (503, "", .unknown, "HTTP 503 with no body", .serviceUnavailable),
        (500, "<html>oops</html>", .unknown, "<html>oops</html>", .server),
    ])
    func families(status: Int, body: String, family: ServiceError.Family, message: String, reason: ServiceError.Reason) async throws {
        let error = try await Self.failure(status: status, body: body)
        #expect(error.family == family && error.message == message && error.reason == reason && error.status == status)
    }

    @Test("object error details are kept")
    func details() async throws {
        let body = #"{"status":400,"error":{"message":"Request payload contained invalid input.","source":"objects","details":[{"message":"Invalid email","location":"user.email","locationType":"body"}]}}"#
        #expect(try await Self.failure(status: 400, body: body).details == ["user.email: Invalid email"])
    }

    @Test("429 carries Retry-After in seconds or as an HTTP date")
    func retryAfter() async throws {
        let seconds = try await Self.failure(status: 429, body: "{}", headers: ["Retry-After": "7"])
        #expect(seconds.reason == .tooManyRequests && seconds.retryAfter == 7)
        let past = try await Self.failure(status: 429, body: "{}", headers: ["retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"])
        #expect(past.retryAfter == 0)
    }

    @Test("a 2xx body that does not decode is a typed decoding error, not a crash")
    func malformedSuccess() async throws {
        let pubnub = try client(RecordingTransport(body: #"{"status":200,"channels":"#))
        await #expect {
            try await pubnub.history.fetchHistory(HistoryQuery(channels: ["a"]))
        } throws: { error in
            if case WireError.decoding(let operation, 200, _) = error { return operation == "fetchHistory" }
            return false
        }
        let notSent = try client(RecordingTransport(body: #"[0,"Message Too Large","1"]"#))
        await #expect(throws: WireError.self) { try await notSent.publish(PublishRequest(channel: "a", message: "x")) }
    }

    @Test("transport failures keep the not-sent / outcome-unknown split")
    func transportSplit() async throws {
        for failure in [TransportFailure.notSent(reason: "refused"), .outcomeUnknown(reason: "timeout")] {
            let pubnub = try client(RecordingTransport { _ throws(TransportFailure) in throw failure })
            await #expect(throws: WireError.transport(failure)) { try await pubnub.time() }
        }
    }

    @Test("gzip round trips and rejects corrupt input")
    func gzip() throws {
        let data = Data(String(repeating: "pubnub ", count: 2000).utf8)
        let compressed = try Gzip.compress(data)
        #expect(compressed.count < data.count / 10 && compressed.prefix(2) == Data([0x1F, 0x8B]))
        #expect(try Gzip.decompress(compressed) == data)
        #expect(throws: WireError.self) { try Gzip.decompress(Data([0x1F, 0x8B, 1, 2, 3])) }
    }
}
