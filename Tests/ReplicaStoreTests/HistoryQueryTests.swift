import Foundation
import Testing
import ReplicaModel
@testable import ReplicaStore

@Suite("Local history reads with PubNub's semantics")
struct HistoryQueryTests {
    /// Ten sent messages in `ch` at timetokens 10, 20, ... 100 (ids `m10` ... `m100`), plus a
    /// pending one and a message in another channel, neither of which a history read returns.
    static func store() async throws -> Store {
        let store = try Fixture.store()
        let sent = try stride(from: 10, through: 100, by: 10).map { try Fixture.message("m\($0)", channel: "ch", timetoken: UInt64($0)) }
        try await store.load(messages: sent.shuffled())
        try await store.load(messages: [
            try Fixture.message("pending", channel: "ch"),
            try Fixture.message("elsewhere", channel: "other", timetoken: 55),
        ])
        return store
    }

    @Test("start is exclusive, end inclusive; newest slice unless reverse; reverse ignored with both bounds; oldest first",
          arguments: [
              // (start, end, reverse, limit, expected timetokens)
              (nil, nil, false, 100, Array(stride(from: 10, through: 100, by: 10))),
              (nil, nil, false, 3, [80, 90, 100]),              // the newest `limit`
              (nil, nil, true, 3, [10, 20, 30]),                // reverse: the oldest `limit`
              (nil, nil, false, 1, [100]),
              (50, nil, false, 100, [10, 20, 30, 40]),          // start equal to a stored timetoken: excluded
              (50, nil, false, 2, [30, 40]),
              (50, nil, true, 2, [10, 20]),
              (51, nil, false, 2, [40, 50]),                    // start just above a stored one: included
              (nil, 60, false, 100, [60, 70, 80, 90, 100]),     // end equal to a stored timetoken: included
              (nil, 60, false, 2, [90, 100]),
              (nil, 60, true, 2, [60, 70]),
              (nil, 61, true, 2, [70, 80]),                     // end just above a stored one: excluded
              (80, 30, false, 100, [30, 40, 50, 60, 70]),       // end ≤ tt < start
              (80, 30, false, 2, [60, 70]),
              (80, 30, true, 2, [60, 70]),                      // both bounds: reverse is ignored
              (55, 25, false, 100, [30, 40, 50]),               // bounds between stored timetokens
              (30, 30, false, 100, [Int]()),                    // empty window
              (31, 30, true, 100, [30]),
              (10, nil, false, 100, [Int]()),                   // nothing older than the oldest
              (nil, 101, false, 100, [Int]()),                  // nothing from above the newest
          ] as [(Int?, Int?, Bool, Int, [Int])])
    func window(start: Int?, end: Int?, reverse: Bool, limit: Int, expected: [Int]) async throws {
        let store = try await Self.store()
        let messages = try await store.fetch(store.queries.history(
            channel: "ch", start: start.map { Timetoken(rawValue: UInt64($0)) }, end: end.map { Timetoken(rawValue: UInt64($0)) },
            reverse: reverse, limit: limit))
        #expect(messages.compactMap { $0.timetoken.map { Int($0.rawValue) } } == expected)
        #expect(messages.map(\.id) == expected.map { "m\($0)" })
        #expect(messages.allSatisfy { $0.channelId == "ch" && $0.delivery == .sent })
    }

    @Test("a limit outside 1-100 is refused with a typed error", arguments: [0, -1, 101])
    func limitOutOfRange(limit: Int) async throws {
        let store = try await Self.store()
        await #expect(throws: StoreError.invalidInput("history limit must be 1-100, got \(limit)")) {
            try await store.fetch(store.queries.history(channel: "ch", start: nil, end: nil, reverse: false, limit: limit))
        }
    }

    @Test("bounds beyond the largest storable timetoken: such a start excludes nothing, such an end everything")
    func boundsBeyondStorableRange() async throws {
        let store = try await Self.store()
        let huge = Timetoken(rawValue: UInt64.max)
        let below = try await store.fetch(store.queries.history(channel: "ch", start: huge, end: nil, reverse: false, limit: 2))
        #expect(below.map(\.id) == ["m90", "m100"])
        let above = try await store.fetch(store.queries.history(channel: "ch", start: nil, end: huge, reverse: true, limit: 2))
        #expect(above.isEmpty)
    }

    @Test("an unknown channel has no history")
    func unknownChannel() async throws {
        let store = try await Self.store()
        #expect(try await store.fetch(store.queries.history(channel: "nope", start: nil, end: nil, reverse: false, limit: 100)).isEmpty)
    }
}
