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
    /// A send with files: the steps before ``request`` (each file's upload URL, its upload, the
    /// Chat SDK's file event), each done or still to do; ``request`` names a file not uploaded
    /// yet as `{file-id}` (docs/files.md, "Dry run").
    public var steps: [PlannedStep]?
}

/// One step of a send with files, as a dry run shows it.
public struct PlannedStep: Sendable, Hashable, Codable {
    /// What the step does, in words.
    public var step: String
    /// Whether it is done (recorded in the store).
    public var done: Bool
    /// The request it sends, when it goes to PubNub (the upload goes to the storage URL the
    /// first step's answer gives, with no PubNub keys, so it cannot be shown before).
    public var request: PlannedRequest?
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

/// The states of ops still to be sent (a lane's head is the first of them).
private let liveStates: Set<OutboxState> = [.pending, .ambiguous, .inflight]

extension Outbox {
    /// Every op still in the outbox in the order it would be sent, with why it waits and the exact
    /// request it would send. Reads the store only: no network, no writes. Holds the whole plan:
    /// for a large outbox use ``planEntries(pageSize:)``.
    public func plan() async throws -> [OutboxPlanEntry] {
        var plan: [OutboxPlanEntry] = []
        for try await entry in planEntries() { plan.append(entry) }
        return plan
    }

    /// The plan of ``plan()``, op by op, as the outbox is read a page at a time: memory stays
    /// O(page) however many ops wait, and the first entries come before the last page is read
    /// (the next page is read when the caller has taken the previous one).
    ///
    /// ```swift
    /// for try await entry in outbox.planEntries() { print(entry.position, entry.kind, entry.waiting) }
    /// ```
    public nonisolated func planEntries(pageSize: Int = 500) -> PlanEntries {
        PlanEntries(outbox: self, pageSize: max(1, pageSize))
    }

    /// The entries of ``planEntries(pageSize:)``.
    public struct PlanEntries: AsyncSequence, Sendable {
        /// One op's plan.
        public typealias Element = OutboxPlanEntry
        let outbox: Outbox
        let pageSize: Int

        /// Plans a page when the previous one is used up, while the page after it is read (on the
        /// store's thread): two pages in memory at most.
        public struct AsyncIterator: AsyncIteratorProtocol {
            var planner: Planner
            let pageSize: Int
            var buffer: [OutboxPlanEntry] = []
            var index = 0
            var after: Int64?
            var done = false
            var readAhead: Task<[OutboxEntry], any Error>?

            /// The next op's plan, or nil after the last.
            public mutating func next() async throws -> OutboxPlanEntry? {
                while index >= buffer.count {
                    if done { return nil }
                    let store = planner.outbox.store, pageSize = pageSize
                    let page: [OutboxEntry]
                    if let readAhead {
                        page = try await readAhead.value
                        self.readAhead = nil
                    } else {
                        page = try await store.fetch(store.queries.outbox(afterSeq: after, limit: pageSize))
                    }
                    after = page.last?.seq
                    done = page.count < pageSize
                    if !done, let after {
                        readAhead = Task { try await store.fetch(store.queries.outbox(afterSeq: after, limit: pageSize)) }
                    }
                    buffer = try await planner.plan(page)
                    index = 0
                }
                defer { index += 1 }
                return buffer[index]
            }
        }

        /// Starts reading (nothing is read until the first `next()`).
        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(planner: Planner(outbox: outbox, now: outbox.clock.now), pageSize: pageSize)
        }
    }

    /// Plans ops in enqueue order, page by page, keeping only each lane's head.
    struct Planner {
        let outbox: Outbox
        let now: Date
        var position = 0
        var laneHeads: [String: String] = [:]
        static var live: Set<OutboxState> { liveStates }

        init(outbox: Outbox, now: Date) {
            self.outbox = outbox
            self.now = now
        }

        mutating func plan(_ entries: [OutboxEntry]) async throws -> [OutboxPlanEntry] {
            let store = outbox.store, client = outbox.client
            // The parents ops wait on, looked up for the page at once (they precede their children).
            let parents = try await store.fetch(store.queries.outboxStates(ids: Set(entries.compactMap(\.dependsOn))))
            var plan: [OutboxPlanEntry] = []
            plan.reserveCapacity(entries.count)
            for entry in entries {
                position += 1
                var waiting: String
                if Self.live.contains(entry.state), let head = laneHeads[entry.lane] {
                    waiting = "behind \(head)"
                } else {
                    if Self.live.contains(entry.state) { laneHeads[entry.lane] = entry.id }
                    var head = LaneHead(entry: entry, parentState: entry.dependsOn.flatMap { parents[$0] })
                    if entry.kind == .setAppRecord, entry.baseSnapshot == nil {
                        // A relationship's create also waits for its other end's create: read as the drain reads it.
                        head = try await store.reading { try LaneHead.of(entry, in: $0) }
                    }
                    waiting = Outbox.describe(OutboxWait.of(head: head, now: now), entry: entry)
                }
                if waiting == "ready", let need = client.access.wouldWait(at: now) {
                    waiting = "waiting for a token (\(need == .missing ? "none yet" : "the token \(need.rawValue)"))"
                }
                if entry.state == .ambiguous, waiting == "ready" { waiting = "ready (probe first: may have arrived)" }
                var resolved = OutboxRequests.Resolved(ifMatch: entry.baseETag)
                var steps: [PlannedStep]?
                if let shape = entry.operation.send?.files {
                    (steps, resolved.files) = try await Self.fileSteps(entry, shape: shape, outbox: outbox)
                }
                if entry.kind.traits.needsMessageTimetoken, entry.operation.messageTimetoken == nil {
                    resolved.messageTimetoken = try await OutboxProbes.storedTimetoken(ofMessage: entry.operation.messageId ?? "", in: store)
                }
                var planned = Self.entry(entry, position: position, waiting: waiting, resolved: resolved, outbox: outbox, now: now)
                planned.steps = steps
                plan.append(planned)
            }
            return plan
        }

        /// One op's entry, its request built from what `resolved` holds (the op's own message and
        /// action timetokens are added here): the planner's and a rehearsal's
        /// (``Outbox/rehearsing(_:)``) one way of showing an op.
        static func entry(
            _ entry: OutboxEntry, position: Int, waiting: String, resolved: OutboxRequests.Resolved, outbox: Outbox, now: Date
        ) -> OutboxPlanEntry {
            let client = outbox.client
            var resolved = resolved, waiting = waiting
            var request: PlannedRequest?
            var note: String?
            if entry.kind.traits.needsMessageTimetoken, let known = entry.operation.messageTimetoken { resolved.messageTimetoken = known }
            resolved.actionTimetoken = entry.operation.actionTimetoken
            if entry.kind == .removeReaction, resolved.actionTimetoken == nil, resolved.messageTimetoken != nil {
                note = "the action's timetoken is looked up on the server first"
            } else {
                do {
                    let wire = try OutboxRequests.request(for: entry, resolved: resolved, client: client, objects: outbox.objects)
                    request = PlannedRequest(wire)
                    // The pre-check a drain makes: an op the parsed token cannot allow is reported here.
                    if waiting == "ready", case .notGranted(let missing)? = client.access.preview(wire, at: now) {
                        waiting = "not granted by the token: \(missing.map(\.description).joined(separator: ", "))"
                    }
                } catch {
                    note = error.description
                }
            }
            return OutboxPlanEntry(
                opId: entry.id, position: position, kind: entry.kind, lane: entry.lane, state: entry.state,
                attempts: entry.attempts, nextAttemptAt: entry.nextAttemptAt, waiting: waiting,
                coalesced: entry.coalesced, request: request, requestNote: note,
                encryption: request != nil && entry.kind.traits.encryptsPayload ? client.crypto.map { "\($0.encryptor)" } : nil,
                steps: nil)
        }

        /// The upload steps of a send with files and the files its publish would name.
        static func fileSteps(_ entry: OutboxEntry, shape: FileShape, outbox: Outbox) async throws -> ([PlannedStep], [ChatFile]) {
            let files = outbox.client.files, opId = entry.id
            let rows = try await outbox.store.reading { try $0.files.fileUploads(opId: opId) }
            var steps: [PlannedStep] = []
            for row in rows {
                let size = "\(row.size) bytes, \(files.uploadedSize(ofPlaintext: row.size)) uploaded"
                steps.append(PlannedStep(
                    step: "upload URL for \(row.name) (\(size))" + (row.fileId.map { row.uploaded ? ": \($0)" : " (redone: \($0) becomes an orphan)" } ?? ""),
                    done: row.uploaded, request: row.uploaded ? nil : PlannedRequest(try files.generateUploadURLRequest(channel: row.channelId, name: row.name))))
                steps.append(PlannedStep(
                    step: "upload \(row.name) to the storage URL of the answer (a form POST, no PubNub keys)", done: row.uploaded, request: nil))
                if shape == .chatText {
                    steps.append(PlannedStep(step: "file event of \(row.name) (store=0, at most once)", done: row.eventSent, request: nil))
                }
            }
            let named = rows.map { row in
                ChatFile(id: row.uploaded ? row.fileId : "{file-id}", name: row.uploadName ?? row.name, size: row.size, mimeType: row.mimeType,
                         url: files.fileURL(channel: row.channelId, id: row.uploaded ? row.fileId ?? "" : "{file-id}", name: row.uploadName ?? row.name))
            }
            return (steps, named)
        }
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
        case .token: return "waiting for a token (\(reason))"
        }
    }
}

extension PlannedRequest {
    init(_ request: WireRequest) {
        method = request.method.rawValue
        path = "/" + request.pathSegments.map { PercentEncoding.pathSegment($0) }.joined(separator: "/")
        // The token and a signature are never printed.
        query = request.query.map { item in
            item.name + (item.value.map { QuerySecrets.names.contains(item.name) ? "=REDACTED" : "=\($0)" } ?? "")
        }
        ifMatch = request.headers.first { $0.key.lowercased() == "if-match" }?.value
        body = request.body.map { String(decoding: $0, as: UTF8.self) }
    }
}
