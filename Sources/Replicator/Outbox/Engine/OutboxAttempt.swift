import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

/// A successful op's result, written to the store with the op's removal.
enum Completion {
    case published(Timetoken)
    case reaction(Timetoken?)
    case user(ChatUser<JSONValue>)
    case channel(ChatChannel<JSONValue>)
    case membership(ChatMember<RawChatCustom>?)
    /// A batch of read positions: the channels it wrote and the server's memberships of its channels.
    case memberships(written: Set<String>, [ChatMember<RawChatCustom>])
    /// A mute list's owner and the server's version of it.
    case muteList(owner: String, StoredMuteList)
    /// An app record as the server answered its write (nil: a delete).
    case appRecord(AppRecord?)
    case none
}

/// An op that a merged completion marked in flight: the lane's next op, to be sent without reading
/// the lane again or committing its `inflight` mark on its own.
struct MarkedOp: Sendable {
    /// The op as it was before the mark (failures are recorded from it, as for any attempt).
    var head: OutboxEntry
    /// The op as marked in flight (its request is built from it).
    var inflight: OutboxEntry
}

/// One attempt of one op: what it needs looked up (``OutboxProbes``), the request, the answer, and
/// the op's next state (done, rescheduled, parked as dead, conflicted or waiting for a token),
/// committed through ``Outbox/commit(_:)``. A completion can mark the lane's next op in flight in
/// the same commit, so a lane of plain sends costs one commit per op.
///
/// Its methods run on the outbox's actor (an `isolated` parameter), as the drainer's do.
struct OutboxAttempt<Custom: ChatCustomData>: Sendable {}

extension Outbox {
    /// One attempt of one op (``OutboxAttempt``).
    nonisolated var attempts: OutboxAttempt<Custom> { OutboxAttempt() }
}

extension OutboxAttempt {
    /// One attempt at the head of a lane: probe if ambiguous, send, record the outcome.
    ///
    /// - Parameter lane: when given, a success also marks the lane's next op in flight in its
    ///   completion's transaction, if that op can be sent as it is (``OpTransaction/startNext(lane:now:)``),
    ///   and returns it: one commit per op instead of two.
    @discardableResult
    func attempt(_ entry: OutboxEntry, lane: String? = nil, on outbox: isolated Outbox<Custom>) async -> MarkedOp? {
        await recordingFailures(of: entry, on: outbox) { try await self.attemptOrThrow(entry, lane: lane, on: outbox) }
    }

    /// Sends an op a merged completion marked in flight (``attempt(_:lane:)``), and records the
    /// outcome as ``attempt(_:lane:)`` does.
    func attempt(_ marked: MarkedOp, lane: String?, on outbox: isolated Outbox<Custom>) async -> MarkedOp? {
        await recordingFailures(of: marked.head, on: outbox) {
            try await self.send(marked.inflight, resolved: OutboxRequests.Resolved(ifMatch: marked.inflight.baseETag), lane: lane, on: outbox)
        }
    }

    /// Runs an attempt and records how it failed, if it did. Its requests carry the op's id in
    /// their log lines and journal entries (``PubNubWire/WireTrace``).
    func recordingFailures(of entry: OutboxEntry, on outbox: isolated Outbox<Custom>, _ body: () async throws -> MarkedOp?) async -> MarkedOp? {
        await WireTrace.$op.withValue(entry.id) {
            do {
                return try await body()
            } catch {
                await record(error, of: entry, on: outbox)
                return nil
            }
        }
    }

    /// Records how an attempt of `entry` (the op as it was before its attempt) failed.
    func record(_ error: any Error, of entry: OutboxEntry, on outbox: isolated Outbox<Custom>) async {
        switch error {
        case let error as WireError:
            await recordWireFailure(entry, error, on: outbox)
        case is CancellationError:
            // The drain was cancelled mid-attempt: the op stays as the store has it (an op left in
            // flight becomes ambiguous when the next outbox is made or the next drain takes the lease).
            return
        default:
            // A store error (disk full, I/O error) stops the drain rather than retry an op whose
            // outcome cannot be recorded; anything else (an answer the model refuses) waits out a
            // backoff. Either way the request may have been sent, so a publish is probed next time.
            if StoreError.isStorageFailure(error) {
                outbox.storeFailed(error)
            } else {
                outbox.logger.warning("outbox attempt failed; retrying after a backoff", metadata: ["op": "\(entry.id)", "error": "\(error)"])
            }
            let failure = OutboxFailure(errorClass: .other, message: "\(error)")
            let state: OutboxState = entry.kind == .send || entry.state == .ambiguous ? .ambiguous : .pending
            await reschedule(entry, state: state, minimumWait: 0, failure: failure, serverFailure: false, on: outbox)
        }
    }

    private func attemptOrThrow(_ original: OutboxEntry, lane: String?, on outbox: isolated Outbox<Custom>) async throws -> MarkedOp? {
        var entry = original
        if entry.state == .ambiguous {
            let verdict: ProbeVerdict
            do {
                verdict = try await outbox.probes.probe(entry)
            } catch let error as WireError {
                // The probe itself failed: the op is still ambiguous, whatever the failure says.
                await recordWireFailure(entry, error, keepAmbiguous: true, on: outbox)
                return nil
            } catch let error as PagingError {
                // The server's history did not page (it ignored `start`): the probe proves nothing.
                let failure = OutboxFailure(errorClass: .other, message: "probe failed: \(error)")
                await reschedule(entry, state: .ambiguous, minimumWait: 0, failure: failure, serverFailure: false, on: outbox)
                return nil
            }
            switch verdict {
            case .applied(let completion):
                outbox.drainState.report.probes += 1
                outbox.emit(.probed(opId: entry.id, found: true))
                try await complete(entry, completion, on: outbox)
                return nil
            case .changedElsewhere(let message):
                outbox.drainState.report.probes += 1
                outbox.emit(.probed(opId: entry.id, found: false))
                await park(entry, .conflict, OutboxFailure(errorClass: .conflict, message: message), on: outbox)
                return nil
            case .notApplied:
                outbox.drainState.report.probes += 1
                outbox.emit(.probed(opId: entry.id, found: false))
            case .resend:
                break
            }
        }
        var resolved = OutboxRequests.Resolved(ifMatch: entry.baseETag)
        // What an op needs looked up before its request can be built; nothing for one that `sendsAsIs`.
        if !Self.sendsAsIs(entry) {
            guard try await prepare(&entry, resolved: &resolved, on: outbox) else { return nil }
        }
        // The request is built from the row as marked in flight: an enqueue may have merged more
        // fields into the op since the head was read, and those must go too.
        let now = outbox.clock.now, id = entry.id
        guard let inflight = try await outbox.commit({ try $0.markInflight(id, now: now) }) else { return nil }
        return try await send(inflight, resolved: resolved, lane: lane, on: outbox)
    }

    /// Whether an op's request can be built from its row as it is: a pending op (an ambiguous one
    /// is probed first) of a kind that needs nothing looked up (``prepare(_:resolved:)`` does
    /// nothing for it). Only such an op is marked in flight by a merged completion.
    static func sendsAsIs(_ entry: OutboxEntry) -> Bool {
        guard entry.state == .pending else { return false }
        switch entry.kind.traits.preparation {
        case .nothing: return entry.operation.send?.files == nil
        case .messageTimetoken, .actionTimetoken, .serverState: return false
        case .membershipBase: return !entry.rebase && entry.baseETag == nil
        case .objectBase: return !entry.rebase && entry.baseETag != OutboxKeys.createOnlyBase
        }
    }

    /// Looks up what the request needs (the message's or action's timetoken, the server's eTag or
    /// membership); false when that ended the attempt (the op was completed, rescheduled or parked).
    private func prepare(_ entry: inout OutboxEntry, resolved: inout OutboxRequests.Resolved, on outbox: isolated Outbox<Custom>) async throws -> Bool {
        if let shape = entry.operation.send?.files {
            // A send with files: its upload steps first (OutboxAttempt+Files.swift).
            return try await uploadFiles(entry, shape: shape, resolved: &resolved, on: outbox)
        }
        if entry.kind.traits.needsMessageTimetoken {
            resolved.messageTimetoken = try await outbox.probes.messageTimetoken(of: entry)
            guard resolved.messageTimetoken != nil else {
                let failure = OutboxFailure(errorClass: .other, message: "the message has no timetoken yet")
                await reschedule(entry, state: .pending, minimumWait: 0, failure: failure, serverFailure: false, on: outbox)
                return false
            }
        }
        if entry.kind == .removeReaction {
            resolved.actionTimetoken = try await outbox.probes.actionTimetoken(of: entry, messageTimetoken: resolved.messageTimetoken)
            if resolved.actionTimetoken == nil {
                // Not on the server: nothing to remove.
                try await complete(entry, .none, on: outbox)
                return false
            }
        }
        if entry.kind == .setMembership || entry.kind == .removeMembership, entry.rebase {
            // The app retried a conflicted membership edit: it keeps its edit over whatever the server holds now.
            let channel = entry.operation.channel ?? ""
            let remote = try await outbox.objects.memberships(user: entry.operation.user ?? "", channels: [channel])[channel]
            entry.baseETag = remote?.eTag
            try await rebase(entry.id, baseETag: remote?.eTag, on: outbox)
        } else if entry.kind == .setMembership || entry.kind == .removeMembership, let base = entry.baseETag,
                  base == OutboxKeys.createOnlyBase ? !outbox.objects.capabilities.nativeCreateOnly : !outbox.objects.capabilities.conditionalMembershipWrites
        {
            // The backend's membership writes carry no If-Match (App Context): compare the server's
            // version with the edit's base first.
            switch try await outbox.probes.membershipPrecheck(entry) {
            case .proceed:
                break
            case .applied(let membership):
                // An invitation of a user who has a membership already (someone else's pending
                // one too) sends no event, as the Chat SDK's `invite` returns the member.
                let invite = entry.baseETag == OutboxKeys.createOnlyBase ? try await unsentInvite(of: entry, on: outbox) : nil
                try await complete(entry, membership.map { .membership($0) } ?? .none, skipping: invite, on: outbox)
                return false
            case .changed(let message):
                await park(entry, .conflict, OutboxFailure(errorClass: .conflict, message: message), on: outbox)
                return false
            }
        }
        if case .readPositions(let positions) = entry.operation {
            // The server's memberships first: only positions that still move are written.
            let plan = try await ReadPositionsWrite.plan(positions, objects: outbox.objects, now: outbox.clock.now)
            guard !plan.sets.isEmpty else {
                try await complete(entry, .memberships(written: [], plan.server), on: outbox)
                return false
            }
            resolved.membershipSets = plan.sets
        }
        if case .setMuteList(let owner, _) = entry.operation {
            resolved.serverMuted = try await outbox.probes.serverMuteList(of: owner)
        }
        if case .invite(let notice) = entry.operation {
            // The pending membership went first (same lane); when the invitee turned out to be a
            // member already (the store holds the server's membership, not pending), no event.
            let status = try await outbox.store.reading { try $0.member(channelId: notice.channel, userId: notice.user)?.status }
            guard status == ChatSDKFormat.pendingStatus else {
                try await complete(entry, .none, on: outbox)
                return false
            }
        }
        if entry.baseETag == OutboxKeys.createOnlyBase, entry.kind == .setChannel, !outbox.objects.capabilities.nativeCreateOnly {
            // Made only where none exists (a conversation's channel): an existing one is kept as
            // the server has it, as the Chat SDK's `getChannel` before `createChannel` does.
            resolved.ifMatch = nil
            if let existing = try await outbox.probes.existingChannel(entry.operation.channel ?? "") {
                try await complete(entry, .channel(existing), on: outbox)
                return false
            }
        }
        if entry.rebase, entry.kind == .setUser || entry.kind == .setChannel || entry.operation.appRecord != nil {
            let eTag = try await outbox.probes.remoteETag(of: entry)
            entry.baseETag = eTag
            resolved.ifMatch = eTag
            try await rebase(entry.id, baseETag: eTag, on: outbox)
        }
        return true
    }

    /// Sends an op marked in flight and records the answer; with `lane`, the completion also
    /// marks the lane's next op (returned) when it can go as it is.
    private func send(_ inflight: OutboxEntry, resolved: OutboxRequests.Resolved, lane: String?, on outbox: isolated Outbox<Custom>) async throws -> MarkedOp? {
        guard let completion = try await exchange(inflight, resolved: resolved, on: outbox) else { return nil }
        return try await complete(inflight, completion, next: lane, on: outbox)
    }

    /// Sends an op marked in flight and decodes the answer; nil when its request could not be
    /// built (nothing was sent; the op is parked dead).
    func exchange(_ inflight: OutboxEntry, resolved: OutboxRequests.Resolved, on outbox: isolated Outbox<Custom>) async throws -> Completion? {
        let outgoing: Outgoing
        do {
            // Built before anything is sent: an op whose request cannot be built is dead. An object
            // write's request is built by its backend as it sends it (a refusal there is a WireError).
            if let write = try OutboxRequests.objectWrite(for: inflight, resolved: resolved, objects: outbox.objects) {
                outgoing = .object(write)
            } else {
                outgoing = .wire(try OutboxRequests.request(for: inflight, resolved: resolved, client: outbox.client))
            }
        } catch {
            await park(inflight, .dead, OutboxFailure(errorClass: .other, message: error.description), on: outbox)
            return nil
        }
        outbox.drainState.report.attempts += 1
        switch outgoing {
        case .object(let write):
            // Users, channels and memberships go through the object backend.
            return Self.completion(of: inflight, try await outbox.objects.write(write), resolved: resolved)
        case .wire(let request):
            return try decodeCompletion(of: inflight, from: try await outbox.client.perform(request), resolved: resolved, on: outbox)
        }
    }

    /// What an object write's answer completes.
    private static func completion(of entry: OutboxEntry, _ written: ObjectWritten, resolved: OutboxRequests.Resolved) -> Completion {
        switch written {
        case .user(let user):
            guard case .setMuteList(let owner, _) = entry.operation else { return .user(user) }
            return .muteList(owner: owner, StoredMuteList(
                muted: ChatModeration.mutedUsers(fromCustom: user.custom), updated: user.updated?.description, eTag: user.eTag))
        case .channel(let channel): return .channel(channel)
        case .membership(let membership): return .membership(membership)
        case .memberships(let memberships):
            return .memberships(written: Set(resolved.membershipSets?.map(\.channel) ?? []), memberships)
        case .removed: return .none
        }
    }

    private func decodeCompletion(of entry: OutboxEntry, from response: WireResponse, resolved: OutboxRequests.Resolved, on outbox: isolated Outbox<Custom>)
        throws(WireError) -> Completion
    {
        switch entry.kind.traits.route {
        case .publish, .signal:
            return .published(try PubNubClient.publishTimetoken(from: response))
        case .addAction:
            return .reaction(try PubNubMessageActions.messageAction(from: response).actionTimetoken)
        case .push:
            try PubNubPush.acknowledgement(from: response, operation: "push")
            return .none
        case .removeAction, .deleteHistory:
            return .none
        case .objectWrite:
            // Object writes are answered by the object backend (``send(_:resolved:lane:)``).
            return .none
        case .appRecord:
            return .appRecord(try DataSyncAppRecordWrites.answer(response, to: entry.operation))
        }
    }

    /// Writes a success to the store (local object and op removal in one transaction) and reports it.
    ///
    /// - Parameters:
    ///   - lane: also mark that lane's next op in flight in the same transaction, when it
    ///   can be sent as it is and the drain goes on (not cancelled, no store failure, before its
    ///   deadline), and return it. A kill -9 after this commit leaves that op in flight although
    ///   its request was never sent: recovery makes it ambiguous, and its probe finds it not applied
    ///   and sends it, once. No op is ever sent without its `inflight` mark committed first.
    ///   - ahead: with `lane`, the op whose request is out while this commits: the op after it is
    ///     marked instead of the lane's head (``OpTransaction/markAhead(lane:after:now:)``, the pipeline's step).
    ///   - skipping: an op finished with it, unsent, in the same transaction (an invitation's
    ///     event when the membership existed already).
    @discardableResult
    func complete(
        _ entry: OutboxEntry, _ completion: Completion, next lane: String? = nil, ahead sending: OutboxEntry? = nil,
        skipping: OutboxEntry? = nil, on outbox: isolated Outbox<Custom>
    ) async throws -> MarkedOp? {
        let userId = outbox.userId
        let result: OpResult<Custom>
        switch completion {
        case .published(let tt): result = .published(tt)
        case .reaction(let tt): result = .reaction(tt)
        case .user(let user):
            var typed: ChatUser<Custom.User> = try Self.convert(user)
            typed.metadata = user.metadata
            result = .user(typed)
        case .channel(let channel):
            var typed: ChatChannel<Custom.Channel> = try Self.convert(channel)
            typed.metadata = channel.metadata
            result = .channel(typed)
        case .membership(let membership):
            result = .membership(try membership.map { try Self.member($0) })
        case .memberships(let written, let memberships):
            result = .memberships(written: written, try memberships.map { try Self.member($0) })
        case .muteList(let owner, let list): result = .muteList(owner: owner, list)
        case .appRecord(let record): result = .appRecord(record)
        case .none: result = .none
        }
        let now = outbox.clock.now
        let startNext = lane != nil && Self.drainGoesOn(now: now, on: outbox)
        let next = try await outbox.commit { ops -> MarkedOp? in
            try ops.complete(entry, result, userId: userId)
            if let skipping { try ops.complete(skipping, .none, userId: userId) }
            guard startNext, let lane else { return nil }
            if let sending { return try ops.markAhead(lane: lane, after: sending, now: now) }
            return try ops.startNext(lane: lane, now: now)
        }
        outbox.drainState.report.completed += skipping == nil ? 1 : 2
        return next
    }

    /// Whether the drain may start another op's attempt: not cancelled, no store failure, before
    /// its deadline. Read on the drain's own task (a commit's unstructured task is never cancelled).
    static func drainGoesOn(now: Date, on outbox: isolated Outbox<Custom>) -> Bool {
        !Task.isCancelled && outbox.drainState.storeFailure == nil && outbox.drainState.deadline.map { now <= $0 } ?? true
    }

    /// The unsent invitation event queued after a membership op (same channel and user).
    private func unsentInvite(of entry: OutboxEntry, on outbox: isolated Outbox<Custom>) async throws -> OutboxEntry? {
        guard let channel = entry.operation.channel, let user = entry.operation.user else { return nil }
        return try await outbox.store.reading { try $0.outbox.ops(target: OutboxKeys.invite(channel, user)).first { $0.state == .pending } }
    }

    /// A membership from the object backend's answer, in the store's custom type (the user by id).
    private static func member(_ raw: ChatMember<RawChatCustom>) throws -> ChatMember<Custom> {
        var member = ChatMember<Custom>(
            channel: try convert(raw.channel), user: try ChatUser(id: raw.userId), status: raw.status, type: raw.type,
            custom: try raw.custom.map { value throws(WireError) -> Custom.Member in try convert(value) },
            updated: raw.updated, eTag: raw.eTag)
        member.metadata = raw.metadata
        return member
    }

    /// Rebases a conflicted edit that the app retried on the server's current eTag.
    private func rebase(_ id: String, baseETag: String?, on outbox: isolated Outbox<Custom>) async throws {
        let now = outbox.clock.now
        try await outbox.commit { try $0.rebase(id, baseETag: baseETag, now: now) }
    }

    /// Re-types an object decoded with JSON custom data as the store's custom type. An answer
    /// whose custom data the store's types refuse is an unreadable answer
    /// (``PubNubWire/WireError/decoding(operation:status:message:)``), so the op is handled as one
    /// that may have been applied.
    static func convert<T: Decodable>(_ value: some Encodable) throws(WireError) -> T {
        do {
            return try JSONValue(encoding: value).decode(as: T.self)
        } catch {
            throw .decoding(operation: "\(T.self)", status: 200, message: "the server's object does not fit the store's types: \(error)")
        }
    }

    private func recordWireFailure(_ entry: OutboxEntry, _ error: WireError, keepAmbiguous: Bool = false, on outbox: isolated Outbox<Custom>) async {
        switch FailureDecision.classify(
            error, kind: entry.kind, serverFailures: entry.serverFailures, limit: outbox.options.maxServerFailures,
            waitedUnder: entry.waitedUnderToken, ambiguous: keepAmbiguous || entry.state == .ambiguous, enqueuedAt: entry.createdAt)
        {
        case .waitForToken(let state, let failure):
            await waitForToken(entry, state: keepAmbiguous ? .ambiguous : state, failure: failure, on: outbox)
            if case .accessDenied(let denial) = error {
                if denial.waitsForToken {
                    // Every request waits now: every op says so, under the token it waited for.
                    await parkForToken(fingerprint: denial.token, reason: failure.message, on: outbox)
                } else {
                    // The token does not grant this op: ask for a new one (once per token); others go on.
                    outbox.client.access.requestToken(.refused)
                }
            }
        case .retry(_, let minimumWait, let failure, _) where keepAmbiguous:
            // A failed probe says nothing about the op: it does not count toward the 5xx limit.
            await reschedule(entry, state: .ambiguous, minimumWait: minimumWait, failure: failure, serverFailure: false, on: outbox)
        case .done where keepAmbiguous, .conflict where keepAmbiguous:
            await reschedule(entry, state: .ambiguous, minimumWait: 0, failure: OutboxFailure(errorClass: .other, message: "probe failed: \(error)"), serverFailure: false, on: outbox)
        case .done:
            do {
                var completion = Completion.none
                if entry.kind == .addReaction {
                    // 409: this user's reaction is already there. Find its timetoken for a later removal.
                    let tt = try? await outbox.probes.findAction(entry, messageTimetoken: try await outbox.probes.messageTimetoken(of: entry))
                    completion = .reaction(tt ?? nil)
                }
                try await complete(entry, completion, on: outbox)
            } catch {
                if StoreError.isStorageFailure(error) {
                    outbox.storeFailed(error)
                } else {
                    outbox.logger.warning("cannot record a completed op", metadata: ["op": "\(entry.id)", "error": "\(error)"])
                }
            }
        case .retry(let state, let minimumWait, let failure, let serverFailure):
            await reschedule(entry, state: state, minimumWait: minimumWait, failure: failure, serverFailure: serverFailure, on: outbox)
        case .dead(let failure):
            await park(entry, .dead, failure, on: outbox)
        case .conflict(let failure):
            await park(entry, .conflict, failure, on: outbox)
        }
    }

    /// Marks every live op as waiting for a token (``OpTransaction/parkForToken(fingerprint:reason:now:)``).
    func parkForToken(fingerprint: String, reason: String, on outbox: isolated Outbox<Custom>) async {
        let now = outbox.clock.now
        do {
            try await outbox.commit { _ = try $0.parkForToken(fingerprint: fingerprint, reason: reason, now: now) }
        } catch is CancellationError {
        } catch {
            if StoreError.isStorageFailure(error) { outbox.storeFailed(error) }
        }
    }

    /// Parks a live op until a new Access Manager token arrives (``OpTransaction/tokenArrived(now:)``).
    func waitForToken(_ entry: OutboxEntry, state: OutboxState, failure: OutboxFailure, on outbox: isolated Outbox<Custom>) async {
        let now = outbox.clock.now, id = entry.id
        outbox.logger.info("outbox op waits for a token", metadata: ["op": "\(id)", "reason": "\(failure.message)"])
        do {
            try await outbox.commit {
                try $0.recordFailure(id, state: state, retryAt: OutboxEntry.tokenWaitMarker, failure: failure, serverFailure: false, now: now)
            }
        } catch is CancellationError {
        } catch {
            if StoreError.isStorageFailure(error) { outbox.storeFailed(error) }
        }
    }

    func reschedule(
        _ entry: OutboxEntry, state: OutboxState, minimumWait: TimeInterval, failure: OutboxFailure, serverFailure: Bool
    , on outbox: isolated Outbox<Custom>) async {
        let now = outbox.clock.now
        let delay = outbox.options.retry.wait(afterAttempt: entry.attempts + 1, atLeast: minimumWait, using: &outbox.random)
        let at = now.addingTimeInterval(delay)
        let id = entry.id
        do {
            try await outbox.commit {
                try $0.recordFailure(id, state: state, retryAt: at, failure: failure, serverFailure: serverFailure, now: now)
            }
        } catch is CancellationError {
            return
        } catch {
            outbox.storeFailed(error)
        }
    }

    func park(_ entry: OutboxEntry, _ state: OutboxState, _ failure: OutboxFailure, on outbox: isolated Outbox<Custom>) async {
        let id = entry.id, now = outbox.clock.now
        do {
            try await outbox.commit {
                try $0.recordFailure(
                    id, state: state, retryAt: nil, failure: failure, serverFailure: failure.errorClass == .server, now: now)
            }
        } catch {
            outbox.storeFailed(error)
        }
    }
}

/// What one attempt sends: an object write through the backend, or a request of the wire client.
private enum Outgoing {
    case object(ObjectWrite)
    case wire(WireRequest)
}
