import CoreMetrics
import Foundation
@testable import PubNubWire
import Testing

/// The request journal a diagnostics report shows (docs/diagnostics.md): no key, token,
/// signature or published text; retries marked; codes counted.
@Suite("Request journal")
struct RequestJournalTests {
    @Test("the request journal keeps no key, token, signature or published text, and marks a retry")
    func journalRedacts() throws {
        let journal = RequestJournal(capacity: 3)
        journal.redacting(publishKey: "pub-c-k", subscribeKey: "sub-c-k")
        var publish = WireRequest(method: .get, pathSegments: ["publish", "pub-c-k", "sub-c-k", "0", "general", "0", "%22hi%20there%22"], operation: "publish")
        publish.query = [QueryItem("auth", "tok-secret"), QueryItem("uuid", "alice"), QueryItem("signature", "sig"), QueryItem("store", "1")]
        for status in [500, 200] { journal.record(publish, started: journal.start(), status: status, failure: nil, codes: [], metrics: NOOPMetricsHandler.instance) }
        journal.record(publish, started: journal.start(), status: nil, failure: "not sent: https://ps.pndsn.com/publish/pub-c-k {\"text\":\"hi\"}", codes: ["DS-0201"], metrics: NOOPMetricsHandler.instance)
        journal.record(publish, started: journal.start(), status: 200, failure: nil, codes: [], metrics: NOOPMetricsHandler.instance)
        let entries = journal.entries()
        #expect(entries.count == 3)
        // The 200 after the 500 repeats a failed request; the failure follows a success; the last
        // follows the failure.
        #expect(entries.map(\.retry) == [true, false, true])
        #expect(entries[0].path == "/publish/{pub}/{sub}/0/general/0/{message}")
        #expect(entries[0].query == "auth&uuid&signature&store=1")
        #expect(entries[1].failure == "not sent: https…")
        #expect(journal.codes() == ["DS-0201": 1])
    }
}
