import Foundation
import Testing
import PubNubSimulator
import PubNubWire
import ReplicaModel

func serviceError(_ body: () async throws -> Void) async -> ServiceError? {
    do {
        try await body()
    } catch let WireError.service(error) {
        return error
    } catch {
        Issue.record("expected a service error, got \(error)")
    }
    return nil
}

@Suite("The simulator answers errors in each service's real shape")
struct ServiceErrorTests {
    @Test("adding the same action twice is 409 Action Already Added; actions page with start/end/limit/more")
    func actions() async throws {
        let sim = try InProcess()
        let tts = try await sim.publish(3, to: "ch")
        for i in 0..<5 {
            sim.clock.advance(by: .microseconds(1))
            _ = try await sim.client.messageActions.addMessageAction(channel: "ch", messageTimetoken: tts[0], type: "reaction", value: "v\(i)")
        }
        let dup = await serviceError {
            _ = try await sim.client.messageActions.addMessageAction(channel: "ch", messageTimetoken: tts[0], type: "reaction", value: "v0")
        }
        #expect(dup?.status == 409 && dup?.reason == .conflict && dup?.message == "Action Already Added")
        let page = try await sim.client.messageActions.listMessageActions(channel: "ch", limit: 2)
        #expect(page.data.map(\.value) == ["v3", "v4"])
        let more = try #require(page.more)
        let next = try await sim.client.messageActions.listMessageActions(channel: "ch", start: more.start, limit: 2)
        #expect(next.data.map(\.value) == ["v1", "v2"])
        let last = try await sim.client.messageActions.listMessageActions(channel: "ch", start: next.more?.start, limit: 2)
        #expect(last.data.map(\.value) == ["v0"] && last.more == nil)
        let target = page.data[1]
        let other = try sim.client(userId: "someone-else")
        let wrongUser = await serviceError {
            try await other.messageActions.removeMessageAction(channel: "ch", messageTimetoken: tts[0], actionTimetoken: target.actionTimetoken)
        }
        #expect(wrongUser?.status == 400 && wrongUser?.message == "Not deleting message action: wrong uuid specified")
        try await sim.client.messageActions.removeMessageAction(channel: "ch", messageTimetoken: tts[0], actionTimetoken: target.actionTimetoken)
        let gone = await serviceError {
            try await sim.client.messageActions.removeMessageAction(channel: "ch", messageTimetoken: tts[0], actionTimetoken: target.actionTimetoken)
        }
        #expect(gone?.message == "No matching message actions to delete")
    }

    @Test("a stale If-Match is 412 with the real body; a missing object is 404")
    func preconditionAndNotFound() async throws {
        let sim = try InProcess()
        var fields = UserEdit<FlatCustom>()
        fields.name = .set("Jane")
        let created = try await sim.client.appContext.setUser(id: "jane", fields: fields)
        let eTag = try #require(created.eTag)
        sim.clock.advance(by: .milliseconds(1))
        await sim.server.remoteEditUser(id: "jane", fields: ["name": "Jane (other device)"])
        fields.name = .set("Jane D.")
        sim.clock.advance(by: .milliseconds(1))
        let stale = await serviceError { _ = try await sim.client.appContext.setUser(id: "jane", fields: fields, ifMatch: eTag) }
        #expect(stale?.status == 412 && stale?.reason == .preconditionFailed && stale?.family == .object)
        #expect(stale?.message == "User to update has been modified after it was read.")
        let current = try await sim.client.appContext.getUser(id: "jane")
        #expect(current.name == "Jane (other device)")
        let updated = try await sim.client.appContext.setUser(id: "jane", fields: fields, ifMatch: current.eTag)
        #expect(updated.name == "Jane D." && updated.eTag != current.eTag && updated.updated! > current.updated!)
        let missing = await serviceError { _ = try await sim.client.appContext.getChannel(id: "nope") }
        #expect(missing?.status == 404 && missing?.message == "Requested object was not found.")
        var nested = ChannelEdit<FlatCustom>()
        nested.name = .set("x")
        let bad = WireRequest(
            method: .patch, pathSegments: ["v2", "objects", "demo", "channels", "c"],
            headers: ["Content-Type": "application/json"], body: Data(#"{"custom":{"a":{"b":1}}}"#.utf8), operation: "raw")
        #expect(await sim.server.handle(bad).status == 400)
    }

    @Test("fault plans answer 5xx, 429 with Retry-After and 403 in the real shapes, without applying", arguments: [
        (FaultProfile(name: "5xx", serverError: 1), ServiceError.Reason.server),
        (FaultProfile(name: "429", tooManyRequests: 1), .tooManyRequests),
        (FaultProfile(name: "403", forbidden: 1), .forbidden),
    ])
    func faults(profile: FaultProfile, reason: ServiceError.Reason) async throws {
        let sim = try InProcess(profile: profile)
        let error = await serviceError { _ = try await sim.client.publish(PublishRequest(channel: "ch", message: "x")) }
        #expect(error?.reason == reason || (reason == .server && error?.reason == .serviceUnavailable))
        if reason == .tooManyRequests { #expect((error?.retryAfter ?? 0) >= 1) }
        #expect(await sim.server.storedMessages(channel: "ch").isEmpty)
    }

    @Test("not sent never reaches the server; a lost response was applied")
    func transportSplit() async throws {
        let offline = try InProcess(profile: .offline)
        await #expect(throws: WireError.transport(.notSent(reason: "simulated: offline"))) {
            _ = try await offline.client.publish(PublishRequest(channel: "ch", message: "x"))
        }
        #expect(await offline.server.storedMessages(channel: "ch").isEmpty)
        let lossy = try InProcess(profile: FaultProfile(name: "lossy", dropResponse: 1))
        await #expect {
            _ = try await lossy.client.publish(PublishRequest(channel: "ch", message: "x"))
        } throws: { error in
            if case WireError.transport(.outcomeUnknown) = error { return true }
            return false
        }
        #expect(await lossy.server.storedMessages(channel: "ch").count == 1)
    }

    @Test("one seed run twice gives the same faults and the same server state; another seed differs")
    func determinism() async throws {
        func run(seed: UInt64) async throws -> ([FaultDecision], String) {
            let sim = try InProcess(profile: .hostile, seed: seed)
            for i in 0..<200 {
                sim.clock.advance(by: .microseconds(100))
                _ = try? await sim.client.publish(PublishRequest(channel: "ch\(i % 3)", message: .int(Int64(i))))
                if i % 10 == 0 {
                    var fields = UserEdit<FlatCustom>()
                    fields.name = .set("u\(i)")
                    _ = try? await sim.client.appContext.setUser(id: "user", fields: fields)
                }
            }
            return (sim.plan.log, await sim.server.stateDigest())
        }
        let (faultsA, stateA) = try await run(seed: 42)
        let (faultsB, stateB) = try await run(seed: 42)
        let (faultsC, _) = try await run(seed: 43)
        #expect(faultsA == faultsB && stateA == stateB)
        #expect(faultsA != faultsC)
        #expect(faultsA.contains { $0.fault == .dropResponse } && faultsA.contains { $0.fault == .none })
    }
}
