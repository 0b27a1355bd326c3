import Foundation
import PubNubReplica
import PubNubSimulator
import PubNubSimulatorTesting
import Testing

/// The app's own classes through the front door alone, as an app would: declared in the
/// configuration, pulled by `sync`, read and observed with `AppRecordQueries`, decoded as the
/// app's own type; a declaration DataSync would refuse fails the open.
@Suite("Replica: the app's own DataSync classes")
struct ReplicaAppDataTests {
    struct Poll: Codable, Equatable {
        var question: String
        var closed: Bool
    }

    @Test("declare, sync, query, observe and decode through import PubNubReplica")
    func frontDoor() async throws {
        let clock = VirtualClock(start: Date(timeIntervalSince1970: 1_788_766_495))
        let server = PubNubServer(clock: clock, secretKey: "sec")
        await server.defineDataSyncClass(DataSyncClass(name: "Poll", properties: [
            DataSyncProperty(name: "closed", pointer: JSONPointer(["payload", "closed"]), valueKind: .boolean, filtering: .full),
        ]))
        let admin = try PubNubClient.simulated(InProcessTransport(server: server), userId: "admin", clock: clock).dataSync
        for (i, closed) in [false, true, false].enumerated() {
            let answer = await server.dataSyncAsAdmin(try admin.createRequest(.entities, DataSyncObject(
                id: "poll.\(i)", className: "Poll", payload: ["question": .string("Q\(i)"), "closed": .bool(closed)])))
            #expect(answer.status == 201)
            clock.advance(by: 1)
        }
        let all = AccessPermissions(rawValue: 255)
        let token = try await server.grantToken(
            grants: AccessGrants(patterns: [.channel: ["^.*$": all], .uuid: ["^.*$": all], .dataSyncEntity: ["^.*$": all]]),
            authorizedUserId: "alice")

        var configuration = ReplicaConfiguration(
            publishKey: "demo", subscribeKey: "demo", userId: "alice", store: .file(SimulatedDevice<DefaultChatCustom>.temporaryStorePath()))
        configuration.origin = "http://sim.invalid"
        configuration.transport = InProcessTransport(server: server)
        configuration.clock = clock
        configuration.authKey = token
        configuration.reconciler.appData = AppDataDeclaration(classes: [
            AppClass(entity: "Poll", properties: [AppProperty("question", kind: .string), AppProperty("closed", kind: .boolean)],
                     routing: .wildcard(prefix: "poll")),
        ])
        let replica = try Replica<DefaultChatCustom>(configuration)
        let open = AppRecordFilter("Poll", where: [AppRecordPredicate("closed", .equal, false)], sortedBy: AppRecordSort("question"))
        var observed = replica.observe(AppRecordQueries.records(open)).makeAsyncIterator()
        #expect(try await observed.next() == [], "nothing before the first sync")

        let report = try await replica.sync(pushDeadline: clock.now.addingTimeInterval(60))
        #expect(report.appData["Poll"]?.inserted == 3, "\(report.appData) \(report.errors)")
        let polls = try await replica.fetch(AppRecordQueries.records(open))
        #expect(try polls.map { try $0.decoded(as: Poll.self) } == [Poll(question: "Q0", closed: false), Poll(question: "Q2", closed: false)])
        #expect(try await observed.next()?.map(\.id) == ["poll.0", "poll.2"], "an observed query sees the sync")
        #expect(throws: AppRecord.Undecodable.self) { try polls[0].decoded(as: [Int].self) }

        // Written offline through the front door: shown at once, sent by the next sync, and a
        // property of the wrong kind refused before anything is stored.
        let made = try #require(try await replica.appData.create("Poll", Poll(question: "Q9", closed: false)).value)
        #expect(made.id.hasPrefix("poll."), "an id under the class's wildcard: \(made.id)")
        #expect(try await observed.next()?.map(\.id) == ["poll.0", "poll.2", made.id])
        try await replica.appData.update("Poll", id: "poll.0", as: Poll.self) { $0.closed = true }
        await #expect(throws: AppDataError.propertyKind(className: "Poll", property: "closed", expected: .boolean, found: "no")) {
            try await replica.appData.update("Poll", id: "poll.2") { $0.payload["closed"] = "no" }
        }
        let pushed = try await replica.sync(pushDeadline: clock.now.addingTimeInterval(60))
        #expect(pushed.push.completed == 2, "\(pushed.push)")
        let onServer = await server.dataSyncAsAdmin(try admin.getRequest(.entities, id: "poll.0"))
        #expect(try PubNubDataSync.row(from: onServer, operation: "get").payload?["closed"] == true)
        try await replica.appData.delete("Poll", id: made.id)
        #expect(try await replica.fetch(AppRecordQueries.record(.entity, id: made.id)) == nil)

        var refused = configuration
        refused.reconciler.appData = AppDataDeclaration(classes: [AppClass(entity: "Poll", properties: (0..<7).map {
            AppProperty("p\($0)", kind: .number)
        })])
        let elsewhere = SimulatedDevice<DefaultChatCustom>.temporaryStorePath()
        refused.store = .file(elsewhere)
        #expect(throws: AppDataError.self, "seven properties: refused before anything opens") {
            _ = try Replica<DefaultChatCustom>(refused)
        }
        #expect(!FileManager.default.fileExists(atPath: elsewhere), "no store file was created")
    }
}
