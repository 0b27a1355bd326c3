import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

/// One op as a dry run shows it: where it stands and the exact request it would send.
public struct OutboxPlanEntry: Sendable, Hashable, Codable {
    /// The op id.
    public var opId: String
    /// Position in the queue (1 = first).
    public var position: Int
    /// What it does.
    public var kind: OutboxKind
    /// Its lane.
    public var lane: String
    /// Its state.
    public var state: OutboxState
    /// Attempts so far.
    public var attempts: Int
    /// Not before this time.
    public var nextAttemptAt: Date?
    /// Why it waits, in words ("ready", "backoff until …", "offline, retry at …", "parent … pending",
    /// "behind …", "dead: …", "conflict: …").
    public var waiting: String
    /// What coalescing merged into it.
    public var coalesced: [String]
    /// The request it would send now, or why it cannot be built yet.
    public var request: PlannedRequest?
    /// Why no request can be shown (e.g. a reaction whose message has no timetoken yet).
    public var requestNote: String?
    /// How the request's payload is encrypted (the client's cryptor), when it is: the shown
    /// request carries the ciphertext, as it would be sent.
    public var encryption: String?
}

/// A request as a dry run prints it.
public struct PlannedRequest: Sendable, Hashable, Codable {
    /// HTTP method.
    public var method: String
    /// The percent-encoded path.
    public var path: String
    /// Query items in order, `name=value` unencoded.
    public var query: [String]
    /// The `If-Match` header, when sent.
    public var ifMatch: String?
    /// The body as text.
    public var body: String?
}

extension Outbox {
    /// Every op still in the outbox in the order it would be sent, with why it waits and the exact
    /// request it would send. Reads the store only: no network, no writes.
    public func plan() async throws -> [OutboxPlanEntry] {
        let entries = try await store.fetch(store.queries.outbox())
        let now = clock.now
        let live: Set<OutboxState> = [.pending, .ambiguous, .inflight]
        let states = Dictionary(uniqueKeysWithValues: entries.map { ($0.id, $0.state) })
        var laneHeads: [String: String] = [:]
        var plan: [OutboxPlanEntry] = []
        for (index, entry) in entries.enumerated() {
            var waiting: String
            if live.contains(entry.state), let head = laneHeads[entry.lane] {
                waiting = "behind \(head)"
            } else {
                if live.contains(entry.state) { laneHeads[entry.lane] = entry.id }
                let head = LaneHead(entry: entry, parentState: entry.dependsOn.flatMap { states[$0] })
                waiting = Self.describe(OutboxWait.of(head: head, now: now), entry: entry)
            }
            if entry.state == .ambiguous, waiting == "ready" { waiting = "ready (probe first: may have arrived)" }
            var request: PlannedRequest?
            var note: String?
            do {
                var resolved = OutboxRequests.Resolved(ifMatch: entry.baseETag)
                if entry.kind.needsMessageTimetoken {
                    if let known = entry.operation.messageTimetoken {
                        resolved.messageTimetoken = known
                    } else {
                        resolved.messageTimetoken = try await Self.storedTimetoken(ofMessage: entry.operation.messageId ?? "", in: store)
                    }
                }
                resolved.actionTimetoken = entry.operation.actionTimetoken
                if entry.kind == .removeReaction, resolved.actionTimetoken == nil, resolved.messageTimetoken != nil {
                    note = "the action's timetoken is looked up on the server first"
                } else {
                    request = PlannedRequest(try OutboxRequests.request(for: entry, resolved: resolved, client: client))
                }
            } catch let problem as OutboxRequests.Problem {
                note = problem.description
            }
            plan.append(OutboxPlanEntry(
                opId: entry.id, position: index + 1, kind: entry.kind, lane: entry.lane, state: entry.state,
                attempts: entry.attempts, nextAttemptAt: entry.nextAttemptAt, waiting: waiting,
                coalesced: entry.coalesced, request: request, requestNote: note,
                encryption: request != nil && entry.kind.encryptsPayload ? client.crypto.map { "\($0.encryptor)" } : nil))
        }
        return plan
    }

    static func describe(_ wait: OutboxWait, entry: OutboxEntry) -> String {
        let reason = entry.lastFailure.map { $0.description } ?? "no reason recorded"
        switch wait {
        case .ready: return "ready"
        case .backoff(let until):
            let when = ISOTimestamp(date: until, fractionDigits: 3).description
            if entry.lastFailure?.errorClass == .notSent { return "offline, retry at \(when)" }
            return "backoff until \(when) (\(reason))"
        case .parent(let id, let state): return "parent \(id) \(state.rawValue)"
        case .inflight: return "in flight in another drain"
        case .dead: return "dead: \(reason)"
        case .conflict: return "conflict: \(reason)"
        }
    }
}

extension PlannedRequest {
    init(_ request: WireRequest) {
        method = request.method.rawValue
        path = "/" + request.pathSegments.map { PercentEncoding.pathSegment($0) }.joined(separator: "/")
        query = request.query.map { item in item.name + (item.value.map { "=\($0)" } ?? "") }
        ifMatch = request.headers.first { $0.key.lowercased() == "if-match" }?.value
        body = request.body.map { String(decoding: $0, as: UTF8.self) }
    }
}
