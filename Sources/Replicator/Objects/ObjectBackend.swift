import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

// The object-backend seam: every read, write and live event of users, channels and memberships
// goes through one `ObjectBackend`. App Context is the first implementation
// (`Objects/AppContext/`); a second backend (DataSync) is a sibling folder. What stays outside
// the seam, in the outbox and the reconciler, speaks the replica's own language: `ChatUser`,
// `ChatChannel`, `ChatMember`, fields named as ``ReplicaModel/FieldSchema`` names them, a version
// as (`updated`, `eTag`). docs/architecture.md, "The object-backend seam", draws it.

/// Custom data as raw JSON on every side: what the seam hands back before the store's own
/// custom types apply (the outbox re-types it, ``Outbox``'s completions).
public enum RawChatCustom: ChatCustomData {
    /// A user's custom data, as JSON.
    public typealias User = JSONValue
    /// A channel's custom data, as JSON.
    public typealias Channel = JSONValue
    /// A membership's custom data, as JSON.
    public typealias Member = JSONValue
    /// A message's custom data, as JSON.
    public typealias Message = JSONValue
}

/// One page request of an object listing: one request to the backend.
public struct ObjectPageRequest: Hashable, Sendable {
    /// Where the page starts: nil for the first page, else the previous page's ``ObjectBatch/next``.
    public var cursor: String?
    /// Only objects whose `updated` is at or after this instant, oldest change first (nil:
    /// every object, in the backend's order). An incremental pull passes its checkpoint.
    public var since: ISOTimestamp?
    /// At most this many objects (the backends cap it at 100).
    public var limit: Int
    /// Whether the page should say how many objects the whole listing holds
    /// (``ObjectBatch/totalCount``), so that a listing of exactly 100 stops without an empty page.
    public var wantsTotal: Bool
    /// Newest change first (by `updated`, descending), with no `since` filter: an incremental
    /// membership listing reads from the top until it meets what it has seen, and learns from
    /// the listing's total (``ObjectBackendCapabilities/listingTotals``) whether anything left.
    public var newestFirst: Bool

    /// A page request.
    public init(
        cursor: String? = nil, since: ISOTimestamp? = nil, limit: Int = 100, wantsTotal: Bool = false, newestFirst: Bool = false
    ) {
        self.cursor = cursor
        self.since = since
        self.limit = limit
        self.wantsTotal = wantsTotal
        self.newestFirst = newestFirst
    }
}

/// One page of an object listing, as a backend answers it.
public struct ObjectBatch<Item: Sendable & Hashable & Decodable>: Sendable, Hashable {
    /// The objects of the page that could be read.
    public var items: [Item]
    /// Why each object of the page that could not be read was left out (one line each).
    public var skipped: [String]
    /// The next page's cursor (a backend may send one on its last page: the pager also stops on
    /// a short page).
    public var next: String?
    /// How many objects the whole listing holds, when asked (``ObjectPageRequest/wantsTotal``)
    /// and known.
    public var totalCount: Int?

    /// A page.
    public init(items: [Item], skipped: [String] = [], next: String? = nil, totalCount: Int? = nil) {
        self.items = items
        self.skipped = skipped
        self.next = next
        self.totalCount = totalCount
    }
}

/// What a write expects the server to hold, from the op's base (``ReplicaStore/OutboxEntry/baseETag``).
public enum ObjectPrecondition: Hashable, Sendable {
    /// Nothing: write whatever the server holds.
    case none
    /// The server's version still has this eTag (`If-Match`); otherwise the write fails with a
    /// 412, which the outbox makes a conflict.
    case ifMatch(String)
    /// No such object exists yet (a conversation's channel, an invitation's membership).
    case mustNotExist
}

/// One object write, in the replica's field names (JSON `null` clears a field).
public enum ObjectWrite: Hashable, Sendable {
    /// One membership's fields in a batch.
    public struct MembershipFields: Hashable, Sendable {
        /// The channel.
        public var channel: String
        /// Its fields (``ReplicaModel/FieldSchema/membership`` names).
        public var fields: [String: JSONValue]

        /// A batch entry.
        public init(channel: String, fields: [String: JSONValue]) {
            self.channel = channel
            self.fields = fields
        }
    }

    /// Sets a user's fields (creating the user when there is none).
    case setUser(id: String, fields: [String: JSONValue], precondition: ObjectPrecondition)
    /// Removes a user.
    case removeUser(id: String, precondition: ObjectPrecondition)
    /// Sets a channel's fields (creating the channel when there is none).
    case setChannel(id: String, fields: [String: JSONValue], precondition: ObjectPrecondition)
    /// Removes a channel.
    case removeChannel(id: String, precondition: ObjectPrecondition)
    /// Sets a membership's fields (creating it when there is none). `base` is the membership as
    /// the edit's base held it: a backend whose write replaces status, type and custom together
    /// (App Context) sends the fields the edit leaves alone as the base had them.
    case setMembership(channel: String, user: String, fields: [String: JSONValue], base: [String: JSONValue]?,
                       precondition: ObjectPrecondition)
    /// Removes a membership.
    case removeMembership(channel: String, user: String, precondition: ObjectPrecondition)
    /// Sets several memberships of one user at once (a batch of read positions), answered with
    /// the server's memberships of `answering`.
    case setMemberships(user: String, [MembershipFields], answering: [String])
}

/// What a write left on the server: the new version, as the backend answered it.
public enum ObjectWritten: Hashable, Sendable {
    /// The user as written.
    case user(ChatUser<JSONValue>)
    /// The channel as written.
    case channel(ChatChannel<JSONValue>)
    /// The membership as written (nil: the answer did not include it).
    case membership(ChatMember<RawChatCustom>?)
    /// A batch's answer: the user's memberships of the channels it named.
    case memberships([ChatMember<RawChatCustom>])
    /// A removal (nothing to store).
    case removed
}

/// A change of a user, channel or membership that arrived live, in the replica's field names.
public enum ObjectEvent: Hashable, Sendable {
    /// A user's changed fields; `complete`: the event carries the whole object (else only what
    /// changed, and a store without the whole object fetches it).
    case userSet(id: String, fields: [String: JSONValue], updated: String?, eTag: String?, complete: Bool)
    /// A user was removed.
    case userRemoved(id: String)
    /// A channel's changed fields (as ``userSet(id:fields:updated:eTag:complete:)``).
    case channelSet(id: String, fields: [String: JSONValue], updated: String?, eTag: String?, complete: Bool)
    /// A channel was removed.
    case channelRemoved(id: String)
    /// A membership's fields (status, type, custom) with its version.
    case membershipSet(channel: String, user: String, fields: [String: JSONValue], updated: String?, eTag: String?)
    /// A membership was removed.
    case membershipRemoved(channel: String, user: String)
    /// A membership was removed, named only by its own server id (a DataSync delete of a
    /// membership whose id names no pair: another client's). Live sync finds the pair by the id
    /// the store keeps (``ReplicaModel/ObjectMetadata/backendId``); an id it does not hold
    /// changes nothing, and the next listing of the user's memberships settles it.
    case membershipRemovedById(String)
}

/// What a backend does natively; the outbox emulates the rest with reads before a write.
public struct ObjectBackendCapabilities: Hashable, Sendable {
    /// Whether a membership write honours ``ObjectPrecondition/ifMatch(_:)``. When not (App
    /// Context), the outbox reads the server's membership before the write and compares its
    /// eTag with the edit's base (a change between that read and the write is not detected,
    /// docs/conflicts.md).
    public var conditionalMembershipWrites: Bool
    /// Whether a write honours ``ObjectPrecondition/mustNotExist`` (answering 409). When not
    /// (App Context), the outbox reads the object first and keeps an existing one.
    public var nativeCreateOnly: Bool
    /// Whether a listing page answers ``ObjectPageRequest/wantsTotal`` with the whole listing's
    /// size (App Context's `totalCount`; DataSync has no totals). With it, the user's memberships
    /// are listed incrementally: the changes newest first, and the total against what the store
    /// expects, so that a membership removed elsewhere is still learnt (a full listing follows a
    /// difference). Without it, the memberships are listed in full on every object pull.
    public var listingTotals: Bool

    /// Capabilities.
    public init(conditionalMembershipWrites: Bool, nativeCreateOnly: Bool, listingTotals: Bool = false) {
        self.conditionalMembershipWrites = conditionalMembershipWrites
        self.nativeCreateOnly = nativeCreateOnly
        self.listingTotals = listingTotals
    }
}

/// Where users, channels and memberships live on the server: the one seam between the replica and
/// an object service (PubNub App Context today, DataSync next).
///
/// Each requirement is one request (a page, one object, one write), so retries, paging rules,
/// Access Manager and the outbox's failure classes keep their single owners outside the backend.
/// Failures are ``PubNubWire/WireError``s: a backend maps its service's answers onto them (404
/// not found, 409 already exists, 412 precondition failed), which the outbox and the reconciler
/// already classify. A missing object is `nil` from the one-object reads, never an error.
///
/// The replica makes one backend per ``Outbox`` (``Outbox/objects``); the reconciler and live sync
/// use the outbox's. A test can pass its own:
///
/// ```swift
/// let outbox = Outbox(store: store, client: client, objects: InMemoryObjects(server))
/// ```
public protocol ObjectBackend: Sendable {
    /// The backend's name: `app-context`, `datasync`; logs and the dry run show it.
    var name: String { get }
    /// What the backend does natively.
    var capabilities: ObjectBackendCapabilities { get }
    /// Why the backend cannot hold an object with `id`, beyond PubNub's id rules that every op
    /// meets (``ReplicaModel/Validation/validateIdentifier(_:field:)``); nil when it can. The
    /// outbox asks before it queues a user, channel or membership write, so an id the backend
    /// would refuse is a typed error then (``OutboxError/identifierRefused(field:id:backend:reason:)``),
    /// never a dead letter later. DataSync refuses whitespace, which App Context accepts.
    func identifierProblem(_ id: String) -> String?

    /// A page of the keyset's users.
    func users<C: CustomData>(_ page: ObjectPageRequest, as custom: C.Type) async throws(WireError) -> ObjectBatch<ChatUser<C>>
    /// A page of the keyset's channels.
    func channels<C: CustomData>(_ page: ObjectPageRequest, as custom: C.Type) async throws(WireError)
        -> ObjectBatch<ChatChannel<C>>
    /// A page of one side's memberships: a user's channels, or a channel's members. For a user,
    /// `channels` narrows the listing to those channels when the backend can (the page may still
    /// hold others: the caller picks).
    func memberships<C: ChatCustomData>(
        of side: MembershipSide, channels: [String]?, _ page: ObjectPageRequest, as custom: C.Type
    ) async throws(WireError) -> ObjectBatch<ChatMember<C>>
    /// One user as the server holds it now; nil when there is none.
    func user<C: CustomData>(id: String, as custom: C.Type) async throws(WireError) -> ChatUser<C>?
    /// One channel as the server holds it now; nil when there is none.
    func channel<C: CustomData>(id: String, as custom: C.Type) async throws(WireError) -> ChatChannel<C>?

    /// The request ``write(_:)`` sends, exactly: what `pnreplicate --dry-run` prints and what the
    /// Access Manager pre-check reads.
    func plannedRequest(for write: ObjectWrite) throws(WireError) -> WireRequest
    /// Sends one write and returns what the server holds after it.
    func write(_ write: ObjectWrite) async throws(WireError) -> ObjectWritten

    /// The object changes one live envelope carries; nil when it is not an object event of this
    /// backend (an event that cannot be read at all arrives as `.unknown` and is handled as one).
    func events(in envelope: SubscribeEnvelope) -> [ObjectEvent]?
}

extension ObjectBackend {
    /// No rule beyond PubNub's own (App Context's, and a test backend's).
    public func identifierProblem(_ id: String) -> String? { nil }
}
