import Foundation
import Logging
import PubNubWire
import ReplicaModel
import ReplicaStore

/// What applying one subscribe answer did.
public struct LiveApplyResult: Sendable, Hashable {
    /// Messages (and file messages): stored for the first time, changed, already stored.
    public var messages = HistoryPageResult()
    /// Reactions (message actions) added or removed.
    public var actionsChanged = 0
    /// App Context objects stored, changed or removed.
    public var objectsChanged = 0
    /// Changes left alone because a local op is pending on the same target (read-your-writes).
    public var keptPending = 0
    /// Members whose presence (``ReplicaModel/ChatMember/isPresent``, state) an event changed.
    public var presenceChanged = 0
    /// Presence channels (without `-pnpres`) to read again with a here-now: an `interval`
    /// event asked for it (`here_now_refresh`), a presence event could not be read, or a
    /// membership event added a member row (whose presence is unknown).
    public var presenceRefresh: Set<String> = []
    /// Events this version stores nothing for (signals, unknown kinds).
    public var ignored = 0
    /// Channels with an event that could not be read or applied: their history must be pulled
    /// again, since the event is as good as lost.
    public var unreadableChannels: Set<String> = []
    /// Users and channels that an event changed only partly while the store has no full version
    /// of them: they are fetched whole next.
    public var incomplete: Set<ObjectRef> = []
    /// One line per applied event, in order (for `pnreplicate listen`).
    public var applied: [LiveEventRecord] = []

    /// An empty result.
    public init() {}
}

/// A user or channel, by id.
public enum ObjectRef: Sendable, Hashable, CustomStringConvertible {
    /// A user.
    case user(String)
    /// A channel.
    case channel(String)

    /// `user:id` or `channel:id`.
    public var description: String {
        switch self {
        case .user(let id): "user:\(id)"
        case .channel(let id): "channel:\(id)"
        }
    }
}

/// One event a live sync received, as `pnreplicate listen` prints it.
public struct LiveEventRecord: Sendable, Hashable, Codable {
    /// `message`, `file`, `reaction-added`, `reaction-removed`, `user-set`, `user-removed`,
    /// `channel-set`, `channel-removed`, `membership-set`, `membership-removed`, `typing`,
    /// `signal`, `presence-join`, `presence-leave`, `presence-timeout`, `presence-state-change`,
    /// `presence-interval` (`presence-<action>`), `restriction` (a moderator's, `channel: banned`
    /// or `channel/user`), `mute-list-set`, `mute-list-removed`, `unknown` or `unreadable`. An event
    /// on one of the Chat SDK's hidden channels is recorded on the current user's channel.
    public var kind: String
    /// The channel it arrived on.
    public var channel: String
    /// Its timetoken (`p.t`), when it had one.
    public var timetoken: Timetoken?
    /// The publisher or actor (`i`).
    public var publisher: String?
    /// What it was about: a message id, `type:value` on a message timetoken, an object id, a
    /// user id (presence), `started`/`stopped` (typing).
    public var subject: String
    /// What the store did: `inserted`, `updated`, `unchanged`, `removed`, `kept-pending`,
    /// `present`, `absent` (presence), `delivered` (signals, never stored), `ignored`,
    /// `skipped` (with the reason).
    public var outcome: String
}

/// What a live subscribe answer changes: its events applied through the same rules as a pull,
/// presence answers, a gap's fill, and an object refreshed from the server.
struct LiveApply<Custom: ChatCustomData>: ReconcilerPart {
    let context: PullContext<Custom>

    /// Applies the events of one subscribe answer in one transaction, through the same rules as
    /// a pull: messages are upserted by id (the echo of an own publish finishes its send op),
    /// reactions and App Context changes respect pending local ops (``LocalOverlay``). When
    /// `through` is given, the live checkpoint of each of `advancing` moves to it in the same
    /// transaction, and so does a history checkpoint that is not in the middle of a fill: the
    /// store holds everything of those channels up to `through`.
    ///
    /// `through` is a subscribe cursor, which is never trusted alone: the checkpoints move at most
    /// to the newest server time this device verified or the newest message stored
    /// (``TrustedTime``), and not at all while neither is known.
    func applyLive(
        _ envelopes: [SubscribeEnvelope], advancing: Set<String>, through cursor: Timetoken?
    ) async throws(StoreError) -> LiveApplyResult {
        let logger = logger, objects = objects
        let currentUser = userId
        let now = clock.now
        let stored = envelopes.compactMap { envelope in
            envelope.event == .message || envelope.event == .file ? envelope.timetoken : nil
        }
        let through = cursor.flatMap { context.serverTime.clamp($0, including: stored) }
        do {
            let applied = try await ops.commit { ops in
                var result = LiveApplyResult()
                // What the answer's messages need of the store, read once (as a history page does).
                let places = envelopes.compactMap { envelope -> (channel: String, timetoken: Timetoken)? in
                    switch envelope.event {
                    case .message, .file: envelope.timetoken.map { (envelope.channel, $0) }
                    default: nil
                    }
                }
                var lookups = try ServerMessageLookups(prefetching: places, tx: ops.tx)
                for envelope in envelopes {
                    do {
                        try Self.applyLive(
                            envelope, objects: objects, ops: ops, lookups: &lookups, currentUser: currentUser, into: &result,
                            logger: logger)
                    } catch {
                        // One event the model refuses never stops the others; its channel is pulled again.
                        // A failing store stops them all.
                        if StoreError.isStorageFailure(error) { throw error }
                        result.unreadableChannels.insert(envelope.channel)
                        result.applied.append(envelope.record(kind: "unreadable", subject: "-", outcome: "skipped: \(error)"))
                        logger.warning("skipped a live event the model refuses", metadata: [
                            "channel": "\(envelope.channel)", "reason": "\(error)",
                        ])
                    }
                }
                if let through {
                    for channel in advancing.subtracting(result.unreadableChannels) {
                        try ops.tx.write(SyncCheckpoint(scope: SyncCheckpoint.live(channel), applied: through, updatedAt: now))
                        if var history = try ops.tx.checkpoint(SyncCheckpoint.history(channel)),
                           let applied = history.applied, applied < through, !history.isFilling
                        {
                            history.applied = through
                            history.updatedAt = now
                            try ops.tx.write(history)
                        }
                    }
                }
                return result
            }
            context.serverTime.stored(messages: stored)
            if let newest = stored.max() {
                ReplicatorMetrics.liveLag(seconds: now.addingTimeInterval(context.serverTime.offset?.seconds ?? 0).timeIntervalSince(newest.date), to: client.metrics)
            }
            return applied
        } catch {
            throw StoreError.wrapping(error)
        }
    }

    private static func applyLive(
        _ envelope: SubscribeEnvelope, objects: any ObjectBackend, ops: OpTransaction<Custom>, lookups: inout ServerMessageLookups,
        currentUser: String, into result: inout LiveApplyResult, logger: Logger
    ) throws {
        let tx = ops.tx
        let channel = envelope.channel
        if let events = objects.events(in: envelope) {
            // Users, channels and memberships: what the object backend reads in the envelope.
            for event in events { try applyLive(event, envelope: envelope, ops: ops, currentUser: currentUser, into: &result) }
            return
        }
        switch envelope.event {
        case .message where channel == ChatModeration.eventChannel(for: currentUser):
            // A moderation event about the current user: their restriction, never a message.
            guard let restriction = ChatModeration.restriction(fromEvent: envelope.payload, user: currentUser) else {
                result.ignored += 1
                var record = envelope.record(kind: "restriction", subject: "-", outcome: "ignored")
                record.channel = currentUser
                result.applied.append(record)
                return
            }
            let outcome = try tx.moderation.write(restriction: restriction)
            if outcome != .unchanged { result.objectsChanged += 1 }
            // Recorded on the user's own channel: the hidden channel is named to nobody.
            var record = envelope.record(
                kind: "restriction", subject: "\(restriction.channelId): \(restriction.word)",
                outcome: outcome == .unchanged ? "unchanged" : "applied")
            record.channel = currentUser
            result.applied.append(record)
        case .message, .file:
            guard let timetoken = envelope.timetoken else { return }
            var entry = HistoryMessage(
                message: envelope.payload, timetoken: timetoken, uuid: envelope.publisher, meta: envelope.meta,
                messageType: envelope.kind, customMessageType: envelope.customMessageType)
            entry.decryptionError = envelope.decryptionError
            let message = try HistorySync<Custom>.message(entry, channel: channel)
            var one = HistoryPageResult()
            try ServerMessages<Custom>.apply(message, ops: ops, lookups: &lookups, into: &one, logger: logger)
            result.messages.add(one)
            if let event = ServerMessages<Custom>.userEvent(message, currentUser: currentUser) {
                // A mention or an invitation (stored in the user's feed, not as a message).
                let kind = if case .mention = event.kind { "mention" } else { "invite" }
                result.applied.append(envelope.record(kind: kind, subject: event.subject, outcome: one.events > 0 ? "inserted" : "unchanged"))
                return
            }
            let outcome = one.inserted > 0 ? "inserted" : one.updated > 0 ? "updated" : one.skipped > 0 ? "skipped" : "unchanged"
            result.applied.append(envelope.record(kind: envelope.event == .file ? "file" : "message", subject: message.id, outcome: outcome))
        case .messageAction(let event):
            let action = event.action
            let subject = "\(action.type):\(action.value) on \(action.messageTimetoken)"
            guard let messageTT = Int64(exactly: action.messageTimetoken.rawValue) else {
                throw LiveEventError(reason: "message timetoken \(action.messageTimetoken) out of range")
            }
            let messageId = try tx.messages.messageIds(channel: channel, window: messageTT...messageTT)[messageTT]
            var outcome: String
            if try LocalOverlay(tx: tx).overridesReaction(
                serverSays: event.added, channel: channel, messageId: messageId, type: action.type, value: action.value,
                user: action.uuid, currentUser: currentUser)
            {
                result.keptPending += 1
                result.applied.append(envelope.record(kind: event.added ? "reaction-added" : "reaction-removed", subject: subject, outcome: "kept-pending"))
                return
            }
            if event.added {
                var model = try action.model(channel: channel)
                model.messageId = messageId
                outcome = try tx.upsert(action: model) == .unchanged ? "unchanged" : "inserted"
            } else {
                let removed = try tx.messageActions.deleteAction(
                    channel: channel, messageTimetoken: action.messageTimetoken, type: action.type, value: action.value,
                    userId: action.uuid)
                outcome = removed ? "removed" : "unchanged"
            }
            if outcome != "unchanged" { result.actionsChanged += 1 }
            result.applied.append(envelope.record(kind: event.added ? "reaction-added" : "reaction-removed", subject: subject, outcome: outcome))
        case .dataSync(let event) where AppDataLive.concerns(event): try AppDataLive.apply(event, envelope: envelope, tx: tx, into: &result)
        case .appContext, .dataSync:
            // An object event of the backend this replica does not use (App Context's `e: 2`,
            // DataSync's `e: 5`): not its data.
            result.ignored += 1
            result.applied.append(envelope.record(kind: "unknown", subject: "-", outcome: "ignored"))
        case .presence(let event):
            try applyLive(event, tx: tx, envelope: envelope, into: &result)
        case .signal:
            // Signals are never stored; typing ones go to ``TypingIndicators`` (by ``LiveSync``).
            if let typing = TypingSignal.isTyping(envelope.payload) {
                result.applied.append(envelope.record(kind: "typing", subject: typing ? "started" : "stopped", outcome: "delivered"))
            } else {
                result.applied.append(envelope.record(kind: "signal", subject: "-", outcome: "delivered"))
            }
        case .unknown:
            result.ignored += 1
            result.applied.append(envelope.record(kind: "unknown", subject: "-", outcome: "ignored"))
        case .unreadable(let reason):
            if channel.hasSuffix("-pnpres") {
                result.presenceRefresh.insert(String(channel.dropLast("-pnpres".count)))
            } else if !channel.isEmpty {
                result.unreadableChannels.insert(channel)
            }
            result.applied.append(envelope.record(kind: "unreadable", subject: "-", outcome: "skipped: \(reason)"))
            logger.warning("skipped a live event that could not be read", metadata: ["channel": "\(channel)", "reason": "\(reason)"])
        }
    }

    /// Applies a presence event to the member rows of its channel (a user without a membership
    /// row is not stored). Join and state-change make the user present with the event's state;
    /// leave and timeout absent; an interval applies its lists, or asks for a here-now.
    private static func applyLive(
        _ event: PresenceEvent, tx: StoreTransaction<Custom>, envelope: SubscribeEnvelope, into result: inout LiveApplyResult
    ) throws {
        let kind = "presence-\(event.action.rawValue)"
        func set(_ userId: String, present: Bool, state: JSONValue?) throws -> Bool {
            let changed = try tx.setPresence(channelId: event.channel, userId: userId, isPresent: present, state: state)
            if changed { result.presenceChanged += 1 }
            return changed
        }
        switch event.action {
        case .join, .stateChange, .leave, .timeout:
            guard let userId = event.userId else { return }
            let present = event.action == .join || event.action == .stateChange
            let changed = try set(userId, present: present, state: event.state)
            result.applied.append(envelope.record(kind: kind, subject: userId, outcome: changed ? (present ? "present" : "absent") : "unchanged"))
        case .interval:
            var changes = 0
            for userId in event.joined where try set(userId, present: true, state: nil) { changes += 1 }
            for userId in event.left + event.timedOut where try set(userId, present: false, state: nil) { changes += 1 }
            if event.hereNowRefresh { result.presenceRefresh.insert(event.channel) }
            let subject = "\(event.joined.count) joined, \(event.left.count) left, \(event.timedOut.count) timed out"
                + (event.hereNowRefresh ? ", here-now asked" : "")
            result.applied.append(envelope.record(kind: kind, subject: subject, outcome: changes > 0 ? "updated" : "unchanged"))
        case .other:
            result.ignored += 1
            result.applied.append(envelope.record(kind: kind, subject: event.userId ?? "-", outcome: "ignored"))
        }
    }

    /// Replaces the presence of the members of `channels` with a here-now's answer, in one
    /// transaction: the listed occupants are present with their state, every other member is
    /// absent (a channel the answer lacks has nobody). Returns each channel's occupancy.
    func applyHereNow(_ answer: HereNowAnswer, channels: [String]) async throws -> [String: Int] {
        try await store.storeTransaction { tx in
            var counts: [String: Int] = [:]
            for channel in channels {
                let occupancy = answer.channels[channel] ?? ChannelOccupancy(occupancy: 0, occupants: [])
                var present: [String: JSONValue?] = [:]
                for occupant in occupancy.occupants { present[occupant.userId] = .some(occupant.state) }
                try tx.replacePresence(channelId: channel, present: present)
                counts[channel] = occupancy.occupancy
            }
            return counts
        }
    }

    /// Applies a live object event and records it.
    private static func applyLive(
        _ event: ObjectEvent, envelope: SubscribeEnvelope, ops: OpTransaction<Custom>, currentUser: String,
        into result: inout LiveApplyResult
    ) throws {
        var (kind, subject, outcome) = try applyLive(event, ops: ops, currentUser: currentUser, into: &result)
        if outcome != "unchanged" && outcome != "kept-pending" { result.objectsChanged += 1 }
        if outcome == "kept-pending" { result.keptPending += 1 }
        // A restriction or the mute list is recorded without the hidden object's id; any other
        // hidden object's event names none.
        switch event {
        case .membershipSet(let channelId, let userId, _, _, _), .membershipRemoved(let channelId, let userId):
            if let restricted = ChatModeration.restrictedChannel(ofModerationChannel: channelId) {
                kind = "restriction"
                subject = "\(restricted)/\(userId)"
            } else if ChatModeration.isHidden(channel: channelId) || ChatModeration.isHidden(user: userId) {
                subject = "-"
            }
        case .userSet(let id, _, _, _, _), .userRemoved(let id):
            if ChatModeration.isHidden(user: id), ChatModeration.muteListOwner(ofId: id) != currentUser { subject = "-" }
        case .channelSet(let id, _, _, _, _), .channelRemoved(let id):
            if ChatModeration.isHidden(channel: id) { subject = "-" }
        case .membershipRemovedById:
            break
        }
        var record = envelope.record(kind: kind, subject: subject, outcome: outcome)
        if ChatModeration.isHidden(channel: record.channel) { record.channel = currentUser }
        result.applied.append(record)
    }

    /// Applies a live object event; returns (kind, subject, outcome) for the event's record.
    private static func applyLive(
        _ event: ObjectEvent, ops: OpTransaction<Custom>, currentUser: String, into result: inout LiveApplyResult
    ) throws -> (String, String, String) {
        let tx = ops.tx
        let overlay = LocalOverlay<Custom>(tx: tx)
        func stamp(_ text: String?) throws -> ISOTimestamp? { try text.map { try ISOTimestamp(parsing: $0) } }
        // The version a merged `set` is stored with: the event's, when the store held the whole
        // object; none otherwise (only the changed fields came: the rest is unknown until the whole
        // object is fetched, and any version the server sends then must win).
        func version(_ stored: (some VersionedObject)?, _ ref: ObjectRef, updated: String?, eTag: String?, complete: Bool) throws
            -> (String?, ISOTimestamp?)
        {
            guard complete || stored?.eTag != nil else {
                result.incomplete.insert(ref)
                return (nil, nil)
            }
            return (eTag, try stamp(updated))
        }
        func word(_ outcome: UpsertOutcome) -> String {
            switch outcome {
            case .inserted: "inserted"
            case .updated: "updated"
            case .unchanged: "unchanged"
            }
        }
        switch event {
        case .userSet(let id, let fields, let updated, let eTag, _) where ChatModeration.muteListOwner(ofId: id) != nil:
            // A mute list (the store keeps only the current user's; others are hidden objects).
            guard let owner = ChatModeration.muteListOwner(ofId: id), owner == currentUser else {
                return ("user-set", id, "unchanged")
            }
            let stored = try tx.moderation.serverMuteList(owner: owner)
            let muted = fields["custom"].map { ChatModeration.mutedUsers(fromCustom: $0) } ?? stored?.muted ?? []
            let list = StoredMuteList(muted: muted, updated: updated ?? stored?.updated, eTag: eTag ?? stored?.eTag)
            return ("mute-list-set", owner, try overlay.applyServer(muteList: list, owner: owner) ? "updated" : "unchanged")
        case .userRemoved(let id) where ChatModeration.muteListOwner(ofId: id) == currentUser:
            return ("mute-list-removed", currentUser, try overlay.applyServer(muteList: nil, owner: currentUser) ? "removed" : "unchanged")
        case .userSet(let id, let fields, let updated, let eTag, let complete):
            let stored = try tx.user(id: id)
            var user = try (stored ?? ChatUser(id: id)).applying(fields)
            (user.eTag, user.updated) = try version(stored, .user(id), updated: updated, eTag: eTag, complete: complete)
            return ("user-set", id, word(try overlay.applyServer(user: user).outcome))
        case .channelSet(let id, let fields, let updated, let eTag, let complete):
            let stored = try tx.channel(id: id)
            var channel = try (stored ?? ChatChannel(id: id)).applying(fields)
            (channel.eTag, channel.updated) = try version(stored, .channel(id), updated: updated, eTag: eTag, complete: complete)
            return ("channel-set", id, word(try overlay.applyServer(channel: channel).outcome))
        case .userRemoved(let id):
            return ("user-removed", id, try overlay.serverLacks(.users, id: id) ? "removed" : "kept-pending")
        case .channelRemoved(let id):
            return ("channel-removed", id, try overlay.serverLacks(.channels, id: id) ? "removed" : "kept-pending")
        case .membershipSet(let channelId, let userId, let fields, let updated, let eTag):
            let stored = try tx.member(channelId: channelId, userId: userId)
            var member = try (stored ?? ChatMember(channelId: channelId, userId: userId)).applying(fields)
            member.eTag = eTag
            member.updated = try stamp(updated)
            let outcome = try overlay.applyServer(member: member).outcome
            // A new member row has no presence yet: the channel's occupants are read again (a
            // hidden channel's "membership" is a restriction: it has no presence to read).
            if outcome == .inserted, !ChatModeration.isHidden(channel: channelId) { result.presenceRefresh.insert(channelId) }
            return ("membership-set", "\(channelId)/\(userId)", word(outcome))
        case .membershipRemoved(let channelId, let userId):
            let removed = try overlay.serverLacks(channelId: channelId, userId: userId)
            return ("membership-removed", "\(channelId)/\(userId)", removed ? "removed" : "kept-pending")
        case .membershipRemovedById(let id):
            guard let pair = try tx.membership(backendId: id) else { return ("membership-removed", id, "unchanged") }
            let removed = try overlay.serverLacks(channelId: pair.channel, userId: pair.user)
            return ("membership-removed", "\(pair.channel)/\(pair.user)", removed ? "removed" : "kept-pending")
        }
    }
}

/// Why one live event could not be applied.
struct LiveEventError: Error, CustomStringConvertible {
    var reason: String
    var description: String { reason }
}

extension SubscribeEnvelope {
    func record(kind: String, subject: String, outcome: String) -> LiveEventRecord {
        LiveEventRecord(kind: kind, channel: channel, timetoken: timetoken, publisher: publisher, subject: subject, outcome: outcome)
    }
}

extension HistoryPageResult {
    mutating func add(_ other: HistoryPageResult) {
        inserted += other.inserted
        updated += other.updated
        unchanged += other.unchanged
        skipped += other.skipped
        completedSends += other.completedSends
        events += other.events
    }
}

// MARK: Gap fills

// The pulls live sync runs when the stream may have lost something: a gap fill, and one object
// read whole when a live event carried only part of it.
extension LiveApply {
    /// What a gap fill stored.
    struct GapFill {
        var inserted = 0
        var reactionChanges = 0
        /// The channels whose reactions and members were listed (the hot ones).
        var listed: Set<String> = []
    }

    /// Fills a gap that ended at `through`: App Context objects, then the history of `channels`,
    /// and the reactions and members of the hot ones, through the same pulls as a sync. The
    /// listings are taken against a server time at or after `through` (the reconnect's `/time`,
    /// or one more). Throws the first failure (what was applied stays applied).
    func fillGap(
        channels: [String], through: Timetoken, progress: (@Sendable (PullProgress) -> Void)? = nil
    ) async throws -> GapFill {
        var fill = GapFill()
        // Decided once: the members and reactions listed are those of exactly these channels.
        let marked = context.hot
        let hot = channels.filter { marked.contains($0) }
        let snapshot = hot.isEmpty ? nil : try await serverSnapshot(atLeast: through)
        _ = try await objectSync.pullObjects(full: nil, members: .exactly(hot), snapshot: snapshot)
        if let error = try await appData.pull(full: nil).errors.first { throw LiveSyncError.gapFillFailed(channel: "app data", reason: error) }
        for report in try await history.pullHistory(channels: channels, progress: progress) {
            if let error = report.error { throw LiveSyncError.gapFillFailed(channel: report.channel, reason: error) }
            fill.inserted += report.inserted
        }
        for channel in hot {
            let result = try await reactionSync.pullReactions(channel: channel, snapshot: snapshot)
            fill.reactionChanges += result.added + result.removed
        }
        fill.listed = Set(hot)
        return fill
    }

    /// Fetches one user or channel whole and stores it (a live event carried only part of it);
    /// removes it when the server no longer has it.
    func refresh(_ object: ObjectRef) async throws {
        switch object {
        case .user(let id):
            let user = try await fetch("user:\(id)") { [objects] () async throws(WireError) in
                try await objects.user(id: id, as: Custom.User.self)
            }
            guard let user else { return try await serverLacks(object) }
            _ = try await objectSync.applyPulled(users: [user])
        case .channel(let id):
            let channel = try await fetch("channel:\(id)") { [objects] () async throws(WireError) in
                try await objects.channel(id: id, as: Custom.Channel.self)
            }
            guard let channel else { return try await serverLacks(object) }
            _ = try await objectSync.applyPulled(channels: [channel])
        }
    }

    /// The server no longer has `object`: it goes, unless a local op is pending on it.
    private func serverLacks(_ object: ObjectRef) async throws {
        _ = try await store.storeTransaction { tx in
            switch object {
            case .user(let id): try LocalOverlay(tx: tx).serverLacks(.users, id: id)
            case .channel(let id): try LocalOverlay(tx: tx).serverLacks(.channels, id: id)
            }
        }
    }
}
