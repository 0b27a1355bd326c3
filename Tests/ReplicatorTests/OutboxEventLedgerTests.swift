import Foundation
import GRDB
import PubNubSimulator
import PubNubWire
import ReplicaModel
import ReplicaStore
@testable import Replicator
import Testing

/// Every change of an op's state, read from the store file itself (SQLite triggers write an audit
/// row for each insert, state change and delete of an outbox row), must come with its
/// ``OutboxEvent``, in order: no state change without its event, and no event claiming a change
/// that did not happen.
@Suite("every op state change is announced by exactly one event")
struct OutboxEventLedgerTests {
    @Test("offline, flaky, crash and conflict settlement: the events match the store's op state changes", arguments: [3, 11] as [UInt64])
    func ledger(seed: UInt64) async throws {
        var world = try World(seed: seed, profile: .offline)
        try Ledger.install(on: world.store)
        var listener = await EventListener(world.outbox)
        var ledger = Ledger()
        var random = SplitMix64(seed: seed)

        // Offline: sends, reactions on pending messages, membership and user edits, cancellations, a discard.
        var ids: [String] = []
        for i in 0..<30 {
            let channel = ["c0", "c1", "c2"][Int(random.next() % 3)]
            ids.append(try await world.outbox.messages.send(text: "m\(i)", to: channel).value!.id)
        }
        _ = try await world.outbox.messages.addReaction("👍", toMessage: ids[0])
        _ = try await world.outbox.messages.removeReaction("👍", fromMessage: ids[0])  // cancels the add
        _ = try await world.outbox.messages.addReaction("❤️", toMessage: ids[1])
        _ = try await world.outbox.memberships.setMembership(channel: "c0", edit: MemberEdit(status: "joined"))
        _ = try await world.outbox.memberships.setMembership(channel: "c0", edit: MemberEdit(status: "muted"))  // merged
        _ = try await world.outbox.memberships.setMembership(channel: "c9", edit: MemberEdit(status: "joined"))
        _ = try await world.outbox.memberships.removeMembership(channel: "c9")  // cancels the never-synced set
        var rename = UserEdit<FlatCustom>()
        rename.name = .set("Me")
        _ = try await world.outbox.metadata.setUser(id: "me", edit: rename)
        try await world.outbox.messages.discardMessage(id: ids[29])
        _ = try await world.outbox.drain(until: world.clock.now.addingTimeInterval(120))
        try await ledger.expectMatch(world.store, events: listener.flush(), "offline, seed \(seed)")

        // Online but flaky, for a while.
        world.transport.use(FaultPlan(seed: seed, profile: .flaky))
        // Long enough on the virtual clock for the offline backoffs to end and the flaky network to answer.
        _ = try await world.outbox.drain(until: world.clock.now.addingTimeInterval(300))
        try await ledger.expectMatch(world.store, events: listener.flush(), "flaky, seed \(seed)")

        // The process dies mid-request: its op is left in flight. The next process finds it
        // ambiguous (the crash recovery made while its outbox is created, before anyone can
        // listen) and probes it.
        let last = try await world.outbox.messages.send(text: "last words", to: "c1").value!.id
        let op = try #require(try await world.entries().first { $0.operation.messageId == last })
        _ = try await world.outbox.markInflightForTest(op.id, now: world.clock.now)
        try await ledger.expectMatch(world.store, events: listener.flush(), "before the crash, seed \(seed)")
        world = try world.reopened(seed: seed &+ 1, profile: .flaky)
        let recovered = try await ledger.skipRecovery(world.store)
        #expect(recovered.map { [$0.opId, $0.old ?? "-", $0.new] } == [[op.id, "inflight", "ambiguous"]], "seed \(seed)")
        listener = await EventListener(world.outbox)
        let report = try await world.outbox.drain()
        #expect(report.remaining == 0 && report.deadLetters == 0, "seed \(seed): \(report)")
        try await ledger.expectMatch(world.store, events: listener.flush(), "after the crash, seed \(seed)")

        // Conflicts: a user edited here and on the server; one settled by a person (take local),
        // one by the serverWins policy.
        world.transport.use(FaultPlan(seed: seed, profile: .none))
        await world.server.remoteEditUser(id: "u1", fields: ["name": "Base"])
        await world.server.remoteEditUser(id: "u2", fields: ["name": "Base"])
        var manual = ReconcilerOptions()
        manual.conflicts = ConflictPolicies(all: .manual)
        let person = Reconciler(store: world.store, client: try World.client(world.transport), outbox: world.outbox, options: manual, clock: world.clock)
        _ = try await person.pullObjects(full: true)
        world.clock.advance(by: 1)
        for id in ["u1", "u2"] {
            var edit = UserEdit<FlatCustom>()
            edit.name = .set("Local")
            _ = try await world.outbox.metadata.setUser(id: id, edit: edit)
        }
        world.clock.advance(by: 1)
        await world.server.remoteEditUser(id: "u1", fields: ["name": "Remote"])
        await world.server.remoteEditUser(id: "u2", fields: ["name": "Remote"])
        let conflicted = try await world.outbox.drain(until: world.clock.now.addingTimeInterval(60))
        #expect(conflicted.conflicts == 2, "seed \(seed)")
        #expect(try await person.resolveConflicts().waiting == 2)
        let open = try #require(try await world.store.fetch(world.store.queries.conflicts()).first { $0.entityId == "u1" && $0.isOpen })
        _ = try await person.resolve(conflictId: open.id, take: .local)
        var automatic = ReconcilerOptions()
        automatic.conflicts = ConflictPolicies(all: .serverWins)
        let policy = Reconciler(store: world.store, client: try World.client(world.transport), outbox: world.outbox, options: automatic, clock: world.clock)
        let other = try #require(try await world.store.fetch(world.store.queries.conflicts()).first { $0.entityId == "u2" && $0.isOpen })
        _ = try await policy.resolve(conflictId: other.id, take: .remote)
        _ = try await world.outbox.drain(until: world.clock.now.addingTimeInterval(60))
        let events = try await listener.flush()
        #expect(events.contains { if case .settled(_, true, _) = $0 { true } else { false } }, "seed \(seed)")
        #expect(events.contains { if case .settled(_, false, _) = $0 { true } else { false } }, "seed \(seed)")
        try await ledger.expectMatch(world.store, events: events, "conflicts, seed \(seed)")
        #expect(try await world.entries().isEmpty, "seed \(seed)")
    }
}

/// Reads an outbox's events in the test's own task. ``flush()`` returns every event announced so
/// far: it enqueues and discards a marker op and reads up to the marker's discard, so nothing is
/// left unread and nothing blocks.
struct EventListener {
    let outbox: Outbox<DefaultChatCustom>
    private var iterator: AsyncStream<OutboxEvent>.Iterator

    init(_ outbox: Outbox<DefaultChatCustom>) async {
        self.outbox = outbox
        iterator = await outbox.events().makeAsyncIterator()
    }

    mutating func flush() async throws -> [OutboxEvent] {
        let marker = try #require(try await outbox.messages.send(text: "marker", to: "marker").opId)
        try await outbox.discard(opId: marker)
        var events: [OutboxEvent] = []
        while let event = await iterator.next() {
            events.append(event)
            if event == .discarded(opIds: [marker]) { break }
        }
        return events
    }
}

/// The audit of op rows, written by triggers in the store file, and what has been checked of it.
struct Ledger {
    /// The last audit row checked.
    var checked: Int64 = 0
    /// Each op's state as of the last row checked ("gone" once deleted).
    var states: [String: String] = [:]

    struct Row: Sendable {
        var seq: Int64
        var opId: String
        /// nil for an insert.
        var old: String?
        /// "gone" for a delete.
        var new: String
    }

    static func install(on store: ChatStore<DefaultChatCustom>) throws {
        try store.writer.write { db in
            try db.execute(sql: """
                CREATE TABLE test_op_audit (seq INTEGER PRIMARY KEY AUTOINCREMENT, op_id TEXT, old TEXT, new TEXT);
                CREATE TRIGGER test_op_insert AFTER INSERT ON outbox
                    BEGIN INSERT INTO test_op_audit (op_id, old, new) VALUES (new.op_id, NULL, new.state); END;
                CREATE TRIGGER test_op_update AFTER UPDATE OF state ON outbox WHEN old.state IS NOT new.state
                    BEGIN INSERT INTO test_op_audit (op_id, old, new) VALUES (new.op_id, old.state, new.state); END;
                CREATE TRIGGER test_op_delete AFTER DELETE ON outbox
                    BEGIN INSERT INTO test_op_audit (op_id, old, new) VALUES (old.op_id, old.state, 'gone'); END;
                """)
        }
    }

    static func rows(_ store: ChatStore<DefaultChatCustom>, after seq: Int64) async throws -> [Row] {
        try await store.writer.read { db in
            try GRDB.Row.fetchAll(db, sql: "SELECT seq, op_id, old, new FROM test_op_audit WHERE seq > ? ORDER BY seq", arguments: [seq])
                .map { Row(seq: $0[0], opId: $0[1], old: $0[2], new: $0[3]) }
        }
    }

    /// The states an event says its ops moved to (empty: the event changes no op's state).
    static func claims(_ event: OutboxEvent) -> [(opId: String, states: Set<String>)] {
        switch event {
        case .enqueued(let id, _): [(id, ["pending"])]
        case .coalesced(_, let cancelled): cancelled.map { ($0, ["gone"]) }
        case .sending(let id, _): [(id, ["inflight"])]
        case .sent(let id, _): [(id, ["gone"])]
        case .retrying(let id, _, _): [(id, ["pending"])]
        case .ambiguous(let id, _, _): [(id, ["ambiguous"])]
        case .probed: []
        case .failed(let id, _): [(id, ["dead"])]
        case .conflict(let id, _): [(id, ["conflict"])]
        case .discarded(let ids): ids.map { ($0, ["gone"]) }
        case .retried(let id): [(id, ["pending", "ambiguous"])]
        case .settled(let id, let resent, _): [(id, [resent ? "pending" : "gone"])]
        }
    }

    /// The rows written while an outbox was created (the recovery of ops a dead process left in
    /// flight, made before anyone can subscribe to its events), marked as checked.
    mutating func skipRecovery(_ store: ChatStore<DefaultChatCustom>) async throws -> [Row] {
        let rows = try await Self.rows(store, after: checked)
        for row in rows { states[row.opId] = row.new }
        checked = rows.last?.seq ?? checked
        return rows
    }

    /// Whether an event may announce an op staying in its state: a failed attempt of a pending or
    /// ambiguous op that waits again (a new retry time), or a retry of a dead publish that goes
    /// back to ambiguous. Any other event must come with a change: a second `sent`, `enqueued` or
    /// `discarded` of one op is an error.
    static func mayRepeat(_ event: OutboxEvent) -> Bool {
        switch event {
        case .retrying, .ambiguous, .retried: true
        default: false
        }
    }

    /// Checks the audit rows written since the last check against `events`, op by op.
    mutating func expectMatch(
        _ store: ChatStore<DefaultChatCustom>, events: [OutboxEvent], _ context: String
    ) async throws {
        let marked = Set(events.compactMap { event -> String? in
            if case .enqueued(let id, .send) = event, events.contains(.discarded(opIds: [id])) { return id }
            return nil
        }.suffix(1))
        let rows = try await Self.rows(store, after: checked)
        var changes: [String: [String]] = [:]
        var current = states
        for row in rows { changes[row.opId, default: []].append(row.new) }
        var matched: [String: Int] = [:]
        for event in events {
            for (opId, states) in Self.claims(event) {
                let index = matched[opId, default: 0]
                let pending = changes[opId] ?? []
                if index < pending.count, states.contains(pending[index]) {
                    current[opId] = pending[index]
                    matched[opId] = index + 1
                } else if Self.mayRepeat(event), let state = current[opId], states.contains(state) {
                    continue  // a new retry time for an op already waiting in that state
                } else {
                    Issue.record("\(context): event \(event) has no matching state change of \(opId) (changes: \(pending))")
                }
            }
        }
        for (opId, list) in changes where matched[opId, default: 0] < list.count {
            Issue.record("\(context): op \(opId) changed \(list[matched[opId, default: 0]...]) without an event")
        }
        // The listener's marker op (sent and discarded by `flush`) always leaves two rows.
        #expect(rows.contains { !marked.contains($0.opId) }, "\(context): the phase changed no op")
        for row in rows { self.states[row.opId] = row.new }
        checked = rows.last?.seq ?? checked
    }
}
