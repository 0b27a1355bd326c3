import Foundation
import Testing
import PubNubSimulator
import PubNubWire
import ReplicaModel

@Suite("History selection: start exclusive, end inclusive, newest max, oldest first")
struct HistorySemanticsTests {
    @Test("selection table over ten messages", arguments: [
        // (start index, end index, max, expected indexes)
        (nil, nil, nil, Array(0..<10)),
        (nil, nil, 3, [7, 8, 9]),
        (5, nil, nil, [0, 1, 2, 3, 4]),           // start is exclusive
        (5, nil, 2, [3, 4]),                      // newest max below start
        (nil, 6, nil, [6, 7, 8, 9]),              // end is inclusive
        (nil, 6, 2, [8, 9]),                      // newest max from end up
        (8, 2, nil, [2, 3, 4, 5, 6, 7]),          // end ≤ tt < start
        (8, 2, 3, [5, 6, 7]),
        (3, 3, nil, [Int]()),                     // empty window
    ] as [(Int?, Int?, Int?, [Int])])
    func selection(start: Int?, end: Int?, max: Int?, expected: [Int]) async throws {
        let sim = try InProcess()
        let tts = try await sim.publish(10, to: "ch")
        let page = try await sim.client.history.fetchHistory(
            HistoryQuery(channels: ["ch"], max: max, start: start.map { tts[$0] }, end: end.map { tts[$0] }))
        #expect(page.texts("ch") == expected.map { "m\($0)" })
        #expect(page.channels["ch"].map { $0.map(\.timetoken) == $0.map(\.timetoken).sorted() } ?? true)
    }

    @Test("max above the cap is capped: 100 for one channel, 25 for several; empty channels are omitted")
    func caps() async throws {
        let sim = try InProcess()
        _ = try await sim.publish(150, to: "a")
        _ = try await sim.publish(30, to: "b")
        let request = WireRequest(
            method: .get, pathSegments: ["v3", "history", "sub-key", "demo", "channel", "a"],
            query: [QueryItem("max", "500"), QueryItem("uuid", "me")], operation: "raw")
        let raw = try JSONDecoder().decode(HistoryPage.self, from: await sim.server.handle(request).body)
        #expect(raw.channels["a"]?.count == 100)
        let several = try await sim.client.history.fetchHistory(HistoryQuery(channels: ["a", "b", "empty"], max: 100))
        #expect(several.channels["a"]?.count == 25 && several.channels["b"]?.count == 25)
        #expect(several.channels["empty"] == nil)
        #expect(several.texts("a").last == "m149")
    }

    @Test("paging backward by the oldest timetoken until a short page visits every message exactly once")
    func backwardPaging() async throws {
        let sim = try InProcess()
        _ = try await sim.publish(250, to: "ch")
        var seen: [String] = []
        var start: Timetoken?
        var pages = 0
        while true {
            let page = try await sim.client.history.fetchHistory(HistoryQuery(channels: ["ch"], start: start))
            let texts = page.texts("ch")
            seen.insert(contentsOf: texts, at: 0)
            pages += 1
            guard texts.count == 100, let oldest = page.oldestTimetoken else { break }
            start = oldest
        }
        #expect(pages == 3)
        #expect(seen == (0..<250).map { "m\($0)" })
    }

    @Test("legacy v2 history: reverse takes the oldest slice, output is always oldest first")
    func legacyReverse() async throws {
        let sim = try InProcess()
        let tts = try await sim.publish(10, to: "ch")
        let newest = try await sim.client.history.fetchLegacyHistory(LegacyHistoryQuery(channel: "ch", count: 3))
        #expect(newest.messages.compactMap { $0.message.stringValue } == ["m7", "m8", "m9"])
        #expect(newest.first == tts[7] && newest.last == tts[9])
        let oldest = try await sim.client.history.fetchLegacyHistory(LegacyHistoryQuery(channel: "ch", count: 3, reverse: true))
        #expect(oldest.messages.compactMap { $0.message.stringValue } == ["m0", "m1", "m2"])
        let forward = try await sim.client.history.fetchLegacyHistory(
            LegacyHistoryQuery(channel: "ch", count: 3, end: tts[4], reverse: true))
        #expect(forward.messages.compactMap { $0.message.stringValue } == ["m4", "m5", "m6"])
    }

    @Test("message counts are strictly after the timetoken; delete honours start exclusive, end inclusive")
    func countsAndDelete() async throws {
        let sim = try InProcess()
        let a = try await sim.publish(5, to: "a")
        _ = try await sim.publish(2, to: "b")
        #expect(try await sim.client.history.messageCounts(channels: ["a", "b"], since: [a[1]]) == ["a": 3, "b": 2])
        #expect(try await sim.client.history.messageCounts(channels: ["a", "b"], since: [a[4], 0]) == ["a": 0, "b": 2])
        await #expect(throws: WireError.self) { try await sim.client.history.messageCounts(channels: ["a", "b"], since: [1, 2, 3]) }
        try await sim.client.history.deleteMessages(channel: "a", start: a[2], end: a[2])  // start == end: nothing
        #expect(try await sim.client.history.fetchHistory(HistoryQuery(channels: ["a"])).texts("a").count == 5)
        try await sim.client.history.deleteMessages(channel: "a", start: Timetoken(rawValue: a[2].rawValue + 1), end: a[2])
        #expect(try await sim.client.history.fetchHistory(HistoryQuery(channels: ["a"])).texts("a") == ["m0", "m1", "m3", "m4"])
        // Reversed bounds: start stays exclusive, end inclusive.
        try await sim.client.history.deleteMessages(channel: "a", start: a[0], end: a[3])
        #expect(try await sim.client.history.fetchHistory(HistoryQuery(channels: ["a"])).texts("a") == ["m0", "m4"])
    }

    @Test("channel names with / travel as %2F, are split before decoding, and come back URL-encoded as keys")
    func slashInChannel() async throws {
        let sim = try InProcess()
        _ = try await sim.publish(2, to: "team/general")
        #expect(try await sim.client.history.fetchHistory(HistoryQuery(channels: ["team/general"])).texts("team/general") == ["m0", "m1"])
        let raw = WireRequest(
            method: .get, pathSegments: ["v3", "history", "sub-key", "demo", "channel", "team/general"], operation: "raw")
        let body = String(decoding: await sim.server.handle(raw).body, as: UTF8.self)
        #expect(body.contains("\"team%2Fgeneral\""))
    }
}
