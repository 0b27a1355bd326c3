import Foundation
import Logging
import ReplicaModel
import ReplicaStore

/// What applying one history page (or several pages committed together) did.
public struct HistoryPageResult: Sendable, Hashable {
    /// The history pages the transaction held.
    public var pages = 1
    /// Messages stored for the first time.
    public var inserted = 0
    /// Stored messages that changed (a pending message of ours that got its timetoken counts here).
    public var updated = 0
    /// Messages already stored as they are.
    public var unchanged = 0
    /// Messages left out because another stored message of the channel already has their
    /// timetoken (a server answer that mangled a message's payload, so its id changed): the
    /// stored row is kept rather than show one message twice.
    public var skipped = 0
    /// Messages whose payload id named another stored message (a different channel or timetoken,
    /// or a pending message of another publisher): stored under their own derived id
    /// (``ReplicaModel/MessageIdentity``), never merged into the message they named.
    public var rekeyed = 0
    /// Chat SDK events of a user's channel stored for the first time (`mention`, `invite`:
    /// kept apart from the messages, in the user's feed).
    public var events = 0
    /// Our own unsent publishes the page showed had arrived: their outbox ops are finished.
    public var completedSends: [CompletedSend] = []

    /// An empty result.
    public init() {}
}

/// A publish op finished by a pull: the page held its message.
public struct CompletedSend: Sendable, Hashable {
    /// The outbox op that carried the publish.
    public var opId: String
    /// The message id.
    public var messageId: String
    /// The timetoken the server gave it.
    public var timetoken: Timetoken
}

/// Storing messages from the server, whichever way they came (a history page, a live event, the
/// messages `decryptPending()` reads again): the one place a server message becomes a row.
enum ServerMessages<Custom: ChatCustomData> {
    /// Stores one message from the server (a history page's or a live event's): upserted by id;
    /// a pending message of ours becomes `sent` and its publish op is finished (announced by the
    /// outbox). A message whose timetoken another stored message holds is skipped, unless that
    /// message is one stored undecryptable (``Reconciler<Custom>.undecryptableContentType``): a payload that decrypts
    /// now replaces it.
    static func apply(
        _ message: ChatMessage<Custom.Message>, ops: OpTransaction<Custom>, lookups: inout ServerMessageLookups, into result: inout HistoryPageResult,
        logger: Logger
    ) throws {
        let tx = ops.tx
        var message = message
        if let event = userEvent(message, currentUser: ops.actingUser) {
            // A mention or an invitation on the user's channel is a notification, not a chat
            // message. One the store refuses is skipped: one bad event must not stop the channel.
            do {
                if try tx.write(userEvent: event) == .inserted { result.events += 1 } else { result.unchanged += 1 }
                // An earlier version kept it as a raw message of the channel: that row goes.
                if let timetoken = message.timetoken { try tx.messages.deleteMessage(id: MessageIdentity.derivedId(channel: message.channelId, timetoken: timetoken)) }
            } catch let error as StoreError where !StoreError.isStorageFailure(error) {
                logger.warning("skipped an event of the user's channel the store refused", metadata: ["error": "\(error)"])
                result.skipped += 1
            }
            return
        }
        if let timetoken = message.timetoken {
            // A payload id is the sender's claim: it names a stored message only when this is that
            // message (MessageIdentity); any other message carrying it is stored as its own.
            let id = MessageIdentity.storedId(
                payloadId: message.id, channel: message.channelId, timetoken: timetoken, publisher: message.userId,
                stored: try lookups.place(of: message.id, tx: tx))
            if id != message.id {
                logger.warning("stored a message whose payload id another message holds under its own id", metadata: [
                    "channel": "\(message.channelId)", "timetoken": "\(timetoken)", "claimed": "\(message.id)",
                ])
                message.id = id
                result.rekeyed += 1
            }
        }
        if lookups.hasHardDelete(message.id) {
            // Deleted here; the history delete has not reached PubNub yet.
            result.skipped += 1
            return
        }
        if let timetoken = message.timetoken,
           let holder = lookups.holder(channel: message.channelId, timetoken: timetoken, other: message.id)
        {
            if message.contentType != Reconciler<Custom>.undecryptableContentType, holder.contentType == Reconciler<Custom>.undecryptableContentType {
                // The payload stored undecryptable reads now (the right key came): the message it
                // holds replaces the marked row, on a pull, a live event or `decryptPending()` alike.
                try tx.messages.deleteMessage(id: holder.id)
                lookups.removed(holder.id)
            } else {
                logger.warning("skipped a message whose timetoken another stored message holds", metadata: [
                    "channel": "\(message.channelId)", "timetoken": "\(timetoken)", "stored": "\(holder.id)",
                ])
                result.skipped += 1
                return
            }
        }
        let outcome = try tx.upsert(message: message)
        lookups.stored(
            id: message.id, channel: message.channelId, timetoken: message.timetoken, contentType: message.contentType,
            userId: message.userId)
        switch outcome {
        case .inserted: result.inserted += 1
        case .unchanged: result.unchanged += 1
        case .updated:
            result.updated += 1
            if let timetoken = message.timetoken, let opId = try ops.completeByPull(messageId: message.id, timetoken: timetoken) {
                result.completedSends.append(CompletedSend(opId: opId, messageId: message.id, timetoken: timetoken))
            }
        }
    }
}

extension ServerMessages {
    /// The Chat SDK event a server message is (a `mention` or `invite` body on the channel named
    /// after the current user, as read by ``ReplicaModel/ChatUserEvent/kind(ofBody:)``), or nil for
    /// a chat message: such a body on any other channel is an ordinary message of that channel.
    static func userEvent(_ message: ChatMessage<Custom.Message>, currentUser: String?) -> ChatUserEvent? {
        guard message.channelId == currentUser, message.contentType == Reconciler<Custom>.foreignContentType,
              let timetoken = message.timetoken,
              let content = message.content, let kind = ChatUserEvent.kind(ofBody: content)
        else { return nil }
        let publisher = message.userId == Reconciler<Custom>.unknownPublisher ? nil : message.userId
        return ChatUserEvent(userId: message.channelId, timetoken: timetoken, publisher: publisher, kind: kind)
    }
}

/// What applying server messages must know of the store: whether a message has a hard delete
/// queued, and which other stored message holds a timetoken. Prefetched for a batch (one range
/// read per channel and one of the outbox) instead of two reads per message, and kept in step
/// with the writes ``ServerMessages`` makes while applying the batch (a history page, a live answer,
/// the messages `decryptPending()` reads again).
struct ServerMessageLookups {
    struct Holder: Equatable {
        var id: String
        var contentType: String?
    }

    /// A channel's timetoken.
    private struct Place: Hashable {
        var channel: String
        var timetoken: Int64
    }

    private var hardDeletes: Set<String> = []
    /// Stored messages by id (nil inside: not stored): prefetched for a history page, read as asked for a live answer.
    private var places: [String: MessageIdentity.Place?] = [:]
    /// The stored messages of the batch's windows by place.
    private var holders: [Place: [Holder]] = [:]
    /// Where each message of those windows is, to move it when its timetoken changes.
    private var placeOf: [String: Place] = [:]

    /// Reads the facts of `messages` at once: the hard deletes queued and, per channel, the stored
    /// messages between the batch's oldest and newest timetoken.
    init<Custom: ChatCustomData>(prefetching messages: [ChatMessage<Custom.Message>], tx: StoreTransaction<Custom>) throws {
        try self.init(prefetching: messages.compactMap { message in message.timetoken.map { (message.channelId, $0) } }, tx: tx)
        // Which stored message each payload id names (MessageIdentity), for the page at once.
        let found = try tx.messages.messagePlaces(ids: messages.map(\.id))
        for message in messages { places.updateValue(found[message.id], forKey: message.id) }
    }

    /// Reads the facts of messages at these places (a live answer's message events) at once.
    init<Custom: ChatCustomData>(
        prefetching messagePlaces: [(channel: String, timetoken: Timetoken)], tx: StoreTransaction<Custom>
    ) throws {
        var windows: [String: ClosedRange<Int64>] = [:]
        for (channel, timetoken) in messagePlaces {
            guard let value = Int64(exactly: timetoken.rawValue) else { continue }
            let window = windows[channel]
            windows[channel] = min(window?.lowerBound ?? value, value)...max(window?.upperBound ?? value, value)
        }
        for (channel, window) in windows {
            for row in try tx.messages.messageHolders(channel: channel, window: window) {
                let place = Place(channel: channel, timetoken: row.timetoken)
                holders[place, default: []].append(Holder(id: row.id, contentType: row.contentType))
                placeOf[row.id] = place
            }
        }
        let prefix = OutboxKeys.hardDeletePrefix
        hardDeletes = Set(try tx.outbox.opTargets(prefix: prefix).map { String($0.dropFirst(prefix.count)) })
    }

    /// Where the stored message `id` is (nil: none is stored), as the batch left it.
    mutating func place<Custom: ChatCustomData>(of id: String, tx: StoreTransaction<Custom>) throws -> MessageIdentity.Place? {
        if let known = places[id] { return known }
        let place = try tx.messages.messagePlace(id: id)
        places[id] = place
        return place
    }

    /// Whether message `id` has a hard delete queued (deleted here, not yet at PubNub).
    func hasHardDelete(_ id: String) -> Bool {
        hardDeletes.contains(id)
    }

    /// Another stored message of `channel` (not `id`) that holds `timetoken`, or nil.
    func holder(channel: String, timetoken: Timetoken, other id: String) -> Holder? {
        guard !holders.isEmpty, let value = Int64(exactly: timetoken.rawValue) else { return nil }
        return holders[Place(channel: channel, timetoken: value)]?.first { $0.id != id }
    }

    /// Message `id` was deleted.
    mutating func removed(_ id: String) {
        places[id] = .some(nil)
        guard let place = placeOf.removeValue(forKey: id) else { return }
        holders[place]?.removeAll { $0.id == id }
    }

    /// A message was upserted (or left as it was): with a timetoken, it now holds it.
    mutating func stored(id: String, channel: String, timetoken: Timetoken?, contentType: String?, userId: String) {
        if let known = places[id], let known {
            // The upsert keeps a stored timetoken and publisher when the new version has none.
            places[id] = MessageIdentity.Place(channel: channel, timetoken: timetoken ?? known.timetoken, userId: known.userId)
        } else {
            places[id] = MessageIdentity.Place(channel: channel, timetoken: timetoken, userId: userId)
        }
        guard let timetoken, let value = Int64(exactly: timetoken.rawValue) else { return }
        let place = Place(channel: channel, timetoken: value)
        if let old = placeOf.updateValue(place, forKey: id) {
            holders[old]?.removeAll { $0.id == id }
        }
        holders[place, default: []].append(Holder(id: id, contentType: contentType))
    }
}
