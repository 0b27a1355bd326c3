import Foundation
import Testing
import PubNubSimulator
import PubNubWire
import ReplicaModel

@Suite("Object cursors and stateful faults")
struct CursorAndFaultTests {
    @Test("paging users with next cursors visits every object exactly once; prev goes back; count reports the total")
    func objectCursors() async throws {
        let sim = try InProcess()
        for i in 0..<250 {
            var fields = UserEdit<FlatCustom>()
            fields.name = .set("user \(i)")
            _ = try await sim.client.appContext.setUser(id: String(format: "u%03d", i), fields: fields)
        }
        var seen: [String] = []
        var cursor: String?
        var pages = 0
        repeat {
            let page = try await sim.client.appContext.listUsers(ObjectListQuery(limit: 100, start: cursor, count: true))
            #expect(page.totalCount == 250)
            seen += page.data.map(\.id)
            pages += 1
            cursor = page.data.count == 100 ? page.next : nil
        } while cursor != nil
        #expect(pages == 3 && seen == (0..<250).map { String(format: "u%03d", $0) })

        let first = try await sim.client.appContext.listUsers(ObjectListQuery(limit: 100))
        let second = try await sim.client.appContext.listUsers(ObjectListQuery(limit: 100, start: first.next))
        #expect(second.data.first?.id == "u100" && second.prev != nil)
        let back = try await sim.client.appContext.listUsers(ObjectListQuery(limit: 100, end: second.prev))
        #expect(back.data.first?.id == "u000" && back.data.count == 100)

        let sorted = try await sim.client.appContext.listUsers(ObjectListQuery(limit: 3, sort: ["name:desc"]))
        #expect(sorted.data.map(\.id) == ["u099", "u098", "u097"])  // "user 99" > "user 98" > ... lexically
        let filtered = try await sim.client.appContext.listUsers(ObjectListQuery(filter: #"name LIKE "user 24*""#))
        #expect(filtered.data.map(\.id) == ["u024", "u240", "u241", "u242", "u243", "u244", "u245", "u246", "u247", "u248", "u249"])
        await #expect(throws: WireError.self) { _ = try await sim.client.appContext.listUsers(ObjectListQuery(limit: 101)) }
    }

    @Test("a 412 race makes a conditional write meet another device's edit")
    func preconditionRace() async throws {
        let sim = try InProcess(profile: FaultProfile(name: "race", preconditionRace: 1))
        var fields = ChannelEdit<FlatCustom>()
        fields.name = .set("general")
        let created = try await sim.client.appContext.setChannel(id: "general", fields: fields)  // unconditional: no race
        fields.name = .set("General")
        let stale = await serviceError { _ = try await sim.client.appContext.setChannel(id: "general", fields: fields, ifMatch: created.eTag) }
        #expect(stale?.status == 412 && stale?.message == "Channel to update has been modified after it was read.")
        #expect(sim.plan.log.map(\.fault) == [.none, .preconditionRace])
    }

    @Test("a 403 flip revokes permissions for several requests in a row, then they come back")
    func forbiddenFlip() async throws {
        let plan = FaultPlan(seed: 7, profile: FaultProfile(name: "flip", forbidden: 0.05))
        let faults = (0..<2000).map { _ in plan.decide(operation: "x") }
        var runs: [Int] = []
        var current = 0
        for fault in faults {
            if fault == .forbidden { current += 1 } else if current > 0 { runs.append(current); current = 0 }
        }
        // One flip lasts 1 to 5 requests; two flips can follow each other, so a run is at most 10.
        #expect(!runs.isEmpty && runs.contains { $0 > 1 } && runs.allSatisfy { $0 <= 10 })
        #expect(faults.filter { $0 == .none }.count > 1500)
    }
}
