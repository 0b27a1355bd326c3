import Foundation
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator
import Testing

/// Seeded hostile server answers (``HostileCase``) through the outbox and the reconciler, in
/// process. Each case builds a fresh store with pulled state and pending ops, lets a simulator
/// that mangles about half its answers serve a drain, a sync and the single pulls, then checks:
/// every thrown error is a library error, no op lost, changed or duplicated, no message lost.
/// No trap: a trap would kill the run. No hang: each chunk of 10 cases runs under a time limit, and
/// every loop in a case is bounded (deadlines on the virtual clock, three attempts per pull, a
/// request budget). The chunks run in parallel with each other and the rest of the suite.
@Suite("Fuzz: hostile server answers through the replicator")
struct FuzzTests {
    @Test(
        "no trap, no hang, typed failures, the outbox intact", .timeLimit(.minutes(10)),
        arguments: FuzzConfig.chunks)
    func replicatorSurvivesHostileAnswers(cases: ClosedRange<Int>) async throws {
        for index in cases {
            if FuzzConfig.trace { FileHandle.standardError.write(Data("fuzz case \(index) start\n".utf8)) }
            defer { if FuzzConfig.trace { FileHandle.standardError.write(Data("fuzz case \(index) end\n".utf8)) } }
            do {
                try await FuzzCase(index: index).run()
            } catch {
                // Setup and the checks' own reads must not fail: a store that cannot read back
                // what a pull wrote is a finding too.
                Issue.record("\(FuzzConfig.replay(index)): \(type(of: error)): \(error)")
            }
        }
    }
}

/// What an op looked like before the hostile run.
private struct OpSnapshot {
    var operation: OutboxOperation
}

struct FuzzCase {
    let index: Int
    let seed: UInt64

    init(index: Int) {
        self.index = index
        var mixer = SplitMix64(seed: FuzzConfig.seed ^ (UInt64(index) &* 0x9E37_79B9_7F4A_7C15))
        seed = mixer.next()
    }

    func run() async throws {
        var random = SplitMix64(seed: seed)
        func roll(_ p: Double) -> Bool { Double(random.next() >> 11) / Double(1 << 53) < p }
        let clock = VirtualClock()
        let server = PubNubServer(clock: clock)
        let plan = FaultPlan(seed: seed, profile: FaultProfile(name: "fuzz", hostileAnswer: 0.5))
        let budget = BudgetTransport(InProcessTransport(server: server, plan: plan))
        let hostile = try World.client(budget)
        let honest = try World.client(InProcessTransport(server: server), userId: "other")
        let logs = LogCapture()
        let context = "\(FuzzConfig.replay(index)) case seed \(seed)"

        // The server: two messages with a reaction, a user, a channel and a membership.
        let tts = await server.seedMessages(channel: "general", [chatPayload("srv-0"), chatPayload("srv-1")], publisher: "other")
        _ = try await honest.messageActions.addMessageAction(channel: "general", messageTimetoken: Timetoken(rawValue: tts[0]), type: "reaction", value: "👍")
        var userFields = UserEdit<FlatCustom>()
        userFields.name = .set("Me")
        _ = try await honest.appContext.setUser(id: "me", fields: userFields)
        var channelFields = ChannelEdit<FlatCustom>()
        channelFields.name = .set("General")
        _ = try await honest.appContext.setChannel(id: "general", fields: channelFields)
        _ = try await honest.appContext.setMemberships(
            userId: "me", set: [MembershipSet<FlatCustom>(id: "general", status: "joined")], as: DefaultChatCustom.self)

        // The device: usually synced once (honestly), then offline edits.
        var storeOptions = StoreOptions()
        storeOptions.logger = logs.logger("store")
        let store = try Store.inMemory(options: storeOptions)
        let outbox = Outbox(
            store: store, client: hostile, clock: clock, random: SplitMix64(seed: seed ^ 1), logger: logs.logger("outbox"))
        var options = ReconcilerOptions()
        options.maxAttempts = 3
        options.channels = ["general", "side"]
        options.conflicts = ConflictPolicies(all: .manual)
        let pulled = roll(0.7)
        if pulled {
            let clean = Reconciler(
                store: store, client: try World.client(InProcessTransport(server: server)), outbox: outbox, options: options,
                clock: clock, random: SplitMix64(seed: seed ^ 2))
            _ = try await clean.sync()
        }
        var sent: [String] = []
        for i in 0..<(1 + Int(random.next() % 2)) {
            sent.append(try await outbox.messages.send(text: "fuzz \(i)", to: i == 0 ? "general" : "side", content: ["n": .int(Int64(i))]).value!.id)
        }
        _ = try await outbox.messages.addReaction("❤️", toMessage: sent[0])
        if pulled { _ = try await outbox.messages.addReaction("😂", toMessage: "srv-0") }
        if roll(0.5) {
            var edit = UserEdit<FlatCustom>()
            edit.name = .set("Me \(index)")
            _ = try await outbox.metadata.setUser(id: "me", edit: edit)
        }
        if roll(0.5) {
            var edit = ChannelEdit<FlatCustom>()
            edit.details = .set("fuzzed")
            _ = try await outbox.metadata.setChannel(id: "general", edit: edit)
        }
        if roll(0.5) { _ = try await outbox.memberships.setMembership(channel: "general", edit: MemberEdit(status: "away")) }

        var before: [String: OpSnapshot] = [:]
        for entry in try await store.fetch(store.queries.outbox()) { before[entry.id] = OpSnapshot(operation: entry.operation) }
        var rows: [String: ChatMessage<FlatCustom>] = [:]
        for id in sent { rows[id] = try await store.fetch(store.queries.message(id: id)) }

        // The hostile run.
        let reconciler = Reconciler(
            store: store, client: hostile, outbox: outbox, options: options, clock: clock, random: SplitMix64(seed: seed ^ 3),
            logger: logs.logger("reconciler"))
        var thrown: [String] = []
        func check(_ what: String, _ body: () async throws -> Void) async {
            do {
                try await body()
            } catch {
                if !FuzzCheck.isTyped(error) { thrown.append("\(what) threw \(type(of: error)): \(error)") }
            }
        }
        await check("drain") { _ = try await outbox.drain(until: clock.now.addingTimeInterval(600)) }
        await check("sync") {
            let report = try await reconciler.sync(pushDeadline: clock.now.addingTimeInterval(600))
            for line in report.errors {
                let text = line.split(separator: ":", maxSplits: 1).last.map { String($0.drop { $0 == " " }) } ?? line
                if FuzzCheck.looksUntyped(text) { thrown.append("sync reported an untyped error: \(line)") }
            }
        }
        await check("pullObjects") { _ = try await reconciler.pullObjects(full: true) }
        await check("pullReactions") { _ = try await reconciler.pullReactions(channel: "general") }
        await check("drain again") { _ = try await outbox.drain(until: clock.now.addingTimeInterval(600)) }

        // No loop without progress.
        #expect(!budget.overBudget, "\(context): more than \(FuzzConfig.requestBudget) requests; last faults: \(plan.log.suffix(30).map { "\($0.operation):\($0.fault)" })")

        // Every failure typed.
        #expect(thrown.isEmpty, "\(context): \(thrown) faults: \(plan.log.map(\.fault.description))")
        let untypedLogs = logs.lines.filter { FuzzCheck.looksUntyped(String($0.split(separator: "|", maxSplits: 1).last ?? "")) }
        #expect(untypedLogs.isEmpty, "\(context): untyped errors logged: \(untypedLogs)")

        // The outbox unchanged by failed answers: every op still there is the same op; none new.
        let after = try await store.fetch(store.queries.outbox())
        for entry in after {
            guard let old = before[entry.id] else {
                Issue.record("\(context): op \(entry.id) (\(entry.kind)) appeared during the run")
                continue
            }
            #expect(entry.operation == old.operation, "\(context): op \(entry.id) changed: \(old.operation) -> \(entry.operation)")
            #expect(entry.state != .inflight, "\(context): op \(entry.id) left in flight")
            if let failure = entry.lastFailure {
                #expect(!FuzzCheck.looksUntyped(failure.message), "\(context): op \(entry.id) failed untyped: \(failure.message)")
            }
        }
        let sendOps = after.filter { $0.kind == .send }.compactMap(\.operation.messageId)
        #expect(Set(sendOps).count == sendOps.count, "\(context): two send ops for one message: \(sendOps)")

        // Never lost: each own message is stored once, intact while its op waits, sent once its op is gone.
        for id in sent {
            guard let row = try await store.fetch(store.queries.message(id: id)), let original = rows[id] ?? nil else {
                Issue.record("\(context): message \(id) lost")
                continue
            }
            if sendOps.contains(id) {
                #expect(row.text == original.text && row.content == original.content && row.timetoken == nil,
                        "\(context): pending message \(id) changed: \(original) -> \(row)")
            } else {
                #expect(row.timetoken != nil, "\(context): message \(id) has no op and no timetoken")
            }
        }
        // Never duplicated: no timetoken of a channel is held by two rows.
        for channel in ["general", "side"] {
            let stored = try await store.fetch(store.queries.messages(inChannel: channel))
            let timetokens = stored.compactMap(\.timetoken)
            let duplicated = Set(timetokens).count != timetokens.count
            let detail = "\(context): \(channel) holds a timetoken twice: \(stored.map { "\($0.id)@\($0.timetoken?.description ?? "-")" }) faults: \(plan.log.map { "\($0.operation):\($0.fault)" })"
            #expect(!duplicated, "\(detail)")
        }
    }
}
