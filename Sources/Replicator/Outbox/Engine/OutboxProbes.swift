import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

/// What the server holds for an ambiguous op, as a probe found it.
enum ProbeVerdict {
    /// The op's effect is on the server: finish the op with this result.
    case applied(Completion)
    /// Not applied: send it (again).
    case notApplied
    /// Resending is harmless (the op is idempotent, or its duplicate answer means done): no probe needed.
    case resend
    /// The object changed on the server since the op's base: a conflict.
    case changedElsewhere(String)
}

/// The outbox's reads of the server: an op whose last attempt may have arrived (ambiguous) is
/// probed before it is sent again, to decide whether it is done, must be sent, or met a conflict;
/// a membership write is checked first; an action's or a message's timetoken is looked up
/// (`outbox.probes`).
///
/// It holds no state: every answer comes from the store or the server, so it runs anywhere.
struct OutboxProbes<Custom: ChatCustomData>: Sendable {
    let store: ChatStore<Custom>
    let client: PubNubClient
    let objects: any ObjectBackend
    let options: OutboxOptions

    /// The user whose ops are probed (the client's).
    var userId: String { client.configuration.userId }
}

extension Outbox {
    /// The outbox's reads of the server (``OutboxProbes``).
    nonisolated var probes: OutboxProbes<Custom> {
        OutboxProbes(store: store, client: client, objects: objects, options: options)
    }
}

extension OutboxProbes {
    // MARK: Probes

    /// Looks for an ambiguous op's effect before anything is resent.
    func probe(_ entry: OutboxEntry) async throws -> ProbeVerdict {
        switch entry.operation {
        case .send(let send):
            return try await probePublish(entry, in: send.channel, messageId: send.messageId)
        case .mention(let notice):
            return try await probePublish(entry, in: notice.user, messageId: nil)
        case .report(let channel, _, _):
            return try await probePublish(entry, in: ChatModeration.moderationChannel(for: channel), messageId: nil)
        case .invite(let notice):
            return try await probePublish(entry, in: notice.user, messageId: nil)
        case .setUser, .setChannel:
            return try await probeEdit(entry)
        case .setMembership, .removeMembership:
            // Without If-Match (App Context) a membership write is idempotent: resent as it is
            // (its pre-check reads the server first). Resent with If-Match, a write that did
            // arrive would meet its own new eTag (a 412, a conflict with itself): the server's
            // membership is compared first, as that pre-check does.
            guard objects.capabilities.conditionalMembershipWrites, entry.baseETag != nil else { return .resend }
            switch try await membershipPrecheck(entry) {
            case .proceed: return .notApplied
            case .applied(let membership): return .applied(membership.map { .membership($0) } ?? .none)
            case .changed(let message): return .changedElsewhere(message)
            }
        case .setAppRecord(let write):
            return try await probeRecord(entry, write)
        case .addReaction, .removeReaction, .removeUser, .removeChannel, .receipt, .hardDelete, .setMuteList, .push, .readPositions,
             .removeAppRecord:
            // A resent add answers 409 when it had arrived; a resent removal finds nothing to
            // remove; delete requests are idempotent. A signal is never stored, so
            // nothing can be looked up; a read receipt said twice means the same. Deleting a
            // history range twice deletes nothing more. A mute list is written whole: twice is once.
            // A push registration sets channels on a device: twice is once. A batch of read
            // positions reads the server's first and writes only the ones that still move. A
            // record's delete that arrived answers 404 when resent: done.
            return .resend
        }
    }

    /// Pages `channel`'s history backward from now to shortly before the first attempt, looking
    /// for the message's own id (sends) or the op id in `meta` (sends and mention events).
    private func probePublish(_ entry: OutboxEntry, in channel: String, messageId: String?) async throws -> ProbeVerdict {
        let since = (entry.firstAttemptAt ?? entry.createdAt).addingTimeInterval(-options.probeLookback)
        var floor = try Timetoken(date: max(since, Date(timeIntervalSince1970: 0)))
        if let messageId, let earlier = try await store.reading({ try $0.outbox.newestEarlierTimetoken(messageId: messageId) }),
           earlier > floor
        {
            floor = Timetoken(rawValue: earlier.rawValue + 1)
        }
        for try await page in HistoryPages(channel: channel, end: floor, scope: "probe \(entry.id) in \(channel)", fetch: {
            try await self.client.history.fetchHistory($0)
        }) {
            if let found = page.messages.first(where: { Self.isMessage($0, id: messageId, opId: entry.id, publisher: userId) }) {
                return .applied(.published(found.timetoken))
            }
        }
        return .notApplied
    }

    /// Whether a history entry of the op's channel is the op's publish: it carries the message's id
    /// or the op id in `meta`, and this user published it. Another publisher's entry with the same
    /// id or meta is a different message (``ReplicaModel/MessageIdentity``): it never finishes the op.
    static func isMessage(_ message: HistoryMessage, id: String?, opId: String, publisher: String) -> Bool {
        guard message.uuid == publisher else { return false }
        if let id, case .object(let body) = message.message, body["id"] == .string(id) { return true }
        if case .object(let meta)? = message.meta, meta["pnr_op"] == .string(opId) { return true }
        return false
    }

    /// Compares the server's object with the values the edit sets.
    private func probeEdit(_ entry: OutboxEntry) async throws -> ProbeVerdict {
        let fields = entry.operation.fields ?? [:]
        let remoteETag: String?
        var existing: ChatChannel<JSONValue>?
        if entry.kind == .setUser {
            guard let user = try await objects.user(id: entry.operation.user ?? "", as: JSONValue.self) else { return .notApplied }
            remoteETag = user.eTag
            if Self.holds(fields, in: try JSONValue(encoding: user)) { return .applied(.user(user)) }
        } else {
            guard let channel = try await objects.channel(id: entry.operation.channel ?? "", as: JSONValue.self) else { return .notApplied }
            remoteETag = channel.eTag
            if Self.holds(fields, in: try JSONValue(encoding: channel)) { return .applied(.channel(channel)) }
            existing = channel
        }
        if entry.baseETag == OutboxKeys.createOnlyBase, let existing {
            // Made only where none exists: the server has one, which stays as it is.
            return .applied(.channel(existing))
        }
        if entry.baseETag == nil || remoteETag == entry.baseETag { return .notApplied }
        return .changedElsewhere("the server's version changed since the edit's base (eTag \(remoteETag ?? "none"))")
    }

    /// Whether `object` (wire JSON) has every field at the value `fields` sets. Both sides are
    /// compared as ``ReplicaModel/FieldSchema/comparable(_:_:)`` reads them: an edit that clears
    /// `type` (null) is held by an object without one, so a write whose answer was lost is found
    /// applied rather than met as a conflict with itself.
    static func holds(_ fields: [String: JSONValue], in object: JSONValue) -> Bool {
        guard case .object(let remote) = object else { return false }
        return fields.allSatisfy { key, value in
            FieldSchema.comparable(key, remote[key]) == FieldSchema.comparable(key, value)
        }
    }

    enum MembershipPrecheck {
        case proceed
        /// The server already holds the change (the server's membership, when there is one).
        case applied(ChatMember<RawChatCustom>?)
        case changed(String)
    }

    /// The server's membership compared with an edit's: it holds the intended values already →
    /// done (an earlier attempt arrived); its eTag is still the edit's base → write; otherwise →
    /// conflict. For a backend whose membership writes have no `If-Match` (App Context) it is the
    /// conflict check, run before every write (a change made between this read and the write is
    /// not detected: docs/conflicts.md); for one whose writes carry `If-Match` (DataSync) it is
    /// only the probe of an ambiguous edit, so a write that arrived never meets its own eTag.
    func membershipPrecheck(_ entry: OutboxEntry) async throws -> MembershipPrecheck {
        guard let channel = entry.operation.channel, let user = entry.operation.user else { return .proceed }
        let remote = try await objects.memberships(user: user, channels: [channel])[channel]
        if entry.baseETag == OutboxKeys.createOnlyBase {
            // Made only where none exists (an invitation): an existing membership is kept.
            guard let remote else { return .proceed }
            return .applied(remote)
        }
        if entry.kind == .removeMembership {
            guard let remote else { return .applied(nil) }
            return remote.eTag == entry.baseETag ? .proceed : .changed("the membership changed on the server since the removal's base")
        }
        guard let remote else {
            return .changed("the membership was removed on the server since the edit's base")
        }
        if Self.holds(entry.operation.fields ?? [:], in: .object(try remote.wireFields)) {
            // Store the server's version (its eTag is the next edit's base).
            return .applied(remote)
        }
        if remote.eTag == entry.baseETag { return .proceed }
        return .changed("the membership changed on the server since the edit's base (eTag \(remote.eTag ?? "none"))")
    }

    /// The server's channel, or nil when it has none (404).
    func existingChannel(_ id: String) async throws -> ChatChannel<JSONValue>? {
        try await objects.channel(id: id, as: JSONValue.self)
    }

    // MARK: Lookups

    static func isNotFound(_ error: any Error) -> Bool {
        guard let wire = error as? WireError, case .service(let service) = wire else { return false }
        return service.status == 404
    }

    /// The stored timetoken of a message (nil while it is pending or when it is not stored).
    static func storedTimetoken(ofMessage id: String, in store: ChatStore<Custom>) async throws -> Timetoken? {
        try await store.reading { try $0.messages.messageLocation(id: id)?.timetoken }
    }

    func messageTimetoken(of entry: OutboxEntry) async throws -> Timetoken? {
        if let tt = entry.operation.messageTimetoken { return tt }
        return try await Self.storedTimetoken(ofMessage: entry.operation.messageId ?? "", in: store)
    }

    func actionTimetoken(of entry: OutboxEntry, messageTimetoken: Timetoken?) async throws -> Timetoken? {
        if let tt = entry.operation.actionTimetoken { return tt }
        return try await findAction(entry, messageTimetoken: messageTimetoken)
    }

    /// Finds this user's (type, value) action on the message by listing the channel's actions
    /// newer than the message, newest page first.
    func findAction(_ entry: OutboxEntry, messageTimetoken: Timetoken?) async throws -> Timetoken? {
        guard let reaction = entry.operation.reaction, let messageTimetoken else { return nil }
        for try await page in client.messageActions.messageActionPages(channel: reaction.channel, end: messageTimetoken) {
            if let match = page.data.first(where: {
                $0.messageTimetoken == messageTimetoken && $0.uuid == userId && $0.type == reaction.type
                    && $0.value == reaction.value
            }) {
                return match.actionTimetoken
            }
        }
        return nil
    }

    /// Compares the server's record with the state an app record write wants: it holds it →
    /// done (an earlier attempt arrived); a create that finds none, or an edit that finds its
    /// base's eTag → send; anything else → a conflict.
    private func probeRecord(_ entry: OutboxEntry, _ write: AppRecordWrite) async throws -> ProbeVerdict {
        let target = AppRecordTarget(kind: write.kind, className: write.className, id: write.id)
        guard let remote = try await DataSyncAppRecordWrites.fetch(target, client: client) else {
            return entry.baseSnapshot == nil ? .notApplied : .changedElsewhere("the record was deleted on the server")
        }
        if AppRecordWrite.state(of: remote) == write.state { return .applied(.appRecord(remote)) }
        // A patch guarded by tests of its touched members is resent: its tests decide.
        if entry.baseSnapshot != nil, entry.baseETag == nil || remote.eTag == entry.baseETag || write.concurrency == .touchedFields {
            return .notApplied
        }
        return .changedElsewhere("the server's record differs from the write's base (eTag \(remote.eTag ?? "none"))")
    }

    func remoteETag(of entry: OutboxEntry) async throws -> String? {
        if let target = entry.operation.appRecord {
            return try await DataSyncAppRecordWrites.fetch(target, client: client)?.eTag
        }
        if entry.kind == .setUser {
            return try await objects.user(id: entry.operation.user ?? "", as: JSONValue.self)?.eTag
        }
        return try await objects.channel(id: entry.operation.channel ?? "", as: JSONValue.self)?.eTag
    }
}

extension OutboxProbes {
    /// The server's mute list of `owner` now (one `GET`; none is an empty list): a mute list write
    /// applies its change to it (``OutboxRequests``).
    func serverMuteList(of owner: String) async throws -> [String] {
        let remote = try await objects.user(id: ChatModeration.muteListId(of: owner), as: JSONValue.self)
        return remote.map { ChatModeration.mutedUsers(fromCustom: $0.custom) } ?? []
    }
}
