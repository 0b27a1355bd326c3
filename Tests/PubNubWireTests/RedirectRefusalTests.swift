import Foundation
import Testing
@testable import PubNubWire

@Suite("A 3xx answer is a service error naming where it pointed, never followed")
struct RedirectRefusalTests {
    /// A Location header and the text the error must name.
    struct Case: Sendable, CustomTestStringConvertible {
        var status: Int
        var location: String?
        var named: String

        var testDescription: String { "\(status) \(location ?? "without a Location")" }
    }

    @Test("the message names scheme, host and port only: never the path (PubNub paths hold the keys), user info, query or fragment", arguments: [
        Case(
            status: 301, location: "https://other.example/v3/history?uuid=me&auth=k#top",
            named: "redirect to https://other.example refused"),
        Case(
            status: 302, location: "http://user:pass@other.example:8080/a/b?pnsdk=x",
            named: "redirect to http://other.example:8080 refused"),
        Case(status: 303, location: "/relative/path?auth=k", named: "redirect to a path on the same origin refused"),
        Case(status: 307, location: nil, named: "redirect (no Location header) refused"),
        Case(status: 308, location: "http://[bad", named: "redirect (an unreadable Location) refused"),
    ])
    func messageNamesTheLocation(_ redirect: Case) async throws {
        let headers = redirect.location.map { ["Location": $0] } ?? [:]
        let pubnub = try client(RecordingTransport(status: redirect.status, body: "moved", headers: headers))
        do {
            _ = try await pubnub.time()
            Issue.record("a \(redirect.status) was taken for success")
        } catch .service(let error) {
            #expect(error.status == redirect.status)
            #expect(error.reason == .other)
            #expect(error.message.hasPrefix(redirect.named), "\(error.message)")
            #expect(error.message.contains("never follows redirects"))
            for secret in ["auth=", "uuid=", "pnsdk=", "pass", "#top"] {
                #expect(!error.message.contains(secret), "\(error.message)")
            }
        } catch {
            Issue.record("expected a service error, got \(error)")
        }
    }

    @Test("a very long location is cut to 200 characters")
    func longLocationIsCut() async throws {
        let location = "https://" + String(repeating: "a", count: 5000) + ".example/path"
        let pubnub = try client(RecordingTransport(status: 302, body: "", headers: ["Location": location]))
        do {
            _ = try await pubnub.time()
            Issue.record("a 302 was taken for success")
        } catch .service(let error) {
            #expect(error.message.count < 300, "\(error.message.count) characters")
        } catch {
            Issue.record("expected a service error, got \(error)")
        }
    }
}
