import Foundation
import PubNubWire
import ReplicaModel
import Testing

/// The value of query parameter `name` in `request`, if sent.
private func parameter(_ name: String, _ request: WireRequest) -> String? {
    request.query.first { $0.name == name }?.value
}

private func json(_ value: JSONValue) -> WireResponse {
    WireResponse(status: 200, body: (try? JSONEncoder().encode(value)) ?? Data())
}

/// A timetoken `offset` units after a fixed base.
private func tt(_ offset: UInt64) -> Timetoken { Timetoken(rawValue: 17_000_000_000_000_000 + offset) }

/// A history server holding one channel's messages at `tt(1)...tt(count)`, answering with
/// PubNub's selection: the newest `max` with `end ≤ tt < start`, oldest first.
private func historyServer(channel: String, count: UInt64) -> RecordingTransport {
    RecordingTransport(answer: historyAnswer(channel: channel, count: count))
}

/// The answers of ``historyServer(channel:count:)``, for a server that mangles requests first.
private func historyAnswer(channel: String, count: UInt64) -> @Sendable (WireRequest) -> WireResponse {
    { request in
        let start = parameter("start", request).flatMap(UInt64.init) ?? .max
        let end = parameter("end", request).flatMap(UInt64.init) ?? 0
        let max = parameter("max", request).flatMap(Int.init) ?? 100
        let window = (1...count).map { tt($0).rawValue }.filter { $0 >= end && $0 < start }
        let page = window.suffix(max).map { raw -> JSONValue in
            ["message": .string("m\(raw)"), "timetoken": .string(String(raw))]
        }
        let channels: JSONValue = page.isEmpty ? [:] : .object([channel: .array(page)])
        return json(["status": 200, "error": false, "error_message": "", "channels": channels])
    }
}

/// A page of users with these ids (an invalid id such as `..` is an unreadable entry), and `next`.
private func userPage(_ ids: [String], next: String?) -> WireResponse {
    var body: [String: JSONValue] = ["status": 200, "data": .array(ids.map { .object(["id": .string($0)]) })]
    if let next { body["next"] = .string(next) }
    return json(.object(body))
}

private func action(_ actionTimetoken: Timetoken) -> JSONValue {
    [
        "type": "reaction", "value": "x", "uuid": "u", "actionTimetoken": .string(actionTimetoken.description),
        "messageTimetoken": .string(tt(0).description),
    ]
}

@Suite("Pagers: one stop rule, one progress guard, nothing prefetched")
struct PagerTests {
    // MARK: App Context

    @Test("a listing follows next until a short page, although that last page still carries next")
    func objectShortPageWithNext() async throws {
        let transport = RecordingTransport { request in
            switch parameter("start", request) {
            case nil: userPage((0..<100).map { "a\($0)" }, next: "MTAw")
            case "MTAw": userPage((0..<40).map { "b\($0)" }, next: "MTQw")
            default: userPage([], next: nil)
            }
        }
        var ids: [String] = []
        for try await page in try client(transport).appContext.userPages() { ids += page.data.map(\.id) }
        #expect(ids.count == 140)
        #expect(transport.requests.map { parameter("start", $0) } == [nil, "MTAw"])
        #expect(transport.requests.allSatisfy { parameter("limit", $0) == "100" })
    }

    @Test("with count=true a listing stops when its pages hold totalCount entries; without it, a full last page costs one empty page more")
    func objectStopsAtTotalCount() async throws {
        func server() -> RecordingTransport {
            RecordingTransport { request in
                var page: WireResponse
                switch parameter("start", request) {
                case nil: page = userPage((0..<100).map { "a\($0)" }, next: "MTAw")
                case "MTAw": page = userPage((0..<100).map { "b\($0)" }, next: "MjAw")
                default: page = userPage([], next: nil)
                }
                if parameter("count", request) == "true",
                   var body = try? JSONDecoder().decode([String: JSONValue].self, from: page.body) {
                    body["totalCount"] = 200
                    page = json(.object(body))
                }
                return page
            }
        }
        let counted = server()
        var ids = 0
        for try await page in try client(counted).appContext.userPages(ObjectListQuery(count: true)) { ids += page.data.count }
        #expect(ids == 200)
        #expect(counted.requests.count == 2)
        let uncounted = server()
        for try await _ in try client(uncounted).appContext.userPages() {}
        #expect(uncounted.requests.count == 3)

        // A total that changes while paging (objects removed meanwhile) is not trusted: page 1
        // says 250, page 2 says 190 after 200 seen; the listing goes on to its short page.
        let shifting = RecordingTransport { request in
            switch parameter("start", request) {
            case nil: json(["status": 200, "data": .array((0..<100).map { .object(["id": .string("a\($0)")]) }), "totalCount": 250, "next": "MTAw"])
            case "MTAw": json(["status": 200, "data": .array((0..<100).map { .object(["id": .string("b\($0)")]) }), "totalCount": 190, "next": "MjAw"])
            default: json(["status": 200, "data": .array((0..<50).map { .object(["id": .string("c\($0)")]) }), "totalCount": 190])
            }
        }
        var shifted = 0
        for try await page in try client(shifting).appContext.userPages(ObjectListQuery(count: true)) { shifted += page.data.count }
        #expect(shifted == 250 && shifting.requests.count == 3)
    }

    @Test("unreadable entries count toward the page size: a full page with one bad entry goes on")
    func objectSkippedEntriesCount() async throws {
        let transport = RecordingTransport { request in
            parameter("start", request) == nil
                ? userPage((0..<9).map { "a\($0)" } + [".."], next: "p2") : userPage(["z"], next: "p3")
        }
        var pages: [ObjectPage<ChatUser<FlatCustom>>] = []
        for try await page in try client(transport).appContext.userPages(ObjectListQuery(limit: 10)) { pages.append(page) }
        #expect(pages.map(\.data.count) == [9, 1])
        #expect(pages.first?.skipped.count == 1)
        #expect(transport.requests.count == 2)
    }

    @Test("an empty first page is delivered and ends the listing")
    func objectEmptyPage() async throws {
        let transport = RecordingTransport { _ in userPage([], next: nil) }
        var pages = 0
        for try await page in try client(transport).appContext.membershipPages(userId: "me", as: DefaultChatCustom.self) {
            #expect(page.data.isEmpty)
            pages += 1
        }
        #expect(pages == 1 && transport.requests.count == 1)
        #expect(transport.requests.first?.operation == "getMemberships")
    }

    @Test("a repeated next cursor stops the listing with noProgress after the second request")
    func objectRepeatedCursor() async throws {
        let transport = RecordingTransport { _ in userPage((0..<100).map { "u\($0)" }, next: "same") }
        var delivered = 0
        await #expect(throws: PagingError.noProgress(scope: "users", cursor: "same")) {
            for try await _ in try client(transport).appContext.userPages() { delivered += 1 }
        }
        #expect(transport.requests.count == 2)
        #expect(delivered == 2)
    }

    @Test("a listing that starts at a cursor refuses a server that sends it back there")
    func objectStartCursorIsSeen() async throws {
        let transport = RecordingTransport { _ in userPage((0..<100).map { "u\($0)" }, next: "here") }
        await #expect(throws: PagingError.noProgress(scope: "members:general", cursor: "here")) {
            for try await _ in try client(transport).appContext.memberPages(
                channelId: "general", ObjectListQuery(start: "here"), as: DefaultChatCustom.self) {}
        }
        #expect(transport.requests.count == 1)
    }

    @Test("nothing is prefetched: each page is requested when asked for, none after the caller stops")
    func noPrefetch() async throws {
        let transport = RecordingTransport { request in
            userPage((0..<100).map { "u\($0)" }, next: "c\(parameter("start", request) ?? "")x")
        }
        let pages = try client(transport).appContext.userPages()
        #expect(transport.requests.isEmpty)
        var iterator = pages.makeAsyncIterator()
        _ = try await iterator.next()
        #expect(transport.requests.count == 1)
        _ = try await iterator.next()
        #expect(transport.requests.count == 2)
        for try await _ in pages { break }
        #expect(transport.requests.count == 3)
    }

    @Test("a caller that stops at a page never meets the guard on that page's continuation")
    func stopEarlySkipsGuard() async throws {
        let transport = RecordingTransport { _ in userPage((0..<100).map { "u\($0)" }, next: "same") }
        var found: String?
        for try await page in try client(transport).appContext.userPages() {
            found = page.data.last?.id
            break
        }
        #expect(found == "u99")
        #expect(transport.requests.count == 1)
    }

    // MARK: Cancellation and errors

    @Test("cancelling the task stops the pager before its next request")
    func cancellation() async throws {
        let transport = RecordingTransport { request in
            userPage((0..<100).map { "u\($0)" }, next: "c\(parameter("start", request) ?? "")x")
        }
        let pages = try client(transport).appContext.userPages()
        let task = Task {
            var iterator = pages.makeAsyncIterator()
            _ = try await iterator.next()
            withUnsafeCurrentTask { $0?.cancel() }
            return try await iterator.next()?.data.count
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(transport.requests.count == 1)
    }

    @Test("a task cancelled before the first page makes no request")
    func cancelledBeforeStart() async throws {
        let transport = RecordingTransport { _ in userPage([], next: nil) }
        let pages = try client(transport).history.historyPages(channel: "general")
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            for try await _ in pages {}
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(transport.requests.isEmpty)
    }

    @Test("the fetch's error reaches the caller unchanged and finishes the pager")
    func fetchErrorPassesThrough() async throws {
        let transport = RecordingTransport { _ throws(TransportFailure) in throw .notSent(reason: "offline") }
        var iterator = try client(transport).appContext.userPages().makeAsyncIterator()
        await #expect(throws: WireError.transport(.notSent(reason: "offline"))) { _ = try await iterator.next() }
        #expect(try await iterator.next() == nil)
        #expect(transport.requests.count == 1)
    }

    // MARK: History

    @Test("history pages back from now to the floor, each page starting at the previous page's oldest")
    func historyBackward() async throws {
        let transport = historyServer(channel: "general", count: 250)
        let pager = try client(transport).history.historyPages(channel: "general", pageSize: 100, end: tt(21))
        var pages: [HistoryPages.Page] = []
        for try await page in pager { pages.append(page) }
        #expect(pages.map(\.messages.count) == [100, 100, 30])
        #expect(pages.map(\.isLast) == [false, false, true])
        #expect(pages.flatMap(\.messages).map(\.timetoken).sorted() == (21...250).map(tt))
        #expect(transport.requests.map { parameter("start", $0) } == [nil, tt(151).description, tt(51).description])
        #expect(transport.requests.allSatisfy { parameter("end", $0) == tt(21).description })
    }

    @Test("a full last page is followed by one empty page that ends the listing")
    func historyExactMultiple() async throws {
        let transport = historyServer(channel: "general", count: 200)
        var pages: [HistoryPages.Page] = []
        for try await page in try client(transport).history.historyPages(channel: "general", start: tt(201)) { pages.append(page) }
        #expect(pages.map(\.messages.count) == [100, 100, 0])
        #expect(pages.last?.isLast == true)
        #expect(transport.requests.map { parameter("start", $0) } == [tt(201), tt(101), tt(1)].map(\.description))
    }

    @Test("an empty channel gives one empty last page")
    func historyEmpty() async throws {
        let transport = historyServer(channel: "general", count: 5)
        var pages: [HistoryPages.Page] = []
        for try await page in try client(transport).history.historyPages(channel: "general", end: tt(6)) { pages.append(page) }
        #expect(pages == [HistoryPages.Page(messages: [], isLast: true)])
    }

    @Test("messages below the floor are dropped before the page is measured")
    func historyFloorFilter() async throws {
        // A server that ignores `end` sends 100 messages, 60 of them below the floor.
        let server = historyAnswer(channel: "general", count: 100)
        let transport = RecordingTransport { request in
            var stripped = request
            stripped.query.removeAll { $0.name == "end" }
            return server(stripped)
        }
        var pages: [HistoryPages.Page] = []
        for try await page in try client(transport).history.historyPages(channel: "general", end: tt(61)) { pages.append(page) }
        #expect(pages.map(\.messages.count) == [40])
        #expect(pages.first?.isLast == true)
        #expect(transport.requests.count == 1)
    }

    @Test("a history that ignores start stops with noProgress after the second request")
    func historyIgnoringStart() async throws {
        let server = historyAnswer(channel: "general", count: 250)
        let transport = RecordingTransport { request in
            var stripped = request
            stripped.query.removeAll { $0.name == "start" }
            return server(stripped)
        }
        let pubnub = try client(transport)
        var delivered = 0
        await #expect(throws: PagingError.noProgress(scope: "probe", cursor: tt(151).description)) {
            // A caller's own fetch (here: no retries) behind the pager.
            let pages = HistoryPages(channel: "general", scope: "probe") { query in try await pubnub.history.fetchHistory(query) }
            for try await _ in pages { delivered += 1 }
        }
        #expect(transport.requests.count == 2 && delivered == 2)
    }

    @Test("the page size is clamped to the single-channel cap")
    func historyPageSizeClamp() async throws {
        #expect(HistoryPages(channel: "a", pageSize: 500) { _ in throw CancellationError() }.pageSize == 100)
        #expect(HistoryPages(channel: "a", pageSize: 0) { _ in throw CancellationError() }.pageSize == 1)
    }

    // MARK: Message actions

    @Test("actions: more.start continues even a short page; a full page continues at its oldest action")
    func actionsContinuations() async throws {
        let transport = RecordingTransport { request in
            switch parameter("start", request) {
            case tt(1000).description:
                // Truncated by the server: 3 actions and a continuation.
                json(["status": 200, "data": .array([action(tt(900)), action(tt(950)), action(tt(990))]),
                      "more": ["start": .string(tt(900).description), "limit": 100]])
            case tt(900).description:
                // A full page (limit 2) without more: go on from its oldest.
                json(["status": 200, "data": .array([action(tt(800)), action(tt(850))])])
            default:
                // Short, no more: the last page.
                json(["status": 200, "data": .array([action(tt(700))])])
            }
        }
        var all: [Timetoken] = []
        for try await page in try client(transport).messageActions.messageActionPages(channel: "general", start: tt(1000), end: tt(0), limit: 2) {
            all += page.data.map(\.actionTimetoken)
        }
        #expect(all.count == 6)
        #expect(transport.requests.map { parameter("start", $0) } == [tt(1000), tt(900), tt(800)].map(\.description))
        #expect(transport.requests.allSatisfy { parameter("end", $0) == tt(0).description && parameter("limit", $0) == "2" })
    }

    @Test("actions: an empty page ends the listing; a continuation not older than its start is refused")
    func actionsEmptyAndNoProgress() async throws {
        let empty = RecordingTransport { _ in json(["status": 200, "data": []]) }
        var count = 0
        for try await page in try client(empty).messageActions.messageActionPages(channel: "general") {
            #expect(page.data.isEmpty)
            count += 1
        }
        #expect(count == 1 && empty.requests.count == 1)

        let stuck = RecordingTransport { _ in
            json(["status": 200, "data": .array([action(tt(5))]), "more": ["start": .string(tt(50).description)]])
        }
        await #expect(throws: PagingError.noProgress(scope: "actions:general", cursor: tt(50).description)) {
            for try await _ in try client(stuck).messageActions.messageActionPages(channel: "general", start: tt(50)) {}
        }
        #expect(stuck.requests.count == 1)
    }

    // MARK: PageProgress

    @Test("PageProgress accepts new cursors and strictly older timetokens only")
    func pageProgress() throws {
        var progress = PageProgress(scope: "s")
        try progress.advance(to: "a")
        try progress.advance(to: "b")
        #expect(throws: PagingError.noProgress(scope: "s", cursor: "a")) { try progress.advance(to: "a") }
        try progress.older(tt(1), than: nil)
        try progress.older(tt(1), than: tt(2))
        #expect(throws: PagingError.noProgress(scope: "s", cursor: tt(2).description)) { try progress.older(tt(2), than: tt(2)) }
        #expect(throws: PagingError.noProgress(scope: "s", cursor: tt(3).description)) { try progress.older(tt(3), than: tt(2)) }
    }
}
