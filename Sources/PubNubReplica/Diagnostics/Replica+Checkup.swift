import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

/// One check of ``ReplicaDiagnostics/checkup(stuckAfter:)`` (`pnreplicate doctor`): what was checked, whether it
/// needs attention, and what was found, in one line without secrets.
public struct DiagnosticsCheck: Sendable, Codable, Hashable, CustomStringConvertible {
    /// `store integrity`, `store lock`, `server`, `token`, `outbox`.
    public var name: String
    /// Whether something needs attention (a person, or the app, has to act).
    public var needsAttention: Bool
    /// What was found: `the server's clock is 600 s ahead of this device's (tolerance 60 s)`.
    public var detail: String

    /// `ok      server: reachable, its clock 0.2 s from this device's`.
    public var description: String { "\(needsAttention ? "ATTENTION" : "ok"): \(name): \(detail)" }
}

extension ReplicaDiagnostics {
    /// Checks what most often stops messages from arriving, each with a verdict: the store's
    /// integrity (SQLite's quick check), who holds its drain lease (a process that died holding
    /// it leaves ops to probe), the server reachable and its clock against this device's, the
    /// token valid and granting what the followed channels need, and ops stuck longer than
    /// `stuckAfter` seconds, dead letters and conflicts. Sends one `/time` request.
    ///
    /// ```swift
    /// let checks = try await replica.diagnostics.checkup()
    /// if checks.contains(where: \.needsAttention) { showSupportHint(checks) }
    /// ```
    public func checkup(stuckAfter: TimeInterval = 3600) async throws -> [DiagnosticsCheck] {
        let configuration = replica.configuration, client = replica.client, queries = replica.queries, userId = replica.userId
        let parts = await replica.parts
        var checks: [DiagnosticsCheck] = []
        let now = configuration.clock.now
        if let store = parts?.store {
            let problems = try await store.maintenance.quickCheck()
            checks.append(DiagnosticsCheck(
                name: "store integrity", needsAttention: !problems.isEmpty,
                detail: problems.isEmpty ? "quick check ok" : problems.prefix(3).joined(separator: "; ")))
            checks.append(DiagnosticsChecks.leaseCheck(try store.maintenance.drainLeaseState()))
        }
        let (server, offset) = await DiagnosticsChecks.serverCheck(client: client, tolerance: configuration.reconciler.clockTolerance, now: now)
        checks.append(server)
        // The server decides whether a token expired: judged on its clock when it answered.
        var followed: [String] = []
        if let store = parts?.store { followed = try await store.fetch(queries.memberships(ofUser: userId)).map(\.channel.id) }
        checks.append(DiagnosticsChecks.tokenCheck(client.access, userId: userId, followed: followed, now: now.addingTimeInterval(max(0, offset ?? 0))))
        if let store = parts?.store {
            let entries = try await store.fetch(OutboxGlance.all())
            checks.append(DiagnosticsChecks.outboxCheck(entries, now: now, stuckAfter: stuckAfter))
        }
        return checks
    }
}

/// The checks of ``ReplicaDiagnostics/checkup(stuckAfter:)``, each on what it is given.
enum DiagnosticsChecks {
    static func leaseCheck(_ state: DrainLeaseState) -> DiagnosticsCheck {
        switch state {
        case .free: DiagnosticsCheck(name: "store lock", needsAttention: false, detail: "free: no process is sending this store's outbox")
        case .heldHere: DiagnosticsCheck(name: "store lock", needsAttention: false, detail: "held by this process (a drain is running)")
        case .held(let pid):
            DiagnosticsCheck(
                name: "store lock", needsAttention: false,
                detail: "held by process \(pid.map(String.init) ?? "unknown") (a running listen, sync, app or extension sends the outbox)")
        case .abandoned(let pid):
            DiagnosticsCheck(
                name: "store lock", needsAttention: true,
                detail: "process \(pid) died holding it (killed mid-send): its ops in flight are probed, then sent, at the next sync")
        }
    }

    /// The server reachable, and its clock within the reconciler's tolerance of this device's.
    /// Also returns how far the server's clock is ahead of this device's (nil: no answer).
    static func serverCheck(client: PubNubClient, tolerance: TimeInterval, now: Date) async -> (DiagnosticsCheck, offset: TimeInterval?) {
        do {
            let time = try await client.time()
            let offset = time.date.timeIntervalSince(now)
            let direction = offset >= 0 ? "ahead of" : "behind"
            let check = DiagnosticsCheck(
                name: "server", needsAttention: abs(offset) > tolerance,
                detail: "reachable; its clock \(String(format: "%.1f", abs(offset))) s \(direction) this device's (tolerance \(Int(tolerance)) s)")
            return (check, offset)
        } catch {
            return (DiagnosticsCheck(name: "server", needsAttention: true, detail: "unreachable: \(RequestJournal.safeLine("\(error)"))"), nil)
        }
    }

    /// The token valid for this user and granting read and write on every followed channel.
    static func tokenCheck(_ access: AccessControl, userId: String, followed: [String], now: Date) -> DiagnosticsCheck {
        guard access.token != nil else {
            return DiagnosticsCheck(
                name: "token", needsAttention: access.waitingFor != nil,
                detail: access.waitingFor == nil
                    ? "none (fine on a keyset without Access Manager)" : "none, and requests wait for one (\(access.waitingFor!.rawValue))")
        }
        guard let token = access.parsedToken else {
            return DiagnosticsCheck(name: "token", needsAttention: false, detail: "a legacy auth key (not checked here)")
        }
        if token.isExpired(at: now) {
            return DiagnosticsCheck(
                name: "token", needsAttention: true, detail: "expired at \(ISOTimestamp(date: token.expires)) (by the server's clock when it answered)")
        }
        if let user = token.authorizedUserId, user != userId {
            return DiagnosticsCheck(name: "token", needsAttention: true, detail: "issued for another user id")
        }
        let lacking = followed.filter { channel in
            let permissions = token.grants.permissions(.channel, name: channel)
            return !permissions.contains(.read) || !permissions.contains(.write)
        }
        let left = Int(token.expires.timeIntervalSince(now) / 60)
        if !lacking.isEmpty {
            return DiagnosticsCheck(
                name: "token", needsAttention: true,
                detail: "valid \(left) min more, but grants no read and write on \(lacking.count) followed channel\(lacking.count == 1 ? "" : "s")")
        }
        return DiagnosticsCheck(name: "token", needsAttention: false, detail: "valid \(left) min more; grants every followed channel")
    }

    static func outboxCheck(_ entries: [OutboxGlance], now: Date, stuckAfter: TimeInterval) -> DiagnosticsCheck {
        let dead = entries.filter { $0.state == .dead }.count, conflicts = entries.filter { $0.state == .conflict }.count
        let stuck = entries.filter { [.pending, .ambiguous, .inflight].contains($0.state) && now.timeIntervalSince($0.createdAt) > stuckAfter }
        var problems: [String] = []
        if dead > 0 { problems.append("\(dead) dead letter\(dead == 1 ? "" : "s") (retry or discard)") }
        if conflicts > 0 { problems.append("\(conflicts) conflict\(conflicts == 1 ? "" : "s") waiting for the app") }
        if !stuck.isEmpty { problems.append("\(stuck.count) op\(stuck.count == 1 ? "" : "s") waiting longer than \(Int(stuckAfter)) s") }
        let waiting = entries.count - dead - conflicts
        return DiagnosticsCheck(
            name: "outbox", needsAttention: !problems.isEmpty,
            detail: problems.isEmpty ? "\(waiting) op\(waiting == 1 ? "" : "s") waiting, none stuck" : problems.joined(separator: "; "))
    }
}
